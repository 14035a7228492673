"""The masked LM's cross-entropy over the vocabulary, one XLA kernel forward and one backward: its values and
gradient against NumPy's softmax, in float32 and bfloat16, ids outside the vocabulary refused, and one such
cross-entropy in a pretraining step, shared by the loss and its metric."""

import collections

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder
from official_bert.models import BertPretrainer
from official_bert.models import pretraining_losses as losses


def numpy_reference(labels, logits):
    """Per-position loss and d(sum of loss · dy)/d logits = (softmax - one_hot) · dy, in float64."""
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(-1, keepdims=True)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    loss = -np.take_along_axis(log_probabilities, labels[..., None], -1)[..., 0]
    one_hot = np.eye(logits.shape[-1])[labels]
    return loss, np.exp(log_probabilities) - one_hot


def loss_and_gradient(labels, logits, dy):
    logits = tf.convert_to_tensor(logits)
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = losses.vocabulary_cross_entropy(labels, logits)
        weighted = tf.reduce_sum(loss * dy)
    return loss, tape.gradient(weighted, logits)


def test_values_and_gradient_equal_numpys_softmax_in_float32():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 4, (2, 3, 50)).astype(np.float32)  # [B, P, V], large logits included
    labels = rng.integers(0, 50, (2, 3))
    dy = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    loss, gradient = loss_and_gradient(labels, logits, dy)
    expected_loss, expected_softmax_minus_one_hot = numpy_reference(labels, logits)
    assert loss.shape == (2, 3) and loss.dtype == tf.float32
    np.testing.assert_allclose(loss.numpy(), expected_loss, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gradient.numpy(), expected_softmax_minus_one_hot * dy[..., None], atol=1e-6)


def test_bfloat16_logits_are_read_in_float32_and_their_gradient_returned_in_bfloat16():
    rng = np.random.default_rng(1)
    logits = tf.cast(rng.normal(0, 3, (4, 40)), tf.bfloat16)
    labels = rng.integers(0, 40, 4)
    loss, gradient = loss_and_gradient(labels, logits, tf.ones([4]))
    # The reference sees exactly the bf16 values: only the float32 arithmetic differs.
    expected_loss, expected_gradient = numpy_reference(labels, tf.cast(logits, tf.float32).numpy())
    assert loss.dtype == tf.float32 and gradient.dtype == tf.bfloat16
    np.testing.assert_allclose(loss.numpy(), expected_loss, rtol=1e-5)
    np.testing.assert_allclose(tf.cast(gradient, tf.float32).numpy(), expected_gradient, atol=4e-3)  # bf16's step


@pytest.mark.parametrize("bad_id", [50, -1])
def test_an_id_outside_the_vocabulary_is_refused_not_clamped(bad_id):
    logits = np.zeros((2, 50), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="token ids must be"):
        losses.vocabulary_cross_entropy(np.array([3, bad_id]), logits)


def test_a_pretraining_step_computes_one_vocabulary_cross_entropy_for_the_loss_and_its_metric():
    # SparseSoftmaxCrossEntropyWithLogits took 46 ms at BERT's [640, 30522] and the metric computed it a second time.
    config = BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=1)
    model = BertPretrainer(BertEncoder(config))
    rng = np.random.default_rng(2)
    ids = tf.constant(rng.integers(5, 100, (2, 8)), tf.int32)
    x = {"input_word_ids": ids, "input_mask": tf.ones_like(ids), "input_type_ids": tf.zeros_like(ids),
         "masked_lm_positions": tf.constant([[1, 2], [3, 0]], tf.int32)}
    y = {"masked_lm_ids": tf.constant([[7, 8], [9, 0]], tf.int32),
         "masked_lm_weights": tf.constant([[1.0, 1.0], [1.0, 0.0]]),
         "next_sentence_labels": tf.constant([[0], [1]], tf.int32)}

    def step():
        with tf.GradientTape() as tape:
            loss = model.compute_loss(x, y, model(x, training=True))
        return tape.gradient(loss, model.trainable_variables)

    graph = tf.function(step).get_concrete_function().graph
    counts = collections.Counter(op.type for op in graph.get_operations())
    # The call may sit in the graph or, traced before in the same process, in a function of its library.
    calls = [node for function in [graph.as_graph_def()] + list(graph.as_graph_def().library.function)
             for node in getattr(function, "node", getattr(function, "node_def", []))
             if node.op in ("PartitionedCall", "StatefulPartitionedCall")]
    forward = [node for node in calls if "cross_entropy_forward" in node.attr["f"].func.name]
    assert len(forward) == 1
    assert counts["SparseSoftmaxCrossEntropyWithLogits"] == 1  # the next-sentence head's two classes
    # The accuracy's argmax is one pass over the logits: Keras's ops.argmax added a select and four comparisons of
    # the whole [positions, vocabulary] tensor (the next-sentence head's two classes still take Keras's).
    assert counts["ArgMax"] == 2 and counts["BitwiseAnd"] == 1, counts


def test_the_masked_lm_accuracy_counts_numpys_argmax_over_real_positions():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(3, 5, 40)).astype(np.float32)
    labels = np.where(rng.random((3, 5)) < 0.5, logits.argmax(-1), rng.integers(0, 40, (3, 5)))
    weights = (rng.random((3, 5)) < 0.7).astype(np.float32)
    trackers = {name: keras.metrics.Mean() for name in ("masked_lm_accuracy", "masked_lm_loss")}
    losses.masked_lm_loss_and_metrics(trackers, labels, logits, weights)
    expected = ((logits.argmax(-1) == labels) * weights).sum() / weights.sum()
    assert abs(float(trackers["masked_lm_accuracy"].result()) - expected) < 1e-6
