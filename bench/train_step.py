"""Steady-state pretraining-step throughput (MLM + NSP) on synthetic data, optionally against KerasHub.

    python -m bench.train_step --preset mini --seq_length 128 --batch_size 32 [--mixed_precision bf16]
        [--jit_compile] [--remat] [--compare keras_hub] [--steps 20] [--warmup_steps 3]

Prints the machine (CPU features, oneDNN, load), the matmul peak of the compute dtype measured here, then seq/s,
achieved GFLOP/s (model matmul FLOPs × 3 for forward + backward, the usual estimate) and their share of that peak,
and the process's peak memory (run with and without --remat to compare); with TF_CPU_ALLOCATOR_USE_BFC=true in the
environment also TensorFlow's own peak of tensor memory over the timed steps (weights, optimizer slots, activations:
what --remat changes, without the runtime's fixed part).
With --compare keras_hub the same shape is built from KerasHub's BertBackbone + MaskedLMHead (+ a Dense(2)
next-sentence head), and each framework is timed in a child process of its own (`--framework ...`), KerasHub
first, so that each model's peak memory is its own; --rounds N repeats the pair N times, the two taking turns (on
a shared machine one framework's step time moved by 30 % from run to run). The last line is
`official_bert <seq/s> keras_hub <seq/s> ratio <ours/theirs>`, medians over the rounds, their ranges after it.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bench import hardware
from official_bert import BertConfig, BertEncoder, BertPretrainer
from official_bert.models import pretraining_losses as losses
from official_bert.optimization import create_optimizer
from official_bert.prefetching import prefetched


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="mini", choices=BertConfig.preset_names())
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--mixed_precision", choices=["bf16", "fp16"], default=None)
    parser.add_argument("--jit_compile", action="store_true")
    parser.add_argument("--remat", action="store_true", help="recompute each transformer block in the backward pass")
    parser.add_argument("--compare", choices=["keras_hub"], default=None)
    parser.add_argument("--rounds", type=int, default=1, help="with --compare: time the two N times, taking turns, "
                        "and report the medians")
    parser.add_argument("--framework", choices=["official_bert", "keras_hub"], default="official_bert",
                        help="the model to time (--compare times keras_hub this way, in a child process)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--steps_per_execution", type=int, default=1,
                        help="train steps per call of the compiled function (the original's iterations_per_loop)")
    parser.add_argument("--warmup_steps", type=int, default=3, help="untimed steps (tracing, allocation)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup_steps < 0:
        parser.error(f"--steps={args.steps} --warmup_steps={args.warmup_steps}: expected at least 1 timed step and no "
                     "negative warm-up")
    if args.rounds < 1:
        parser.error(f"--rounds={args.rounds}: expected at least 1")
    if args.rounds > 1 and not args.compare:
        parser.error("--rounds needs --compare keras_hub (the rounds take turns with it)")
    return args


def train_flops_per_sequence(config, seq_length, predictions):
    """Matmul FLOPs of one forward + backward pass (3× forward) for one sequence."""
    h, v = config.hidden_size, config.vocab_size
    mlm = 2 * predictions * h * h + 2 * predictions * h * v
    return 3 * (hardware.encoder_flops_per_sequence(config, seq_length) + mlm + 2 * h * 2)


def synthetic_dataset(config, args):
    rng = np.random.default_rng(0)
    b, t, p = args.batch_size, args.seq_length, args.max_predictions_per_seq
    x = {"input_word_ids": rng.integers(5, config.vocab_size, (b, t)).astype(np.int32),
         "input_mask": np.ones((b, t), np.int32),
         "input_type_ids": np.concatenate([np.zeros((b, t // 2)), np.ones((b, t - t // 2))], 1).astype(np.int32),
         "masked_lm_positions": np.sort(rng.choice(np.arange(1, t), size=(b, p)), axis=1).astype(np.int32)}
    y = {"masked_lm_ids": rng.integers(5, config.vocab_size, (b, p)).astype(np.int32),
         "masked_lm_weights": np.ones((b, p), np.float32),
         "next_sentence_labels": rng.integers(0, 2, (b, 1)).astype(np.int32)}
    # As run_pretraining's pipeline ends (both frameworks read it): with tf.data's autotuning thread, the end of the
    # `fit` sat idle for up to the thread's next wake-up in about half the runs (15-19 s for BERT-mini's 23 steps).
    return prefetched(tf.data.Dataset.from_tensors((x, y)).repeat())


def official_bert_model(config, remat=False):
    return BertPretrainer(BertEncoder(config, remat=remat))


@keras.saving.register_keras_serializable(package="bench")
class _KerasHubPretrainer(keras.Model):
    """KerasHub's backbone and masked-LM head with the same loss as ours, for a like-for-like timing."""

    def __init__(self, config):
        import keras_hub

        inputs = {name: keras.Input((None,), dtype="int32", name=name)
                  for name in ("token_ids", "padding_mask", "segment_ids", "mask_positions")}
        backbone = keras_hub.models.BertBackbone(
            vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
            num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
            intermediate_dim=config.intermediate_size, dropout=config.hidden_dropout_prob,
            max_sequence_length=config.max_position_embeddings, num_segments=config.type_vocab_size)
        out = backbone({k: inputs[k] for k in ("token_ids", "padding_mask", "segment_ids")})
        from keras_hub.src.utils.keras_utils import gelu_approximate

        # The tanh GELU, as in KerasHub's own BertBackbone and in ours ("gelu" in Google's configs).
        head = keras_hub.layers.MaskedLMHead(
            vocabulary_size=config.vocab_size, token_embedding=backbone.token_embedding,
            intermediate_activation=gelu_approximate)
        outputs = {"mlm_logits": head(out["sequence_output"], mask_positions=inputs["mask_positions"]),
                   "nsp_logits": keras.layers.Dense(2, dtype="float32")(out["pooled_output"])}
        super().__init__(inputs=inputs, outputs=outputs, name="keras_hub_pretrainer")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        # Keras's sparse cross-entropy, as KerasHub's BertMaskedLM computes it (ours is a compiled kernel).
        weights = ops.cast(y["masked_lm_weights"], "float32")
        mlm = ops.sparse_categorical_crossentropy(y["masked_lm_ids"], ops.cast(y_pred["mlm_logits"], "float32"),
                                                  from_logits=True)
        return (ops.sum(mlm * weights) / (ops.sum(weights) + 1e-5)
                + losses.next_sentence_loss(y["next_sentence_labels"], y_pred["nsp_logits"]))


