"""`remat` (recomputing each transformer block in the backward pass) gives the same losses and gradients as
keeping the activations, dropout included, and survives serialization."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder, BertPretrainer
from official_bert.models import pretraining_losses as losses


def tiny_pretrainer(remat):
    keras.utils.set_random_seed(7)  # the same weights and the same dropout seed states in both models
    config = BertConfig(vocab_size=60, hidden_size=16, num_hidden_layers=3, num_attention_heads=4,
                        intermediate_size=32, max_position_embeddings=32, hidden_dropout_prob=0.2,
                        attention_probs_dropout_prob=0.2)
    return BertPretrainer(BertEncoder(config, remat=remat))


def batch():
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 60, (4, 12)).astype(np.int32)
    mask = np.ones_like(ids)
    mask[1, 8:] = 0
    x = {"input_word_ids": ids * mask, "input_mask": mask, "input_type_ids": np.zeros_like(ids),
         "masked_lm_positions": np.array([[1, 3, 5]] * 4, np.int32)}
    y = {"masked_lm_ids": rng.integers(5, 60, (4, 3)).astype(np.int32),
         "masked_lm_weights": np.ones((4, 3), np.float32),
         "next_sentence_labels": np.array([[0], [1], [0], [1]], np.int32)}
    return x, y


def losses_and_gradients(model, steps=2, training=True):
    x, y = batch()

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            out = model(x, training=training)
            loss = (losses.masked_lm_loss(y["masked_lm_ids"], out["mlm_logits"], y["masked_lm_weights"])
                    + losses.next_sentence_loss(y["next_sentence_labels"], out["nsp_logits"]))
        return loss, tape.gradient(loss, model.trainable_variables)

    # Two steps: the second draws new dropout masks, which must again match.
    return [(float(loss), [tf.convert_to_tensor(g).numpy() for g in grads])
            for loss, grads in (step() for _ in range(steps))]


@pytest.mark.slow
def test_remat_gives_the_same_losses_and_gradients_with_dropout():
    plain, remat = tiny_pretrainer(False), tiny_pretrainer(True)
    for a, b in zip(plain.weights, remat.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    expected, got = losses_and_gradients(plain), losses_and_gradients(remat)
    for (loss, grads), (remat_loss, remat_grads) in zip(expected, got):
        assert abs(loss - remat_loss) <= 1e-6 * max(1.0, abs(loss))
        for g, rg, variable in zip(grads, remat_grads, remat.trainable_variables):
            np.testing.assert_allclose(rg, g, rtol=1e-5, atol=1e-6, err_msg=variable.path)
    # Dropout was on (otherwise matching masks would prove nothing): without it the gradients differ.
    no_dropout = losses_and_gradients(tiny_pretrainer(False), steps=1, training=False)[0][1]
    assert max(np.abs(a - b).max() / np.abs(a).max() for a, b in zip(no_dropout, expected[0][1])) > 0.05


def test_remat_is_kept_in_the_config():
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=50), remat=True)
    restored = BertEncoder.from_config(encoder.get_config())
    assert restored.remat and all(block.remat for block in restored.transformer_layers)
    assert not BertEncoder.from_config(BertEncoder(BertConfig.from_preset("tiny", vocab_size=50)).get_config()).remat


def test_pretraining_run_builds_remat_blocks(tmp_path):
    from official_bert import distribution
    from official_bert.training import TrainingOptions
    from official_bert.training.pretraining import PretrainingRun

    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32)
    for remat in (False, True):
        options = TrainingOptions(str(tmp_path), num_train_steps=10, num_warmup_steps=1, remat=remat)
        run = PretrainingRun(config, options, distribution.get_strategy("one_device"))
        assert [block.remat for block in run.model.encoder.transformer_layers] == [remat, remat]
