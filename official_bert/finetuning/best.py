"""The best checkpoint by a dev metric, kept beside the training checkpoints, with every evaluation's results.

In output_dir: `best-<step>/` (the model as `save_checkpoint` writes it: model.ckpt.*, bert_config.json and
vocab.txt, so `load_checkpoint(model, that directory)` reads it) and `best_checkpoint.json`, which names it and
lists the results of every evaluation. The JSON is replaced only after the new directory is complete, so a run
killed at any moment leaves it naming a whole checkpoint.
"""

import json
import os
import shutil

from official_bert.checkpoints import files, save_checkpoint
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
        with files.atomic_path(os.path.join(self.output_dir, STATE_NAME)) as tmp, open(tmp, "w") as f:
            json.dump(self.state, f, indent=2)
        # Earlier best checkpoints, and any a killed run left half-written.
        for name in os.listdir(self.output_dir):
            if name.startswith(_PREFIX) and name != self.state["best_path"]:
                shutil.rmtree(os.path.join(self.output_dir, name), ignore_errors=True)
        return is_best


def _read_state(output_dir):
    path = os.path.join(output_dir, STATE_NAME)
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise TrainingError(f"{path}: cannot read it ({e})") from None
