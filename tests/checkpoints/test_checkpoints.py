"""Checkpoints: a Google TF1 checkpoint written as the original did loads to the NumPy reference's numbers,
and our models survive every save → load round trip bit for bit."""

import numpy as np
import pytest
import tensorflow as tf

from official_bert import (BertClassifier, BertConfig, BertEncoder, BertMultipleChoice, BertPretrainer,
                           BertSpanLabeler, BertTokenClassifier)
from official_bert.checkpoints import load_checkpoint, save_checkpoint
from tests import numpy_bert

VOCAB, HIDDEN, LAYERS, HEADS, INTER, POSITIONS = 40, 16, 2, 4, 32, 24


def tiny_config(**overrides):
    values = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  intermediate_size=INTER, max_position_embeddings=POSITIONS, type_vocab_size=2)
    values.update(overrides)
    return BertConfig(**values)


def write_tf1_checkpoint(prefix, arrays):
    """Writes `arrays` the way the original TF1 code did: graph variables under these names, tf1 Saver."""
    with tf.Graph().as_default():
        variables = [tf.compat.v1.Variable(value, name=name) for name, value in arrays.items()]
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, prefix, write_meta_graph=False)


def google_release(directory, weights, config, extra=None):
    """A directory laid out like Google's zips: bert_model.ckpt.* + bert_config.json."""
    write_tf1_checkpoint(str(directory / "bert_model.ckpt"), {**weights, **(extra or {})})
    config.to_json_file(str(directory / "bert_config.json"))
    return directory


def sample_inputs(rng, batch=3, length=10):
    ids = rng.integers(5, VOCAB, size=(batch, length)).astype(np.int32)
    mask = np.ones((batch, length), np.int32)
    mask[1, 6:] = 0  # padding
    segments = np.zeros((batch, length), np.int32)
    segments[:, 5:] = 1
    ids[1, 6:] = 0
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": segments}


