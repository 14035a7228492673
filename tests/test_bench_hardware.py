"""bench.hardware: the instruction-set caps named on the machine line, and a peak RSS that can start afresh (so a
bench measures its training steps' memory apart from the import and the first step's compiling), and TensorFlow's
own peak of tensor memory."""

import os
import subprocess
import sys

import numpy as np
import pytest

from bench import hardware
from tests import cpu_paths


def test_the_caps_that_imitate_an_older_cpu_are_named(monkeypatch):
    for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "XLA_FLAGS"):
        monkeypatch.delenv(name, raising=False)
    assert hardware.isa_caps() == ""
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x --xla_cpu_max_isa=AVX2")
    assert hardware.isa_caps() == "; instruction sets capped (ONEDNN_MAX_CPU_ISA=AVX2 --xla_cpu_max_isa=AVX2)"
    assert "instruction sets capped" in hardware.machine_line()


def test_the_peak_rss_starts_afresh_and_sees_what_follows():
    if not hardware.reset_peak_rss():
        pytest.skip("no /proc/self/clear_refs here")
    block = np.ones(300 * 2**20, np.uint8)  # 300 MiB, touched
    with_block = hardware.peak_rss_gib()
    del block
    assert hardware.reset_peak_rss()
    without_block = hardware.peak_rss_gib()
    assert with_block - without_block > 0.25, (with_block, without_block)


_TENSOR_PEAK = """
import tensorflow as tf
from bench import hardware
from tests import cpu_paths
tf.ones([8])  # the runtime and a small tensor, then a 256 MiB one freed at once
hardware.reset_tensor_peak()
big = tf.ones([64, 2**20]) + 1.0
del big
print(hardware.tensor_peak_gib())
"""


def test_the_tensor_peak_is_counted_only_by_the_bfc_allocator_and_sees_a_freed_tensor(monkeypatch):
    monkeypatch.delenv("TF_CPU_ALLOCATOR_USE_BFC", raising=False)
    assert hardware.tensor_peak_gib() is None
    env = {**os.environ, "TF_CPU_ALLOCATOR_USE_BFC": "true", "TF_CPP_MIN_LOG_LEVEL": "2"}
    result = subprocess.run([sys.executable, "-c", _TENSOR_PEAK], env=env, capture_output=True, text=True,
                            timeout=300, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert result.returncode == 0, result.stderr[-2000:]
    # two 256 MiB tensors at once (the ones, and their sum), nothing else of that size
    assert 0.5 <= float(result.stdout.split()[-1]) < 0.6, result.stdout


def tensor_peak_after_a_reset():
    import tensorflow as tf

    hardware.reset_tensor_peak()
    tf.ones([1024]) + 1.0
    return hardware.tensor_peak_gib()


@pytest.mark.parametrize("path", cpu_paths.PATHS)
def test_without_the_bfc_allocator_the_tensor_peak_is_not_available_rather_than_an_error(path, monkeypatch):
    # Eigen's path (TensorFlow's default on AVX2-only CPUs) raises "Cannot reset memory stats for device 'CPU:0'"
    # when asked, which ended `make bench` before its first figure.
    monkeypatch.delenv("TF_CPU_ALLOCATOR_USE_BFC", raising=False)
    assert cpu_paths.on_path(path, tensor_peak_after_a_reset) is None
