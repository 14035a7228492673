"""The test-set result files: test_results.tsv and the GLUE leaderboard submission files (eval_results.txt/.json:
`official_bert.io.write_eval_results`).

Each is written under a temporary name and renamed, so a reader never sees half a file.
"""

import os

import numpy as np

from official_bert.io import write_text


def _real_rows(values, is_real_example):
    values = np.asarray(values)
    if is_real_example is None:
        return values
    mask = np.asarray(is_real_example).astype(bool)
    if len(mask) != len(values):
        raise ValueError(f"expected one is_real_example flag per row; got {len(mask)} for {len(values)} rows")
    return values[mask]


def results_file_name(processor, split):
    """test_results.tsv for the task's first test split (as the original), test_results_<suffix>.tsv for others.

    Args:
        processor: the task's DataProcessor.
        split: one of its test splits.

    Example:
    >>> from official_bert.classification.tasks import get_processor
    >>> mnli = get_processor("mnli", "glue/MNLI")
    >>> [results_file_name(mnli, split) for split in mnli.test_splits]
    ['test_results.tsv', 'test_results_mismatched.tsv']
    """
    if split == processor.test_splits[0]:
        return "test_results.tsv"
    return f"test_results_{split.removeprefix('test_')}.tsv"


def write_test_results(path, probabilities, is_real_example=None):
    """Writes one line per real example: its class probabilities (or regression score), tab-separated.

    Numbers are written as float32 (as the original's estimator gave them).

    Args:
        path: the file, e.g. output_dir/test_results.tsv.
        probabilities: [N, num_labels] (or [N] scores).
        is_real_example: [N] flags; rows with 0 (batch padding) are left out.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "test_results.tsv")
    >>> _ = write_test_results(path, [[0.25, 0.75], [0.5, 0.5], [1.0, 0.0]], is_real_example=[1, 1, 0])
    >>> open(path).read()
    '0.25\\t0.75\\n0.5\\t0.5\\n'
    """
    rows = _real_rows(np.asarray(probabilities, dtype=np.float32), is_real_example)
    rows = rows.reshape(len(rows), -1)
    return write_text(path, "".join("\t".join(str(p) for p in row) + "\n" for row in rows))


def write_leaderboard_file(output_dir, processor, split, predictions, is_real_example=None):
    """Writes the GLUE submission file of a test split ("index\\tprediction"); None if the split has none.

    Predictions are label strings (the argmax of the scores), or for STS-B scores with three decimals;
    the index counts the real examples from 0, in the test file's order.

    Args:
        output_dir: the directory.
        processor: the task's DataProcessor (its leaderboard file names and labels).
        split: the test split.
        predictions: class scores [N, num_labels] or ids [N]; scores [N] or [N, 1] for regression.
        is_real_example: [N] flags; rows with 0 are left out.

    Example:
    >>> import tempfile
    >>> from official_bert.classification.tasks import get_processor
    >>> path = write_leaderboard_file(tempfile.mkdtemp(), get_processor("rte", "glue/RTE"), "test",
    ...                               [[0.9, 0.1], [0.2, 0.8]])
    >>> os.path.basename(path), open(path).read()
    ('RTE.tsv', 'index\\tprediction\\n0\\tentailment\\n1\\tnot_entailment\\n')
    """
    name = processor.leaderboard_files.get(split)
    if name is None:
        return None
    predictions = _real_rows(predictions, is_real_example)
    if processor.is_regression:
        values = [f"{score:.3f}" for score in predictions.reshape(len(predictions), -1)[:, 0]]
    else:
        ids = np.argmax(predictions, axis=-1) if predictions.ndim == 2 else predictions.astype(int)
        values = [processor.label_list[i] for i in ids]
    return write_text(os.path.join(output_dir, name),
                  "index\tprediction\n" + "".join(f"{i}\t{value}\n" for i, value in enumerate(values)))
