"""The GLUE metrics in NumPy, each task's set of them, and the one that picks the best checkpoint.

Undefined values (a constant prediction has no correlation; no positive examples or predictions give no F1)
are reported as 0.0, as scikit-learn does for F1 and Matthews, so a degenerate model never looks best.
"""

import numpy as np

# Per task: the metrics reported, the first of which selects the best checkpoint (higher is better). That
# one is the paper's (Table 1: F1 for MRPC and QQP, Spearman for STS-B, accuracy for the others) except
# CoLA, scored by Matthews correlation as GLUE does.
TASK_METRICS = {"cola": ("mcc", "accuracy"), "mrpc": ("f1", "accuracy"), "qqp": ("f1", "accuracy"),
                "sts-b": ("spearman", "pearson")}
_DEFAULT_METRICS = ("accuracy",)


def _check(labels, predictions):
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if len(labels) == 0 or len(labels) != len(predictions):
        raise ValueError(f"expected as many predictions as labels (at least one); got {len(predictions)} "
                         f"predictions for {len(labels)} labels")
    return labels, predictions


def accuracy(labels, predictions):
    """The fraction of predicted ids equal to the labels.

    Args:
        labels: label ids [N].
        predictions: predicted ids [N].

    Example:
    >>> accuracy([0, 1, 2, 1], [0, 1, 1, 1])
    0.75
    """
    labels, predictions = _check(labels, predictions)
    return float(np.mean(labels == predictions))


def _confusion(labels, predictions):
    labels, predictions = _check(labels, predictions)
    positive, predicted = labels == 1, predictions == 1
    return (int(np.sum(positive & predicted)), int(np.sum(~positive & predicted)),
            int(np.sum(positive & ~predicted)), int(np.sum(~positive & ~predicted)))


def f1_score(labels, predictions):
    """Binary F1 of the positive class, label id 1 ("1": paraphrase, duplicate).

    Args:
        labels: label ids [N] (0 or 1).
        predictions: predicted ids [N].

    Example:
    >>> f1_score([1, 1, 0, 0], [1, 0, 1, 0])  # tp=1 fp=1 fn=1: 2/(2+1+1)
    0.5
    """
    tp, fp, fn, _ = _confusion(labels, predictions)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def matthews_corrcoef(labels, predictions):
    """Matthews correlation of a binary task: (tp·tn − fp·fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn)).

    Args:
        labels: label ids [N] (0 or 1).
        predictions: predicted ids [N].

    Example:
    >>> round(matthews_corrcoef([1, 1, 1, 0, 0], [1, 1, 0, 0, 1]), 6)  # (2·1 − 1·1) / sqrt(3·3·2·2)
    0.166667
    """
    tp, fp, fn, tn = _confusion(labels, predictions)
    denominator = float(tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return float((tp * tn - fp * fn) / np.sqrt(denominator)) if denominator else 0.0


def pearson(x, y):
    """Pearson correlation of two score vectors.

    Args:
        x: scores [N].
        y: scores [N].

    Example:
    >>> pearson([1.0, 2.0, 3.0], [2.0, 4.0, 7.0])  # doctest: +ELLIPSIS
    0.9933...
    """
    x, y = _check(x, y)
    x, y = x.astype(np.float64) - np.mean(x), y.astype(np.float64) - np.mean(y)
    denominator = np.sqrt(np.sum(x * x) * np.sum(y * y))
    return float(np.sum(x * y) / denominator) if denominator else 0.0


def average_ranks(values):
    """1-based ranks, tied values sharing the mean of the ranks they span.

    Args:
        values: numbers [N].

    Example:
    >>> average_ranks([10, 30, 20, 30]).tolist()
    [1.0, 3.5, 2.0, 3.5]
    """
    values = np.asarray(values)
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    # Runs of equal values: each gets the mean of its first and last 1-based position.
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(values)]
    ranks = np.empty(len(values))
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def spearman(x, y):
    """Spearman correlation: Pearson's of the average ranks.

    Args:
        x: scores [N].
        y: scores [N].

    Example:
    >>> spearman([1.0, 2.0, 3.0], [10.0, 100.0, 1000.0])
    1.0
    """
    x, y = _check(x, y)
    return pearson(average_ranks(x), average_ranks(y))


