"""The paper's fine-tuning procedure: a grid of batch sizes, learning rates and epochs, several seeds each, the
best run on dev chosen (Appendix A.3; §4.1 for GLUE; "several random restarts" for BERT-Large on small sets).

Each run is the fine-tuning tool itself, started as a child process with its own `--output_dir` under the
sweep's, `<output_dir>/runs/<name>/`: resumable like any single run, so a killed sweep continues with the runs it
had not finished (a run is finished once its `eval_results.json` exists). The summary, `sweep_results.tsv`, gives
per configuration the mean ± std and min/max of the dev metric over seeds, and marks the chosen run.
"""

import dataclasses
import io
import itertools
import json
import math
import os
import signal
import subprocess
from typing import Callable

import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.errors import Interrupted
from official_bert.io.atomic import write_text
from official_bert.processes import die_with_parent
from official_bert.training.options import TrainingError

# Appendix A.3's batch sizes and epochs, with §4.1's learning rates (A.3 lists 5e-5, 3e-5, 2e-5; GLUE adds 4e-5).
PAPER_GRID = {"train_batch_sizes": (16, 32), "learning_rates": (5e-5, 4e-5, 3e-5, 2e-5), "epochs": (2.0, 3.0, 4.0)}
RESULTS_NAME = "sweep_results.tsv"
OPTIMISM = ("The configuration and seed were chosen on the dev set, so the chosen run's figure is optimistic; the "
            "configuration's mean over seeds is the fairer estimate.")


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """One run of a sweep.

    Args:
        train_batch_size: --train_batch_size.
        learning_rate: --learning_rate.
        num_train_epochs: --num_train_epochs.
        seed: --seed.

    Example:
    >>> RunSettings(32, 3e-5, 3.0, 2).name
    'bs32-lr3e-05-ep3-seed2'
    """

    train_batch_size: int
    learning_rate: float
    num_train_epochs: float
    seed: int

    @property
    def name(self):
        """The run's directory name under the sweep's runs/."""
        return f"bs{self.train_batch_size}-lr{self.learning_rate:g}-ep{self.num_train_epochs:g}-seed{self.seed}"

    @property
    def configuration(self):
        """(batch size, learning rate, epochs): what the seeds repeat."""
        return self.train_batch_size, self.learning_rate, self.num_train_epochs

    def flags(self):
        """The flags that make a run of these settings."""
        return {"train_batch_size": self.train_batch_size, "learning_rate": self.learning_rate,
                "num_train_epochs": self.num_train_epochs, "seed": self.seed}


def sweep_settings(train_batch_sizes, learning_rates, epochs, seeds):
    """Every run of the grid × seeds, in a fixed order.

    Example:
    >>> [s.name for s in sweep_settings([32], [5e-5, 2e-5], [3.0], [1, 2])]
    ['bs32-lr5e-05-ep3-seed1', 'bs32-lr5e-05-ep3-seed2', 'bs32-lr2e-05-ep3-seed1', 'bs32-lr2e-05-ep3-seed2']
    """
    return [RunSettings(int(b), float(lr), float(e), int(s))
            for b, lr, e, s in itertools.product(train_batch_sizes, learning_rates, epochs, seeds)]


@dataclasses.dataclass
class Sweep:
    """A sweep to run before a fine-tuning run evaluates, predicts and exports (`run_task`): its runs, and how to
    start one.

    Args:
        runs: the `RunSettings`.
        command: (settings, run_dir) → the argv of the child process that fine-tunes and evaluates that run
            (the command-line tools start themselves again: `official_bert.tools.sweep`).
    """

    runs: list
    command: Callable

    def run(self, output_dir, metric):
        """Runs the unfinished runs (`run_sweep`), prints and writes the summary; returns the chosen run's
        directory, which evaluation, prediction and export then use.

        Args:
            output_dir: the sweep's --output_dir.
            metric: the eval_results key that chooses (higher is better).
        """
        summary = summarize(run_sweep(self.runs, output_dir, self.command), metric)
        print(format_summary(summary), flush=True)
        logging.info("wrote %s", write_sweep_results(output_dir, summary))
        return run_directory(output_dir, summary.chosen)


