"""The paper's procedure in run_squad.py and run_ner.py: a sweep's runs each in runs/<name>/, reading the training
features the sweep cached once, summarized from their own eval_results.json, the best by dev F1 used for the
sweep's own predictions; and --deterministic runs that repeat bit for bit."""

import json
import os
import subprocess

import numpy as np
import pytest
import tensorflow as tf

from tests.cli import test_run_ner as ner_cli
from tests.cli import test_run_squad as squad_cli

RUN_NAMES = ["bs{batch}-lr0.0003-ep{epochs}-seed{seed}", "bs{batch}-lr0.001-ep{epochs}-seed{seed}"]


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_sweep(sweep_dir, result, names, cache_files):
    """What every sweep must show, recomputed from its runs' own files; returns the chosen run's name.

    Args:
        sweep_dir: the sweep's --output_dir.
        result: the finished sweep's CompletedProcess.
        names: the runs expected under runs/, the first of smaller learning rate.
        cache_files: directory → the names of its files that are feature caches.
    """
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(sweep_dir / "runs")) == sorted(names)
    # The training features are converted once, by the sweep, and every run reads them.
    assert len(cache_files(sweep_dir)) == 1
    for name in names:
        assert cache_files(sweep_dir / "runs" / name) == []

    f1 = {name: read_json(sweep_dir / "runs" / name / "eval_results.json")["f1"] for name in names}
    with open(sweep_dir / "sweep_results.tsv") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    assert rows[0][:8] == ["train_batch_size", "learning_rate", "num_train_epochs", "runs", "mean", "std", "min",
                           "max"]
    by_lr = {row[1]: row for row in rows[1:-1]}
    assert set(by_lr) == {"0.0003", "0.001"} and rows[-1][0].startswith("# metric: dev f1")
    for name in names:
        row = by_lr[name.split("-lr")[1].split("-")[0]]
        assert row[3] == "1" and float(row[5]) == 0.0  # one seed: its figure is the mean, min and max
        assert [float(value) for value in (row[4], row[6], row[7])] == pytest.approx([f1[name]] * 3, abs=1e-4)
    # The best dev F1 (the settings make the runs differ, so that choosing the other one would show).
    assert len(set(f1.values())) == len(names), f1
    chosen = max(names, key=f1.get)
    chosen_rows = [row for row in rows[1:-1] if row[-1]]
    assert len(chosen_rows) == 1 and chosen.startswith(f"bs{chosen_rows[0][0]}-lr{chosen_rows[0][1]}-")
    assert "<- chosen" in result.stdout and "optimistic" in result.stdout

    # The sweep's own evaluation is the chosen run's checkpoint, scored again.
    results, chosen_results = read_json(sweep_dir / "eval_results.json"), read_json(
        sweep_dir / "runs" / chosen / "eval_results.json")
    assert str(sweep_dir / "runs" / chosen) in results.pop("checkpoint")
    chosen_results.pop("global_step")
    assert results == chosen_results
    return chosen


@pytest.mark.slow
def test_a_squad_sweep_caches_the_features_once_and_predicts_with_the_best_run(tmp_path):
    paths = squad_cli.write_inputs(str(tmp_path / "data"), version_2=False)
    sweep_dir = tmp_path / "run"
    result = squad_cli.run(squad_cli.command(paths, sweep_dir, "--do_train", "--do_eval", "--do_predict",
                                             "--num_train_epochs=4", "--learning_rates=1e-3,3e-4"), timeout=900)
    names = [name.format(batch=4, epochs=4, seed=3) for name in RUN_NAMES]
    chosen = check_sweep(sweep_dir, result, names,
                         lambda directory: [n for n in os.listdir(directory) if n.startswith("squad_train_")
                                            and n.endswith(".tf_record")])
    assert result.stderr.count("reusing cached SQuAD features") == 2  # each run, not the sweep, which wrote them
    for name in ("predictions.json", "nbest_predictions.json"):
        assert read_json(sweep_dir / name) == read_json(sweep_dir / "runs" / chosen / name)


@pytest.mark.slow
def test_a_ner_sweep_caches_the_windows_once_and_predicts_with_the_best_run(tmp_path):
    paths = ner_cli.write_model_files(str(tmp_path / "model"))
    sweep_dir = tmp_path / "run"
    result = ner_cli.run(ner_cli.command(paths, ner_cli.FIXTURE, sweep_dir, "--do_train", "--do_eval",
                                         "--do_predict", "--num_train_epochs=3", "--learning_rates=1e-3,3e-4"),
                         timeout=900)
    names = [name.format(batch=8, epochs=3, seed=2) for name in RUN_NAMES]
    chosen = check_sweep(sweep_dir, result, names,
                         lambda directory: [n for n in os.listdir(directory / "feature_cache") if n.endswith(".npz")]
                         if (directory / "feature_cache").exists() else [])
    assert result.stderr.count("reusing the cached training windows") == 2
    assert read_text(sweep_dir / "eval_predictions.txt") == read_text(sweep_dir / "runs" / chosen /
                                                                      "eval_predictions.txt")
    # The test set is tagged by the sweep only, with the chosen run's checkpoint.
    assert (sweep_dir / "test_results.json").exists()
    assert not (sweep_dir / "runs" / chosen / "test_results.json").exists()


def with_dropout(config_path):
    """Turns dropout on in a fixture's bert_config.json, so that the dropout masks must repeat too."""
    config = read_json(config_path)
    config.update(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    with open(config_path, "w") as f:
        json.dump(config, f)


def checkpoint_values(output_dir):
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(output_dir)))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def run_twice(argvs):
    """Runs the two commands at once; both must succeed."""
    processes = [subprocess.Popen(argv, env=dict(os.environ, PYTHONPATH=squad_cli.REPO, CUDA_VISIBLE_DEVICES="",
                                                 TF_CPP_MIN_LOG_LEVEL="2"),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for argv in argvs]
    for process in processes:
        _, stderr = process.communicate(timeout=900)
        assert process.returncode == 0, stderr[-3000:]


def assert_identical_checkpoints(a_dir, b_dir):
    a, b = checkpoint_values(a_dir), checkpoint_values(b_dir)
    assert a.keys() == b.keys() and len(a) > 20
    for name in a:
        assert np.array_equal(a[name], b[name]), name


@pytest.mark.slow
def test_deterministic_squad_runs_are_bit_identical(tmp_path):
    paths = squad_cli.write_inputs(str(tmp_path / "data"), version_2=True)
    with_dropout(paths["bert_config.json"])
    run_twice([squad_cli.command(paths, tmp_path / name, "--do_train", "--do_predict", "--version_2_with_negative",
                                 "--num_train_epochs=5", "--deterministic") for name in ("a", "b")])
    assert_identical_checkpoints(tmp_path / "a", tmp_path / "b")
    for name in ("nbest_predictions.json", "null_odds.json"):
        assert read_text(tmp_path / "a" / name) == read_text(tmp_path / "b" / name)


@pytest.mark.slow
def test_deterministic_ner_runs_are_bit_identical(tmp_path):
    paths = ner_cli.write_model_files(str(tmp_path / "model"))
    with_dropout(paths["config"])
    run_twice([ner_cli.command(paths, ner_cli.FIXTURE, tmp_path / name, "--do_train", "--do_predict",
                               "--num_train_epochs=2", "--deterministic") for name in ("a", "b")])
    assert_identical_checkpoints(tmp_path / "a", tmp_path / "b")
    for name in ("test_predictions.txt", "test_results.json"):
        assert read_text(tmp_path / "a" / name) == read_text(tmp_path / "b" / name)
