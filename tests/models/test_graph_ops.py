"""What the profile of bf16 inference found, held on any CPU: the element-wise ops a transformer layer adds to the
traced inference graph stay at the counts reached (a refactor that brings back a pass over the activations fails
here; one that removes a pass updates REACHED). That a bf16 inference model reads no weight through a cast is
tests/export/test_export_precision.py's.

Counted per layer as the difference between the graphs of a 2-layer and a 1-layer encoder (tf.function's traced
graph, before grappler). The tanh GELU takes the form each of TensorFlow's CPU paths runs best
(`layers.activations.gelu_tanh`), so the counts are the path's: each path's are asserted on every machine, the other
path's in a child process (tests/cpu_paths.py)."""

import collections

import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder
from official_bert.export.precision import model_in_precision
from tests import cpu_paths

ELEMENT_WISE = ("AddV2", "Cast", "Mean", "Mul", "Neg", "Pow", "RealDiv", "Rsqrt", "Sigmoid", "Square",
                "SquaredDifference", "Sub", "Tanh")
# Per layer: the two layer norms (each: Sub, the centred values squared, scaled by the reciprocal deviation and by
# gamma — Mul ×3 —, AddV2 ×2 for epsilon and beta, Rsqrt, and a RealDiv ×2 turning each row's two sums, matrix
# products, into means), the residual adds, the tanh GELU and the attention's query scaling (Mul) and bias (AddV2).
# The GELU under oneDNN is tf.nn.gelu's pattern, which oneDNN fuses into the matmul (Pow, Tanh, Mul ×4, AddV2 ×2);
# on Eigen's kernels its sigmoid form, fewer passes (Square, Sigmoid, Mul ×4, AddV2).
# Keras's layer norm took Mean ×2, SquaredDifference, Neg, Mul ×3 and AddV2 ×3, a full-size product among them.
# bf16: each layer norm casts its input to float32 and its output back (2 × 2), the attention scores to float32
# and the probabilities back, the bias and the two scalar constants (query scale, GELU) — 10; before the
# layer norms took a float32 input there were 14 (Keras rounded their output to bfloat16 and back).
# Eigen's bf16 graph casts one scalar constant fewer (tf.nn.gelu casts its own).
_LAYER = {"Mul": 11, "RealDiv": 4, "Rsqrt": 2, "Sub": 2}
_GELU = {"onednn": {"AddV2": 9, "Pow": 1, "Tanh": 1}, "eigen": {"AddV2": 8, "Sigmoid": 1, "Square": 1}}
REACHED = {(path, precision): {**_LAYER, **_GELU[path], **({"Cast": {"onednn": 10, "eigen": 9}[path]}
                                                            if precision == "bf16" else {})}
           for path in cpu_paths.PATHS for precision in ("fp32", "bf16")}


def graph_ops(layers, precision):
    encoder = model_in_precision(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100,
                                                                    num_hidden_layers=layers)), precision)
    specs = {name: tf.TensorSpec([None, None], tf.int32)
             for name in ("input_word_ids", "input_mask", "input_type_ids")}
    graph = tf.function(lambda x: encoder(x, training=False)["sequence_output"]).get_concrete_function(specs).graph
    return collections.Counter(op.type for op in graph.get_operations())


def element_wise_ops_per_layer(precision):
    one, two = graph_ops(1, precision), graph_ops(2, precision)
    return {op: two[op] - one[op] for op in ELEMENT_WISE if two[op] - one[op]}


@pytest.mark.parametrize("path", cpu_paths.PATHS)
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_layers_element_wise_ops_stay_at_the_counts_reached(path, precision):
    per_layer = cpu_paths.on_path(path, element_wise_ops_per_layer, precision)
    assert per_layer == REACHED[path, precision], per_layer



def compiled_calls(graph):
    """The XLA-compiled function calls of a traced graph (tf.function(jit_compile=True) marks its call ops)."""
    calls = [op for op in graph.get_operations() if op.type in ("PartitionedCall", "StatefulPartitionedCall")]
    return [op for op in calls if op.node_def.attr["_XlaMustCompile"].b]


def training_graph_ops(hidden_act):
    """{"training"/"inference": the compiled calls and the GELU and layer norm ops} of a gradient step's graph."""
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=2, hidden_act=hidden_act))
    ids = tf.constant([[2, 7, 9, 3]])
    inputs = {"input_word_ids": ids, "input_mask": tf.ones_like(ids), "input_type_ids": tf.zeros_like(ids)}

    def step(training):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(encoder(inputs, training=training)["sequence_output"])
        return tape.gradient(loss, encoder.trainable_variables)

    found = {}
    for training in (True, False):
        graph = tf.function(lambda: step(training)).get_concrete_function().graph
        counts = collections.Counter(op.type for op in graph.get_operations())
        found["training" if training else "inference"] = {
            "compiled": len(compiled_calls(graph)), **{op: counts[op] for op in ("Tanh", "Sigmoid", "Erf", "Rsqrt")}}
    return found


@pytest.mark.parametrize("path", cpu_paths.PATHS)
@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_erf"])
def test_training_runs_each_gelu_and_layer_norm_and_their_gradients_as_one_compiled_kernel(path, hidden_act):
    # The training profile found them differentiated op by op: the GELU ten passes over [B·T, intermediate] in bf16,
    # each layer norm about twenty ops.
    found = cpu_paths.on_path(path, training_graph_ops, hidden_act)
    kernels = 2 * (1 + 2) + 1  # a layer's GELU and two layer norms, the embeddings' layer norm
    # The dropouts' masks are applied by compiled kernels too: the embeddings' and three a layer forward; backward
    # the same and the attention's recomputed dropped probabilities.
    dropouts = (1 + 3 * 2) + (1 + 4 * 2)
    # In training the one Tanh left is the pooler's. Outside training each layer's GELU stays in the graph (where
    # oneDNN fuses it into the matmul before it: the tanh GELU as tf.nn.gelu's Tanh there, as a Sigmoid on Eigen's
    # kernels), and so do the layer norms' statistics.
    gelu_op = "Erf" if hidden_act == "gelu_erf" else {"onednn": "Tanh", "eigen": "Sigmoid"}[path]
    inference = {"compiled": 0, "Tanh": 1, "Sigmoid": 0, "Erf": 0, "Rsqrt": 5}
    inference[gelu_op] += 2
    assert found == {"training": {"compiled": 2 * kernels + dropouts, "Tanh": 1, "Sigmoid": 0, "Erf": 0, "Rsqrt": 0},
                     "inference": inference}


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