def run_directory(output_dir, run):
    """Where a sweep's run `run` (a `RunSettings`) writes: output_dir/runs/<its name>."""
    return os.path.join(output_dir, "runs", run.name)


def run_sweep(settings, output_dir, command):
    """Runs every unfinished run of `settings` as a child process; returns {RunSettings: its eval results}.

    A child dies with this process (a sweep killed with SIGKILL leaves no run training on); on Ctrl-C or SIGTERM
    the running child is stopped the same way, so that it saves its checkpoint, and `errors.Interrupted` says
    which run stopped at which step.

    Args:
        settings: the `RunSettings` to run.
        output_dir: the sweep's directory; run r goes to output_dir/runs/<r.name>.
        command: (settings, run_dir) → the argv of the child process that fine-tunes and evaluates that run.

    Raises:
        TrainingError: a run failed (its exit status and directory are named; rerun to continue the sweep).
        errors.Interrupted: Ctrl-C or SIGTERM.
    """
    results = {}
    for i, run in enumerate(settings, start=1):
        run_dir = run_directory(output_dir, run)
        done = read_run_results(run_dir)
        if done is None:
            logging.info("sweep run %d of %d: %s", i, len(settings), run.name)
            status = _run_child(command(run, run_dir), f"sweep run {i} of {len(settings)}, {run.name}", run_dir)
            if status != 0:
                raise TrainingError(f"sweep run {run.name} failed with exit status {status} (its output: {run_dir}); "
                                    "rerun the same command to continue the sweep")
            done = read_run_results(run_dir)
            if done is None:
                raise TrainingError(f"sweep run {run.name} wrote no eval_results.json in {run_dir}")
        else:
            logging.info("sweep run %d of %d: %s finished in an earlier run", i, len(settings), run.name)
        results[run] = done
    return results


def _run_child(argv, what, run_dir):
    """Runs one sweep run's process to its end; returns its exit status."""
    child = subprocess.Popen(argv, preexec_fn=die_with_parent)
    try:
        return child.wait()
    except KeyboardInterrupt:
        # Ctrl-C reached the child too (same process group); SIGTERM reached this process alone.
        child.send_signal(signal.SIGTERM)
        child.wait()
        checkpoint = tf.train.latest_checkpoint(run_dir)
        step = checkpoint.rsplit("-", 1)[-1] if checkpoint else None
        saved = (f"its checkpoint of step {step} is saved: rerun the same command to resume" if step
                 else "it had saved no checkpoint: rerun the same command to start it again")
        raise Interrupted(f"in {what} ({run_dir}); {saved}") from None


def chosen_run_note(checkpoint, metric):
    """What a sweep's eval_results say of the checkpoint they evaluate: the chosen run, and that it was chosen on
    the same dev set.

    Example:
    >>> chosen_run_note("out/runs/bs32-lr2e-05-ep3-seed1", "f1")  # doctest: +ELLIPSIS
    'out/runs/bs32-lr2e-05-ep3-seed1, the best of the sweep by its dev f1 (an optimistic figure; see ...)'
    """
    return (f"{checkpoint}, the best of the sweep by its dev {metric} (an optimistic figure; see {RESULTS_NAME} "
            "for the mean over seeds)")


def read_run_results(run_dir):
    """A finished run's eval_results.json, or None."""
    path = os.path.join(run_dir, "eval_results.json")
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


@dataclasses.dataclass
class SweepSummary:
    """Per configuration, the metric over its seeds; and the run chosen.

    Args:
        metric: the results key compared (higher is better).
        rows: one dict per configuration: train_batch_size, learning_rate, num_train_epochs, runs, mean, std
            (sample standard deviation; 0 for one run), min, max.
        chosen: the chosen `RunSettings`.
        chosen_value: its metric.
    """

    metric: str
    rows: list
    chosen: RunSettings
    chosen_value: float

    @property
    def chosen_row(self):
        return next(row for row in self.rows if (row["train_batch_size"], row["learning_rate"],
                                                 row["num_train_epochs"]) == self.chosen.configuration)


