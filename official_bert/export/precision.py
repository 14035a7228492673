"""`--export_precision=auto|fp32|bf16`: a trained model exported to compute in bfloat16, its signatures still
float32 (and strings) outside.

bfloat16 serving pays where the hardware computes it natively: CPUs with AMX or AVX512_BF16 (oneDNN fuses the
encoder's MatMul + BiasAdd + GELU into one bf16 kernel there) and GPUs of compute capability 8.0 or more. On a CPU
without (AVX2 only) every bf16 op is emulated and slower than float32, so `auto` decides from the machine, as
`--mixed_precision=auto` does for training, by the same test (`training/precision.py`). The decision is made
where the export is written: export on the kind of machine that serves, or say fp32 / bf16.
"""

import keras
from keras import ops, tree

from official_bert.errors import Error
from official_bert.training.precision import resolve_mixed_precision

EXPORT_PRECISIONS = ("auto", "fp32", "bf16")
# The Keras policy a model for inference computes in: bfloat16 weights as well as computation (training's
# mixed_bfloat16 keeps float32 weights for the optimizer's small updates; inference has none).
INFERENCE_POLICIES = {"bf16": "bfloat16"}


class ExportPrecisionError(Error):
    """An --export_precision value that is not "auto", "fp32" or "bf16"."""


def resolve_export_precision(value, cpu_flags=None, gpu_capabilities=None):
    """"fp32" or "bf16": what an export computes in for --export_precision=`value`.

    Args:
        value: "auto", "fp32" or "bf16" (None: fp32).
        cpu_flags: the CPU's feature flags (default: this machine's).
        gpu_capabilities: (major, minor) of each visible GPU (default: asked of TensorFlow).

    Example:
    >>> from official_bert.export.precision import resolve_export_precision
    >>> resolve_export_precision("auto", cpu_flags={"avx2"}, gpu_capabilities=[])
    'fp32'
    >>> resolve_export_precision("auto", cpu_flags={"avx2", "amx_bf16"}, gpu_capabilities=[])
    'bf16'
    >>> resolve_export_precision("auto", cpu_flags=set(), gpu_capabilities=[(8, 0)])
    'bf16'
    >>> resolve_export_precision("bf16"), resolve_export_precision(None)
    ('bf16', 'fp32')
    """
    if value is None:
        return "fp32"
    if value not in EXPORT_PRECISIONS:
        raise ExportPrecisionError(f"--export_precision={value}: expected one of {', '.join(EXPORT_PRECISIONS)}")
    if value != "auto":
        return value
    choice = resolve_mixed_precision("auto", cpu_flags=cpu_flags, gpu_capabilities=gpu_capabilities)
    return "bf16" if choice == "bf16" else "fp32"


def model_in_precision(model, precision):
    """The same trained model computing in `precision`: `model` itself for "fp32"; for "bf16" a copy built from
    its config under the bfloat16 policy (`INFERENCE_POLICIES`) with its weights rounded to bfloat16 — half the
    memory and the disk, and no weight cast at each call, where the mixed_bfloat16 policy of training keeps float32
    weights and casts them at every use. LayerNorm (its statistics), the attention softmax and the heads that
    choose float32 stay float32.

    Its float outputs may be bfloat16: serve them through `float32_outputs`.

    Args:
        model: a Keras model with get_config (every official_bert model, or a functional model of them).
        precision: "fp32" or "bf16" (see `resolve_export_precision`).

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder
    >>> encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=10))
    >>> bf16 = model_in_precision(encoder, "bf16")
    >>> bf16.transformer_layers[0].compute_dtype, keras.mixed_precision.global_policy().name
    ('bfloat16', 'float32')
    >>> sorted({w.dtype for w in bf16.transformer_layers[0].attention.weights})
    ['bfloat16']
    >>> ids = np.array([[2, 5, 3]])
    >>> out = bf16({"input_word_ids": ids, "input_mask": np.ones_like(ids), "input_type_ids": 0 * ids})
    >>> str(out["pooled_output"].dtype), str(float32_outputs(out)["pooled_output"].dtype)
    ("<dtype: 'bfloat16'>", "<dtype: 'float32'>")
    """
    if precision == "fp32":
        return model
    if precision not in INFERENCE_POLICIES:
        raise ExportPrecisionError(f"export precision {precision!r}: expected fp32 or bf16")
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(INFERENCE_POLICIES[precision])
    try:
        copy = model.__class__.from_config(model.get_config())
    finally:
        keras.mixed_precision.set_global_policy(previous)
    copy.set_weights(model.get_weights())
    return copy


def float32_outputs(outputs):
    """`outputs` (a tensor or a nested structure) with every floating tensor cast to float32.

    Args:
        outputs: what a model returned.

    Example:
    >>> import numpy as np
    >>> out = float32_outputs({"a": ops.cast(np.ones(2), "bfloat16"), "ids": np.array([1, 2])})
    >>> out["a"].dtype.name, out["ids"].dtype.name
    ('float32', 'int64')
    """
    def cast(x):
        x = ops.convert_to_tensor(x)
        return ops.cast(x, "float32") if "float" in str(x.dtype) else x

    return tree.map_structure(cast, outputs)
