"""Pretraining throughput on a GPU, bf16 + XLA: BERT-base and BERT-large at sequence length 128 and 512, with MFU.

    python -m bench.gpu_pretraining [--presets base,large] [--seq_lengths 128,512] [--steps 20] [--no_jit_compile]
        [--allow_cpu]

For each preset × length: seq/s of the steady-state pretraining step (MLM + NSP, AdamW, synthetic data, as
`bench.train_step`), its model FLOP/s (matmul FLOPs × 3) and the MFU: that over the GPU's nominal dense bf16 peak
(A100 312 TFLOP/s, H100/H200 SXM 989, L4 121, ...), and over the bf16 matmul peak measured here. The anchor:
NVIDIA's TF2 BERT-large reached 485.6 seq/s at 128 on one A100 80GB in fp16 (DeepLearningExamples), about 37 % MFU
by the same count. Without a GPU it says so and stops (--allow_cpu runs it on the CPU anyway, to check it works).
"""

import argparse

import keras
import tensorflow as tf

from bench import hardware
from bench.train_step import official_bert_model, synthetic_dataset, time_training, train_flops_per_sequence
from official_bert import BertConfig

# Nominal dense bf16 tensor-core TFLOP/s (vendors' data sheets, without sparsity).
NOMINAL_BF16_TFLOPS = {"H200": 989, "H100": 989, "A100": 312, "L40S": 362, "L4": 121, "A10": 125, "A30": 165}
# Per-GPU batches that fit a 40 GB card at these lengths (NVIDIA's TF2 recipe: 64 at 128 and 8–16 at 512 for large).
BATCH = {("base", 128): 128, ("base", 512): 32, ("large", 128): 64, ("large", 512): 16}
ANCHOR = "anchor: NVIDIA TF2 BERT-large, 1×A100 fp16, seq 128: 485.6 seq/s ≈ 37 % MFU"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="base,large")
    parser.add_argument("--seq_lengths", default="128,512")
    parser.add_argument("--batch_size", type=int, default=None, help="per step (default: BATCH's, by preset/length)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--no_jit_compile", action="store_true")
    parser.add_argument("--allow_cpu", action="store_true", help="run without a GPU too (a check, not a figure)")
    return parser.parse_args()


def nominal_peak_tflops():
    """The first GPU's name and its nominal bf16 TFLOP/s (None when not in NOMINAL_BF16_TFLOPS)."""
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return None, None
    name = tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU")
    return name, next((peak for key, peak in NOMINAL_BF16_TFLOPS.items() if key in name), None)


def main():
    args = parse_args()
    name, nominal = nominal_peak_tflops()
    if name is None and not args.allow_cpu:
        print("no GPU visible: not run (pass --allow_cpu to check the script on the CPU)")
        return
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    measured = hardware.matmul_peak("bfloat16", n=8192 if name else 1024)
    print(hardware.machine_line())
    print(f"device: {name or 'CPU'}; bf16 peak: nominal {nominal or '?'} TFLOP/s, measured matmul "
          f"{measured / 1000:.1f} TFLOP/s; {ANCHOR}", flush=True)
    for preset in args.presets.split(","):
        for seq_length in (int(s) for s in args.seq_lengths.split(",")):
            config = BertConfig.from_preset(preset)
            run = argparse.Namespace(
                batch_size=args.batch_size or BATCH.get((preset, seq_length), 8), seq_length=seq_length,
                max_predictions_per_seq=max(1, round(0.15 * seq_length)), jit_compile=not args.no_jit_compile,
                steps=args.steps, warmup_steps=args.warmup_steps, steps_per_execution=1)
            seconds = time_training(official_bert_model(config), synthetic_dataset(config, run), run)[0]
            seq_per_s = run.batch_size / seconds
            tflops = seq_per_s * train_flops_per_sequence(config, seq_length, run.max_predictions_per_seq) / 1e12
            mfu = f"{tflops / nominal:.1%} MFU" if nominal else "MFU: nominal peak unknown"
            print(f"{preset} seq {seq_length} batch {run.batch_size} bf16 jit_compile={run.jit_compile}: "
                  f"{seq_per_s:.1f} seq/s, {tflops:.1f} TFLOP/s, {mfu}, {tflops * 1000 / measured:.0%} of the "
                  f"measured matmul peak", flush=True)
            keras.backend.clear_session()


if __name__ == "__main__":
    main()
