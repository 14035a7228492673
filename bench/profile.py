"""Where the time goes: TensorFlow's profiler's op stats for inference and a pretraining step.

    python -m bench.profile [--preset base] [--precision fp32|bf16] [--batch_size 32] [--seq_length 128]
        [--mode inference|train|both] [--remat] [--steps 2] [--warmup_steps 1] [--top 20] [--sequential]

Prints the machine (CPU features, oneDNN, load) and the matmul peak of the precision measured here, as
`bench.inference` and `bench.train_step` do, then for each mode a table of the op types TensorFlow ran, by self time
summed over the profiled steps: total milliseconds, share of the busy time (the self time of every op, on every
thread: on several cores it can exceed the wall time), count, count per step and microseconds per call; the op
types past --top are summed in one row. oneDNN's kernels keep their names (`_MklNativeFusedMatMul`, `_MklSoftmax`),
so the table shows what the runtime ran, after grappler's rewrites.

The heading gives how many ops ran at once on average (the busy time over the time in which any op ran). Above 1,
ops that ran beside each other shared the cores and each one's time is stretched by the others' (a weight's cast
beside a matmul reads several times its cost): --sequential runs one op at a time (TensorFlow's inter-op
parallelism 1, each op still on every core), so that each row is what those ops cost; the step is then slower.

- inference: `BertEncoder` forward in a tf.function, as `bench.inference` times it (`model_in_precision` for bf16);
- train: a pretraining step (MLM + NSP, AdamWeightDecay) on `bench.train_step`'s synthetic batch, through `Model.fit`,
  model built under the mixed_bfloat16 policy for bf16 (`--mixed_precision bf16`).

Both run --warmup_steps unprofiled first (tracing, oneDNN's primitive caches). The profiler's trace goes to a
temporary directory; the table is summed from its events (the XSpace protobuf `tf.profiler.experimental` writes,
one event per op run, named "node:op type"). TensorBoard's "framework_op_stats" converter, which TensorFlow's wheel
carries, gives about the same times from it but other counts (for a BERT-mini step, 23 dropout draws where the
trace holds the 13 that ran).
"""

import argparse
import collections
import os
import re
import tempfile
import time

import keras
import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2

from bench import hardware, inference, train_step
from official_bert import BertConfig, BertEncoder

