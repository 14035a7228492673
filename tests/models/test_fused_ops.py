"""The encoder's dense layers reach TensorFlow's fused kernels in the optimized graph, so that a refactor cannot
silently unfuse them: MatMul + BiasAdd as one `_FusedMatMul` always on CPU, and under oneDNN (TensorFlow's default
on CPUs with AVX512_VNNI / AVX512_BF16 / AMX) the feed-forward GELU fused in as well, in both forms, and the
attention softmax on oneDNN's kernel.

The graph checked is the one the runtime executes (grappler's output, read from the run metadata's partition
graphs). oneDNN is chosen when TensorFlow is imported, so its half runs in a child process with
TF_ENABLE_ONEDNN_OPTS=1.
"""

import collections
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.eager import context

from official_bert import BertConfig, BertEncoder
from official_bert.layers.activations import onednn_enabled
from official_bert.training.precision import resolve_mixed_precision

LAYERS = 2
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def executed_fused_ops(hidden_act, policy="float32"):
    """{"op fused_ops dtype": count} of the fused and oneDNN kernels that serving a tiny encoder runs."""
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=LAYERS,
                                                 hidden_act=hidden_act), dtype=policy)
    ids = np.array([[2, 15, 27, 3, 0]] * 2, np.int32)
    inputs = {"input_word_ids": ids, "input_mask": (ids > 0).astype(np.int32), "input_type_ids": np.zeros_like(ids)}
    ctx = context.context()
    ctx.enable_run_metadata()
    try:
        # A new function, first run inside the window: its optimized graph is recorded when it is instantiated.
        tf.function(lambda x: encoder(x, training=False))(inputs)
        metadata = ctx.export_run_metadata()
    finally:
        ctx.disable_run_metadata()
    counts = collections.Counter(
        " ".join([node.op, ",".join(s.decode() for s in node.attr["fused_ops"].list.s),
                  tf.as_dtype(node.attr["T"].type).name if "T" in node.attr else ""])
        for function in metadata.function_graphs for graph in function.partition_graphs for node in graph.node
        if node.op.startswith(("_Fused", "_Mkl")))
    assert counts, "no optimized graph was recorded"
    return dict(counts)


def fused_matmuls(counts):
    return sum(n for key, n in counts.items() if key.startswith(("_FusedMatMul ", "_MklNativeFusedMatMul ")))


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_erf"])
def test_every_dense_layer_runs_as_one_fused_matmul(hidden_act):
    counts = executed_fused_ops(hidden_act)
    # Per block: the QKV, attention-output, intermediate and output projections; then the pooler.
    assert fused_matmuls(counts) == 4 * LAYERS + 1, counts
    if onednn_enabled():
        gelu = {"gelu": "GeluApproximate", "gelu_erf": "GeluExact"}[hidden_act]
        assert counts.get(f"_MklNativeFusedMatMul BiasAdd,{gelu} float32") == LAYERS, counts


@pytest.mark.slow
def test_onednn_fuses_both_gelus_and_the_softmax():
    result = subprocess.run([sys.executable, "-m", "tests.models.test_fused_ops"], cwd=ROOT, check=True,
                            stdout=subprocess.PIPE, text=True, timeout=300,
                            env={**os.environ, "TF_ENABLE_ONEDNN_OPTS": "1", "TF_CPP_MIN_LOG_LEVEL": "2"})
    by_act = json.loads(result.stdout.strip().splitlines()[-1])
    native_bf16 = resolve_mixed_precision("auto", gpu_capabilities=[]) == "bf16"
    for key, counts in by_act.items():
        hidden_act, policy = key.split()
        gelu = {"gelu": "GeluApproximate", "gelu_erf": "GeluExact"}[hidden_act]
        if policy == "mixed_bfloat16" and not native_bf16:
            continue  # oneDNN rewrites bf16 graphs only on CPUs that compute bf16
        dtype = "float32" if policy == "float32" else "bfloat16"
        assert counts.get(f"_MklNativeFusedMatMul BiasAdd,{gelu} {dtype}") == LAYERS, (key, counts)
        assert fused_matmuls(counts) == 4 * LAYERS + 1, (key, counts)
        assert counts.get("_MklSoftmax  float32") == LAYERS, (key, counts)  # scores stay float32


if __name__ == "__main__":  # the child of test_onednn_fuses_both_gelus_and_the_softmax
    print(json.dumps({f"{act} {policy}": executed_fused_ops(act, policy)
                      for act in ("gelu", "gelu_erf") for policy in ("float32", "mixed_bfloat16")}))
