"""Metrics against values computed by hand."""

import math

import numpy as np
import pytest

from official_bert.classification import best_metric, evaluation_metrics, metric_names, task_metrics
from official_bert.classification.metrics import (accuracy, average_ranks, f1_score, matthews_corrcoef, pearson,
                                                  spearman)


def from_confusion(tp, fn, fp, tn):
    """(labels, predictions) with the given 2x2 table, positive class 1."""
    labels = [1] * tp + [1] * fn + [0] * fp + [0] * tn
    predictions = [1] * tp + [0] * fn + [1] * fp + [0] * tn
    return labels, predictions


def test_matthews_from_a_2x2_table():
    # tp=6 fn=2 fp=1 tn=3: (6·3 − 1·2) / sqrt((6+1)(6+2)(3+1)(3+2)) = 16 / sqrt(1120)
    assert matthews_corrcoef(*from_confusion(6, 2, 1, 3)) == pytest.approx(16 / math.sqrt(1120))
    assert matthews_corrcoef(*from_confusion(5, 0, 0, 5)) == pytest.approx(1.0)
    assert matthews_corrcoef(*from_confusion(0, 5, 5, 0)) == pytest.approx(-1.0)
    # Everything predicted 0: undefined, reported as 0.
    assert matthews_corrcoef(*from_confusion(0, 4, 0, 6)) == 0.0


def test_f1_and_accuracy_of_the_positive_class():
    labels, predictions = from_confusion(tp=2, fn=2, fp=1, tn=2)
    assert f1_score(labels, predictions) == pytest.approx(4 / 7)  # 2·2 / (2·2 + 1 + 2)
    assert accuracy(labels, predictions) == pytest.approx(4 / 7)
    assert f1_score(*from_confusion(0, 3, 2, 5)) == 0.0
    assert f1_score([0, 0], [0, 0]) == 0.0


def test_pearson_by_hand():
    # deviations (-1.5, -.5, .5, 1.5) and (-3, -1, 0, 4): 11 / sqrt(5 · 26)
    assert pearson([1, 2, 3, 4], [2, 4, 5, 9]) == pytest.approx(11 / math.sqrt(130))
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert pearson([1, 2, 3], [2, 2, 2]) == 0.0


def test_spearman_uses_average_ranks_for_ties():
    assert average_ranks([2, 1, 2, 3]).tolist() == [2.5, 1.0, 2.5, 4.0]
    assert average_ranks([7, 7, 7]).tolist() == [2.0, 2.0, 2.0]
    # ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4): 4.5 / sqrt(4.5 · 5);
    # the formula without ties, 1 − 6Σd²/(n(n²−1)), would give 0.95.
    assert spearman([1, 2, 2, 3], [10, 30, 20, 40]) == pytest.approx(4.5 / math.sqrt(22.5))
    assert spearman([1, 2, 3, 4], [1, 4, 9, 100]) == pytest.approx(1.0)


def test_task_metrics_take_logits_or_ids():
    labels = [1, 1, 0, 0]
    logits = np.array([[-1.0, 2.0], [0.3, 0.1], [0.0, 0.5], [2.0, -2.0]])  # predicts 1, 0, 1, 0
    assert task_metrics("mrpc", labels, logits) == {"f1": 0.5, "accuracy": 0.5}
    assert task_metrics("qqp", labels, [1, 0, 1, 0]) == {"f1": 0.5, "accuracy": 0.5}
    assert task_metrics("cola", labels, logits) == {"mcc": 0.0, "accuracy": 0.5}
    assert task_metrics("mnli", [0, 1, 2], [[3, 1, 0], [0, 1, 2], [0, 0, 1]]) == {"accuracy": pytest.approx(2 / 3)}
    assert task_metrics("swag", [3], [[0.1, 0.2, 0.3, 0.4]]) == {"accuracy": 1.0}
    # Deviations (-1, 0, 0, 1) and (-25, -5, -15, 45): Pearson 70 / sqrt(2 · 2900); ranks as in the ties test.
    stsb = task_metrics("sts-b", [1.0, 2.0, 2.0, 3.0], np.array([[10.0], [30.0], [20.0], [80.0]]))
    assert stsb == {"spearman": pytest.approx(4.5 / math.sqrt(22.5)), "pearson": pytest.approx(70 / math.sqrt(5800))}


def test_mnli_reports_matched_under_the_originals_names_and_mismatched_beside():
    # The original evaluates dev_matched only, as eval_accuracy / eval_loss.
    results = {"dev_matched": ([0, 1, 2, 2], [0, 1, 2, 0]), "dev_mismatched": ([1, 1], [[0, 1, 0], [1, 0, 0]])}
    assert evaluation_metrics("mnli", results) == {"eval_accuracy": 0.75, "eval_mismatched_accuracy": 0.5,
                                                   # (log(2 + e) - 1 + log(2 + e) - 0) / 2
                                                   "eval_mismatched_loss": pytest.approx(np.log(2 + np.e) - 0.5)}
    assert best_metric("mnli", ("dev_matched", "dev_mismatched")) == "eval_accuracy"


def test_eval_loss_is_the_mean_cross_entropy_of_the_examples():
    # Hand-computed: -log softmax picks log(1 + e^-2) and log(1 + e^1) (the second example is misclassified).
    logits = [[0.0, 2.0], [1.0, 0.0]]
    results = evaluation_metrics("mrpc", {"dev": ([1, 1], logits)})
    assert results == {"eval_f1": pytest.approx(2 / 3), "eval_accuracy": 0.5,
                       "eval_loss": pytest.approx((np.log1p(np.exp(-2.0)) + np.log1p(np.exp(1.0))) / 2)}
    # STS-B's loss is its training loss, the squared error of the score.
    stsb = evaluation_metrics("sts-b", {"dev": ([1.0, 3.0, 2.0], [[2.0], [3.0], [0.0]])})
    assert stsb["eval_loss"] == pytest.approx((1 + 0 + 4) / 3) and set(stsb) == {
        "eval_spearman", "eval_pearson", "eval_loss"}


@pytest.mark.parametrize("task,best", [("cola", "mcc"), ("mrpc", "f1"), ("qqp", "f1"), ("sts-b", "spearman"),
                                       ("sst-2", "accuracy"), ("rte", "accuracy"), ("xnli", "accuracy"),
                                       ("swag", "accuracy"), ("pair", "accuracy")])
def test_best_metric_is_one_the_task_reports(task, best):
    assert best_metric(task) == f"eval_{best}" and best in metric_names(task)


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError, match="expected as many predictions as labels .*got 2 predictions for 3 labels"):
        accuracy([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="got 0 predictions for 0 labels"):
        task_metrics("rte", [], [])
