"""`--mixed_precision=auto`: bfloat16 only where the hardware computes it natively, float32 elsewhere.

bfloat16 trains BERT 1.56–1.64× faster than float32 on a CPU with AVX512_BF16, but costs ~28 % more CPU per step
on one without (AVX2 only, as on many laptops and cloud VMs), where every bf16 op is emulated. So the default is
chosen from the devices, never assumed: TPUs, GPUs of compute capability 8.0 or more (Ampere on), and CPUs that
report `avx512_bf16` or `amx_bf16` get bf16. fp16 needs loss scaling and is never chosen automatically.

The environment variable `OFFICIAL_BERT_AUTO_PRECISION=fp32|bf16` overrides the hardware test (for `auto` only, TPUs
aside): to see on one machine what `auto` does on the other kind, e.g. to run the test suite both ways. oneDNN's own
`ONEDNN_MAX_CPU_ISA` (or `DNNL_MAX_CPU_ISA`), set below AVX512_CORE_BF16, keeps its matmuls off the bf16
instructions, so `auto` reads it too and picks float32 (how an AVX2-only CPU is imitated on a newer one).
"""

import os

import tensorflow as tf
from absl import logging

from official_bert.training.options import MIXED_PRECISION_POLICIES, TrainingError

_CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
# oneDNN's ISA caps that leave out bf16 matmuls (the others, ALL and DEFAULT, allow them where the CPU has them).
_ONEDNN_ISAS_WITHOUT_BF16 = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI")
AUTO_PRECISION_VARIABLE = "OFFICIAL_BERT_AUTO_PRECISION"


def resolve_mixed_precision(value, strategy=None, cpu_flags=None, gpu_capabilities=None):
    """--mixed_precision as the library takes it: None (float32), "bf16" or "fp16".

    Args:
        value: "auto", "bf16", "fp16", "fp32" or None (float32).
        strategy: the `tf.distribute.Strategy` the run uses (a TPU strategy means bf16 under "auto").
        cpu_flags: the CPU's feature flags (default: read from /proc/cpuinfo).
        gpu_capabilities: (major, minor) of each visible GPU (default: asked of TensorFlow).

    Example:
    >>> resolve_mixed_precision("auto", cpu_flags={"avx2"}, gpu_capabilities=[]) is None
    True
    >>> resolve_mixed_precision("auto", cpu_flags={"avx2", "avx512_bf16"}, gpu_capabilities=[])
    'bf16'
    >>> resolve_mixed_precision("auto", cpu_flags=set(), gpu_capabilities=[(7, 5)]) is None
    True
    >>> resolve_mixed_precision("fp32"), resolve_mixed_precision("fp16")
    (None, 'fp16')
    """
    if value in (None, "fp32"):
        return None
    if value in MIXED_PRECISION_POLICIES:
        return value
    if value != "auto":
        raise TrainingError(f"--mixed_precision={value}: expected auto, bf16, fp16 or fp32")
    choice, reason = _auto(strategy, cpu_flags, gpu_capabilities)
    logging.info("--mixed_precision=auto: %s (%s)", choice or "float32", reason)
    return choice


def _auto(strategy, cpu_flags, gpu_capabilities):
    if isinstance(strategy, tf.distribute.TPUStrategy):
        return "bf16", "a TPU computes bfloat16 natively"
    forced = os.environ.get(AUTO_PRECISION_VARIABLE)
    if forced and cpu_flags is None and gpu_capabilities is None:
        if forced not in ("fp32", "bf16"):
            raise TrainingError(f"{AUTO_PRECISION_VARIABLE}={forced}: expected fp32 or bf16")
        return (None if forced == "fp32" else "bf16"), f"{AUTO_PRECISION_VARIABLE}={forced}"
    if gpu_capabilities is None:
        gpu_capabilities = [tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0))
                            for gpu in tf.config.list_physical_devices("GPU")]
    if gpu_capabilities:
        if all(tuple(capability) >= (8, 0) for capability in gpu_capabilities):
            return "bf16", "every GPU has compute capability 8.0 or more"
        return None, "a GPU below compute capability 8.0 has no native bfloat16"
    if cpu_flags is None:
        cpu_flags = _read_cpu_flags()
        for variable in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
            if os.environ.get(variable, "").upper() in _ONEDNN_ISAS_WITHOUT_BF16:
                return None, f"{variable}={os.environ[variable]} keeps oneDNN off the CPU's bfloat16 instructions"
    native = [flag for flag in _CPU_BF16_FLAGS if flag in cpu_flags]
    if native:
        return "bf16", f"the CPU has {', '.join(native)}"
    return None, "the CPU has neither avx512_bf16 nor amx_bf16, so bfloat16 would be emulated and slower"


def _read_cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:  # a local system file, never a user's path
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