def summarize(results, metric):
    """The `SweepSummary` of a sweep's results: the chosen run has the best `metric`, ties going to the smaller
    learning rate (then the smaller batch, fewer epochs, the smaller seed).

    Example:
    >>> a, b, c = RunSettings(32, 5e-5, 3.0, 1), RunSettings(32, 5e-5, 3.0, 2), RunSettings(32, 2e-5, 3.0, 1)
    >>> summary = summarize({a: {"eval_accuracy": 0.8}, b: {"eval_accuracy": 0.9}, c: {"eval_accuracy": 0.9}},
    ...                     "eval_accuracy")
    >>> summary.chosen.name, summary.chosen_row["mean"], summary.rows[0]["runs"]
    ('bs32-lr2e-05-ep3-seed1', 0.9, 2)
    """
    by_configuration = {}
    for run, run_results in results.items():
        if metric not in run_results:
            raise TrainingError(f"sweep run {run.name}: its eval_results.json has no {metric}")
        by_configuration.setdefault(run.configuration, []).append(float(run_results[metric]))
    rows = []
    for (batch_size, learning_rate, epochs), values in by_configuration.items():
        rows.append({"train_batch_size": batch_size, "learning_rate": learning_rate, "num_train_epochs": epochs,
                     "runs": len(values), "mean": float(np.mean(values)),
                     "std": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0,
                     "min": float(np.min(values)), "max": float(np.max(values))})
    chosen = min(results, key=lambda run: (-float(results[run][metric]), run.learning_rate, run.train_batch_size,
                                           run.num_train_epochs, run.seed))
    return SweepSummary(metric, rows, chosen, float(results[chosen][metric]))


def format_summary(summary):
    """The table the tool prints, ending with the chosen run and the caution about choosing on dev.

    Example:
    >>> summary = summarize({RunSettings(16, 2e-5, 2.0, 1): {"eval_f1": 0.5}}, "eval_f1")
    >>> print(format_summary(summary).splitlines()[1])
    batch  learning_rate  epochs  runs  mean    std     min     max
    """
    lines = [f"dev {summary.metric} per configuration (over seeds):",
             "batch  learning_rate  epochs  runs  mean    std     min     max"]
    for row in summary.rows:
        chosen = "  <- chosen" if row is summary.chosen_row else ""
        lines.append(f"{row['train_batch_size']:<6} {row['learning_rate']:<14g} {row['num_train_epochs']:<7g} "
                     f"{row['runs']:<5} {row['mean']:.4f}  {row['std']:.4f}  {row['min']:.4f}  "
                     f"{row['max']:.4f}{chosen}")
    row = summary.chosen_row
    lines.append(f"chosen: {summary.chosen.name}: {summary.metric} {summary.chosen_value:.4f}; its configuration's "
                 f"mean over {row['runs']} seed(s) {row['mean']:.4f} ± {row['std']:.4f}")
    lines.append(OPTIMISM)
    return "\n".join(lines)


def write_sweep_results(output_dir, summary):
    """Writes output_dir/sweep_results.tsv: a header, one row per configuration (`chosen` marks the chosen run's,
    with its seed) and the caution as a final comment line. Returns the path."""
    out = io.StringIO()
    out.write("train_batch_size\tlearning_rate\tnum_train_epochs\truns\tmean\tstd\tmin\tmax\tchosen\n")
    for row in summary.rows:
        chosen = f"seed {summary.chosen.seed}: {summary.chosen_value:.6g}" if row is summary.chosen_row else ""
        out.write(f"{row['train_batch_size']}\t{row['learning_rate']:g}\t{row['num_train_epochs']:g}\t"
                  f"{row['runs']}\t{row['mean']:.6g}\t{row['std']:.6g}\t{row['min']:.6g}\t{row['max']:.6g}\t"
                  f"{chosen}\n")
    out.write(f"# metric: dev {summary.metric}. {OPTIMISM}\n")
    path = os.path.join(output_dir, RESULTS_NAME)
    write_text(path, out.getvalue())
    return path


def parse_list(flag, value, convert):
    """A comma-separated flag value as a list of `convert`ed items; raises TrainingError naming the flag.

    Example:
    >>> parse_list("--learning_rates", "5e-5, 3e-5", float)
    [5e-05, 3e-05]
    """
    try:
        items = [convert(item) for item in value.split(",") if item.strip()]
    except ValueError:
        items = []
    if not items or any(isinstance(item, float) and not math.isfinite(item) for item in items):
        raise TrainingError(f"{flag}={value}: expected a comma-separated list of numbers")
    return items
