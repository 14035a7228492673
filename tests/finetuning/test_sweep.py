"""The paper's procedure: a grid × seeds of runs, each resumable, summarized over seeds, the best on dev used; and
--deterministic runs that repeat bit for bit."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest
import tensorflow as tf

from official_bert.finetuning.sweep import (OPTIMISM, RunSettings, format_summary, summarize, sweep_settings,
                                            write_sweep_results)
from tests.finetuning.test_run_classifier import write_task
from tests.cli.test_run_classifier_cli import SCRIPT, command, environment, read_tsv, run


def test_the_summary_is_mean_std_min_max_over_seeds_and_the_best_run_is_chosen(tmp_path):
    runs = sweep_settings([16, 32], [5e-5, 2e-5], [3.0], [1, 2, 3])
    assert len(runs) == 12 and len(set(runs)) == 12
    rng = np.random.default_rng(0)
    values = {run: float(rng.uniform(0.6, 0.8)) for run in runs}
    best = max(values, key=values.get)
    values[best] = 0.95
    summary = summarize({run: {"eval_accuracy": value} for run, value in values.items()}, "eval_accuracy")
    assert summary.chosen == best and summary.chosen_value == 0.95
    assert len(summary.rows) == 4
    for row in summary.rows:
        seeds = [values[RunSettings(row["train_batch_size"], row["learning_rate"], row["num_train_epochs"], seed)]
                 for seed in (1, 2, 3)]
        assert row["runs"] == 3
        assert row["mean"] == pytest.approx(sum(seeds) / 3)
        assert row["std"] == pytest.approx(np.sqrt(sum((v - sum(seeds) / 3) ** 2 for v in seeds) / 2))
        assert (row["min"], row["max"]) == (min(seeds), max(seeds))

    text = format_summary(summary)
    assert text.splitlines()[-1] == OPTIMISM and "<- chosen" in text
    assert f"chosen: {best.name}: eval_accuracy 0.9500" in text

    lines = open(write_sweep_results(str(tmp_path), summary)).read().splitlines()
    assert lines[0].split("\t") == ["train_batch_size", "learning_rate", "num_train_epochs", "runs", "mean", "std",
                                    "min", "max", "chosen"]
    chosen_rows = [line.split("\t") for line in lines[1:5] if line.split("\t")[-1]]
    assert len(chosen_rows) == 1 and chosen_rows[0][:3] == [str(best.train_batch_size), f"{best.learning_rate:g}",
                                                             f"{best.num_train_epochs:g}"]
    assert chosen_rows[0][-1] == f"seed {best.seed}: 0.95" and lines[-1].startswith("# metric: dev eval_accuracy")


def test_ties_go_to_the_smaller_learning_rate():
    runs = [RunSettings(32, 5e-5, 3.0, 1), RunSettings(32, 2e-5, 3.0, 1), RunSettings(32, 3e-5, 3.0, 1)]
    summary = summarize({run: {"eval_f1": 0.9} for run in runs}, "eval_f1")
    assert summary.chosen.learning_rate == 2e-5


def _read_json(path):
    with open(path) as f:
        return json.load(f)


@pytest.mark.slow
def test_a_sweep_runs_each_setting_resumes_and_predicts_with_the_best_run(tmp_path):
    write_task("sst-2", str(tmp_path / "data"), repeat=4)
    argv = command(tmp_path, "sst-2", "--do_train", "--do_eval", "--do_predict", "--num_train_epochs=1",
                   "--learning_rates=1e-3,1e-4", "--seeds=1,2", "--save_checkpoints_steps=100")
    first = run(argv, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    sweep_dir = tmp_path / "run"
    names = sorted(os.listdir(sweep_dir / "runs"))
    assert names == ["bs4-lr0.0001-ep1-seed1", "bs4-lr0.0001-ep1-seed2", "bs4-lr0.001-ep1-seed1",
                     "bs4-lr0.001-ep1-seed2"]
    # The features are converted once, by the sweep, and every run reads them.
    assert len([n for n in os.listdir(sweep_dir / "feature_cache") if n.endswith(".json")]) == 3  # train, dev, test
    for name in names:
        assert not (sweep_dir / "runs" / name / "feature_cache").exists()

    # The summary, recomputed from the runs' own eval_results.json.
    accuracy = {name: _read_json(sweep_dir / "runs" / name / "eval_results.json")["eval_accuracy"] for name in names}
    rows = read_tsv(sweep_dir / "sweep_results.tsv")
    by_lr = {row[1]: row for row in rows[1:-1]}
    for lr in ("0.001", "0.0001"):
        seeds = [accuracy[f"bs4-lr{lr}-ep1-seed{s}"] for s in (1, 2)]
        assert float(by_lr[lr][4]) == pytest.approx(np.mean(seeds), abs=1e-5)
        assert (float(by_lr[lr][6]), float(by_lr[lr][7])) == pytest.approx((min(seeds), max(seeds)), abs=1e-5)
    chosen = max(names, key=lambda n: (accuracy[n], -float(n.split("-lr")[1].split("-")[0])))
    chosen_row = next(row for row in rows[1:-1] if row[-1])
    assert chosen.startswith(f"bs4-lr{chosen_row[1]}-") and chosen_row[-1].startswith(f"seed {chosen[-1]}:")
    assert "optimistic" in first.stdout and "<- chosen" in first.stdout

    # The sweep's own evaluation and predictions are the chosen run's.
    results = _read_json(sweep_dir / "eval_results.json")
    assert results["eval_accuracy"] == accuracy[chosen] and chosen in results["checkpoint"]
    assert len(read_tsv(sweep_dir / "test_results.tsv")) == 8

    # A killed sweep continues with the runs it had not finished.
    os.remove(sweep_dir / "runs" / names[0] / "eval_results.json")
    again = run(argv, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stderr.count("finished in an earlier run") == 3
    assert (sweep_dir / "runs" / names[0] / "eval_results.json").exists()


def _processes_naming(text):
    """The live processes whose command line contains `text` (from the process table; zombies have none)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if text in f.read().decode(errors="replace"):
                    pids.append(int(pid))
        except OSError:  # gone meanwhile
            pass
    return pids


