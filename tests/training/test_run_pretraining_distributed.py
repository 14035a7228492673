"""Pretraining under MirroredStrategy (two logical CPUs) and MultiWorkerMirroredStrategy (two local processes)."""

import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, load_checkpoint
from tests.training.test_run_pretraining import tiny_config, write_examples
from tests.cli.test_run_pretraining_cli import REPO, command, environment, iterations

# One process: logical devices must be configured before TensorFlow initialises them.
MIRRORED_SCRIPT = textwrap.dedent("""
    import json, os, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from official_bert import distribution
    from official_bert.training import input_pipeline
    from official_bert.training import PretrainingRun
    from official_bert.training.monitor import read_scalars
    from tests.training.test_run_pretraining import PREDICTIONS, SEQ_LENGTH, options, tiny_config

    work = sys.argv[1]
    data = input_pipeline.open_pretraining_files(os.path.join(work, "train.tfrecord"), SEQ_LENGTH, PREDICTIONS)
    config = tiny_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    out = {}
    for name in ("one_device", "mirrored"):
        strategy = distribution.get_strategy(name)
        run = PretrainingRun(config, options(os.path.join(work, name), train_batch_size=8, num_train_steps=6,
                                             num_warmup_steps=2, iterations_per_loop=3, log_steps=3), strategy)
        run.train(data)
        out[name] = {"replicas": strategy.num_replicas_in_sync, "eval": run.evaluate(data),
                     "train": read_scalars(os.path.join(work, name, "train")),
                     "weights": [w.numpy().tolist() for w in run.model.trainable_weights]}
    try:
        PretrainingRun(config, options(os.path.join(work, "odd"), train_batch_size=7), strategy)
    except distribution.DistributionError as e:
        out["error"] = str(e)
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_mirrored_on_two_devices_matches_one_device(tmp_path):
    write_examples(tmp_path / "train.tfrecord", 96)
    proc = subprocess.run([sys.executable, "-c", MIRRORED_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          cwd=REPO, env=environment(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    one, mirrored = out["one_device"], out["mirrored"]
    assert (one["replicas"], mirrored["replicas"]) == (1, 2)
    assert one["eval"]["global_step"] == mirrored["eval"]["global_step"] == 6
    for key, value in one["eval"].items():
        assert mirrored["eval"][key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
    # Training losses and metrics, logged at steps 3 and 6, agree too.
    for name in ("loss", "masked_lm_loss", "masked_lm_accuracy", "next_sentence_loss"):
        assert sorted(mirrored["train"][name]) == ["3", "6"]
        for step, value in one["train"][name].items():
            assert mirrored["train"][name][step] == pytest.approx(value, rel=1e-5, abs=1e-6), (name, step)
    for got, want in zip(mirrored["weights"], one["weights"]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert out["error"] == "--train_batch_size=7 must be a multiple of the 2 replicas"


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@pytest.mark.slow
def test_multi_worker_mirrored_with_two_local_workers(tmp_path):
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    flags = ["--distribution_strategy=multi_worker_mirrored", "--num_train_steps=6", "--save_checkpoints_steps=3",
             "--iterations_per_loop=3", "--log_steps=3", "--num_warmup_steps=2"]
    argv = command(tmp_path, *flags)
    processes = []
    for index in range(2):
        temporary = tmp_path / f"tmp{index}"
        temporary.mkdir()
        env = dict(environment(), TMPDIR=str(temporary),
                   TF_CONFIG=json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}))
        processes.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = [p.communicate(timeout=300) for p in processes]
    for process, (_, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr[-3000:]
    output_dir = str(tmp_path / "run")
    # The chief wrote the checkpoints; the other worker's went to its temporary directory, since removed.
    assert [os.path.basename(p) for p in tf.train.get_checkpoint_state(output_dir).all_model_checkpoint_paths] == [
        "ckpt-3", "ckpt-6"]
    assert iterations(os.path.join(output_dir, "ckpt-6")) == 6
    assert os.listdir(tmp_path / "tmp1") == []
    assert "over 2 replica(s)" in outputs[0][1]
    classifier = BertClassifier(BertEncoder(tiny_config()), num_classes=2)
    assert len(load_checkpoint(classifier, output_dir).loaded) == len(classifier.weights) - 2
