"""The file, label and message classes as a user meets them at the command line: each case's tool exits 1 with one
line naming the flag, file or row and what was expected, no traceback, and no output directory. The library tests of
each class hold its variations (tests/io/test_directory_inputs.py, ...); these check the one-line form, one case of
each class per tool, the cases of a tool in one process (`DRIVER`: TensorFlow imported once)."""

import json
import os
import re
import subprocess
import sys

import pytest

from tests.cli.test_cli_bad_input import DRIVER
from tests.distillation.helpers import make_teacher, write_data
from tests.export.test_file_prediction import save_length_classifier, write_keep_csv
from tests.finetuning.test_run_classifier import SEQ_LENGTH, SINGLE, write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")


def run_cases(tool, argvs):
    """[(exit status, stderr)] of each argv given to `tool`'s run() in one process."""
    done = subprocess.run([sys.executable, "-c", DRIVER, tool, json.dumps(argvs)], env=ENV, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [tuple(result) for result in json.loads(done.stdout.strip().splitlines()[-1])]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The tiny model, own files (JSON Lines and CSV), a single-label teacher and a directory holding a file."""
    d = tmp_path_factory.mktemp("files")
    vocab, config = write_model_files(str(d / "model"))
    files = write_data(str(d / "data"), "single")
    (d / "adir").mkdir()
    (d / "adir" / "train.csv").write_text("text,label\nfine,1\n")
    rows = "".join(f"{i},{text},{label}\n" for i, (text, label) in enumerate(SINGLE))
    (d / "joined.csv").write_text(f"id,text,label\n{rows}id,text,label\n{rows}")
    (d / "header_space.tsv").write_text("id\ttext\tlabel \n" + rows.replace(",", "\t"))
    (d / "hidden.csv").write_text("id,text,label\n" + rows.replace(",1\n", ",po\u200bs\n", 1).replace(",1\n", ",pos\n"),
                                  encoding="utf-8")
    (d / "plain.txt").write_text("a text\nanother\n")
    (d / "names.csv").write_text("text,label\nthe movie is good,pos\na dull plot,neg\n")
    version = d / "export" / "1"
    version.mkdir(parents=True)
    for name in ("saved_model.pb", "model.keras"):
        (version / name).write_bytes(b"")
    return {"dir": d, "vocab": vocab, "config": config, **files, "teacher": make_teacher(d / "teacher", "single"),
            "classifier": save_length_classifier(d / "classifier"), "keep": write_keep_csv(d / "keep.csv"),
            "plain": str(d / "plain.txt"), "names": str(d / "names.csv"), "export_file": str(version / "model.keras"),
            "regression_teacher": make_teacher(d / "regression_teacher", "regression"),
            **{name: str(d / f"{name}.{ext}") for name, ext in (("joined", "csv"), ("header_space", "tsv"),
                                                                ("hidden", "csv"))}, "adir": str(d / "adir")}


def classifier(w, out, *extra):
    return [f"--bert_config_file={w['config']}", f"--vocab_file={w['vocab']}", f"--max_seq_length={SEQ_LENGTH}",
            f"--output_dir={out}", "--do_train", "--do_eval", f"--train_file={w['train']}",
            f"--dev_file={w['dev']}", *extra]


def predict(w, out, *extra):
    return [f"--saved_model_dir={w['classifier']}", f"--input_file={w['keep']}", f"--output_file={out}/out.jsonl",
            *extra]


def distillation(w, out, *extra):
    return [f"--teacher={w['teacher']}", f"--output_dir={out}", f"--max_seq_length={SEQ_LENGTH}", "--do_train",
            "--do_eval", f"--train_file={w['train']}", f"--dev_file={w['dev']}", "--student_preset=tiny", *extra]


# (tool, case, argv from the work files and an output directory, the one line's pattern after "<tool>: error: ").
CASES = [
    ("run_classifier", "K13b directory as --train_file with --input_format",
     lambda w, out: classifier(w, out, f"--train_file={w['adir']}", "--input_format=csv"),
     r"--train_file=\S+/adir: is a directory; expected a CSV, TSV, JSON Lines or text file \(it holds train.csv\)$"),
    ("run_classifier", "K7 the header row again mid-file",
     lambda w, out: classifier(w, out, f"--train_file={w['joined']}"),
     r"\S+/joined.csv, row 9 \(line 10\): the header row again \('id,text,label'\): two files joined into one\?"),
    ("run_classifier", "K6a a space after a header name",
     lambda w, out: classifier(w, out, f"--train_file={w['header_space']}"),
     r"header_space.tsv: no column 'label' \(its columns: id, text, 'label '; the header's 'label ' has a space at "
     r"its end: remove it from the file\)$"),
    ("run_classifier", "K9b two labels that differ by a zero-width space",
     lambda w, out: classifier(w, out, f"--train_file={w['hidden']}"),
     r"hidden.csv, row 3: label 'pos' and label 'po\\u200bs' \(row 1\) differ only in an invisible character "
     r"\('pos' beside 'po\\u200bs'\): one class or two\?"),
    ("predict", "I3h a kept column written under another's name",
     lambda w, out: predict(w, out, "--keep_columns=label,input_label"),
     r"^--keep_columns=label,input_label: the columns 'label' \(written as 'input_label': the output has its own "
     r"'label'\) and 'input_label' would both be written as 'input_label'"),
    ("predict", "I3d2 a kept column the file lacks, with --on_error=skip",
     lambda w, out: predict(w, out, "--keep_columns=nosuch", "--on_error=skip"),
     r"keep.csv: no column 'nosuch' to keep \(--keep_columns\) \(its columns: id, text_a, label, input_label\)$"),
    ("predict", "I3g a kept column of plain text",
     lambda w, out: predict(w, out, f"--input_file={w['plain']}", "--keep_columns=text_a"),
     r"plain.txt: plain text has no columns \(one text per line\), so none to keep \(--keep_columns\)"),
    ("predict", "I1b an id column the file lacks",
     lambda w, out: predict(w, out, f"--input_file={w['keep']},{w['train']}", "--id_column=id"),
     r"train.jsonl: no column 'id' for the ids \(--id_column\) \(its columns: text, label\)$"),
    ("run_distillation", "G2f the export's model.keras as --teacher",
     lambda w, out: distillation(w, out, f"--teacher={w['export_file']}"),
     r"^--teacher=\S+/export/1/model.keras: a file of the export \S+/export/1; give the export's directory, "
     r"--teacher=\S+/export/1 \(or \S+/export\)"),
    ("run_distillation", "G3c a regression teacher and class labels",
     lambda w, out: distillation(w, out, f"--teacher={w['regression_teacher']}", f"--train_file={w['names']}",
                                 f"--dev_file={w['names']}"),
     r"names.csv, row 1: label 'pos' in column 'label' is not a number, but --teacher=\S+regression_teacher is a "
     r"regression model \(labels.json\): so the labels must be numbers"),
    ("run_classifier", "K15 --do_lower_case=False on an uncased --init_checkpoint",
     lambda w, out: classifier(w, out, f"--init_checkpoint={w['teacher']}", "--do_lower_case=False"),
     r"^--init_checkpoint=\S+/teacher: do_lower_case=False, but \S+/teacher/vocab.txt has no entry with an "
     r"uppercase letter: the checkpoint is uncased, .*; pass do_lower_case=True$"),
    ("run_distillation", "G18 --do_lower_case=False on an uncased teacher",
     lambda w, out: distillation(w, out, "--do_lower_case=False"),
     r"^--teacher=\S+/teacher: do_lower_case=False, but \S+/teacher/vocab.txt has no entry with an uppercase "
     r"letter: the checkpoint is uncased, .*; pass do_lower_case=True$"),
    ("run_distillation", "G5f2 directory as --unlabeled_file with --unlabeled_format",
     lambda w, out: distillation(w, out, f"--unlabeled_file={w['adir']}", "--unlabeled_format=text"),
     r"--unlabeled_file=\S+/adir: is a directory; expected a CSV, TSV, JSON Lines or text file"),
    ("run_distillation", "G5f directory as --unlabeled_file",
     lambda w, out: distillation(w, out, f"--unlabeled_file={w['adir']}"),
     r"--unlabeled_file=\S+/adir: is a directory; expected a CSV, TSV, JSON Lines or text file"),
]


@pytest.fixture(scope="module")
def outcomes(work):
    results = {}
    for tool in dict.fromkeys(case[0] for case in CASES):
        cases = [case for case in CASES if case[0] == tool]
        argvs = [argv(work, str(work["dir"] / "out" / re.sub(r"\W+", "_", name))) for _, name, argv, _ in cases]
        for (_, name, _, _), result in zip(cases, run_cases(tool, argvs)):
            results[name] = result
    return results


@pytest.mark.slow  # a process per tool, each importing TensorFlow: about 20 s on 2 cores
@pytest.mark.parametrize("tool,name,argv,pattern", CASES, ids=[case[1].split()[0] for case in CASES])
def test_one_line_exit_1_and_nothing_written(work, outcomes, tool, name, argv, pattern):
    status, stderr = outcomes[name]
    lines = stderr.strip().splitlines()
    assert status == 1 and lines, stderr[-3000:]
    assert lines[-1].startswith(f"{tool}: error: "), stderr[-3000:]
    assert re.search(pattern, lines[-1].removeprefix(f"{tool}: error: ")), lines[-1]
    assert "Traceback" not in stderr and stderr.count(lines[-1].partition(": error: ")[2]) == 1  # said once
    assert not (work["dir"] / "out" / re.sub(r"\W+", "_", name)).exists()
