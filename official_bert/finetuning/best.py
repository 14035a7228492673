"""The best checkpoint by a dev metric, kept beside the training checkpoints, with every evaluation's results;
and which checkpoint evaluation, prediction and export load (`load_trained_weights`).

In output_dir: `best-<step>/` (the model as `save_checkpoint` writes it: model.ckpt.*, bert_config.json and
vocab.txt, so `load_checkpoint(model, that directory)` reads it) and `best_checkpoint.json`, which names it and
lists the results of every evaluation. The JSON is replaced only after the new directory is complete, so a run
killed at any moment leaves it naming a whole checkpoint.
"""

import json
import os

import tensorflow as tf
from absl import logging

from official_bert.checkpoints import load_checkpoint, save_checkpoint
from official_bert.io import is_file, remove_tree, write_text
from official_bert.training.options import TrainingError

STATE_NAME = "best_checkpoint.json"
_PREFIX = "best-"


def best_checkpoint(output_dir):
    """The best checkpoint of a fine-tuning output_dir as (its directory, its global step), or None if it has none.

    Example:
    >>> import tempfile
    >>> best_checkpoint(tempfile.mkdtemp()) is None
    True
    """
    state = _read_state(output_dir)
    if not state or not state["best_path"]:
        return None
    step = int(state["best_path"].removeprefix(_PREFIX))
    return os.path.join(output_dir, state["best_path"]), step


class BestCheckpoint:
    """Records each evaluation of a run and keeps the checkpoint whose `metric` (higher is better) is best.

    Args:
        output_dir: the run's directory.
        metric: the results key that decides.
        vocab_file: copied into each best checkpoint's directory, so that it is self-contained (optional).

    Example:
    >>> import tempfile
    >>> best = BestCheckpoint(tempfile.mkdtemp(), "accuracy")
    >>> best.evaluated(100), best.path, best.results
    (False, None, None)
    """

    def __init__(self, output_dir, metric, vocab_file=None):
        self.output_dir = output_dir
        self.metric = metric
        self.vocab_file = vocab_file
        self.state = _read_state(output_dir) or {"metric": metric, "best_path": None, "evaluations": []}
        if self.state["metric"] != metric:
            raise TrainingError(f"--output_dir={output_dir}: its {STATE_NAME} selects by {self.state['metric']}, "
                                f"this task by {metric}; use a new --output_dir for another task")

    @property
    def path(self):
        """The best checkpoint's directory, or None before the first evaluation."""
        return os.path.join(self.output_dir, self.state["best_path"]) if self.state["best_path"] else None

    @property
    def results(self):
        """The best evaluation's results (with its global_step), or None."""
        evaluations = self.state["evaluations"]
        if not evaluations:
            return None
        return max(evaluations, key=lambda results: results[self.metric])

    def evaluated(self, step):
        return any(results["global_step"] == step for results in self.state["evaluations"])

    def record(self, step, results, model):
        """Adds the results of `model` at `step`; saves it if they are the best so far. Returns whether they are."""
        if self.metric not in results:
            raise ValueError(f"the results lack the metric {self.metric}: {sorted(results)}")
        previous = self.results
        is_best = previous is None or results[self.metric] > previous[self.metric]
        if is_best:
            name = f"{_PREFIX}{step}"
            save_checkpoint(model, os.path.join(self.output_dir, name), vocab_file=self.vocab_file)
            self.state["best_path"] = name
        self.state["evaluations"] = [r for r in self.state["evaluations"] if r["global_step"] != step]
        self.state["evaluations"].append({"global_step": step, **results})
        write_text(os.path.join(self.output_dir, STATE_NAME), json.dumps(self.state, indent=2))
        # Earlier best checkpoints, and any a killed run left half-written.
        for name in tf.io.gfile.listdir(self.output_dir):
            name = name.rstrip("/")  # object stores list directories with a trailing slash
            if name.startswith(_PREFIX) and name != self.state["best_path"]:
                remove_tree(os.path.join(self.output_dir, name))
        return is_best


def load_trained_weights(model, output_dir, init_checkpoint=None, do_lower_case=None, best=False):
    """Loads the model that evaluation, prediction and export use; returns its global step, if known.

    That is the newest training checkpoint of output_dir (the original's choice: the final one), or with `best`
    its best checkpoint by the dev metric, else --init_checkpoint, where a fine-tuning output directory (an MNLI
    model for AX) means its best checkpoint if it kept one, else its newest. A warning says so when the
    checkpoint lacks the task's head, which then stays as initialized.

    Args:
        model: the task model.
        output_dir: --output_dir.
        init_checkpoint: --init_checkpoint, or None.
        do_lower_case: checked against the checkpoint's casing (a warning when they disagree).
        best: prefer output_dir's best checkpoint (run_classifier's --keep_best).

    Raises:
        TrainingError: none of them holds a checkpoint.
    """
    candidates = [best_checkpoint(output_dir) if best else None, _training_checkpoint(output_dir)]
    if init_checkpoint:
        candidates += [best_checkpoint(init_checkpoint), (init_checkpoint, None)]
    found = next((candidate for candidate in candidates if candidate), None)
    if found is None:
        raise TrainingError(f"nothing to evaluate, predict or export with: --output_dir={output_dir} holds no "
                            "checkpoint and there is no --init_checkpoint (train with --do_train, or pass a "
                            "fine-tuned model)")
    path, step = found
    report = load_checkpoint(model, path, do_lower_case=do_lower_case)
    if report.missing:
        logging.warning("%s lacks %s: those weights are untrained", path, ", ".join(report.missing))
    return step


def _training_checkpoint(output_dir):
    """The newest training checkpoint of output_dir (`ckpt-<step>`) and its step, or None."""
    prefix = tf.train.latest_checkpoint(output_dir)
    if prefix is None:
        return None
    step = prefix.rsplit("-", 1)[-1]
    return prefix, int(step) if step.isdigit() else None


def _read_state(output_dir):
    path = os.path.join(output_dir, STATE_NAME)
    if not is_file(path):
        return None
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (tf.errors.OpError, ValueError) as e:
        raise TrainingError(f"{path}: cannot read it ({e})") from None
