"""`auto` precision: decided from the hardware, or forced by OFFICIAL_BERT_AUTO_PRECISION for both --mixed_precision
and --export_precision (so one machine can run the suite as the other kind of CPU would)."""

import pytest

from official_bert.export.precision import resolve_export_precision
from official_bert.training.options import TrainingError
from official_bert.training import precision
from official_bert.training.precision import AUTO_PRECISION_VARIABLE, resolve_mixed_precision


@pytest.mark.parametrize("forced, training, export", [("fp32", None, "fp32"), ("bf16", "bf16", "bf16")])
def test_the_variable_forces_what_auto_chooses(monkeypatch, forced, training, export):
    monkeypatch.setenv(AUTO_PRECISION_VARIABLE, forced)
    assert resolve_mixed_precision("auto") == training
    assert resolve_export_precision("auto") == export
    # An explicit choice is never overridden, nor a question about given hardware.
    assert resolve_mixed_precision("fp32") is None and resolve_export_precision("bf16") == "bf16"
    assert resolve_mixed_precision("auto", cpu_flags={"avx2"}, gpu_capabilities=[]) is None
    assert resolve_mixed_precision("auto", cpu_flags={"amx_bf16"}, gpu_capabilities=[]) == "bf16"


def test_a_bad_value_is_one_line(monkeypatch):
    monkeypatch.setenv(AUTO_PRECISION_VARIABLE, "fp16")
    with pytest.raises(TrainingError, match=f"^{AUTO_PRECISION_VARIABLE}=fp16: expected fp32 or bf16$"):
        resolve_mixed_precision("auto")


@pytest.mark.parametrize("variable, cap, training, export", [
    ("ONEDNN_MAX_CPU_ISA", "avx2", None, "fp32"), ("DNNL_MAX_CPU_ISA", "AVX512_CORE_VNNI", None, "fp32"),
    ("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_AMX", "bf16", "bf16"), ("ONEDNN_MAX_CPU_ISA", "", "bf16", "bf16")])
def test_a_onednn_isa_cap_below_bf16_makes_auto_float32(monkeypatch, variable, cap, training, export):
    # A CPU with bf16 whose oneDNN is told to stop at an older ISA runs bf16 matmuls emulated: as on AVX2.
    monkeypatch.delenv(AUTO_PRECISION_VARIABLE, raising=False)
    monkeypatch.setattr(precision, "_read_cpu_flags", lambda: {"avx2", "avx512f", "avx512_bf16"})
    monkeypatch.setenv(variable, cap)
    assert resolve_mixed_precision("auto") == training
    assert resolve_export_precision("auto") == export
