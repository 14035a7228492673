"""A fine-tuned classifier exported in fp32 and in bf16: each export's size on disk, its rows/s on a file and how
often the bf16 export's label is the fp32 export's (#43's "the bf16 export's label agreement on a real dev set").

    python -m bench.export_precision --run_dir RUN --input_file dev.tsv --text_a_column sentence \
        [--text_b_column C] [--max_seq_length 128] [--batch_size 32] [--work_dir DIR]

RUN is a run_classifier.py output directory of a single-label task (its bert_config.json, vocab.txt, labels.json
and checkpoints: the --keep_best one if it kept one, else the newest). Both exports are what --export_dir writes
with --export_precision=fp32 and =bf16 (export.classifier.export_classifier on the model in that precision), loaded
back and fed the file's texts through their raw-text signature, in batches, one export after the other. Prints the
machine first: bf16 is fast only where the CPU computes it natively (AMX, AVX512_BF16).
"""

import argparse
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

from bench import hardware
from official_bert import BertClassifier, BertConfig, BertEncoder
from official_bert.classification.own_files import read_label_file
from official_bert.export.classifier import export_classifier
from official_bert.export.precision import model_in_precision
from official_bert.finetuning.best import load_trained_weights
from official_bert.io.paths import files_under
from official_bert.io.table_files import read_rows
from official_bert.text.tokenizer_spec import TokenizerSpec


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run_dir", required=True)
    parser.add_argument("--input_file", required=True)
    parser.add_argument("--text_a_column", required=True)
    parser.add_argument("--text_b_column", default=None)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--work_dir", default=None, help="where the exports go (default: a temporary directory)")
    return parser.parse_args()


def size_mib(directory):
    return sum(tf.io.gfile.stat(os.path.join(directory, f)).length for f in files_under(directory)) / 2 ** 20


def served_labels(path, texts, batch_size):
    """(labels, rows/s) of the export at `path` on `texts` ({input: [str]}), batch by batch after one warm-up."""
    serve = tf.saved_model.load(path).signatures["serving_default"]
    count = len(next(iter(texts.values())))
    batches = [{name: tf.constant(values[i:i + batch_size]) for name, values in texts.items()}
               for i in range(0, count, batch_size)]
    serve(**batches[0])
    start, labels = time.perf_counter(), []
    for batch in batches:
        labels.extend(serve(**batch)["label"].numpy())
    return np.array(labels), count / (time.perf_counter() - start)


def main():
    args = parse_args()
    print(hardware.machine_line(), flush=True)
    label_file = read_label_file(args.run_dir)
    if not label_file or label_file.get("kind") != "single_label":
        raise SystemExit(f"--run_dir={args.run_dir}: expected a single-label run (its labels.json)")
    labels = label_file["labels"]
    model = BertClassifier(BertEncoder(BertConfig.from_json_file(os.path.join(args.run_dir, "bert_config.json"))),
                           len(labels))
    load_trained_weights(model, args.run_dir, best=True)
    columns = {"text_a": args.text_a_column, **({"text_b": args.text_b_column} if args.text_b_column else {})}
    rows = [row for _, row in read_rows(args.input_file, None, list(columns.values()))]
    texts = {name: [row[column] for row in rows] for name, column in columns.items()}
    tokenizer = TokenizerSpec(os.path.join(args.run_dir, "vocab.txt"))
    work = args.work_dir or tempfile.mkdtemp(prefix="bench_export_precision_")
    results = {}
    for precision in ("fp32", "bf16"):
        path = export_classifier(os.path.join(work, precision), model_in_precision(model, precision), tokenizer,
                                 args.max_seq_length, labels, text_b=bool(args.text_b_column))
        predicted, rate = served_labels(path, texts, args.batch_size)
        results[precision] = predicted
        print(f"{precision}: {size_mib(path):7.1f} MiB on disk ({size_mib(os.path.join(path, 'variables')):.1f} MiB "
              f"of weights), {rate:8.1f} rows/s on {len(rows):,} rows of {os.path.basename(args.input_file)} "
              f"(load {hardware.load_line()})", flush=True)
    agree = float(np.mean(results["fp32"] == results["bf16"]))
    print(f"the bf16 export's label is the fp32 export's on {agree:.2%} of the rows "
          f"({int(np.sum(results['fp32'] != results['bf16']))} differ)")


if __name__ == "__main__":
    main()