OpStat = collections.namedtuple("OpStat", "type self_us count")
COLUMNS = ("op type", "total ms", "share", "count", "per step", "us/call")
DTYPES = {"fp32": "float32", "bf16": "bfloat16"}
# TensorFlow node names have no ":" (https://www.tensorflow.org/api_docs/python/tf/Operation#name), op types are
# identifiers.
_XLA_EVENT = "CpuExecutable::ExecuteAsyncOnStream"
_OP_EVENT = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*:([A-Za-z_][A-Za-z0-9_]*)$")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="base", choices=BertConfig.preset_names())
    parser.add_argument("--precision", default="bf16", choices=sorted(DTYPES))
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20, help="train: masked positions a sequence")
    parser.add_argument("--mode", default="both", choices=["inference", "train", "both"])
    parser.add_argument("--remat", action="store_true", help="train: recompute each transformer block in the "
                        "backward pass, as bench.train_step --remat")
    parser.add_argument("--steps", type=int, default=2, help="profiled calls (inference) or training steps")
    parser.add_argument("--warmup_steps", type=int, default=1, help="unprofiled ones first")
    parser.add_argument("--sequential", action="store_true", help="one op at a time (inter-op parallelism 1), "
                        "so that each op's time is its own, not stretched by the ops running beside it")
    parser.add_argument("--top", type=int, default=20, help="op types shown; the rest are summed in one row")
    args = parser.parse_args(argv)
    for name in ("batch_size", "seq_length", "steps", "top"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    return args


def _op_type(event_name):
    """The op type of a profiler event, or None for the runtime's own events ("ExecutorState::Process").

    An op's event is named "node name:op type". An XLA-compiled function (the optimizer's update, training's GELU)
    runs as one executable, whose event is named for that and has no op type: it is counted as "XLA executable".
    """
    if event_name == _XLA_EVENT:
        return "XLA executable"
    match = _OP_EVENT.match(event_name)
    return match.group(1) if match else None


def op_stats(run):
    """Calls run() under TensorFlow's profiler; returns the OpStats of every op type it ran, longest first, and the
    microseconds in which at least one op ran.

    self_us is the time in microseconds of every op of that type (on every thread), less that of the ops run within
    it on its thread (a While's body, say), count their number; idle time is left out.
    """
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        try:
            run()
        finally:
            tf.profiler.experimental.stop()
        paths = tf.io.gfile.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
        if not paths:
            raise RuntimeError(f"TensorFlow's profiler wrote no trace in {logdir}")
        space = xplane_pb2.XSpace.FromString(tf.io.gfile.GFile(paths[0], "rb").read())
    totals = collections.defaultdict(lambda: [0.0, 0])
    outermost = []  # (start, end) in picoseconds of the ops run within no other op, on every thread
    for plane in space.planes:
        for line in plane.lines:
            ops = [(event.offset_ps, event.duration_ps, op_type) for event in line.events
                   for op_type in [_op_type(plane.event_metadata[event.metadata_id].name)] if op_type]
            enclosing = []  # (end, op type) of the ops the current one runs within
            for start, duration, op_type in sorted(ops, key=lambda op: (op[0], -op[1])):
                while enclosing and enclosing[-1][0] <= start:
                    enclosing.pop()
                if enclosing:
                    totals[enclosing[-1][1]][0] -= duration / 1e6
                else:
                    outermost.append((line.timestamp_ns * 1000 + start, line.timestamp_ns * 1000 + start + duration))
                totals[op_type][0] += duration / 1e6
                totals[op_type][1] += 1
                enclosing.append((start + duration, op_type))
    return (sorted((OpStat(name, us, count) for name, (us, count) in totals.items()), key=lambda s: -s.self_us),
            _union_ps(outermost) / 1e6)


def _union_ps(intervals):
    """The length of the union of (start, end) intervals."""
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total, reach = total + end - start, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total


def format_table(stats, steps, top=20):
    """The table of `stats` (from op_stats over `steps` steps): the `top` longest op types, the rest in one row,
    and the busy time; shares are of the busy time, so the rows' shares sum to 100 %."""
    busy = sum(s.self_us for s in stats) or 1.0
    rows = list(stats[:top])
    if len(stats) > top:
        rest = stats[top:]
        rows.append(OpStat(f"({len(rest)} other op types)", sum(s.self_us for s in rest), sum(s.count for s in rest)))
    lines = [f"{COLUMNS[0]:<34}{COLUMNS[1]:>11}{COLUMNS[2]:>8}{COLUMNS[3]:>8}{COLUMNS[4]:>10}{COLUMNS[5]:>11}"]
    for s in rows:
        lines.append(f"{s.type:<34}{s.self_us / 1000:11.1f}{s.self_us / busy:8.1%}{s.count:8d}{s.count / steps:10.1f}"
                     f"{s.self_us / max(s.count, 1):11.1f}")
    lines.append(f"{'busy time':<34}{busy / 1000:11.1f}{1:8.1%}{sum(s.count for s in stats):8d}")
    return "\n".join(lines)


def inference_run(config, precision, batch_size, seq_length):
    """One forward pass of a BertEncoder of `config` with random weights in `precision`, as bench.inference."""
    return inference.official_bert_call(BertEncoder(config), precision, inference.token_ids(config, batch_size,
                                                                                          seq_length))


def train_run(config, precision, args):
    """run(steps): that many pretraining steps of bench.train_step's model and batch, `precision` its policy."""
    policy = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("mixed_bfloat16" if precision == "bf16" else "float32")
    try:
        model = train_step.official_bert_model(config, args.remat)
    finally:
        keras.mixed_precision.set_global_policy(policy)
    train_step.compile_for_training(model)
    dataset = train_step.synthetic_dataset(config, args)
    return lambda steps: model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0, shuffle=False)


def profile(mode, config, args):
    """The heading and table of `mode` ("inference" or "train") for `config` and args' precision and shapes."""
    if mode == "inference":
        call = inference_run(config, args.precision, args.batch_size, args.seq_length)
        run = lambda steps: [call() for _ in range(steps)]  # noqa: E731
    else:
        run = train_run(config, args.precision, args)
    if args.warmup_steps:
        run(args.warmup_steps)
    start = time.perf_counter()
    stats, any_op_us = op_stats(lambda: run(args.steps))
    seconds = (time.perf_counter() - start) / args.steps
    at_once = sum(s.self_us for s in stats) / max(any_op_us, 1e-9)
    what = ("forward pass (encoder)" if mode == "inference" else
            f"pretraining step (MLM + NSP, AdamWeightDecay{', --remat' if args.remat else ''})")
    heading = (f"{mode}, {args.precision}: {what}, batch {args.batch_size}, seq {args.seq_length}, "
               f"{args.steps} profiled steps, {seconds * 1000:.0f} ms per step wall under the profiler, "
               f"{at_once:.2f} ops at once on average{' (--sequential)' if args.sequential else ''}")
    return heading + "\n" + format_table(stats, args.steps, args.top)


def main(argv=None):
    args = parse_args(argv)
    if args.sequential:
        tf.config.threading.set_inter_op_parallelism_threads(1)  # before the runtime starts, which fixes it
    config = BertConfig.from_preset(args.preset)
    print(hardware.machine_line(), flush=True)
    print(f"matmul peak ({args.precision}, 2048³): {hardware.matmul_peak(DTYPES[args.precision]):.0f} GFLOP/s",
          flush=True)
    print(f"preset {args.preset} (L={config.num_hidden_layers} H={config.hidden_size})", flush=True)
    keras.utils.set_random_seed(0)
    for mode in (["inference", "train"] if args.mode == "both" else [args.mode]):
        print("\n" + profile(mode, config, args), flush=True)


if __name__ == "__main__":
    main()
