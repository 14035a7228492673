"""run_classifier.py as a command: kill -9 and rerun, every output file, MNLI → AX, bad input."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.finetuning.test_run_classifier import PAIRS, SEQ_LENGTH, write_model_files, write_task

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "run_classifier.py")


def command(tmp_path, task, *extra, output_dir="run"):
    vocab, config = write_model_files(str(tmp_path / "model"))
    return [sys.executable, SCRIPT, f"--task_name={task}", f"--data_dir={tmp_path / 'data'}",
            f"--vocab_file={vocab}", f"--bert_config_file={config}", f"--output_dir={tmp_path / output_dir}",
            f"--max_seq_length={SEQ_LENGTH}", "--train_batch_size=4", "--eval_batch_size=4", "--predict_batch_size=4",
            "--learning_rate=1e-3", "--iterations_per_loop=5", "--log_steps=10", *extra]


def environment():
    return dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")


def run(argv, timeout=300):
    return subprocess.run(argv, env=environment(), capture_output=True, text=True, timeout=timeout)


def read_results(path):
    with open(path) as f:
        return dict(line.rstrip("\n").split(" = ") for line in f)


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f]


@pytest.mark.slow
def test_a_killed_run_resumes_and_writes_every_output(tmp_path):
    write_task("mrpc", str(tmp_path / "data"), repeat=20)  # 160 examples: 40 steps an epoch
    output_dir, export_dir = tmp_path / "run", tmp_path / "export"
    argv = command(tmp_path, "mrpc", "--do_train", "--do_eval", "--do_predict", "--num_train_epochs=3",
                   "--save_checkpoints_steps=10", f"--export_dir={export_dir}", "--keep_best")

    log = tempfile.TemporaryFile("w+")  # not a pipe, which a chatty process could fill and block on
    process = subprocess.Popen(argv, env=environment(), stdout=subprocess.DEVNULL, stderr=log, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None and not tf.train.latest_checkpoint(str(output_dir)):
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    log.seek(0)
    killed_at = int(tf.train.latest_checkpoint(str(output_dir)).rsplit("-", 1)[1])
    assert process.returncode == -signal.SIGKILL and 10 <= killed_at < 120, log.read()[-3000:]
    assert not (output_dir / "eval_results.txt").exists() and not export_dir.exists()

    rerun = run(argv)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"resuming from {output_dir}/ckpt-{killed_at} at step {killed_at}" in rerun.stderr
    assert re.search(r"reusing cached mrpc train features", rerun.stderr)

    # eval_results (--keep_best): the best epoch's dev metrics under the original's names (a tiny model overfits
    # these 8 pairs), as text and JSON, saying how the checkpoint was chosen.
    with open(output_dir / "best_checkpoint.json") as f:
        best = json.load(f)
    assert [e["global_step"] for e in best["evaluations"]] == [40, 80, 120]
    best_step = int(best["best_path"].removeprefix("best-"))
    text = read_results(output_dir / "eval_results.txt")
    assert list(text) == ["checkpoint", "eval_accuracy", "eval_f1", "eval_loss", "global_step", "loss"]
    with open(output_dir / "eval_results.json") as f:
        results = json.load(f)
    assert {key: results[key] for key in ("eval_accuracy", "eval_f1", "global_step")} == {
        "eval_accuracy": 1.0, "eval_f1": 1.0, "global_step": best_step}
    assert "optimistic" in results["checkpoint"] and 0 < results["eval_loss"] < np.log(2)
    # The text as the original's float32 metrics print; the JSON at full precision.
    assert text["global_step"] == str(best_step) and text["eval_loss"] == str(np.float32(results["eval_loss"]))

    # test_results.tsv: one row of class probabilities per test example; MRPC.tsv: their argmax as labels.
    probabilities = np.array(read_tsv(output_dir / "test_results.tsv"), float)
    assert probabilities.shape == (len(PAIRS), 2)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)
    leaderboard = read_tsv(output_dir / "MRPC.tsv")
    assert leaderboard[0] == ["index", "prediction"]
    assert leaderboard[1:] == [[str(i), str(p)] for i, p in enumerate(np.argmax(probabilities, axis=1))]
    assert [int(p) for _, p in leaderboard[1:]] == [int(label) for _, _, label in PAIRS]

    # The export: version 1, complete, and nothing else in export_dir.
    assert sorted(os.listdir(export_dir)) == ["1"]
    assert {"saved_model.pb", "variables", "assets", "model.keras"} <= set(os.listdir(export_dir / "1"))


@pytest.mark.slow
def test_an_mnli_model_predicts_the_diagnostic_set(tmp_path):
    write_task("mnli", str(tmp_path / "data"), repeat=8)
    mnli = run(command(tmp_path, "mnli", "--do_train", "--do_eval", "--do_predict", "--num_train_epochs=6",
                       "--save_checkpoints_steps=100", output_dir="mnli"))
    assert mnli.returncode == 0, mnli.stderr[-3000:]
    # As the original: the final checkpoint is evaluated (no best is kept), under the original's names.
    results = read_results(tmp_path / "mnli" / "eval_results.txt")
    assert list(results) == ["eval_accuracy", "eval_loss", "eval_mismatched_accuracy", "eval_mismatched_loss",
                             "global_step", "loss"]
    assert float(results["eval_accuracy"]) == float(results["eval_mismatched_accuracy"]) == 1.0  # the same pairs
    assert int(results["global_step"]) == int(tf.train.latest_checkpoint(str(tmp_path / "mnli")).rsplit("-", 1)[1])
    assert not (tmp_path / "mnli" / "best_checkpoint.json").exists()
    for name in ("MNLI-m.tsv", "MNLI-mm.tsv", "test_results.tsv", "test_results_mismatched.tsv"):
        assert len(read_tsv(tmp_path / "mnli" / name)) == len(PAIRS) + (name.startswith("MNLI"))

    # AX: the same pairs as MNLI's matched test set, predicted with the MNLI run's final checkpoint.
    with open(tmp_path / "data" / "AX.tsv", "w") as f:
        f.write("index\tsentence1\tsentence2\n" + "".join(f"{i}\t{a}\t{b}\n" for i, (a, b, _) in enumerate(PAIRS)))
    ax = run(command(tmp_path, "ax", "--do_predict", f"--init_checkpoint={tmp_path / 'mnli'}", output_dir="ax"))
    assert ax.returncode == 0, ax.stderr[-3000:]
    assert read_tsv(tmp_path / "ax" / "AX.tsv")[1:] == read_tsv(tmp_path / "mnli" / "MNLI-m.tsv")[1:]
    assert [p for _, p in read_tsv(tmp_path / "ax" / "AX.tsv")[1:]] == [
        "entailment" if label == "1" else "contradiction" for _, _, label in PAIRS]
    np.testing.assert_allclose(np.array(read_tsv(tmp_path / "ax" / "test_results.tsv"), float),
                               np.array(read_tsv(tmp_path / "mnli" / "test_results.tsv"), float), atol=1e-6)


def _bad_input(tmp_path, name):
    """A data directory and flags with one thing wrong, and the message that must say what."""
    data = tmp_path / name / "data"
    write_task("sst-2", str(data))
    task, extra = "sst-2", ["--do_train", "--do_eval"]
    if name == "unknown task":
        task, message = "sst2", r"--task_name=sst2: unknown task; known tasks: cola, sst-2, "
    elif name == "missing file":
        os.remove(data / "train.tsv")
        message = rf"{data}/train.tsv: file not found"
    elif name == "label not in the label list":
        task, extra = "single", extra + ["--label_list=neg,pos"]
        message = rf"{data}/train.tsv:2: label '1' is not one of the task's labels neg, pos"
    elif name == "empty dev set":
        (data / "dev.tsv").write_text("sentence\tlabel\n")
        message = rf"{data}/dev.tsv: no examples in the dev set"
    elif name == "sequence longer than the model's":
        extra = extra + ["--max_seq_length=65"]
        message = r"--max_seq_length=65 exceeds max_position_embeddings=64 of --bert_config_file=.*bert_config.json"
    else:
        raise ValueError(name)
    argv = command(tmp_path / name, task, *extra)
    argv[argv.index(f"--data_dir={tmp_path / name / 'data'}")] = f"--data_dir={data}"
    return argv, message


BAD_INPUTS = ("unknown task", "missing file", "label not in the label list", "empty dev set",
              "sequence longer than the model's")


@pytest.mark.slow
def test_bad_input_is_one_clear_message(tmp_path):
    # All at once: each process spends most of its time importing TensorFlow.
    cases = {name: _bad_input(tmp_path, name) for name in BAD_INPUTS}
    processes = {name: subprocess.Popen(argv, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True) for name, (argv, _) in cases.items()}
    for name, process in processes.items():
        _, stderr = process.communicate(timeout=300)
        errors = [line for line in stderr.splitlines() if line.startswith("run_classifier: error: ")]
        assert process.returncode == 1 and len(errors) == 1, (name, stderr[-3000:])
        assert re.search(cases[name][1], errors[0]), (name, errors[0])
        assert "Traceback" not in stderr, name
        output_dir = tmp_path / name / "run"
        assert not output_dir.exists() or not {"checkpoint", "eval_results.txt"} & set(os.listdir(output_dir)), name

