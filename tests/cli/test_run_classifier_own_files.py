"""run_classifier.py on your own files as a command (#34): predictions.jsonl/.csv keep a 10,000-row file's rows, order
and ids; every kind of bad input is one line and a non-zero exit, with no labels or predictions written."""

import csv
import json
import os
import random
import subprocess
import sys

import pytest

from tests.classification.own_data import FILLER, write_model
from tests.cli.test_cli_bad_input import DRIVER

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "run_classifier.py")
pytestmark = pytest.mark.slow


def environment():
    return dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")


def write_csv(path, header, rows, encoding="utf-8"):
    with open(path, "w", encoding=encoding, newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def model_flags(tmp_path):
    vocab, config = write_model(str(tmp_path / "model"), hidden_size=16, intermediate_size=32)
    return [f"--vocab_file={vocab}", f"--bert_config_file={config}", "--max_seq_length=16", "--train_batch_size=8",
            "--learning_rate=1e-3", "--iterations_per_loop=10", "--log_steps=100"]


def test_predictions_keep_every_row_in_order_with_its_id(tmp_path):
    rng = random.Random(0)
    train = write_csv(tmp_path / "train.csv", ["body", "label", "ticket"],
                      [[" ".join(rng.choices(FILLER, k=4)), rng.choice(["neg", "pos"]), i] for i in range(40)])
    ids = [f"T-{rng.randrange(10**9):09d}" for _ in range(10_000)]  # not in any sorted order
    texts = [" ".join(rng.choices(FILLER, k=rng.randint(1, 12))) + (', "quoted", ' if i % 7 == 0 else "")
             for i in range(len(ids))]
    test = write_csv(tmp_path / "tickets.csv", ["body", "ticket"], list(zip(texts, ids)))
    output_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, SCRIPT, *model_flags(tmp_path), f"--output_dir={output_dir}",
                           f"--train_file={train}", f"--test_file={test}", "--text_a_column=body", "--id_column=ticket",
                           "--do_train", "--do_predict", "--predict_batch_size=500"],
                          env=environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(output_dir / "predictions.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    assert [row["id"] for row in rows] == ids
    assert all(row["label"] in ("neg", "pos") and list(row["probabilities"]) == ["neg", "pos"] and
               abs(sum(row["probabilities"].values()) - 1) < 1e-5 for row in rows)
    with open(output_dir / "predictions.csv", newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert [row["id"] for row in table] == ids and [row["label"] for row in table] == [row["label"] for row in rows]
    with open(output_dir / "labels.json") as f:
        assert json.load(f)["labels"] == ["neg", "pos"]


def test_bad_input_gives_one_line_and_writes_nothing(tmp_path):
    d = tmp_path
    good = write_csv(d / "train.csv", ["id", "text", "label"], [[1, "good film", "pos"], [2, "bad film", "neg"]])
    jsonl = d / "dev.jsonl"
    jsonl.write_text('{"text": "fine", "label": "pos"}\n{"text": "dull", "label": "neg",}\n')
    latin1 = d / "latin1.csv"
    latin1.write_bytes("text,label\nok,pos\ncafé,neg\n".encode("latin-1"))
    (d / "empty.csv").write_text("")
    (d / "tabs.csv").write_text("text\tlabel\ngood film\tpos\nbad film\tneg\n")
    spellings = write_csv(d / "s.csv", ["text", "label"], [["a", "pos"], ["b", "neg"], ["c", "Pos"]])
    cases = [
        ("missing column", [f"--train_file={good}", "--text_a_column=body", "--do_train"],
         f"{good}: no column 'body' (its columns: id, text, label)"),
        ("empty text", [f"--train_file={write_csv(d / 'e.csv', ['text', 'label'], [['a', 'x'], [' ', 'y']])}",
                        "--do_train"], "e.csv, row 2: column 'text' is an empty text"),
        ("bad JSON line", [f"--train_file={good}", f"--dev_file={jsonl}", "--do_train", "--do_eval"],
         "dev.jsonl, row 2: not a JSON object: Expecting property name enclosed in double quotes at column 33"),
        ("unseen label", [f"--train_file={good}", "--do_train", "--do_eval",
                          f"--dev_file={write_csv(d / 'u.csv', ['text', 'label'], [['a', 'pos'], ['b', 'meh']])}"],
         "u.csv, row 2: label 'meh' is not one of the labels neg, pos (those of the training file)"),
        ("not in --label_list", [f"--train_file={good}", "--do_train", "--label_list=neg,neutral"],
         "train.csv: label 'pos' is not in --label_list (neg, neutral)"),
        ("float where classes", [f"--train_file={write_csv(d / 'f.csv', ['text', 'label'], [['a', '0.25']])}",
                                 "--do_train"], "f.csv, row 1: label '0.25' in column 'label' is a number, not a class"),
        ("class where floats", [f"--train_file={good}", "--do_train", "--regression"],
         "train.csv, row 1: label 'pos' in column 'label' is not a number (--regression expects float labels)"),
        ("empty file", [f"--train_file={d / 'empty.csv'}", "--do_train"], "empty.csv: the file is empty"),
        ("not UTF-8", [f"--train_file={latin1}", "--do_train"],
         "latin1.csv, line 3: byte 0xe9 at byte offset 21 is not UTF-8"),
        ("ragged row", [f"--train_file={write_csv(d / 'r.csv', ['text', 'label'], [['a', 'x', 'extra']])}",
                        "--do_train"], "r.csv, row 1 (line 2): 3 fields where the header has 2"),
        ("task and files", [f"--train_file={good}", "--task_name=sst-2", "--do_train"],
         "give --task_name (with --data_dir) or your own --train_file / --dev_file / --test_file, not both"),
        ("no dev file", [f"--train_file={good}", "--do_train", "--do_eval"], "--do_eval needs --dev_file"),
        ("threshold single-label", [f"--train_file={good}", "--do_train", "--threshold=0.3"],
         "--threshold is for multi-label tasks"),
        ("class weights", [f"--train_file={good}", "--do_train", "--class_weights=1,2,3"],
         "--class_weights=1,2,3: expected 'balanced' or 2 positive numbers, one per label in order (neg, pos)"),
        ("tabs in a .csv", [f"--train_file={d / 'tabs.csv'}", "--do_train"],
         r"tabs.csv: no column 'text' (header is 'text\tlabel': a tab-separated file? give --input_format=tsv)"),
        ("two spellings", [f"--train_file={spellings}", "--do_train"],
         "s.csv, row 3: label 'Pos' and label 'pos' (row 1) differ only in case: one class or two?"),
        ("dev error after a good train file", [f"--train_file={good}", "--do_train", "--do_eval",
                                               f"--dev_file={write_csv(d / 'x.csv', ['text', 'label'], [[' ', 'x']])}"],
         "x.csv, row 1: column 'text' is an empty text"),
        ("train file without --do_train", [f"--train_file={good}", f"--dev_file={good}", "--do_eval"],
         "--train_file is given but --do_train is not: pass --do_train, or leave --train_file out"),
        ("dev file without --do_eval", [f"--train_file={good}", f"--dev_file={good}", "--do_train"],
         "--dev_file is given but --do_eval is not"),
        ("test file without --do_predict", [f"--train_file={good}", f"--test_file={good}", "--do_train"],
         "--test_file is given but --do_predict is not"),
    ]
    argvs = [[*model_flags(tmp_path), f"--output_dir={d / 'out' / str(i)}", *argv]
             for i, (_, argv, _) in enumerate(cases)]
    done = subprocess.run([sys.executable, "-c", DRIVER, "run_classifier", json.dumps(argvs)],
                          env=environment(), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    for i, ((name, _, fragment), (code, stderr)) in enumerate(zip(cases, outcomes)):
        lines = stderr.strip().splitlines()
        assert code == 1 and lines[-1].startswith("run_classifier: error: ") and fragment in lines[-1], (name, stderr)
        assert "Traceback" not in stderr, (name, stderr)
        assert not (d / "out" / str(i)).exists(), (name, os.listdir(d / "out" / str(i)))  # no feature_cache/ either


def test_a_sweep_with_a_test_file_reuses_the_features_in_every_run(tmp_path):
    """A sweep's runs are the tool again without --do_predict (and so without --test_file): they neither stop at the
    test file nor convert the training and dev files again, whose cache keys do not depend on the files beside them."""
    rng = random.Random(1)
    rows = [[" ".join(rng.choices(FILLER, k=4)), rng.choice(["neg", "pos"])] for _ in range(24)]
    train = write_csv(tmp_path / "train.csv", ["text", "label"], rows)
    test = write_csv(tmp_path / "test.csv", ["text"], [row[:1] for row in rows[:5]])
    output_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, SCRIPT, *model_flags(tmp_path), f"--output_dir={output_dir}",
                           f"--train_file={train}", f"--dev_file={train}", f"--test_file={test}", "--do_train",
                           "--do_eval", "--do_predict", "--num_train_epochs=1", "--seeds=1,2",
                           "--mixed_precision=fp32"], env=environment(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = sorted(os.listdir(output_dir / "runs"))
    assert len(runs) == 2 and not any((output_dir / "runs" / name / "feature_cache").exists() for name in runs)
    assert len([n for n in os.listdir(output_dir / "feature_cache") if n.endswith(".json")]) == 3  # train, dev, test
    with open(output_dir / "predictions.jsonl", encoding="utf-8") as f:
        assert [json.loads(line)["id"] for line in f] == [1, 2, 3, 4, 5]
