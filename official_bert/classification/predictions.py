"""Predictions on your own files that join back to them: predictions.jsonl (and predictions.csv for a CSV input), one
row per input row in its order, with its id, the predicted label (labels, or score) and a probability per label
named by the label. Each file is written under a temporary name and renamed: a reader never sees half of one.
"""

import csv
import io
import json
import os

import numpy as np
import tensorflow as tf

from official_bert.classification.errors import ClassificationDataError
from official_bert.io.atomic import atomic_path, make_parent_directory

PROBABILITY_PREFIX = "prob_"  # a CSV column of a label's probability: prob_<label>


def prediction_rows(ids, label_list, outputs, thresholds=None):
    """Yields one dict per row: {"id", "label", "probabilities": {label: p}} (single-label: `outputs` are class
    probabilities), {"id", "labels", "probabilities"} (multi-label: `thresholds` given, `outputs` the labels'
    independent probabilities) or {"id", "score"} (regression: no label list).

    Args:
        ids: the rows' ids, in order (as many as rows of `outputs`).
        label_list: the labels in id order, or None for regression.
        outputs: [N, L] probabilities, or [N] / [N, 1] scores.
        thresholds: [L], multi-label only: a label is predicted where its probability is at least its threshold.

    Example:
    >>> list(prediction_rows(["a7"], ["neg", "pos"], np.array([[0.25, 0.75]])))
    [{'id': 'a7', 'label': 'pos', 'probabilities': {'neg': 0.25, 'pos': 0.75}}]
    >>> list(prediction_rows([1], ["x", "y"], np.array([[0.9, 0.2]]), thresholds=[0.5, 0.1]))
    [{'id': 1, 'labels': ['x', 'y'], 'probabilities': {'x': 0.9, 'y': 0.2}}]
    >>> list(prediction_rows([3], None, np.array([[2.5]])))
    [{'id': 3, 'score': 2.5}]
    """
    outputs = np.asarray(outputs, np.float64)
    count = 0
    for i, row_id in enumerate(ids):
        if i >= len(outputs):
            raise ClassificationDataError(f"more ids than the {len(outputs)} predictions")
        count += 1
        if label_list is None:
            yield {"id": row_id, "score": float(outputs[i].reshape(-1)[0])}  # unrounded: scores have no scale
            continue
        probabilities = {label: _number(p) for label, p in zip(label_list, outputs[i])}
        if thresholds is None:
            yield {"id": row_id, "label": label_list[int(np.argmax(outputs[i]))], "probabilities": probabilities}
        else:
            yield {"id": row_id, "labels": [label for label, p, t in zip(label_list, outputs[i], thresholds) if p >= t],
                   "probabilities": probabilities}
    if count != len(outputs):
        raise ClassificationDataError(f"{count} ids for {len(outputs)} predictions")


def _number(value):
    return round(float(value), 6)


def write_predictions(output_dir, ids, label_list, outputs, thresholds=None, csv_too=False, label_separator="|",
                      basename="predictions"):
    """Writes output_dir/predictions.jsonl (see `prediction_rows`) and, with `csv_too`, predictions.csv with the
    columns id, label (or labels joined by `label_separator`, or score) and prob_<label> per label; returns the
    paths written.

    Args:
        output_dir: the directory (any tf.io.gfile path).
        ids, label_list, outputs, thresholds: as for `prediction_rows`.
        csv_too: also write the CSV.
        label_separator: joins a multi-label row's labels in the CSV.
        basename: the files' name without extension.

    Example:
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> paths = write_predictions(out, ["t1", "t2"], ["neg", "pos"], [[0.5, 0.5], [0.125, 0.875]], csv_too=True)
    >>> print(open(paths[1]).read().replace("\\r\\n", "\\n"), end="")
    id,label,prob_neg,prob_pos
    t1,neg,0.5,0.5
    t2,pos,0.125,0.875
    """
    rows = prediction_rows(ids, label_list, outputs, thresholds)
    jsonl = os.path.join(output_dir, f"{basename}.jsonl")
    make_parent_directory(jsonl)
    if not csv_too:
        with atomic_path(jsonl) as tmp, tf.io.gfile.GFile(tmp, "w") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        return [jsonl]
    path = os.path.join(output_dir, f"{basename}.csv")
    kind = "score" if label_list is None else "label" if thresholds is None else "labels"
    header = ["id", kind] + ([f"{PROBABILITY_PREFIX}{label}" for label in label_list] if label_list else [])
    # Both files are written in one pass over the rows, then renamed together.
    with atomic_path(jsonl) as tmp_jsonl, atomic_path(path) as tmp_csv, \
            tf.io.gfile.GFile(tmp_jsonl, "w") as f_jsonl, tf.io.gfile.GFile(tmp_csv, "w") as f_csv:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(header)
        for row in rows:
            f_jsonl.write(json.dumps(row, ensure_ascii=False) + "\n")
            value = row[kind] if kind != "labels" else label_separator.join(row["labels"])
            writer.writerow([row["id"], value, *(row.get("probabilities") or {}).values()])
            if buffer.tell() > 1 << 16:
                f_csv.write(buffer.getvalue())
                buffer.seek(0)
                buffer.truncate()
        f_csv.write(buffer.getvalue())
    return [jsonl, path]
