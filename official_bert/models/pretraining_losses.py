"""Pretraining losses and metrics, as the original `run_pretraining.py` computes them."""

import tensorflow as tf
from keras import ops


def _weighted_mean(values, weights):
    # The original divides by sum(weights) + 1e-5, so a batch with no real masked position gives 0, not NaN.
    return ops.sum(values * weights) / (ops.sum(weights) + 1e-5)


def vocabulary_cross_entropy(labels, logits):
    """Cross-entropy of each position's true token under its logits over the vocabulary, computed in float32,
    its forward and backward passes one XLA kernel each.

    TensorFlow's SparseSoftmaxCrossEntropyWithLogits took 46 ms for BERT's [640, 30522] masked-LM logits on 2 AMD
    cores (AVX512_BF16), forward and backward; compiled, 13. The forward pass keeps only each row's log-normalizer;
    the backward pass computes softmax - one_hot from it, in the logits' dtype.

    Args:
        labels: int [...] true token ids, each in [0, V).
        logits: float [..., V] of any float dtype.

    Returns:
        float32 [...] the losses.

    Example:
    >>> import numpy as np
    >>> logits = np.log(np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], "float32"))
    >>> np.round(vocabulary_cross_entropy(np.array([0, 2]), logits).numpy(), 4)  # -log 0.7, -log 0.8
    array([0.3567, 0.2231], dtype=float32)
    """
    logits = tf.convert_to_tensor(logits)
    labels = tf.cast(labels, tf.int32)
    vocab_size = tf.shape(logits, out_type=tf.int32)[-1]
    # XLA's gather would clamp an id outside the vocabulary (data built with another vocabulary) silently.
    checks = [tf.debugging.assert_non_negative(labels, message="token ids must be at least 0"),
              tf.debugging.assert_less(labels, vocab_size, message="token ids must be below the vocabulary size")]
    with tf.control_dependencies(checks):
        labels = tf.identity(labels)

    rows = tf.reshape(labels, [-1])

    @tf.custom_gradient
    def cross_entropy(logits):
        losses, log_normalizer = _cross_entropy_forward(rows, logits)
        return losses, lambda dy: _cross_entropy_backward(rows, logits, log_normalizer, dy)

    return tf.reshape(cross_entropy(tf.reshape(logits, [-1, vocab_size])), tf.shape(labels))


@tf.function(jit_compile=True)
def _cross_entropy_forward(labels, logits):
    logits = tf.cast(logits, tf.float32)
    peak = tf.reduce_max(logits, -1)
    log_normalizer = peak + tf.math.log(tf.reduce_sum(tf.exp(logits - peak[:, None]), -1))
    return log_normalizer - tf.gather(logits, labels, batch_dims=1), log_normalizer


@tf.function(jit_compile=True)
def _cross_entropy_backward(labels, logits, log_normalizer, dy):
    probabilities = tf.exp(tf.cast(logits, tf.float32) - log_normalizer[:, None])
    gradient = (probabilities - tf.one_hot(labels, tf.shape(logits)[-1], dtype=tf.float32)) * dy[:, None]
    return tf.cast(gradient, logits.dtype)


def masked_lm_loss(labels, logits, weights):
    """Mean cross-entropy over real masked positions.

    Args:
        labels: int [B, P] true token ids.
        logits: float [B, P, V].
        weights: float [B, P]; 1.0 for a real prediction, 0.0 for padding (ignored).
    """
    return _weighted_mean(vocabulary_cross_entropy(labels, logits), ops.cast(weights, "float32"))


def masked_lm_loss_and_metrics(trackers, labels, logits, weights, prefix="masked_lm"):
    """`masked_lm_loss`, and the batch added to the `keras.metrics.Mean`s `trackers[prefix + "_accuracy"]` and
    `[prefix + "_loss"]` from the same cross-entropy, computed once. The metrics are pooled over positions: each
    position counts with its weight, as in the original's `tf.metrics.accuracy(..., weights=masked_lm_weights)` and
    `tf.metrics.mean(..., weights=...)`.

    Args:
        trackers: dict of name → `keras.metrics.Mean`.
        labels: int [B, P] true token ids.
        logits: float [B, P, V].
        weights: float [B, P]; 1.0 for a real prediction, 0.0 for padding.
        prefix: the metrics' names before _accuracy and _loss.

    Returns:
        The batch's mean cross-entropy over its real masked positions.

    Example:
    >>> import keras, numpy as np
    >>> trackers = {name: keras.metrics.Mean() for name in ("masked_lm_accuracy", "masked_lm_loss")}
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1]]], "float32"))
    >>> _ = masked_lm_loss_and_metrics(trackers, np.array([[0, 0]]), logits, np.array([[1.0, 0.0]]))
    >>> _ = masked_lm_loss_and_metrics(trackers, np.array([[1, 1]]), logits, np.array([[1.0, 1.0]]))
    >>> round(float(trackers["masked_lm_accuracy"].result()), 4)  # (1 + 0 + 0) / 3 positions
    0.3333
    """
    position_losses = vocabulary_cross_entropy(labels, logits)
    weights = ops.cast(weights, "float32")
    # tf.argmax: Keras's makes five more passes over the [positions, vocabulary] logits (ordering -0.0 below 0.0,
    # for JAX's flush-to-zero) and holds their temporaries; the original's metric is tf.argmax too.
    predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
    correct = ops.cast(ops.equal(predicted, ops.cast(labels, "int32")), "float32")
    flat_weights = ops.reshape(weights, (-1,))
    trackers[f"{prefix}_accuracy"].update_state(ops.reshape(correct, (-1,)), sample_weight=flat_weights)
    trackers[f"{prefix}_loss"].update_state(ops.reshape(position_losses, (-1,)), sample_weight=flat_weights)
    return _weighted_mean(position_losses, weights)


def next_sentence_loss(labels, logits):
    """Mean 2-way cross-entropy; label 0 = IsNext, 1 = random."""
    labels = ops.reshape(labels, (-1,))
    return ops.mean(ops.sparse_categorical_crossentropy(labels, ops.cast(logits, "float32"), from_logits=True))


def next_sentence_accuracy(labels, logits):
    labels = ops.cast(ops.reshape(labels, (-1,)), "int64")
    return ops.mean(ops.cast(ops.equal(ops.argmax(logits, axis=-1), labels), "float32"))