_FUNCTIONS = {"accuracy": accuracy, "f1": f1_score, "mcc": matthews_corrcoef, "pearson": pearson,
              "spearman": spearman}


def task_metrics(task, labels, predictions):
    """The task's metrics on one evaluation set.

    Args:
        task: the task name.
        labels: label ids [N], or scores for STS-B.
        predictions: class scores [N, num_labels] (logits or probabilities; the argmax is predicted) or
            predicted ids [N]; for STS-B, scores [N] or [N, 1].

    Example:
    >>> task_metrics("mrpc", [1, 1, 0, 0], [[0.2, 0.8], [0.6, 0.4], [0.3, 0.7], [0.9, 0.1]])
    {'f1': 0.5, 'accuracy': 0.5}
    """
    names = metric_names(task)
    predictions = np.asarray(predictions)
    if task == "sts-b":
        predictions = predictions.reshape(len(predictions), -1)[:, 0]
    elif predictions.ndim == 2:
        predictions = np.argmax(predictions, axis=-1)
    return {name: _FUNCTIONS[name](labels, predictions) for name in names}


def metric_names(task):
    """The names of the metrics `task_metrics` reports for a task.

    Args:
        task: the task name.

    Example:
    >>> metric_names("cola"), metric_names("rte")
    (('mcc', 'accuracy'), ('accuracy',))
    """
    return TASK_METRICS.get(task, _DEFAULT_METRICS)


def evaluation_metrics(task, results):
    """The metrics of every evaluated split in one dict, under the original run_classifier's names.

    The first dev split's metrics are `eval_<metric>` (eval_accuracy, eval_f1, eval_mcc, eval_pearson,
    eval_spearman), another split's `eval_<split less "dev_">_<metric>` (MNLI: eval_mismatched_accuracy). Given
    class scores (logits), each split also gets its mean loss over its examples, `eval_loss` (softmax
    cross-entropy; squared error for STS-B), as the original's `tf.metrics.mean(per_example_loss)`.

    Args:
        task: the task name.
        results: dev split name → (labels, predictions), as for `task_metrics`; predictions as logits for the loss.

    Example:
    >>> evaluation_metrics("mnli", {"dev_matched": ([0, 1], [0, 1]), "dev_mismatched": ([0, 1], [0, 0])})
    {'eval_accuracy': 1.0, 'eval_mismatched_accuracy': 0.5}
    >>> {k: round(v, 4) for k, v in evaluation_metrics("rte", {"dev": ([0], [[0.0, 0.0]])}).items()}
    {'eval_accuracy': 1.0, 'eval_loss': 0.6931}
    """
    merged = {}
    for i, (split, (labels, predictions)) in enumerate(results.items()):
        metrics = task_metrics(task, labels, predictions)
        if np.ndim(predictions) == 2:
            metrics["loss"] = mean_loss(task, labels, predictions)
        merged.update({_key(split, name, first=i == 0): value for name, value in metrics.items()})
    return merged


def mean_loss(task, labels, logits):
    """The mean training loss of `logits` [N, num_labels] against `labels` [N]: softmax cross-entropy, or the
    squared error of the score for STS-B.

    Example:
    >>> round(mean_loss("rte", [1], [[0.0, 1.0]]), 6), mean_loss("sts-b", [3.0, 1.0], [[2.0], [1.0]])
    (0.313262, 0.5)
    """
    labels, logits = np.asarray(labels), np.asarray(logits, dtype=np.float64)
    if task == "sts-b":
        return float(np.mean((logits[:, 0] - labels) ** 2))
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probabilities = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return float(-np.mean(log_probabilities[np.arange(len(labels)), labels.astype(int)]))


def best_metric(task, dev_splits=("dev",)):
    """The key of `evaluation_metrics` that selects the best checkpoint (higher is better): the paper's metric on
    the first dev split (MNLI matched).

    Args:
        task: the task name.
        dev_splits: the processor's dev splits.

    Example:
    >>> best_metric("sts-b"), best_metric("mnli", ("dev_matched", "dev_mismatched"))
    ('eval_spearman', 'eval_accuracy')
    """
    return _key(dev_splits[0], metric_names(task)[0], first=True)


def _key(split, name, first):
    return f"eval_{name}" if first else f"eval_{split.removeprefix('dev_')}_{name}"