def keras_hub_dataset(dataset):
    names = {"input_word_ids": "token_ids", "input_mask": "padding_mask", "input_type_ids": "segment_ids",
             "masked_lm_positions": "mask_positions"}
    return dataset.map(lambda x, y: ({names[k]: v for k, v in x.items()}, y))


def compile_for_training(model, framework="official_bert", jit_compile=False, steps_per_execution=1):
    """Compiles `model` with the optimizer its users train with (its update is part of a step's time): ours,
    run_pretraining's `create_optimizer` (the original's AdamWeightDecay); KerasHub's, Keras's AdamW; both with
    weight decay 0.01, epsilon 1e-6 and clipping to a global norm of 1.0."""
    if framework == "official_bert":
        optimizer = create_optimizer(1e-4, num_train_steps=10_000, num_warmup_steps=100)
    else:
        optimizer = keras.optimizers.AdamW(1e-4, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0)
    model.compile(optimizer=optimizer, jit_compile=jit_compile, steps_per_execution=steps_per_execution)


def time_training(model, dataset, args):
    """(wall, process CPU) seconds per step over args.steps steps, after args.warmup_steps untimed ones, the
    peak RSS in GiB of the whole process and of the timed steps alone, and the timed steps' peak of tensor memory
    (`hardware.tensor_peak_gib`, None unless TensorFlow's allocator counts it).

    CPU time is printed too because on a shared machine wall time also measures the neighbours. The timed steps'
    peak is what the model's training holds (weights, optimizer slots, activations: what --remat changes); the
    process's adds the first step's tracing and compiling. Warm-up and timed steps are one `fit`, as in
    run_pretraining. (A second `fit` of 20 steps once took 1.023 s a step where the first took 0.7, same CPU time:
    the end of each `fit` waited for tf.data's autotuning thread, which `official_bert.prefetching` now turns off;
    since then 0.64-0.69 s, BERT-mini on 2 AMD EPYC cores.)
    """
    compile_for_training(model, args.framework, args.jit_compile, args.steps_per_execution)
    clock = _StepClock(args.warmup_steps)
    model.fit(dataset, steps_per_epoch=args.warmup_steps + args.steps, epochs=1, verbose=0, shuffle=False,
              callbacks=[clock])
    steps = args.warmup_steps + args.steps - clock.steps_before
    seconds, cpu_seconds = (time.perf_counter() - clock.wall) / steps, (time.process_time() - clock.cpu) / steps
    peak_since_start = hardware.peak_rss_gib()
    return (seconds, cpu_seconds, max(clock.process_peak, peak_since_start),
            peak_since_start if clock.measured_alone else float("nan"), hardware.tensor_peak_gib())


class _StepClock(keras.callbacks.Callback):
    """Starts the clocks, and the peak RSS afresh, once `warmup_steps` steps are done."""

    def __init__(self, warmup_steps):
        super().__init__()
        self.warmup_steps, self.wall = warmup_steps, None

    def on_train_begin(self, logs=None):
        if self.warmup_steps == 0:
            self._start(0)

    def on_train_batch_end(self, batch, logs=None):
        if self.wall is None and batch + 1 >= self.warmup_steps:  # batch: the last step of a steps_per_execution
            self._start(batch + 1)

    def _start(self, steps_before):
        self.steps_before, self.process_peak = steps_before, hardware.peak_rss_gib()
        self.measured_alone = hardware.reset_peak_rss()
        hardware.reset_tensor_peak()
        self.wall, self.cpu = time.perf_counter(), time.process_time()


