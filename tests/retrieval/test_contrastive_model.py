"""`ContrastiveModel`: with a cached loss, a batch of 256 rows gives the plain batch's loss and gradients in
mini-batches of 32 (GradCache); the second pass replays the first pass's dropout masks; Keras `fit` trains through
it; its checkpoints load into the embedder."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder
from official_bert.batch_padding import trim_to_longest
from official_bert.checkpoints import load_checkpoint, save_checkpoint
from official_bert.keras_models import TextEmbedder, TextPreprocessor
from official_bert.layers.dropout import seed_generator_states
from official_bert.retrieval.contrastive_model import ContrastiveModel
from official_bert.retrieval.losses import (CachedMultipleNegativesRankingLoss, MatryoshkaLoss,
                                            MultipleNegativesRankingLoss, batch_text_ids)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + [f"w{i}" for i in range(60)]


def embedder(dropout):
    keras.utils.set_random_seed(0)
    config = BertConfig.from_preset("tiny", vocab_size=len(VOCAB), num_hidden_layers=1, hidden_dropout_prob=dropout,
                                    attention_probs_dropout_prob=dropout)
    return TextEmbedder(BertEncoder(config), TextPreprocessor(VOCAB, sequence_length=16))


def batch(rows, columns=2, length=10, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, length + 1, (rows, columns))
    mask = (np.arange(length) < lengths[..., None]).astype("int32")
    ids = rng.integers(4, len(VOCAB), (rows, columns, length)) * mask
    ids[..., 0] = 2
    inputs = {"input_word_ids": tf.constant(ids, tf.int32), "input_mask": tf.constant(mask),
              "input_type_ids": tf.zeros_like(mask)}
    return inputs, batch_text_ids(np.arange(rows * columns).reshape(rows, columns))


def loss_and_gradients(model, loss, inputs, y):
    @tf.function
    def step():
        with tf.GradientTape() as tape:
            value = loss(y, model(inputs, training=True))
        return value, tape.gradient(value, model.embedder.trainable_variables)

    value, gradients = step()
    return float(value), [None if g is None else tf.convert_to_tensor(g).numpy() for g in gradients]


@pytest.mark.parametrize("symmetric", [False, True])
def test_cached_batch_of_256_is_the_plain_batch(symmetric):
    model = embedder(dropout=0.0)
    inputs, y = batch(256)
    plain = loss_and_gradients(ContrastiveModel(model, bucket_width=8),
                               MultipleNegativesRankingLoss(symmetric=symmetric), inputs, y)
    cached = loss_and_gradients(ContrastiveModel(model, mini_batch_size=32, bucket_width=8),
                                CachedMultipleNegativesRankingLoss(32, symmetric=symmetric), inputs, y)
    assert cached[0] == pytest.approx(plain[0], rel=1e-6)
    assert [g is None for g in cached[1]] == [g is None for g in plain[1]]  # the pooler: no gradient in either
    for ours, theirs in zip(cached[1], plain[1]):
        if theirs is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-7)


def test_cached_matryoshka_and_hard_negatives_are_the_plain_loss():
    model = embedder(dropout=0.0)
    inputs, y = batch(20, columns=3, seed=1)
    loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), [128, 32], [1.0, 0.5])
    plain = loss_and_gradients(ContrastiveModel(model), loss, inputs, y)
    cached = loss_and_gradients(ContrastiveModel(model, mini_batch_size=6), loss, inputs, y)
    assert cached[0] == pytest.approx(plain[0], rel=1e-6)
    for ours, theirs in zip(cached[1], plain[1]):
        if theirs is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-7)


@pytest.mark.slow  # about 10 s: a tape over the model eagerly, and a traced step
def test_the_second_pass_replays_the_first_pass_dropout():
    """With dropout, the cached gradient is that of the same mini-batches embedded once under one tape, from the
    same seed-generator state (the masks the first pass drew); the generators end where one pass leaves them."""
    model = embedder(dropout=0.1)
    inputs, y = batch(10, seed=2)
    states = seed_generator_states(model)
    start = [s.numpy() for s in states]
    loss = MultipleNegativesRankingLoss()
    value, gradients = loss_and_gradients(ContrastiveModel(model, mini_batch_size=4, bucket_width=1), loss, inputs, y)
    end = [s.numpy() for s in states]
    for state, value_at_start in zip(states, start):
        state.assign(value_at_start)
    with tf.GradientTape() as tape:
        columns = [tf.concat([model(trim_to_longest({k: v[i:i + 4, c] for k, v in inputs.items()}, 1), training=True)
                              for i in range(0, 10, 4)], axis=0) for c in range(2)]
        expected = loss(y, tf.stack(columns, axis=1))
    assert value == pytest.approx(float(expected), rel=1e-6)
    for ours, theirs in zip(gradients, tape.gradient(expected, model.trainable_variables)):
        if theirs is not None:
            theirs = tf.convert_to_tensor(theirs).numpy()  # summed in another order: float32 rounding apart
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())
    assert all((a == s.numpy()).all() for a, s in zip(end, states))
    assert not all((a == b).all() for a, b in zip(start, end))  # dropout drew masks


@pytest.mark.slow  # about 10 s: traces a Keras train step
def test_fit_trains_and_checkpoints_load_into_the_embedder(tmp_path):
    model = embedder(dropout=0.1)
    trainer = ContrastiveModel(model, mini_batch_size=8, bucket_width=8)
    trainer.compile(optimizer=keras.optimizers.Adam(1e-3), loss=CachedMultipleNegativesRankingLoss(8))
    inputs, y = batch(32, seed=3)
    history = trainer.fit(tf.data.Dataset.from_tensors((inputs, y)).repeat(6), epochs=1, verbose=0, shuffle=False)
    assert np.isfinite(history.history["loss"][-1]) and history.history["loss"][-1] > 0
    save_checkpoint(trainer, str(tmp_path / "ckpt"))
    fresh = embedder(dropout=0.1)
    report = load_checkpoint(fresh, str(tmp_path / "ckpt"))
    assert not report.missing
    texts = ["w1 w2 w3", "w4"]
    np.testing.assert_allclose(fresh.predict(texts, verbose=0), model.predict(texts, verbose=0), atol=1e-6)
