"""The metrics of your own tasks in NumPy: single-label (accuracy, macro-F1, per-class precision/recall/F1),
multi-label (micro- and macro-F1, subset accuracy, per-label figures, and the per-label thresholds chosen on dev),
and regression (Pearson, Spearman, mean squared error).

As in metrics.py, an undefined F1 (no positives and no predicted positives) counts as 0.0, as scikit-learn's.
"""

import numpy as np

from official_bert.classification.metrics import pearson, spearman


def _f1(tp, fp, fn):
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _ratio(a, b):
    return a / b if b else 0.0


def per_label_figures(label_list, truth, predicted):
    """{precision_<label>, recall_<label>, f1_<label>} of each label from boolean matrices [N, L].

    Example:
    >>> per_label_figures(["a"], np.array([[True], [True], [False]]), np.array([[True], [False], [True]]))
    {'precision_a': 0.5, 'recall_a': 0.5, 'f1_a': 0.5}
    """
    figures = {}
    for j, label in enumerate(label_list):
        tp = int(np.sum(truth[:, j] & predicted[:, j]))
        fp = int(np.sum(~truth[:, j] & predicted[:, j]))
        fn = int(np.sum(truth[:, j] & ~predicted[:, j]))
        figures.update({f"precision_{label}": _ratio(tp, tp + fp), f"recall_{label}": _ratio(tp, tp + fn),
                        f"f1_{label}": _f1(tp, fp, fn)})
    return figures


def softmax(logits):
    """Row-wise softmax of [N, L] logits, in float64.

    Example:
    >>> softmax(np.array([[0.0, np.log(3.0)]])).tolist()
    [[0.25, 0.75]]
    """
    logits = np.asarray(logits, np.float64)
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def sigmoid(logits):
    """The logistic function, elementwise, in float64.

    Example:
    >>> sigmoid(np.array([0.0, np.log(3.0)])).tolist()
    [0.5, 0.75]
    """
    return 1.0 / (1.0 + np.exp(-np.asarray(logits, np.float64)))


def single_label_metrics(label_list, labels, logits, class_weights=None):
    """accuracy, macro_f1 (the mean of the classes' F1), each class's precision, recall and F1, and loss (the mean
    softmax cross-entropy, weighted per class as the training loss is).

    Args:
        label_list: the labels in id order.
        labels: label ids [N].
        logits: [N, L].
        class_weights: the training loss's class weights, or None.

    Example:
    >>> figures = single_label_metrics(["a", "b"], [0, 0, 1, 1], [[2.0, 0.0], [0.0, 2.0], [0.0, 2.0], [0.0, 2.0]])
    >>> figures["accuracy"], round(figures["macro_f1"], 4), figures["recall_a"], figures["recall_b"]
    (0.75, 0.7333, 0.5, 1.0)
    """
    labels = np.asarray(labels).astype(int)
    logits = np.asarray(logits, np.float64)
    predictions = np.argmax(logits, axis=-1)
    classes = np.arange(len(label_list))
    truth, predicted = labels[:, None] == classes, predictions[:, None] == classes
    figures = per_label_figures(label_list, truth, predicted)
    log_probabilities = np.log(np.maximum(softmax(logits), 1e-300))
    losses = -log_probabilities[np.arange(len(labels)), labels]
    if class_weights is not None:
        losses = losses * np.asarray(class_weights)[labels]
    return {"accuracy": float(np.mean(labels == predictions)),
            "macro_f1": float(np.mean([figures[f"f1_{label}"] for label in label_list])), **figures,
            "loss": float(np.mean(losses))}