def report(name, timing, config, args, peak_gflops):
    seconds_per_step, cpu_per_step, peak_gib, steps_peak_gib, tensor_peak_gib = timing
    tensors = (f"tensors {hardware.NOT_COUNTED}" if tensor_peak_gib is None
               else f"tensors {tensor_peak_gib:.2f} GiB at most")
    seq_per_s = args.batch_size / seconds_per_step
    tflops = seq_per_s * train_flops_per_sequence(config, args.seq_length, args.max_predictions_per_seq) / 1e12
    print(f"{name}: {seq_per_s:.2f} seq/s, {tflops * 1000:.1f} GFLOP/s = {tflops * 1000 / peak_gflops:.0%} of the "
          f"matmul peak "
          f"({seconds_per_step * 1000:.0f} ms/step wall, {cpu_per_step * 1000:.0f} ms/step CPU, "
          f"peak RSS {peak_gib:.2f} GiB, {steps_peak_gib:.2f} during the timed steps, {tensors})", flush=True)
    return seq_per_s


def main():
    args = parse_args()
    if args.mixed_precision:
        keras.mixed_precision.set_global_policy({"bf16": "mixed_bfloat16", "fp16": "mixed_float16"}[
            args.mixed_precision])
    config = BertConfig.from_preset(args.preset)
    peak = hardware.matmul_peak({"bf16": "bfloat16", "fp16": "float16"}.get(args.mixed_precision, "float32"))
    print(hardware.machine_line(), flush=True)
    print(f"matmul peak ({args.mixed_precision or 'fp32'}, 2048³): {peak:.0f} GFLOP/s", flush=True)
    print(f"preset {args.preset} (L={config.num_hidden_layers} H={config.hidden_size}), seq {args.seq_length}, "
          f"batch {args.batch_size}, {args.mixed_precision or 'fp32'}, jit_compile={args.jit_compile}, "
          f"remat={args.remat}, "
          f"{args.warmup_steps} warm-up + {args.steps} timed steps", flush=True)
    if args.compare:
        compare(args)
        return
    dataset = synthetic_dataset(config, args)
    if args.framework == "keras_hub":
        report("keras_hub", time_training(_KerasHubPretrainer(config), keras_hub_dataset(dataset), args), config, args,
               peak)
    else:
        report("official_bert", time_training(official_bert_model(config, args.remat), dataset, args), config, args,
               peak)


def compare(args):
    """Times KerasHub and ours, each in a child process, args.rounds times; prints the medians and their ratio, then
    the ratio of their CPU time per step.

    The machine may be shared: a neighbour's load slows a child's wall clock but hardly its CPU time, so where the
    seq/s ratio moves between runs and the CPU-time ratio does not, the load moved between the children."""
    figures = {"official_bert": [], "keras_hub": []}
    cpu_ms = {"official_bert": [], "keras_hub": []}
    for _ in range(args.rounds):
        for framework in ("keras_hub", "official_bert"):  # KerasHub first, as before --rounds
            seq_per_s, cpu = _time_in_child(framework)
            figures[framework].append(seq_per_s)
            cpu_ms[framework].append(cpu)
    ours, theirs = (statistics.median(figures[name]) for name in ("official_bert", "keras_hub"))
    ranges = "" if args.rounds == 1 else (
        f" (medians of {args.rounds} rounds; official_bert {min(figures['official_bert']):.2f}-"
        f"{max(figures['official_bert']):.2f}, keras_hub {min(figures['keras_hub']):.2f}-"
        f"{max(figures['keras_hub']):.2f})")
    print(f"official_bert {ours:.2f} keras_hub {theirs:.2f} ratio {ours / theirs:.2f}{ranges}")
    ours_cpu, theirs_cpu = (statistics.median(cpu_ms[name]) for name in ("official_bert", "keras_hub"))
    print(f"CPU time per step: official_bert {ours_cpu:.0f} ms keras_hub {theirs_cpu:.0f} ms ratio "
          f"{theirs_cpu / ours_cpu:.2f}")


def _time_in_child(framework):
    """Runs this benchmark with the same arguments for `framework` in a child process; returns its seq/s and its CPU
    milliseconds per step."""
    argv, skip = [], False
    for arg in sys.argv[1:]:  # without --compare/--rounds and their values
        if skip or arg.startswith(("--compare", "--rounds", "--framework")):
            skip = arg in ("--compare", "--rounds", "--framework")
            continue
        argv.append(arg)
    child = subprocess.run([sys.executable, "-m", "bench.train_step", *argv, "--framework", framework],
                           stdout=subprocess.PIPE, text=True, check=True,
                           cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    line = child.stdout.strip().splitlines()[-1]
    print(line, flush=True)
    return (float(re.match(rf"{framework}: ([0-9.]+) seq/s", line).group(1)),
            float(re.search(r"([0-9.]+) ms/step CPU", line).group(1)))


if __name__ == "__main__":
    main()
