"""What --teacher accepts, said as it is accepted, and a teacher of another kind than the data named as the cause:
G2f (the export's model.keras given: say to give its directory; the list of readable forms is the teacher's, not
every checkpoint format's), G3c/G3d/G3e (regression or multi-label teacher, single-label data, and the reverse: the
message names the teacher's kind and advice that works when followed, not a flag that the teacher then refuses)."""

import os

import pytest

from official_bert.classification.own_files import Columns
from official_bert.distillation import DistillationError, DistillationTask, Teacher
from official_bert.errors import Error
from official_bert.tasks import OwnFilesTask
from tests.distillation.helpers import make_teacher, student_settings, write_data, write_rows


@pytest.fixture(scope="module")
def teachers(tmp_path_factory):
    work = tmp_path_factory.mktemp("teachers")
    return {kind: make_teacher(work / kind, kind) for kind in ("single", "multi", "regression")}


def class_names_data(tmp_path):
    """Single-label data whose classes are names (the era task's '1790-1860' in G3c), not numbers."""
    rows = [("the movie is good", "pos"), ("a dull plot", "neg")] * 2
    os.makedirs(tmp_path / "data", exist_ok=True)
    return {"train": write_rows(tmp_path / "data" / "train.jsonl", rows),
            "dev": write_rows(tmp_path / "data" / "dev.jsonl", rows)}


def checked(teacher, files, tmp_path, **flags):
    """DistillationTask.check of own files read with `flags` (none: as the user who passed none)."""
    task = DistillationTask(OwnFilesTask(files, Columns(), **flags), Teacher(teacher))
    task.check(student_settings(tmp_path / "student"))
    return task


def test_a_file_of_an_export_says_to_give_the_exports_directory(tmp_path):
    # G2f: "--teacher=.../model.keras: no bert_config.json beside its checkpoint", while the message for a directory
    # without a checkpoint listed ".keras file" as readable.
    version = tmp_path / "export" / "1"
    (version / "assets").mkdir(parents=True)
    for name in ("saved_model.pb", "model.keras", "labels.json"):
        (version / name).write_bytes(b"")
    with pytest.raises(DistillationError) as raised:
        Teacher(str(version / "model.keras"))
    assert str(raised.value) == (f"--teacher={version / 'model.keras'}: a file of the export {version}; give the "
                                 f"export's directory, --teacher={version} (or {tmp_path / 'export'}): a teacher "
                                 "export is read whole, its model.keras with the assets/vocab.txt and labels.json "
                                 "beside it")


@pytest.mark.parametrize("make", ["empty directory", "a .keras file", "a data file"])
def test_what_is_not_a_teacher_lists_the_forms_a_teacher_takes(tmp_path, make):
    path = tmp_path / {"empty directory": "run", "a .keras file": "m.keras", "a data file": "train.csv"}[make]
    path.mkdir() if make == "empty directory" else path.write_bytes(b"x")
    with pytest.raises(DistillationError) as raised:
        Teacher(str(path))
    message = str(raised.value)
    assert message.startswith(f"--teacher={path}: ") and f"{path}: {path}" not in message
    assert message.count("expected a run_classifier.py --output_dir, a fine-tuned classifier's checkpoint (a "
                         "directory, a TF checkpoint prefix or a .safetensors file, with bert_config.json and "
                         "vocab.txt beside it) or its --export_dir (or one version of it)") == 1
    assert ".keras file or" not in message and "\n" not in message


@pytest.mark.parametrize("teacher,data,expected", [
    ("regression", "single", "label 'pos' in column 'label' is not a number, but --teacher={} is a regression model "
                             "(labels.json): so the labels must be numbers: distil a teacher fine-tuned on these "
                             "classes instead"),
    ("multi", "single", "label 'pos' in column 'label' is not a list of labels, but --teacher={} is a multi-label "
                        "classifier (labels.json): so each label must be a list: give JSON lists or "
                        "--label_separator, or distil a teacher fine-tuned on single labels"),
    ("single", "regression", "label 4.0 in column 'label' is a number, not a class, but --teacher={} is a "
                             "single-label classifier (labels.json): distil a teacher fine-tuned with --regression "
                             "on these numbers"),
])
def test_a_teacher_of_another_kind_than_the_data_is_named_as_the_cause(teachers, tmp_path, teacher, data,
                                                                        expected):
    # G3c, G3d: the message blamed the data and named --regression / --label_separator, flags the user never gave;
    # G3e: it advised --regression, which the single-label teacher then refused (G3e2).
    files = class_names_data(tmp_path) if data == "single" else write_data(str(tmp_path / "data"), data)
    if data == "regression":  # a float that is not an integer, as G3e's 0.2688 (4.0 reads as the class "4")
        files["train"] = write_rows(tmp_path / "data" / "train.jsonl", [("the movie is good", 0.27), ("a plot", 0.5)])
    with pytest.raises(Error) as raised:
        checked(teachers[teacher], files, tmp_path)
    assert str(raised.value) == f"{files['train']}, row 1: " + expected.format(teachers[teacher]).replace(
        "label 4.0", "label 0.27")


def test_the_same_data_with_the_kind_given_by_a_flag_keeps_the_flags_advice(tmp_path):
    files = class_names_data(tmp_path)
    with pytest.raises(Error, match=r"row 1: label 'pos' in column 'label' is not a number \(--regression expects "
                                    r"float labels\)$"):
        OwnFilesTask(files, Columns(), regression=True).check(student_settings(tmp_path / "out"))
