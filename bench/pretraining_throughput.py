"""Pretraining seq/s through run_pretraining's input pipeline and training loop, against synthetic input.

    python -m bench.pretraining_throughput --preset mini --seq_length 128 --batch_size 32 [--mixed_precision bf16]
        [--jit_compile] [--steps 20] [--warmup_steps 3] [--records 4096] [--shards 4]

The model, shape and timing flags are bench/train_step.py's.

Three timings of the same model (bench/train_step.py's) on the same shapes:
- synthetic: one constant batch in memory (bench/train_step.py's figure);
- pipeline: the same step fed by official_bert.training.input_pipeline from TFRecord shards on disk (shuffled, parsed
  per batch), so the difference is what the input costs;
- run_pretraining: PretrainingRun.train (AdamWeightDecay, one progress report, one checkpoint at the end),
  as run_pretraining.py trains: one loop of --steps steps after one untimed loop.
Wall time on a shared machine also measures the neighbours: compare the CPU times per step too.
The last line is `synthetic <seq/s> pipeline <seq/s> run_pretraining <seq/s> pipeline/synthetic <ratio>`.
"""

import argparse
import gc
import os
import sys
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

from official_bert import BertConfig, distribution
from official_bert.training import input_pipeline
from official_bert.training import PretrainingRun, TrainingOptions
from official_bert.training.monitor import read_scalars

from bench import hardware, train_step


def parse_args():
    """This bench's own flags, then bench/train_step.py's (model, shapes, precision, steps), so both time the same."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=4096, help="examples written to the TFRecord shards")
    parser.add_argument("--shards", type=int, default=4)
    own, rest = parser.parse_known_args()
    sys.argv[1:] = rest
    args = train_step.parse_args()
    args.records, args.shards = own.records, own.shards
    return args


def write_shards(directory, config, args):
    """Random full-length examples like train_step.synthetic_dataset's, as create_pretraining_data.py writes them."""
    rng = np.random.default_rng(0)
    t, p = args.seq_length, args.max_predictions_per_seq

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    paths = [os.path.join(directory, f"train.tfrecord-{i:05d}-of-{args.shards:05d}") for i in range(args.shards)]
    writers = [tf.io.TFRecordWriter(path) for path in paths]
    for i in range(args.records):
        features = {
            "input_ids": ints(rng.integers(5, config.vocab_size, t)), "input_mask": ints([1] * t),
            "segment_ids": ints([0] * (t // 2) + [1] * (t - t // 2)),
            "masked_lm_positions": ints(np.sort(rng.choice(np.arange(1, t), p, replace=False))),
            "masked_lm_ids": ints(rng.integers(5, config.vocab_size, p)),
            "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0] * p)),
            "next_sentence_labels": ints([i % 2])}
        example = tf.train.Example(features=tf.train.Features(feature=features))
        writers[i % args.shards].write(example.SerializeToString())
    for writer in writers:
        writer.close()
    return ",".join(paths)


def time_run_pretraining(config, files, output_dir, args):
    """(seq/s, CPU seconds per step) of PretrainingRun.train over one loop of args.steps steps, after an untimed
    loop that traces. seq/s is the run's own report; the CPU time also covers the checkpoint saved at the end."""
    options = TrainingOptions(output_dir, train_batch_size=args.batch_size, learning_rate=1e-4,
                              num_train_steps=args.steps, num_warmup_steps=0, iterations_per_loop=args.steps,
                              log_steps=args.steps, save_checkpoints_steps=10**9, mixed_precision=args.mixed_precision,
                              jit_compile=args.jit_compile)
    run = PretrainingRun(config, options, distribution.get_strategy("one_device"))
    run.train(files)
    # The same run, extended by one loop: only that loop's report is timed (it excludes the final save).
    options.num_train_steps = 2 * args.steps
    cpu_start = time.process_time()
    run.train(files)
    cpu_per_step = (time.process_time() - cpu_start) / args.steps
    return read_scalars(os.path.join(output_dir, "train"))["sequences_per_second"][2 * args.steps], cpu_per_step


def fresh_session(policy):
    """Frees the previous timing's model and optimizer (gigabytes for base) and sets the global dtype policy."""
    keras.backend.clear_session()
    gc.collect()
    keras.mixed_precision.set_global_policy(policy)


def main():
    args = parse_args()
    policy = {"bf16": "mixed_bfloat16", "fp16": "mixed_float16"}.get(args.mixed_precision, "float32")
    config = BertConfig.from_preset(args.preset)
    print(f"preset {args.preset} (L={config.num_hidden_layers} H={config.hidden_size}), seq {args.seq_length}, "
          f"batch {args.batch_size}, {args.mixed_precision or 'fp32'}, jit_compile={args.jit_compile}, "
          f"{args.warmup_steps} warm-up + {args.steps} timed steps", flush=True)
    peak = hardware.matmul_peak({"bf16": "bfloat16", "fp16": "float16"}.get(args.mixed_precision, "float32"))
    with tempfile.TemporaryDirectory() as work:
        files = input_pipeline.open_pretraining_files(write_shards(work, config, args), args.seq_length,
                                                      args.max_predictions_per_seq, config.vocab_size)
        fresh_session(policy)  # bench/train_step.py's models take their precision from the global policy
        synthetic = train_step.report("synthetic", train_step.time_training(
            train_step.official_bert_model(config), train_step.synthetic_dataset(config, args), args), config, args,
            peak)
        fresh_session(policy)
        dataset = input_pipeline.pretraining_dataset(files, args.batch_size, is_training=True, seed=0)
        pipeline = train_step.report("pipeline", train_step.time_training(
            train_step.official_bert_model(config), dataset, args), config, args, peak)
        fresh_session("float32")  # PretrainingRun applies --mixed_precision itself
        looped, cpu_per_step = time_run_pretraining(config, files, os.path.join(work, "run"), args)
        print(f"run_pretraining: {looped:.2f} seq/s ({cpu_per_step * 1000:.0f} ms/step CPU with the final checkpoint "
              "save)", flush=True)
    print(f"synthetic {synthetic:.2f} pipeline {pipeline:.2f} run_pretraining {looped:.2f} "
          f"pipeline/synthetic {pipeline / synthetic:.3f}")


if __name__ == "__main__":
    main()
