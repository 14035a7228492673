"""The fine-tuning tools' sweep flags made a `finetuning.sweep.Sweep`: each run is the tool itself, started again
as a child process with the flags it was given, the run's settings, its own --output_dir and the sweep's feature
cache."""

import os
import sys

from absl import flags

from official_bert.finetuning import sweep
from official_bert.training.options import TrainingError

FLAGS = flags.FLAGS
# What a run must not inherit from its sweep: the sweep itself, and what only the chosen run does.
_NOT_INHERITED = ("sweep", "train_batch_sizes", "learning_rates", "epochs_list", "num_restarts", "seeds",
                  "export_dir", "do_predict", "test_file")


def sweep_from_flags():
    """The `Sweep` the sweep flags ask for, or None for a single run. Call it before anything is written.

    Raises:
        TrainingError: bad sweep flags.
    """
    runs = sweep_settings_from_flags()
    if not runs:
        return None
    shared = {"features_dir": FLAGS.features_dir or FLAGS.output_dir, "do_train": True, "do_eval": True}
    return sweep.Sweep(runs, lambda run, run_dir: rerun_command({**shared, **run.flags(), "output_dir": run_dir},
                                                                _NOT_INHERITED))


def sweep_settings_from_flags():
    """The runs the sweep flags ask for (a list of `sweep.RunSettings`), or None for a single run."""
    lists = {name: FLAGS[name].value for name in ("train_batch_sizes", "learning_rates", "epochs_list", "seeds")}
    if not FLAGS.sweep and FLAGS.num_restarts is None and all(value is None for value in lists.values()):
        return None
    if FLAGS.seeds is not None and FLAGS.num_restarts is not None:
        raise TrainingError("--seeds and --num_restarts both give the seeds: pass one of them")
    grid = sweep.PAPER_GRID if FLAGS.sweep else {"train_batch_sizes": [FLAGS.train_batch_size],
                                                 "learning_rates": [FLAGS.learning_rate],
                                                 "epochs": [FLAGS.num_train_epochs]}

    def axis(name, key, convert):
        return sweep.parse_list(f"--{name}", lists[name], convert) if lists[name] is not None else grid[key]

    seeds = (sweep.parse_list("--seeds", FLAGS.seeds, int) if FLAGS.seeds is not None
             else [FLAGS.seed + i for i in range(FLAGS.num_restarts or 1)])
    return sweep.sweep_settings(axis("train_batch_sizes", "train_batch_sizes", int),
                                axis("learning_rates", "learning_rates", float),
                                axis("epochs_list", "epochs", float), seeds)


def rerun_command(overrides, drop=()):
    """The argv that runs this tool again with the flags it was given, less `drop`, and `overrides` (name →
    value) set.

    Args:
        overrides: flags to set, name → value (booleans become --name / --noname).
        drop: names of flags to leave out.
    """
    argv = [sys.executable, os.path.abspath(sys.argv[0])]
    for name in FLAGS:
        flag = FLAGS[name]
        if flag.present and name not in overrides and name not in drop and name == flag.name:
            argv.append(flag.serialize())
    for name, value in overrides.items():
        if isinstance(value, bool):
            argv.append(f"--{'' if value else 'no'}{name}")
        elif value is not None:
            argv.append(f"--{name}={value}")
    return argv
