"""What the benchmarks share: the machine (CPU features, oneDNN, load), the matmul peak each dtype reaches here,
and the encoder's matmul FLOPs, which make a model's speed a share of that peak ("32 % of the bf16 matmul peak")."""

import os
import time

import tensorflow as tf

from official_bert.layers.activations import onednn_enabled
from official_bert.training.precision import _read_cpu_flags

_SHOWN_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile", "amx_int8")


def machine_line():
    """One line: CPU model, cores, the vector/matrix features that decide bf16 speed, oneDNN, load, GPUs."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    flags = _read_cpu_flags()
    features = " ".join(flag for flag in _SHOWN_FLAGS if flag in flags) or "none of " + "/".join(_SHOWN_FLAGS)
    gpus = tf.config.list_physical_devices("GPU")
    return (f"{model}, {os.cpu_count()} cores; CPU features: {features}{isa_caps()}; "
            f"oneDNN {'on' if onednn_enabled() else 'off'}; load average {load_line()}; GPUs: {len(gpus) or 'none'}")


def isa_caps():
    """'' or '; instruction sets capped (ONEDNN_MAX_CPU_ISA=AVX2 --xla_cpu_max_isa=AVX2)': the caps that make this
    CPU compute as an older one does (an AVX2-only machine imitated on an AVX-512 one), which its features do not
    show."""
    caps = [f"{name}={os.environ[name]}" for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA") if os.environ.get(name)]
    caps += [flag for flag in os.environ.get("XLA_FLAGS", "").split() if flag.startswith("--xla_cpu_max_isa")]
    return f"; instruction sets capped ({' '.join(caps)})" if caps else ""


def load_line():
    """The 1/5/15-minute load averages: on a shared machine the neighbours' share of the figures."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def matmul_peak(dtype, n=2048, seconds=2.0, device=None):
    """GFLOP/s of an n×n×n tf.matmul in `dtype` (float32 or bfloat16), the median over about `seconds`."""
    with tf.device(device or ("/GPU:0" if tf.config.list_physical_devices("GPU") else "/CPU:0")):
        a = tf.cast(tf.random.normal([n, n]), dtype)
        b = tf.cast(tf.random.normal([n, n]), dtype)
        step = tf.function(lambda a, b: tf.reduce_sum(tf.cast(tf.matmul(a, b)[:1, :1], tf.float32)))
        step(a, b).numpy()
        times, start = [], time.perf_counter()
        while time.perf_counter() - start < seconds or len(times) < 3:
            t = time.perf_counter()
            step(a, b).numpy()
            times.append(time.perf_counter() - t)
    times.sort()
    return 2 * n**3 / times[len(times) // 2] / 1e9


def encoder_flops_per_sequence(config, seq_length):
    """Matmul FLOPs of one forward pass of the encoder and pooler over one sequence of seq_length tokens."""
    t, h, i = seq_length, config.hidden_size, config.intermediate_size
    per_layer = 2 * t * h * 3 * h + 2 * 2 * t * t * h + 2 * t * h * h + 2 * 2 * t * h * i
    return config.num_hidden_layers * per_layer + 2 * h * h


def reset_peak_rss():
    """Starts the process's peak RSS (VmHWM) afresh, so that `peak_rss_gib` measures what follows alone (training
    steps, not the import and the first step's tracing and compiling). False where Linux's clear_refs is missing."""
    try:
        with open("/proc/self/clear_refs", "w") as f:  # the kernel's, never a user's path
            f.write("5")  # 5: reset the peak resident set size (proc(5))
        return True
    except OSError:
        return False


def peak_rss_gib():
    """The process's peak resident set size since it started or since `reset_peak_rss`, in GiB."""
    with open("/proc/self/status") as f:  # the kernel's, never a user's path
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return kib / 2**20


def counts_tensors():
    """Whether TensorFlow's CPU allocator keeps the statistics `tensor_peak_gib` reads: only its BFC form does,
    turned on by TF_CPU_ALLOCATOR_USE_BFC=true in the environment before TensorFlow starts. The default allocator
    counts only some allocations under oneDNN (a few MiB after a training step) and none without it, where asking
    raises."""
    return os.environ.get("TF_CPU_ALLOCATOR_USE_BFC", "").lower() in ("1", "true")


NOT_COUNTED = "not available with this allocator (TF_CPU_ALLOCATOR_USE_BFC=true counts them)"


def reset_tensor_peak():
    """Starts TensorFlow's own peak of tensor memory on the CPU afresh (see `tensor_peak_gib`); nothing to reset
    where the allocator keeps no statistics."""
    if counts_tensors():
        tf.config.experimental.reset_memory_stats("CPU:0")


def tensor_peak_gib():
    """The most bytes TensorFlow's tensors held at once on the CPU since `reset_tensor_peak`, in GiB: weights,
    optimizer slots, activations, without the runtime itself (libraries, graphs, about 1 GiB of a training
    process). None unless the CPU allocator counts them (`counts_tensors`)."""
    if not counts_tensors():
        return None
    return tf.config.experimental.get_memory_info("CPU:0")["peak"] / 2**30