def randomized(model, seed):
    """`model` with every weight set to distinct random values (so a swapped or transposed one shows)."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.standard_normal(variable.shape).astype(np.float32))
    return model


def weights_of(model):
    return {v.path: v.numpy() for v in model.weights}


def assert_same_weights(a, b):
    wa, wb = weights_of(a), weights_of(b)
    assert sorted(wa) == sorted(wb)
    for path in wa:
        np.testing.assert_array_equal(wa[path], wb[path], err_msg=path)


@pytest.mark.parametrize("hidden_act,approximate", [("gelu", True), ("gelu_erf", False)])
def test_original_tf1_checkpoint_matches_numpy_reference(tmp_path, hidden_act, approximate):
    rng = np.random.default_rng(0)
    weights = numpy_bert.random_weights(rng, VOCAB, HIDDEN, LAYERS, INTER, max_positions=POSITIONS)
    config = tiny_config(hidden_act=hidden_act)
    # Training state as the original run_pretraining.py leaves it: must be skipped, not loaded.
    extra = {"global_step": np.int64(1000),
             "bert/embeddings/word_embeddings/adam_m": np.ones((VOCAB, HIDDEN), np.float32)}
    google_release(tmp_path, weights, config, extra)

    model = BertPretrainer(BertEncoder(config))
    report = load_checkpoint(model, str(tmp_path))
    assert report.format == "google"
    assert report.missing == [] and report.unexpected == []
    assert sorted(report.skipped) == ["bert/embeddings/word_embeddings/adam_m", "global_step"]

    batch = sample_inputs(rng)
    ref_layers, ref_pooled = numpy_bert.encoder_forward(
        weights, batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"], HEADS, approximate)
    out = model.encoder(batch, training=False)
    for ours, ref in zip(out["encoder_outputs"], ref_layers, strict=True):
        np.testing.assert_allclose(ours.numpy(), ref, atol=1e-5, rtol=0)
    np.testing.assert_allclose(out["pooled_output"].numpy(), ref_pooled, atol=1e-5, rtol=0)

    positions = np.array([[1, 2, 7], [0, 3, 4], [9, 8, 5]], np.int32)
    ref_mlm, ref_nsp = numpy_bert.pretraining_heads(weights, ref_layers[-1], ref_pooled, positions, approximate)
    heads = model({**batch, "masked_lm_positions": positions}, training=False)
    np.testing.assert_allclose(heads["mlm_logits"].numpy(), ref_mlm, atol=1e-4, rtol=1e-5)
    np.testing.assert_allclose(heads["nsp_logits"].numpy(), ref_nsp, atol=1e-5, rtol=0)


def test_original_classifier_and_squad_heads_load(tmp_path):
    """run_classifier.py's unscoped output_weights [C, H] and run_squad.py's cls/squad/* ([2, H])."""
    rng = np.random.default_rng(1)
    weights = numpy_bert.random_weights(rng, VOCAB, HIDDEN, LAYERS, INTER, max_positions=POSITIONS)
    weights = {k: v for k, v in weights.items() if not k.startswith("cls/")}
    head = {"output_weights": rng.standard_normal((3, HIDDEN)).astype(np.float32),
            "output_bias": rng.standard_normal(3).astype(np.float32)}
    google_release(tmp_path, weights, tiny_config(), head)
    classifier = BertClassifier(BertEncoder(tiny_config()), num_classes=3)
    assert load_checkpoint(classifier, str(tmp_path / "bert_model.ckpt")).missing == []

    batch = sample_inputs(rng)
    _, ref_pooled = numpy_bert.encoder_forward(
        weights, batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"], HEADS, True)
    expected = ref_pooled @ head["output_weights"].T + head["output_bias"]
    np.testing.assert_allclose(classifier(batch, training=False).numpy(), expected, atol=1e-5)

    squad_dir = tmp_path / "squad"
    squad_dir.mkdir()
    span = {"cls/squad/output_weights": head["output_weights"][:2], "cls/squad/output_bias": head["output_bias"][:2]}
    google_release(squad_dir, weights, tiny_config(), span)
    labeler = BertSpanLabeler(BertEncoder(tiny_config()))
    load_checkpoint(labeler, str(squad_dir))
    np.testing.assert_array_equal(labeler.get_layer("span_logits").kernel.numpy(), span["cls/squad/output_weights"].T)


def all_models():
    return {
        "encoder": lambda: BertEncoder(tiny_config()),
        "pretrainer": lambda: BertPretrainer(BertEncoder(tiny_config())),
        "pretrainer_no_nsp": lambda: BertPretrainer(BertEncoder(tiny_config()), use_nsp=False),
        "classifier": lambda: BertClassifier(BertEncoder(tiny_config()), num_classes=3),
        "span_labeler": lambda: BertSpanLabeler(BertEncoder(tiny_config())),
        "token_classifier": lambda: BertTokenClassifier(BertEncoder(tiny_config()), num_classes=5),
        "multiple_choice": lambda: BertMultipleChoice(BertEncoder(tiny_config()), num_choices=4),
    }


@pytest.mark.parametrize("fmt", ["huggingface", "google", "official_bert"])
@pytest.mark.parametrize("kind", ["encoder", "pretrainer", "pretrainer_no_nsp", "classifier", "span_labeler",
                                  "token_classifier", "multiple_choice"])
def test_round_trip_is_exact(tmp_path, fmt, kind):
    build = all_models()[kind]
    original = randomized(build(), seed=7)
    save_checkpoint(original, str(tmp_path), format=fmt)
    restored = build()
    report = load_checkpoint(restored, str(tmp_path))
    assert (report.missing, report.unexpected) == ([], [])
    assert_same_weights(original, restored)


def test_pretraining_checkpoint_feeds_a_classifier(tmp_path):
    """The fine-tuning path: encoder weights load, the MLM/NSP heads are reported, the new head is missing."""
    pretrainer = randomized(BertPretrainer(BertEncoder(tiny_config())), seed=3)
    save_checkpoint(pretrainer, str(tmp_path), format="huggingface")
    classifier = BertClassifier(BertEncoder(tiny_config()), num_classes=2)
    report = load_checkpoint(classifier, str(tmp_path))
    assert report.missing == ["classifier/kernel", "classifier/bias"]
    assert sorted(report.unexpected) == ["cls.predictions.bias", "cls.predictions.transform.LayerNorm.bias",
                                         "cls.predictions.transform.LayerNorm.weight",
                                         "cls.predictions.transform.dense.bias",
                                         "cls.predictions.transform.dense.weight", "cls.seq_relationship.bias",
                                         "cls.seq_relationship.weight"]
    for path, value in weights_of(pretrainer.encoder).items():
        np.testing.assert_array_equal(weights_of(classifier.encoder)[path], value, err_msg=path)


def test_google_export_has_exactly_the_original_names(tmp_path):
    """Every original Google TF1 name (the NumPy reference's list) with its shape, readable by tf.train.load_checkpoint."""
    pretrainer = randomized(BertPretrainer(BertEncoder(tiny_config())), seed=5)
    prefix = save_checkpoint(pretrainer, str(tmp_path), format="google")
    reader = tf.train.load_checkpoint(prefix)
    expected = numpy_bert.random_weights(np.random.default_rng(0), VOCAB, HIDDEN, LAYERS, INTER,
                                         max_positions=POSITIONS)
    assert reader.get_variable_to_shape_map() == {name: list(v.shape) for name, v in expected.items()}
    qkv = pretrainer.encoder.get_layer("transformer_layer_1").attention.qkv_kernel.numpy()
    np.testing.assert_array_equal(reader.get_tensor("bert/encoder/layer_1/attention/self/key/kernel"),
                                  qkv[:, HIDDEN:2 * HIDDEN])
    np.testing.assert_array_equal(reader.get_tensor("cls/seq_relationship/output_weights"),
                                  pretrainer.get_layer("next_sentence").kernel.numpy().T)
