"""The result files' exact contents: eval_results, test_results.tsv and the GLUE submission files."""

import json
import os

import numpy as np
import pytest

from official_bert.classification import get_processor, write_leaderboard_file, write_test_results
from official_bert.io import write_eval_results
from official_bert.classification import writers


def test_eval_results_sorted_key_value_lines_and_json(tmp_path):
    results = {"spearman": 0.875, "pearson": np.float64(0.5), "global_step": np.int64(1200), "eval_loss": 0.25}
    txt, js = write_eval_results(str(tmp_path / "out"), results)
    assert open(txt).read() == "eval_loss = 0.25\nglobal_step = 1200\npearson = 0.5\nspearman = 0.875\n"
    assert json.load(open(js)) == {"eval_loss": 0.25, "global_step": 1200, "pearson": 0.5, "spearman": 0.875}
    assert sorted(os.listdir(tmp_path / "out")) == ["eval_results.json", "eval_results.txt"]


def test_test_results_are_float32_probabilities_of_real_examples(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    probabilities = np.array([[1 / 3, 2 / 3], [0.1, 0.9], [0.5, 0.5]], dtype=np.float64)
    write_test_results(path, probabilities, is_real_example=np.array([1, 1, 0]))
    assert open(path).read() == "0.33333334\t0.6666667\n0.1\t0.9\n"
    write_test_results(path, [3.8125, 0.5])  # regression: one score a line
    assert open(path).read() == "3.8125\n0.5\n"


def test_a_rejected_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    write_test_results(path, [[0.5, 0.5]])
    with pytest.raises(ValueError, match="expected one is_real_example flag per row; got 1 for 2 rows"):
        write_test_results(path, [[0.1, 0.9], [0.2, 0.8]], is_real_example=[1])
    assert os.listdir(tmp_path) == ["test_results.tsv"] and open(path).read() == "0.5\t0.5\n"


@pytest.mark.parametrize("task,split,file,predictions,expected", [
    ("cola", "test", "CoLA.tsv", [[0.9, 0.1], [0.2, 0.8]], ["0", "1"]),
    ("sst-2", "test", "SST-2.tsv", [1, 0], ["1", "0"]),
    ("mrpc", "test", "MRPC.tsv", [[0.4, 0.6]], ["1"]),
    ("sts-b", "test", "STS-B.tsv", [[4.23456], [0.1]], ["4.235", "0.100"]),
    ("qqp", "test", "QQP.tsv", [[0.7, 0.3]], ["0"]),
    ("mnli", "test_matched", "MNLI-m.tsv", [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]], ["neutral", "contradiction"]),
    ("mnli", "test_mismatched", "MNLI-mm.tsv", [[0.1, 0.8, 0.1]], ["entailment"]),
    ("ax", "test", "AX.tsv", [[0.1, 0.8, 0.1], [0.2, 0.1, 0.7]], ["entailment", "neutral"]),
    ("qnli", "test", "QNLI.tsv", [[0.1, 0.9]], ["not_entailment"]),
    ("rte", "test", "RTE.tsv", [[0.9, 0.1]], ["entailment"]),
    ("wnli", "test", "WNLI.tsv", [[0.2, 0.8]], ["1"]),
])
def test_glue_submission_files(tmp_path, task, split, file, predictions, expected):
    path = write_leaderboard_file(str(tmp_path), get_processor(task, "glue"), split, np.array(predictions))
    assert path == str(tmp_path / file)
    assert open(path).read() == "index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in enumerate(expected))


def test_submission_leaves_out_padding_and_tasks_without_a_leaderboard_write_nothing(tmp_path):
    path = write_leaderboard_file(str(tmp_path), get_processor("rte", "glue"), "test",
                                  [[0.1, 0.9], [0.8, 0.2], [0.0, 1.0]], is_real_example=[1, 1, 0])
    assert open(path).read() == "index\tprediction\n0\tnot_entailment\n1\tentailment\n"
    assert write_leaderboard_file(str(tmp_path), get_processor("swag", "swag"), "test", [[0, 1, 0, 0]]) is None
    assert write_leaderboard_file(str(tmp_path), get_processor("xnli", "x", xnli_language="de"), "test",
                                  [[0, 1, 0]]) is None
    assert os.listdir(tmp_path) == ["RTE.tsv"]


def test_results_file_names():
    mnli, rte = get_processor("mnli", "glue"), get_processor("rte", "glue")
    assert [writers.results_file_name(mnli, s) for s in mnli.test_splits] == ["test_results.tsv",
                                                                            "test_results_mismatched.tsv"]
    assert writers.results_file_name(rte, "test") == "test_results.tsv"
