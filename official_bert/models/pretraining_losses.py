"""Pretraining losses and metrics, as the original `run_pretraining.py` computes them."""

from keras import ops


def _weighted_mean(values, weights):
    # The original divides by sum(weights) + 1e-5, so a batch with no real masked position gives 0, not NaN.
    return ops.sum(values * weights) / (ops.sum(weights) + 1e-5)


def masked_lm_loss(labels, logits, weights):
    """Mean cross-entropy over real masked positions.

    Args:
        labels: int [B, P] true token ids.
        logits: float [B, P, V].
        weights: float [B, P]; 1.0 for a real prediction, 0.0 for padding (ignored).
    """
    losses = ops.sparse_categorical_crossentropy(labels, ops.cast(logits, "float32"), from_logits=True)
    return _weighted_mean(losses, ops.cast(weights, "float32"))


def update_masked_lm_metrics(trackers, labels, logits, weights, prefix="masked_lm"):
    """Adds a batch to the `keras.metrics.Mean`s `trackers[prefix + "_accuracy"]` and `[prefix + "_loss"]`,
    pooled over positions: each position counts with its weight, as in the original's
    `tf.metrics.accuracy(..., weights=masked_lm_weights)` and `tf.metrics.mean(..., weights=...)`.

    Args:
        trackers: dict of name → `keras.metrics.Mean`.
        labels: int [B, P] true token ids.
        logits: float [B, P, V].
        weights: float [B, P]; 1.0 for a real prediction, 0.0 for padding.
        prefix: the metrics' names before _accuracy and _loss.

    Example:
    >>> import keras, numpy as np
    >>> trackers = {name: keras.metrics.Mean() for name in ("masked_lm_accuracy", "masked_lm_loss")}
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1]]], "float32"))
    >>> update_masked_lm_metrics(trackers, np.array([[0, 0]]), logits, np.array([[1.0, 0.0]]))
    >>> update_masked_lm_metrics(trackers, np.array([[1, 1]]), logits, np.array([[1.0, 1.0]]))
    >>> round(float(trackers["masked_lm_accuracy"].result()), 4)  # (1 + 0 + 0) / 3 positions
    0.3333
    """
    weights = ops.reshape(ops.cast(weights, "float32"), (-1,))
    labels = ops.reshape(labels, (-1,))
    logits = ops.cast(ops.reshape(logits, (-1, ops.shape(logits)[-1])), "float32")
    correct = ops.cast(ops.equal(ops.argmax(logits, axis=-1), ops.cast(labels, "int64")), "float32")
    trackers[f"{prefix}_accuracy"].update_state(correct, sample_weight=weights)
    trackers[f"{prefix}_loss"].update_state(
        ops.sparse_categorical_crossentropy(labels, logits, from_logits=True), sample_weight=weights)


def next_sentence_loss(labels, logits):
    """Mean 2-way cross-entropy; label 0 = IsNext, 1 = random."""
    labels = ops.reshape(labels, (-1,))
    return ops.mean(ops.sparse_categorical_crossentropy(labels, ops.cast(logits, "float32"), from_logits=True))


def next_sentence_accuracy(labels, logits):
    labels = ops.cast(ops.reshape(labels, (-1,)), "int64")
    return ops.mean(ops.cast(ops.equal(ops.argmax(logits, axis=-1), labels), "float32"))
