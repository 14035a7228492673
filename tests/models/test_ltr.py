"""The left-to-right baseline: the causal encoder, the next-token LM against NumPy, its training input."""

import subprocess

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, BertLanguageModel, BertPretrainer, ConfigError, distribution
from official_bert.training import PretrainingRun, TrainingOptions, input_pipeline
from official_bert.training.pretraining import unmasked_inputs
from tests import numpy_bert
from tests.training import test_run_pretraining
from tests.cli.test_run_pretraining_cli import command, environment
from tests.models.test_model import (HEADS, HIDDEN, INTER, LAYERS, POSITIONS, VOCAB, assign_google_weights, sample_batch,
                              tiny_config)


def _outputs(encoder, batch):
    out = encoder(batch, training=False)
    return [o.numpy() for o in out["encoder_outputs"]], out["pooled_output"].numpy()


@pytest.mark.parametrize("causal", [True, False])
def test_a_position_sees_no_later_token_only_when_causal(causal):
    # A wide initialization, so that attention is far from uniform and a later token would move the output.
    encoder = BertEncoder(tiny_config(initializer_range=0.2), causal_attention=causal)
    batch = sample_batch(np.random.default_rng(0), batch=2, length=12)
    batch["input_mask"][:] = 1  # every position real: later tokens are attended unless the mask is causal
    before, _ = _outputs(encoder, batch)
    for t in (0, 5, 10):
        changed = {k: v.copy() for k, v in batch.items()}
        changed["input_word_ids"][:, t + 1:] = (changed["input_word_ids"][:, t + 1:] + 7) % VOCAB
        changed["input_type_ids"][:, t + 1:] = 1 - changed["input_type_ids"][:, t + 1:]
        after, _ = _outputs(encoder, changed)
        for layer_before, layer_after in zip(before, after):
            if causal:
                np.testing.assert_allclose(layer_after[:, :t + 1], layer_before[:, :t + 1], atol=1e-6, rtol=0)
            else:
                assert np.abs(layer_after[:, :t + 1] - layer_before[:, :t + 1]).max() > 1e-2
        # The changed positions themselves do change.
        assert np.abs(after[-1][:, t + 1:] - before[-1][:, t + 1:]).max() > 1e-2


