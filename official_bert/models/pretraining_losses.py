"""Pretraining losses and metrics (SPEC §4), as the original `run_pretraining.py` computes them."""

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


def masked_lm_accuracy(labels, logits, weights):
    """Share of real masked positions whose arg-max prediction is the true id."""
    correct = ops.cast(ops.equal(ops.argmax(logits, axis=-1), ops.cast(labels, "int64")), "float32")
    return _weighted_mean(correct, ops.cast(weights, "float32"))


def next_sentence_loss(labels, logits):
    """Mean 2-way cross-entropy; label 0 = IsNext, 1 = random."""
    labels = ops.reshape(labels, (-1,))
    return ops.mean(ops.sparse_categorical_crossentropy(labels, ops.cast(logits, "float32"), from_logits=True))


def next_sentence_accuracy(labels, logits):
    labels = ops.cast(ops.reshape(labels, (-1,)), "int64")
    return ops.mean(ops.cast(ops.equal(ops.argmax(logits, axis=-1), labels), "float32"))
