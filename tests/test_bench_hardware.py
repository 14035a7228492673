"""bench.hardware: the instruction-set caps named on the machine line, and a peak RSS that can start afresh (so a
bench measures its training steps' memory apart from the import and the first step's compiling)."""

import numpy as np
import pytest

from bench import hardware


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