def test_causal_encoder_matches_numpy_and_pools_the_last_real_token():
    rng = np.random.default_rng(1)
    w = numpy_bert.random_weights(rng, VOCAB, HIDDEN, LAYERS, INTER, max_positions=POSITIONS)
    model = BertLanguageModel(BertEncoder(tiny_config(), causal_attention=True))
    assign_google_weights(model, w)
    batch = sample_batch(rng)  # three lengths, padded
    ref_layers, ref_pooled = numpy_bert.encoder_forward(
        w, batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"], HEADS, True, causal=True)
    layers, pooled = _outputs(model.encoder, batch)
    real = batch["input_mask"].astype(bool)
    for ours, ref in zip(layers, ref_layers):
        np.testing.assert_allclose(ours[real], ref[real], atol=2e-4)
    np.testing.assert_allclose(pooled, ref_pooled, atol=2e-4)
    # masked_outputs (pretraining's shortcut for the last layer) agrees with the full causal forward.
    positions = np.array([[1, 3], [2, 4], [1, 2]], np.int32)
    inputs = {k: tf.constant(v) for k, v in batch.items()}
    rows, shortcut_pooled = model.encoder.masked_outputs(inputs, tf.constant(positions))
    np.testing.assert_allclose(rows.numpy(), np.take_along_axis(layers[-1], positions[..., None], 1), atol=1e-5)
    np.testing.assert_allclose(shortcut_pooled.numpy(), pooled, atol=1e-5)


def test_next_token_loss_equals_numpy_reference():
    rng = np.random.default_rng(2)
    w = numpy_bert.random_weights(rng, VOCAB, HIDDEN, LAYERS, INTER, max_positions=POSITIONS)
    model = BertLanguageModel(BertEncoder(tiny_config(), causal_attention=True))
    assign_google_weights(model, w)
    model.compile(optimizer="sgd")
    batch = sample_batch(rng)
    ref_layers, _ = numpy_bert.encoder_forward(
        w, batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"], HEADS, True, causal=True)
    expected = numpy_bert.next_token_loss(w, ref_layers[-1], batch["input_word_ids"], batch["input_mask"], True)
    results = model.evaluate(batch, verbose=0, return_dict=True)
    assert results["lm_loss"] == pytest.approx(expected, rel=1e-4)
    assert results["loss"] == pytest.approx(expected, rel=1e-4)
    assert 0 <= results["lm_accuracy"] <= 1


def test_language_model_needs_a_causal_encoder():
    with pytest.raises(ConfigError, match="causal_attention=True"):
        BertLanguageModel(BertEncoder(tiny_config()))


def test_causal_encoder_survives_a_keras_file_round_trip(tmp_path):
    model = BertLanguageModel(BertEncoder(tiny_config(), causal_attention=True))
    batch = sample_batch(np.random.default_rng(3))
    path = str(tmp_path / "ltr.keras")
    model.save(path)
    restored = keras.models.load_model(path)
    assert restored.encoder.causal_attention
    np.testing.assert_array_equal(model(batch)["lm_logits"].numpy(), restored(batch)["lm_logits"].numpy())
    # Same variables and names as an MLM-only pretrainer: its checkpoints load into fine-tuning as usual.
    mlm = BertPretrainer(BertEncoder(tiny_config()), use_nsp=False)
    assert sorted(v.path for v in model.weights) == sorted(v.path for v in mlm.weights)


def test_unmasked_inputs_restore_the_real_masked_tokens_only():
    features = {"input_word_ids": tf.constant([[2, 4, 4, 7, 3, 0], [2, 4, 8, 3, 0, 0]]),
                "input_mask": tf.constant([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0]]),
                "input_type_ids": tf.zeros((2, 6), tf.int32),
                "masked_lm_positions": tf.constant([[1, 3, 0], [2, 0, 0]])}
    labels = {"masked_lm_ids": tf.constant([[11, 12, 0], [13, 0, 0]]),
              "masked_lm_weights": tf.constant([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])}
    out = unmasked_inputs(features, labels)
    assert out["input_word_ids"].numpy().tolist() == [[2, 11, 4, 12, 3, 0], [2, 4, 13, 3, 0, 0]]
    assert sorted(out) == ["input_mask", "input_type_ids", "input_word_ids"]


def test_left_to_right_run_trains_and_evaluates_on_pretraining_records(tmp_path):
    path = test_run_pretraining.write_examples(tmp_path / "train.tfrecord", 64)
    data = input_pipeline.open_pretraining_files(path, test_run_pretraining.SEQ_LENGTH,
                                                 test_run_pretraining.PREDICTIONS, use_nsp=False)
    options = TrainingOptions(str(tmp_path / "run"), train_batch_size=8, eval_batch_size=8, learning_rate=3e-3,
                              num_train_steps=40, num_warmup_steps=4, save_checkpoints_steps=40,
                              iterations_per_loop=10, max_eval_steps=4, log_steps=10, use_nsp=False)
    run = PretrainingRun(test_run_pretraining.tiny_config(), options, distribution.get_strategy("one_device"),
                         left_to_right=True)
    assert run.model.encoder.causal_attention
    first = run.evaluate(data)
    run.train(data)
    last = run.evaluate(data)
    assert sorted(last) == ["global_step", "lm_accuracy", "lm_loss", "loss"]
    assert last["global_step"] == 40 and last["lm_loss"] < first["lm_loss"] - 0.5


def test_causal_classifier_reads_the_last_real_token_and_ignores_padding():
    """Fine-tuning with the left-only constraint: the sequence representation is the last real token's."""
    keras.utils.set_random_seed(4)
    model = BertClassifier(BertEncoder(tiny_config(), causal_attention=True), num_classes=3, dropout_rate=0.0)
    batch = sample_batch(np.random.default_rng(5))
    logits = model(batch).numpy()
    sequence = model.encoder(batch)["sequence_output"].numpy()
    last = sequence[np.arange(3), batch["input_mask"].sum(1) - 1]
    expected = model.get_layer("classifier")(model.encoder.pooler(last)).numpy()
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    # A sequence's padding does not change its logits, and neither does its length beyond the last real token.
    longer = {k: np.pad(v, ((0, 0), (0, 4))) for k, v in batch.items()}
    np.testing.assert_allclose(model(longer).numpy(), logits, atol=1e-5)


@pytest.mark.slow  # a run_pretraining.py process: a minute on 2 quiet cores
def test_run_pretraining_objective_ltr_writes_the_lm_results(tmp_path):
    argv = command(tmp_path, "--objective=ltr", "--num_train_steps=20", "--num_warmup_steps=2", "--log_steps=10",
                   "--do_eval", "--max_eval_steps=2", "--eval_batch_size=8")
    result = subprocess.run(argv, env=environment(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    results = dict(line.split(" = ") for line in (tmp_path / "run" / "eval_results.txt").read_text().splitlines())
    assert sorted(results) == ["global_step", "lm_accuracy", "lm_loss", "loss"] and results["global_step"] == "20"
    assert "lm_accuracy" in result.stderr and "masked_lm" not in result.stderr
