"""Distillation on the shipped era task (#45's "Must show"): a BERT-small teacher fine-tuned on data/classification,
BERT-tiny students distilled from it with the State of the Union corpus as unlabelled text against the same students
fine-tuned on the labels alone, three seeds each; then bert-predict's rows/s of the teacher's and a student's exports.

    python -m bench.distillation [--work_dir DIR] [--teacher_init_checkpoint CKPT] [--seeds 1,2,3] [--quick]

Every step is one of the project's commands, run as a user would (each a new process): build_vocab.py (a vocabulary
learnt from data/corpus/sotu.txt, unless --vocab_file), run_classifier.py (the teacher, --student_preset's shapes
from --teacher_init_checkpoint if given, else from random weights; and the labels-only students),
run_distillation.py (the distilled students, --unlabeled_file=data/corpus/sotu.txt) and predict.py (the exports, on
the dev passages, same file, same machine, one after the other). A step whose output exists is not run again.

It prints the teacher's dev accuracy, each student's (with its agreement with the teacher), the means and spreads
(max − min) of the two kinds of student, the distilled students' share of the teacher's accuracy, and the two
exports' rows/s and their ratio. --quick: a tiny teacher, short sequences, one seed, an epoch, 400 rows of each
split and 1,000 lines of the corpus — a check that the pipeline runs, not a result. The machine is shared: compare
the figures of one run.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import tensorflow as tf

from official_bert import BertConfig

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "data")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work_dir", default=None, help="where everything goes (default: a new temporary directory)")
    parser.add_argument("--vocab_file", default=None, help="the vocabulary (default: the pretrained teacher's "
                        "vocab.txt, else one learnt from the corpus)")
    parser.add_argument("--teacher_init_checkpoint", default=None, help="a pretrained BERT-small-or-larger to "
                        "fine-tune the teacher from: run_pretraining.py's output directory or a checkpoint, with "
                        "its bert_config.json and vocab.txt beside it")
    parser.add_argument("--teacher_preset", default="small")
    parser.add_argument("--student_preset", default="tiny")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--teacher_epochs", type=float, default=3)
    parser.add_argument("--student_epochs", type=float, default=3)
    parser.add_argument("--teacher_learning_rate", type=float, default=1e-4)
    parser.add_argument("--student_learning_rate", type=float, default=3e-4)
    parser.add_argument("--quick", action="store_true", help="a small check that everything runs (see above)")
    args = parser.parse_args()
    if args.quick:
        args.teacher_preset, args.seeds, args.max_seq_length = "tiny", "1", 32
        args.teacher_epochs = args.student_epochs = 1
    return args


def run(command, log):
    """Runs one of the project's tools; exits with its log's tail if it fails."""
    print("$", " ".join(command[1:]), flush=True)
    done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES=""))
    with open(log, "w") as out:  # the bench's own work directory, on this machine
        out.write(done.stdout)
    if done.returncode != 0:
        sys.exit(f"failed ({log}):\n{done.stdout[-3000:]}")
    return done.stdout


def head(source, target, lines):
    """The first `lines` lines of `source` (all with None) as `target`; returns target."""
    with open(source, encoding="utf-8") as f, open(target, "w", encoding="utf-8") as out:
        for i, line in enumerate(f):
            if lines is not None and i >= lines:
                break
            out.write(line)
    return target


def results(output_dir):
    with open(os.path.join(output_dir, "eval_results.json")) as f:
        return json.load(f)


def main():
    args = parse_args()
    work = args.work_dir or tempfile.mkdtemp(prefix="bench_distillation_")
    os.makedirs(work, exist_ok=True)
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    py = sys.executable
    rows = 401 if args.quick else None  # 400 passages and the header
    train = head(os.path.join(DATA, "classification", "train.tsv"), os.path.join(work, "train.tsv"), rows)
    dev = head(os.path.join(DATA, "classification", "dev.tsv"), os.path.join(work, "dev.tsv"), rows)
    corpus = head(os.path.join(DATA, "corpus", "sotu.txt"), os.path.join(work, "sotu.txt"),
                  1000 if args.quick else None)
    pretrained = args.teacher_init_checkpoint
    pretrained_dir = pretrained and (pretrained if tf.io.gfile.isdir(pretrained) else os.path.dirname(pretrained))
    vocab = args.vocab_file or os.path.join(pretrained_dir or work, "vocab.txt")
    if not tf.io.gfile.exists(vocab):  # the pretrained teacher's may be remote
        run([py, "data_prep/build_vocab.py", f"--input_file={corpus}", f"--output_file={vocab}",
             f"--vocab_size={2000 if args.quick else 8000}"], os.path.join(logs, "vocab.log"))
    task = [f"--train_file={train}", f"--dev_file={dev}", "--text_a_column=sentence",
            f"--max_seq_length={args.max_seq_length}", "--do_train", "--do_eval", "--train_batch_size=32",
            "--eval_batch_size=32", "--mixed_precision=auto"]

    def config_file(preset, name):
        path = os.path.join(work, name)
        with tf.io.gfile.GFile(vocab) as f:
            vocab_size = sum(1 for _ in f)
        BertConfig.from_preset(preset, vocab_size=vocab_size, max_position_embeddings=max(args.max_seq_length, 128)
                               ).to_json_file(path)
        return path

    teacher = os.path.join(work, "teacher")
    if not os.path.exists(os.path.join(teacher, "eval_results.json")):
        model = ([f"--init_checkpoint={pretrained}",
                  f"--bert_config_file={os.path.join(pretrained_dir, 'bert_config.json')}"]
                 if pretrained else
                 [f"--bert_config_file={config_file(args.teacher_preset, 'teacher_config.json')}"])
        run([py, "run_classifier.py", *task, *model, f"--vocab_file={vocab}", f"--output_dir={teacher}",
             f"--num_train_epochs={args.teacher_epochs}", f"--learning_rate={args.teacher_learning_rate}",
             f"--export_dir={os.path.join(work, 'teacher_export')}"], os.path.join(logs, "teacher.log"))
    student_config = config_file(args.student_preset, "student_config.json")
    seeds = [int(seed) for seed in args.seeds.split(",")]
    distilled, labels_only = {}, {}
    for seed in seeds:
        export = [f"--export_dir={os.path.join(work, 'student_export')}"] if seed == seeds[0] else []
        out = os.path.join(work, f"distilled-{seed}")
        if not os.path.exists(os.path.join(out, "eval_results.json")):
            run([py, "run_distillation.py", *task, f"--teacher={teacher}", f"--student_preset={args.student_preset}",
                 f"--unlabeled_file={corpus}", f"--output_dir={out}", f"--seed={seed}",
                 f"--num_train_epochs={args.student_epochs}", f"--learning_rate={args.student_learning_rate}",
                 *export], os.path.join(logs, f"distilled-{seed}.log"))
        distilled[seed] = results(out)
        out = os.path.join(work, f"labels-only-{seed}")
        if not os.path.exists(os.path.join(out, "eval_results.json")):
            run([py, "run_classifier.py", *task, f"--bert_config_file={student_config}", f"--vocab_file={vocab}",
                 f"--output_dir={out}", f"--seed={seed}", f"--num_train_epochs={args.student_epochs}",
                 f"--learning_rate={args.student_learning_rate}"], os.path.join(logs, f"labels-only-{seed}.log"))
        labels_only[seed] = results(out)

    rates = {}
    for name in ("teacher", "student"):
        output = run([py, "predict.py", f"--saved_model_dir={os.path.join(work, name + '_export')}",
                      f"--input_file={dev}", f"--output_file={os.path.join(work, name + '_predictions.jsonl')}",
                      "--columns=text_a=sentence", "--batch_size=32"], os.path.join(logs, f"predict-{name}.log"))
        rates[name] = float(re.search(r"\(([\d,]+) rows/s after", output).group(1).replace(",", ""))

    teacher_accuracy = results(teacher)["eval_accuracy"]
    if pretrained:  # the checkpoint's shape, not --teacher_preset's
        config = BertConfig.from_json_file(os.path.join(pretrained_dir, "bert_config.json"))
        shape = f"{config.num_hidden_layers} x {config.hidden_size}, from {pretrained}"
    else:
        shape = f"{args.teacher_preset}, from random weights"
    print(f"\nteacher ({shape}): dev accuracy {teacher_accuracy:.4f}")
    for seed in seeds:
        d, l = distilled[seed], labels_only[seed]
        print(f"seed {seed}: distilled {d['eval_accuracy']:.4f} (agrees with the teacher on "
              f"{d['eval_teacher_agreement']:.1%}), labels only {l['eval_accuracy']:.4f}")
    summary = {}
    for name, runs in (("distilled", distilled), ("labels only", labels_only)):
        values = [runs[seed]["eval_accuracy"] for seed in seeds]
        summary[name] = (sum(values) / len(values), max(values) - min(values))
        print(f"{name}: mean {summary[name][0]:.4f}, spread {summary[name][1]:.4f}")
    margin = summary["distilled"][0] - summary["labels only"][0]
    print(f"distilled − labels only: {margin:+.4f} (spreads {summary['distilled'][1]:.4f} / "
          f"{summary['labels only'][1]:.4f}); distilled keeps {summary['distilled'][0] / teacher_accuracy:.1%} of "
          "the teacher's accuracy")
    print(f"bert-predict rows/s on {os.path.basename(dev)}: teacher {rates['teacher']:,.0f}, student "
          f"{rates['student']:,.0f} ({rates['student'] / rates['teacher']:.1f}x)")


if __name__ == "__main__":
    main()
