"""What the profile of bf16 inference found, held on any CPU: the element-wise ops a transformer layer adds to the
traced inference graph stay at the counts reached (a refactor that brings back a pass over the activations fails
here; one that removes a pass updates REACHED). That a bf16 inference model reads no weight through a cast is
tests/export/test_export_precision.py's.

Counted per layer as the difference between the graphs of a 2-layer and a 1-layer encoder (tf.function's traced
graph, before grappler: the same on every CPU)."""

import collections

import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder
from official_bert.export.precision import model_in_precision

ELEMENT_WISE = ("AddV2", "Cast", "Mean", "Mul", "Neg", "Pow", "RealDiv", "Rsqrt", "SquaredDifference", "Sub", "Tanh")
# Per layer: the two layer norms (each: Sub, the centred values squared, scaled by the reciprocal deviation and by
# gamma — Mul ×3 —, AddV2 ×2 for epsilon and beta, Rsqrt, and a RealDiv ×2 turning each row's two sums, matrix
# products, into means), the residual adds, the tanh GELU (Pow, Tanh, Mul ×4, AddV2 ×2) and the attention's query
# scaling (Mul) and bias (AddV2).
# Keras's layer norm took Mean ×2, SquaredDifference, Neg, Mul ×3 and AddV2 ×3, a full-size product among them.
# bf16: each layer norm casts its input to float32 and its output back (2 × 2), the attention scores to float32
# and the probabilities back, the bias and the two scalar constants (query scale, GELU) — 10; before the
# layer norms took a float32 input there were 14 (Keras rounded their output to bfloat16 and back).
REACHED = {"fp32": {"AddV2": 9, "Mul": 11, "Pow": 1, "RealDiv": 4, "Rsqrt": 2, "Sub": 2, "Tanh": 1},
          "bf16": {"AddV2": 9, "Cast": 10, "Mul": 11, "Pow": 1, "RealDiv": 4, "Rsqrt": 2, "Sub": 2, "Tanh": 1}}


def graph_ops(layers, precision):
    encoder = model_in_precision(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100,
                                                                    num_hidden_layers=layers)), precision)
    specs = {name: tf.TensorSpec([None, None], tf.int32)
             for name in ("input_word_ids", "input_mask", "input_type_ids")}
    graph = tf.function(lambda x: encoder(x, training=False)["sequence_output"]).get_concrete_function(specs).graph
    return collections.Counter(op.type for op in graph.get_operations())


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_layers_element_wise_ops_stay_at_the_counts_reached(precision):
    one, two = graph_ops(1, precision), graph_ops(2, precision)
    per_layer = {op: two[op] - one[op] for op in ELEMENT_WISE if two[op] - one[op]}
    assert per_layer == REACHED[precision], per_layer



def compiled_calls(graph):
    """The XLA-compiled function calls of a traced graph (tf.function(jit_compile=True) marks its call ops)."""
    calls = [op for op in graph.get_operations() if op.type in ("PartitionedCall", "StatefulPartitionedCall")]
    return [op for op in calls if op.node_def.attr["_XlaMustCompile"].b]


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_erf"])
def test_training_runs_each_gelu_and_layer_norm_and_their_gradients_as_one_compiled_kernel(hidden_act):
    # The training profile found them differentiated op by op: the GELU ten passes over [B·T, intermediate] in bf16,
    # each layer norm about twenty ops.
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=2, hidden_act=hidden_act))
    ids = tf.constant([[2, 7, 9, 3]])
    inputs = {"input_word_ids": ids, "input_mask": tf.ones_like(ids), "input_type_ids": tf.zeros_like(ids)}

    def step(training):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(encoder(inputs, training=training)["sequence_output"])
        return tape.gradient(loss, encoder.trainable_variables)

    kernels = 2 * (1 + 2) + 1  # a layer's GELU and two layer norms, the embeddings' layer norm
    # The dropouts' masks are applied by compiled kernels too: the embeddings' and three a layer forward; backward
    # the same and the attention's recomputed dropped probabilities.
    dropouts = (1 + 3 * 2) + (1 + 4 * 2)
    for training, compiled in ((True, 2 * kernels + dropouts), (False, 0)):  # forward and backward
        graph = tf.function(lambda: step(training)).get_concrete_function().graph
        counts = collections.Counter(op.type for op in graph.get_operations())
        assert len(compiled_calls(graph)) == compiled, training
        # Outside training each layer's GELU stays in the graph, where oneDNN fuses it into the matmul before it,
        # and so do the layer norms' statistics; the one Tanh left in training is the pooler's.
        assert counts["Tanh"] + counts["Erf"] == 1 + (0 if training else 2), counts
        assert counts["Rsqrt"] == (0 if training else 5), counts


def test_the_optimizer_updates_each_variable_in_one_compiled_kernel():
    # The training profile found AdamWeightDecay's update run op by op: about fifteen passes over each variable.
    from official_bert.optimization import AdamWeightDecay

    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=1))
    variables = encoder.trainable_variables
    optimizer = AdamWeightDecay(learning_rate=0.1)
    optimizer.build(variables)
    graph = tf.function(lambda grads: optimizer.apply(grads, variables)).get_concrete_function(
        [tf.TensorSpec(v.shape, v.dtype) for v in variables]).graph
    counts = collections.Counter(op.type for op in graph.get_operations())
    assert len(compiled_calls(graph)) == len(variables)
    assert counts["Sqrt"] == 1, counts  # the global norm's; each update's is inside its kernel