def choose_thresholds(labels, probabilities, default=0.5):
    """Per label, the decision threshold that maximises that label's F1 on these rows: halfway between the lowest
    probability predicted positive and the highest left negative (so near-misses of another set fall on the same
    side), the one nearest `default` among equal F1s; `default` for a label without positives here.

    Args:
        labels: multi-hot [N, L].
        probabilities: [N, L].
        default: the threshold where nothing can be chosen.

    Returns float64 [L].

    Example:
    >>> labels = np.array([[1], [1], [0], [0]])
    >>> choose_thresholds(labels, np.array([[0.9], [0.3], [0.2], [0.6]])).tolist()  # 0.9, 0.6, 0.3 in: F1 0.8
    [0.25]
    >>> choose_thresholds(np.zeros((2, 1)), np.array([[0.9], [0.1]])).tolist()
    [0.5]
    """
    labels = np.asarray(labels) > 0.5
    probabilities = np.asarray(probabilities, np.float64)
    thresholds = np.full(labels.shape[1], float(default))
    for j in range(labels.shape[1]):
        positives = int(labels[:, j].sum())
        if not positives:
            continue
        order = np.argsort(-probabilities[:, j], kind="stable")
        p, y = probabilities[order, j], labels[order, j]
        tp, fp = np.cumsum(y), np.cumsum(~y)
        last_of_run = np.r_[p[1:] != p[:-1], True]  # a threshold separates runs of equal probabilities only
        f1 = np.where(last_of_run, 2 * tp / (2 * tp + fp + (positives - tp)), -1.0)
        below = np.r_[p[1:], 0.0]
        candidates = (p + below) / 2
        best = np.flatnonzero(f1 == f1.max())
        thresholds[j] = candidates[best[np.argmin(np.abs(candidates[best] - default))]]
    return thresholds


def multi_label_metrics(label_list, labels, probabilities, thresholds):
    """micro_f1 (over every (row, label) decision), macro_f1 (the mean of the labels' F1), subset_accuracy (rows
    whose whole label set is right) and each label's precision, recall and F1, at `thresholds`.

    Args:
        label_list: the labels.
        labels: multi-hot [N, L].
        probabilities: [N, L].
        thresholds: [L]; a label is predicted where its probability is at least its threshold.

    Example:
    >>> figures = multi_label_metrics(["a", "b"], [[1, 0], [1, 1], [0, 0]], [[0.9, 0.2], [0.8, 0.3], [0.1, 0.6]],
    ...                               [0.5, 0.5])
    >>> figures["micro_f1"], round(figures["macro_f1"], 4), round(figures["subset_accuracy"], 4)
    (0.6666666666666666, 0.5, 0.3333)
    """
    truth = np.asarray(labels) > 0.5
    predicted = np.asarray(probabilities) >= np.asarray(thresholds)
    tp, fp, fn = (int(np.sum(t & p)) for t, p in ((truth, predicted), (~truth, predicted), (truth, ~predicted)))
    figures = per_label_figures(label_list, truth, predicted)
    return {"micro_f1": _f1(tp, fp, fn), "macro_f1": float(np.mean([figures[f"f1_{label}"] for label in label_list])),
            "subset_accuracy": float(np.mean(np.all(truth == predicted, axis=1))), **figures}


def binary_cross_entropy(labels, logits, positive_weights=None, negative_weights=None):
    """The mean over rows and labels of the (weighted) binary cross-entropy of multi-hot `labels` and `logits`.

    Example:
    >>> round(binary_cross_entropy([[1.0, 0.0]], [[0.0, 0.0]]), 6)  # log 2
    0.693147
    """
    labels, logits = np.asarray(labels, np.float64), np.asarray(logits, np.float64)
    positive = 1.0 if positive_weights is None else np.asarray(positive_weights)
    negative = 1.0 if negative_weights is None else np.asarray(negative_weights)
    # log sigmoid(x) = -log(1 + e^-x), computed stably.
    log_p, log_not_p = -np.logaddexp(0.0, -logits), -np.logaddexp(0.0, logits)
    return float(np.mean(-(positive * labels * log_p + negative * (1 - labels) * log_not_p)))


def regression_metrics(labels, scores):
    """pearson, spearman and mse (mean squared error) of predicted `scores` [N] (or [N, 1]) against `labels` [N].

    Example:
    >>> regression_metrics([1.0, 2.0, 3.0], [[1.0], [2.0], [4.0]])["mse"]
    0.3333333333333333
    """
    labels = np.asarray(labels, np.float64)
    scores = np.asarray(scores, np.float64).reshape(len(labels), -1)[:, 0]
    return {"pearson": pearson(labels, scores), "spearman": spearman(labels, scores),
            "mse": float(np.mean((scores - labels) ** 2))}
