"""run_pretraining.py as a command: kill -9 and resume, what output_dir holds at the end, bad flags and data."""

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

from official_bert import BertClassifier, BertEncoder, load_checkpoint
from tests.training.test_run_pretraining import PREDICTIONS, SEQ_LENGTH, tiny_config, write_examples

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "run_pretraining.py")
STEPS = 300


def command(tmp_path, *extra):
    tiny_config().to_json_file(str(tmp_path / "bert_config.json"))
    if not (tmp_path / "train.tfrecord").exists():
        write_examples(tmp_path / "train.tfrecord", 256)
    return [sys.executable, SCRIPT, f"--bert_config_file={tmp_path / 'bert_config.json'}",
            f"--input_file={tmp_path / 'train.tfrecord'}", f"--output_dir={tmp_path / 'run'}",
            f"--max_seq_length={SEQ_LENGTH}", f"--max_predictions_per_seq={PREDICTIONS}", "--do_train",
            "--train_batch_size=8", f"--num_train_steps={STEPS}", "--num_warmup_steps=10", "--learning_rate=1e-3",
            "--save_checkpoints_steps=20", "--iterations_per_loop=10", "--log_steps=50", *extra]


def environment():
    return dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")


def iterations(prefix):
    return int(tf.train.load_checkpoint(prefix).get_tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"))


def start_and_stop(argv, output_dir, when_step, signal_number):
    """Starts training, sends `signal_number` once a checkpoint of step `when_step` or later exists, waits."""
    log = tempfile.TemporaryFile("w+")  # not a pipe, which a chatty process could fill and block on
    process = subprocess.Popen(argv, env=environment(), stdout=subprocess.DEVNULL, stderr=log, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        latest = tf.train.latest_checkpoint(output_dir)
        if latest and int(latest.rsplit("-", 1)[1]) >= when_step:
            break
        time.sleep(0.05)
    process.send_signal(signal_number)
    process.wait(timeout=60)
    log.seek(0)
    stderr = log.read()
    latest = tf.train.latest_checkpoint(output_dir)
    step = int(latest.rsplit("-", 1)[1])
    assert step < STEPS and iterations(latest) == step, stderr[-2000:]
    return process.returncode, stderr, step


@pytest.mark.slow
def test_interrupted_runs_resume_and_end_at_num_train_steps(tmp_path):
    output_dir = str(tmp_path / "run")
    # SIGTERM: the run saves the step it reached (at the end of a 10-step loop) and says so.
    returncode, stderr, stopped_at = start_and_stop(command(tmp_path), output_dir, 20, signal.SIGTERM)
    assert returncode == 130 and stopped_at % 10 == 0
    assert f"interrupted at step {stopped_at}; checkpoint saved: rerun the same command to resume" in stderr
    # kill -9: nothing is saved; the rerun resumes from the last periodic checkpoint, a multiple of 20.
    returncode, stderr, killed_at = start_and_stop(command(tmp_path), output_dir, stopped_at + 40, signal.SIGKILL)
    assert returncode == -signal.SIGKILL
    assert f"resuming from {output_dir}/ckpt-{stopped_at} at step {stopped_at}" in stderr
    assert killed_at >= stopped_at + 40 and killed_at % 20 == 0

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + [f"token{i}" for i in range(56)]) + "\n")
    last = subprocess.run(command(tmp_path, "--do_eval", "--max_eval_steps=4", "--eval_batch_size=8",
                                    f"--vocab_file={vocab}"),
                            env=environment(), capture_output=True, text=True, timeout=300)
    assert last.returncode == 0, last.stderr[-3000:]
    assert f"resuming from {output_dir}/ckpt-{killed_at} at step {killed_at}" in last.stderr
    assert f"training steps {killed_at} to {STEPS}" in last.stderr
    final = tf.train.latest_checkpoint(output_dir)
    assert final == os.path.join(output_dir, f"ckpt-{STEPS}") and iterations(final) == STEPS

    lines = (tmp_path / "run" / "eval_results.txt").read_text().splitlines()
    results = dict(line.split(" = ") for line in lines)
    assert list(results) == ["global_step", "loss", "masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy",
                             "next_sentence_loss"]
    assert results["global_step"] == str(STEPS)
    values = {k: float(v) for k, v in results.items()}
    assert values["loss"] == pytest.approx(values["masked_lm_loss"] + values["next_sentence_loss"], rel=1e-4)
    assert 0 <= values["masked_lm_accuracy"] <= 1 and 0 <= values["next_sentence_accuracy"] <= 1

    # What fine-tuning needs: weights a classifier loads, the config and the vocabulary.
    assert (tmp_path / "run" / "vocab.txt").read_text() == vocab.read_text()
    classifier = BertClassifier(BertEncoder(tiny_config()), num_classes=2)
    report = load_checkpoint(classifier, output_dir)
    assert report.missing == ["classifier/kernel", "classifier/bias"]
    assert len(report.loaded) == len(classifier.weights) - 2
    # The word embeddings are the model's first trainable variable, stored under the optimizer's key.
    saved = tf.train.load_checkpoint(final).get_tensor("optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE")
    np.testing.assert_array_equal(classifier.encoder.embeddings.weights[0].numpy(), saved)


@pytest.mark.parametrize("extra, message", [
    (["--max_seq_length=128"], f"--max_seq_length=128, but the examples in .*train.tfrecord were made with "
                               f"--max_seq_length={SEQ_LENGTH}; pass --max_seq_length={SEQ_LENGTH}"),
    (["--train_batch_size=10", "--gradient_accumulation_steps=4"],
     "--train_batch_size=10 must be a multiple of --gradient_accumulation_steps=4"),
    (["--bert_config_file=/no/such/bert_config.json"], "/no/such/bert_config.json: BERT config file not found"),
])
def test_bad_flags_and_data_are_one_clear_message(tmp_path, extra, message):
    result = subprocess.run(command(tmp_path, *extra), env=environment(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("run_pretraining: error: ")]
    assert len(errors) == 1 and re.search(message, errors[0]), result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists() or not any(n.startswith("ckpt") for n in os.listdir(tmp_path / "run"))
