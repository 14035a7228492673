"""The retrieval losses against sentence-transformers' own (tests/fixtures/sentence_transformers_losses.npz, written by
tools/make_sentence_transformers_losses.py): the same loss and the same gradient with respect to the embeddings; and
the duplicates of a batch left out of the in-batch softmax as a NumPy transcription of the rule says."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert.retrieval.losses import (CachedMultipleNegativesRankingLoss, CoSENTLoss, CosineSimilarityLoss,
                                            MatryoshkaLoss, MultipleNegativesRankingLoss, batch_text_ids)

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "sentence_transformers_losses.npz")


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE) as f:
        return dict(f)


def distinct_ids(embeddings):
    return np.arange(embeddings.shape[0] * embeddings.shape[1]).reshape(embeddings.shape[:2])


def loss_and_gradient(loss, y_true, embeddings):
    x = tf.constant(embeddings, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = loss(y_true, x)
    return float(value), tape.gradient(value, x).numpy()


@pytest.mark.parametrize("name, loss, data, targets", [
    ("mnrl", MultipleNegativesRankingLoss(), "rows", "ids"),
    ("mnrl_pairs", MultipleNegativesRankingLoss(), "pairs_of_rows", "ids"),
    ("mnrl", CachedMultipleNegativesRankingLoss(mini_batch_size=2), "rows", "ids"),
    ("symmetric", MultipleNegativesRankingLoss(symmetric=True), "pairs_of_rows", "ids"),
    ("cosent", CoSENTLoss(), "pairs", "scores"),
    ("cosine", CosineSimilarityLoss(), "pairs", "scores"),
    ("matryoshka", MatryoshkaLoss(MultipleNegativesRankingLoss(), [8, 4, 2], [1.0, 0.5, 0.25]), "rows", "ids"),
])
def test_loss_and_gradient_are_sentence_transformers(reference, name, loss, data, targets):
    embeddings = reference["rows"][:, :2] if data == "pairs_of_rows" else reference[data]
    y_true = reference["scores"] if targets == "scores" else distinct_ids(embeddings)
    value, gradient = loss_and_gradient(loss, y_true, embeddings)
    np.testing.assert_allclose(value, reference[f"{name}_loss"], rtol=1e-5)
    np.testing.assert_allclose(gradient, reference[f"{name}_gradient"], rtol=1e-4, atol=1e-6)


def numpy_ranking_loss(embeddings, texts, scale=20.0):
    """Each anchor's softmax over the batch's positives and negatives, leaving out a candidate (not its own positive)
    whose text is the anchor's or the positive's; the mean over the anchors."""
    unit = embeddings / np.linalg.norm(embeddings, axis=-1, keepdims=True)
    batch, columns = texts.shape
    losses = []
    for i in range(batch):
        logits, target = [], None
        for c in range(1, columns):
            for j in range(batch):
                if (c, j) == (1, i):
                    target = len(logits)
                elif texts[j, c] in (texts[i, 0], texts[i, 1]):
                    continue
                logits.append(scale * unit[i, 0] @ unit[j, c])
        logits = np.array(logits)
        losses.append(np.log(np.exp(logits - logits.max()).sum()) + logits.max() - logits[target])
    return np.mean(losses)


def test_duplicate_texts_are_not_negatives_of_each_other():
    rng = np.random.default_rng(3)
    embeddings = rng.normal(size=(5, 3, 6))
    # Rows 0 and 2 share their positive; row 3's negative is row 1's anchor; row 4's anchor is row 0's negative.
    texts = np.array([["q0", "p0", "n0"], ["q1", "p1", "n1"], ["q2", "p0", "n2"], ["q3", "p3", "q1"],
                      ["n0", "p4", "n4"]])
    _, ids = np.unique(texts, return_inverse=True)
    ids = ids.reshape(texts.shape)
    value = float(MultipleNegativesRankingLoss()(batch_text_ids(ids), embeddings.astype("float32")))
    np.testing.assert_allclose(value, numpy_ranking_loss(embeddings, texts), rtol=1e-5)
    # Without the rule, the shared positive is a negative of rows 0 and 2: a higher loss.
    plain = float(MultipleNegativesRankingLoss()(distinct_ids(embeddings), embeddings.astype("float32")))
    assert not np.isclose(plain, value)


def test_batch_text_ids_number_equal_texts_alike():
    ids = batch_text_ids(np.array([[2**40, 5], [5, 2**40 + 1]], np.int64)).numpy()
    assert ids.tolist() == [[0.0, 1.0], [1.0, 2.0]]


@pytest.mark.parametrize("loss", [MultipleNegativesRankingLoss(scale=10.0, symmetric=True),
                                  CachedMultipleNegativesRankingLoss(8, symmetric=True), CoSENTLoss(scale=5.0),
                                  CosineSimilarityLoss(), MatryoshkaLoss(CoSENTLoss(), [4, 2])])
def test_losses_round_trip_their_config(loss):
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(loss))
    assert type(again) is type(loss) and again.get_config() == loss.get_config()


@pytest.mark.parametrize("make", [lambda: MultipleNegativesRankingLoss(scale=0.0),
                                  lambda: MultipleNegativesRankingLoss(scale=float("nan")),
                                  lambda: CoSENTLoss(scale=float("inf")),
                                  lambda: CachedMultipleNegativesRankingLoss(mini_batch_size=0),
                                  lambda: MatryoshkaLoss(CoSENTLoss(), []),
                                  lambda: MatryoshkaLoss(CoSENTLoss(), [4, 2], [1.0])])
def test_bad_settings_are_refused(make):
    with pytest.raises(ValueError):
        make()