def _saved_step(run_dir):
    checkpoint = tf.train.latest_checkpoint(str(run_dir))
    return int(checkpoint.rsplit("-", 1)[1]) if checkpoint else None


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process table is read from /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_sweep_leaves_no_run_training_and_a_rerun_resumes_its_step(tmp_path, signum):
    write_task("mrpc", str(tmp_path / "data"), repeat=20)  # 160 examples: 40 steps an epoch
    argv = command(tmp_path, "mrpc", "--do_train", "--do_eval", "--num_train_epochs=3", "--learning_rates=1e-3",
                   "--seeds=1", "--save_checkpoints_steps=10")
    run_dir = tmp_path / "run" / "runs" / "bs4-lr0.001-ep3-seed1"
    log = tempfile.TemporaryFile("w+")  # not a pipe, which a chatty process could fill and block on
    sweep = subprocess.Popen(argv, env=environment(), stdout=subprocess.DEVNULL, stderr=log, text=True)
    deadline = time.time() + 240
    while time.time() < deadline and sweep.poll() is None and not _saved_step(run_dir):
        time.sleep(0.05)
    assert sweep.poll() is None and _processes_naming(str(run_dir)), "the sweep's run never started training"
    sweep.send_signal(signum)
    sweep.wait(timeout=60)

    # No run trains on: the child is gone within seconds (SIGKILL gives it no chance to stop it).
    deadline = time.time() + 15
    while time.time() < deadline and _processes_naming(str(run_dir)):
        time.sleep(0.1)
    assert _processes_naming(str(run_dir)) == []
    saved = _saved_step(run_dir)
    assert 10 <= saved < 120
    log.seek(0)
    stderr = log.read()
    if signum == signal.SIGTERM:
        # The sweep says which run stopped and the step its checkpoint holds, the one a rerun resumes from.
        assert sweep.returncode == 130, stderr[-3000:]
        assert stderr.rstrip().splitlines()[-1] == (
            f"run_classifier: interrupted in sweep run 1 of 1, bs4-lr0.001-ep3-seed1 ({run_dir}); its "
            f"checkpoint of step {saved} is saved: rerun the same command to resume")
    else:
        assert sweep.returncode == -signal.SIGKILL

    # A rerun at once takes the locks over and resumes the run where its checkpoint is.
    rerun = run(argv, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"resuming from {run_dir}/ckpt-{saved} at step {saved}" in rerun.stderr
    assert _read_json(run_dir / "eval_results.json")["global_step"] == 120


# Two logical CPUs for a mirrored run: configured before TensorFlow initialises its devices, then the tool runs.
MIRRORED = textwrap.dedent("""
    import runpy, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
""")


def _checkpoint_values(output_dir):
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(output_dir)))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["one_device", "mirrored"])
def test_deterministic_runs_are_bit_identical(tmp_path, strategy):
    write_task("sst-2", str(tmp_path / "data"), repeat=2)
    processes = []
    for name in ("a", "b"):
        argv = command(tmp_path, "sst-2", "--do_train", "--do_predict", "--num_train_epochs=2", "--deterministic",
                       f"--distribution_strategy={strategy}", output_dir=name)
        if strategy == "mirrored":
            argv = [sys.executable, "-c", MIRRORED, SCRIPT, *argv[2:]]
        processes.append(subprocess.Popen(argv, env=environment(), stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True))
    for process in processes:
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr[-3000:]
    if strategy == "mirrored":
        assert "over 2 replica(s)" in stderr
    a, b = _checkpoint_values(tmp_path / "a"), _checkpoint_values(tmp_path / "b")
    assert a.keys() == b.keys() and len(a) > 20
    for name in a:
        assert np.array_equal(a[name], b[name]), name
    assert read_tsv(tmp_path / "a" / "test_results.tsv") == read_tsv(tmp_path / "b" / "test_results.tsv")
