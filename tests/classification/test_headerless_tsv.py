"""A .tsv file without the header its layout has (#39): the original skips its first line, losing an example. The
first line is still skipped, but refused when its label column holds a label; --tsv_first_line decides."""

import os
import subprocess
import sys

import pytest

from official_bert.classification import ClassificationDataError, InputExample, get_processor
from tests.classification.test_glue_fixtures import tsv, write_files
from tests.finetuning.test_run_classifier import write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS = [["great", "pos"], ["awful", "neg"], ["fine", "pos"]]


def single(data_dir, first_line=None):
    return get_processor("single", str(data_dir), label_list="neg,pos", tsv_first_line=first_line)


def test_a_file_without_its_header_is_refused_naming_the_line_and_the_flag(tmp_path):
    write_files(tmp_path, {"train.tsv": "".join("\t".join(row) + "\n" for row in ROWS)})
    with pytest.raises(ClassificationDataError) as refused:
        single(tmp_path).get_examples("train")
    assert str(refused.value) == (
        f"{tmp_path / 'train.tsv'}:1: the first line is skipped as the header (sentence label), as the original does, "
        "but its label column holds 'pos', one of --label_list's labels: without a header this example would be "
        "lost; pass --tsv_first_line=data to read it as an example, or --tsv_first_line=header to skip it")
    # With the flag: every row an example (guids count lines from 0, as the header-less CoLA files'), or the
    # original's skipping.
    assert single(tmp_path, "data").get_examples("train") == [
        InputExample("train-0", "great", None, "pos"), InputExample("train-1", "awful", None, "neg"),
        InputExample("train-2", "fine", None, "pos")]
    assert [e.text_a for e in single(tmp_path, "header").get_examples("train")] == ["awful", "fine"]


def test_a_header_is_skipped_as_before(tmp_path):
    write_files(tmp_path, {"train.tsv": tsv(["sentence", "label"], *ROWS)})
    assert [e.text_a for e in single(tmp_path).get_examples("train")] == ["great", "awful", "fine"]


def test_pairs_and_regression_are_checked_too(tmp_path):
    write_files(tmp_path / "pair", {"dev.tsv": "1\t1\t2\tA cat.\tA feline.\n0\t3\t4\tA dog.\tA car.\n"})
    with pytest.raises(ClassificationDataError, match=r"dev.tsv:1: .* holds '1', one of --label_list's labels"):
        get_processor("pair", str(tmp_path / "pair"), label_list="0,1").get_examples("dev")
    rows = "".join(f"{i}\tg\tf\ty\t{i}\ts\ts\tA cat.\tA feline.\t{score}\n" for i, score in enumerate(("4.5", "1.0")))
    write_files(tmp_path / "sts", {"train.tsv": rows})
    with pytest.raises(ClassificationDataError, match=r"train.tsv:1: .* holds the number '4.5'"):
        get_processor("sts-b", str(tmp_path / "sts")).get_examples("train")


@pytest.mark.slow  # a tool's start-up: about 15 s on 2 cores
def test_run_classifier_refuses_it_in_one_line(tmp_path):
    write_files(tmp_path / "data", {"train.tsv": "".join("\t".join(row) + "\n" for row in ROWS)})
    vocab, config = write_model_files(str(tmp_path / "model"))
    done = subprocess.run([sys.executable, os.path.join(REPO, "run_classifier.py"), "--task_name=single",
                           "--label_list=neg,pos", f"--data_dir={tmp_path / 'data'}", f"--vocab_file={vocab}",
                           f"--bert_config_file={config}", f"--output_dir={tmp_path / 'run'}", "--do_train",
                           "--max_seq_length=16"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES=""))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"run_classifier: error: {tmp_path / 'data' / 'train.tsv'}:1: the first line is skipped as the header")
    assert done.stderr.strip().endswith("pass --tsv_first_line=data to read it as an example, or "
                                        "--tsv_first_line=header to skip it")
