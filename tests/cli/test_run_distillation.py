"""run_distillation.py as a command: bad input is one line, exit status 1, no traceback and nothing written."""

import os
import re
import subprocess
import sys

import pytest

from tests.distillation.helpers import make_teacher, write_data, write_rows
from tests.finetuning.test_run_classifier import SEQ_LENGTH

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "run_distillation.py")


def environment():
    return dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")


def _case(tmp_path, name):
    """(argv, the expected error) of one bad input."""
    work = tmp_path / name
    teacher = make_teacher(work / "teacher", "single")
    files = write_data(str(work / "data"), "single")
    extra = []
    if name == "another vocabulary":
        other = work / "other_vocab.txt"
        other.write_text(open(teacher + "/vocab.txt").read().replace("movie", "cinema"))
        extra, expected = [f"--vocab_file={other}"], r"--vocab_file=.*other_vocab.txt is not the teacher's vocabulary"
    elif name == "labels the teacher lacks":
        files["train"] = write_rows(work / "data" / "train2.jsonl", [("a good film", "1"), ("a bad film", "maybe")])
        expected = r"train2.jsonl: label 'maybe' is not one of the teacher's labels 0, 1"
    elif name == "a wider student for layer copying":
        extra, expected = ["--student_layers_from_teacher"], r"hidden size 256 differs from the teacher's 32"
    elif name == "an unlabelled file in an unknown format":
        unknown = work / "corpus.parquet"
        unknown.write_text("some text\n")
        extra, expected = [f"--unlabeled_file={unknown}"], r"--unlabeled_file=.*corpus.parquet: cannot tell its format"
    elif name == "a negative intermediate weight":
        extra = ["--intermediate_loss_weight=-1"]
        expected = r"--intermediate_loss_weight=-1.0: expected a finite number in \[0, 1000\]"
    elif name == "an export without its Keras model":
        version = work / "export" / "1"
        version.mkdir(parents=True)
        (version / "saved_model.pb").write_bytes(b"")
        teacher, expected = str(work / "export"), r"--teacher=.*export: the export .*1 has no model.keras"
    elif name == "intermediate losses on a frozen student":
        extra = ["--intermediate_loss_weight=1", "--freeze_encoder"]
        expected = r"--intermediate_loss_weight: the student's encoder is frozen \(--freeze_encoder\)"
    argv = [sys.executable, SCRIPT, f"--teacher={teacher}", f"--train_file={files['train']}",
            f"--dev_file={files['dev']}", f"--output_dir={work / 'student'}", "--student_preset=mini",
            f"--max_seq_length={SEQ_LENGTH}", "--do_train", "--do_eval", *extra]
    return argv, expected


CASES = ("another vocabulary", "labels the teacher lacks", "a wider student for layer copying",
         "an unlabelled file in an unknown format", "a negative intermediate weight",
         "an export without its Keras model", "intermediate losses on a frozen student")


@pytest.mark.slow
def test_bad_input_is_one_line_and_nothing_is_written(tmp_path):
    cases = {name: _case(tmp_path, name) for name in CASES}
    # All at once: each process spends most of its time importing TensorFlow.
    processes = {name: subprocess.Popen(argv, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True) for name, (argv, _) in cases.items()}
    for name, process in processes.items():
        _, stderr = process.communicate(timeout=300)
        errors = [line for line in stderr.splitlines() if line.startswith("run_distillation: error: ")]
        assert process.returncode == 1 and len(errors) == 1, (name, stderr[-3000:])
        assert re.search(cases[name][1], errors[0]), (name, errors[0])
        assert "Traceback" not in stderr, name
        assert not (tmp_path / name / "student").exists(), name
