"""Long documents: the outputs of a document's windows pooled into the document's one prediction.

With --doc_stride, run_classifier cuts a text longer than max_seq_length into overlapping windows
(`classification.convert_example_windows`), trains on every window with the document's label, and predicts a
document by pooling its windows' logits (or regression scores): their mean, or with --window_pooling=max their
elementwise maximum. The exported raw-text signature pools the same way in the graph (`export.windows`).
"""

import numpy as np

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.records import read_example_indices

WINDOW_POOLINGS = ("mean", "max")


def check_window_pooling(pooling):
    """Raises ClassificationDataError, naming the flag, unless `pooling` is one of WINDOW_POOLINGS.

    Example:
    >>> check_window_pooling("mean")
    >>> check_window_pooling("sum")
    Traceback (most recent call last):
    ...
    official_bert.classification.errors.ClassificationDataError: --window_pooling=sum: expected mean or max
    """
    if pooling not in WINDOW_POOLINGS:
        raise ClassificationDataError(f"--window_pooling={pooling}: expected {' or '.join(WINDOW_POOLINGS)}")


def pool_windows(outputs, example_index, num_examples, pooling="mean"):
    """Each example's windows' outputs pooled: their mean or elementwise maximum.

    Args:
        outputs: [W, ...], one row per window.
        example_index: int [W], the example each window belongs to (every example in range has one or more).
        num_examples: N.
        pooling: "mean" or "max".

    Returns float [N, ...].

    Example:
    >>> logits = np.array([[1.0, 0.0], [3.0, -2.0], [0.5, 0.5]])
    >>> pool_windows(logits, np.array([0, 0, 1]), 2).tolist(), pool_windows(logits, [0, 0, 1], 2, "max").tolist()
    ([[2.0, -1.0], [0.5, 0.5]], [[3.0, 0.0], [0.5, 0.5]])
    """
    check_window_pooling(pooling)
    outputs = np.asarray(outputs, np.float64)
    example_index = np.asarray(example_index, np.int64)
    counts = np.bincount(example_index, minlength=num_examples)
    if len(counts) > num_examples or not counts.all():
        raise ValueError(f"expected windows of examples 0 to {num_examples - 1}, each at least one")
    if pooling == "max":
        pooled = np.full((num_examples, *outputs.shape[1:]), -np.inf)
        np.maximum.at(pooled, example_index, outputs)
        return pooled
    pooled = np.zeros((num_examples, *outputs.shape[1:]))
    np.add.at(pooled, example_index, outputs)
    return pooled / counts.reshape(-1, *[1] * (outputs.ndim - 1))


def document_outputs(feature_file, outputs, labels, is_real_example, pooling="mean"):
    """A `Predictor`'s rows of a feature file as one (output, label) per example: the windows pooled where the
    file holds windows, else the real rows as they are.

    Args:
        feature_file: the `FeatureFile` the rows were predicted from, in its order.
        outputs: [R, ...], one row per record.
        labels: [R].
        is_real_example: [R] (0 for batch padding).
        pooling: "mean" or "max".

    Returns (outputs [N, ...], labels [N]) for the N examples, in order.

    Example:
    >>> from official_bert.classification.cache import FeatureFile
    >>> rows = document_outputs(FeatureFile("dev.tf_record", 2, 1, 8, None, False), np.array([[1.0], [2.0], [0.0]]),
    ...                         np.array([1, 0, 0]), np.array([1.0, 1.0, 0.0]))
    >>> rows[0].tolist(), rows[1].tolist()
    ([[1.0], [2.0]], [1, 0])
    """
    real = np.asarray(is_real_example).astype(bool)
    outputs, labels = np.asarray(outputs)[real], np.asarray(labels)[real]
    if not feature_file.doc_stride:
        return outputs, labels
    example_index = read_example_indices(feature_file.path)[real]
    document_labels = np.zeros((feature_file.num_examples, *labels.shape[1:]), labels.dtype)
    document_labels[example_index] = labels  # every window carries its document's label
    pooled = pool_windows(outputs, example_index, feature_file.num_examples, pooling)
    return pooled.astype(outputs.dtype), document_labels
