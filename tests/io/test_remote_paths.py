"""The tools with every input and output on a tf.io.gfile filesystem other than the local disk: TensorFlow's
in-memory `ram://` (which stands for gs:// and the like: a path that Python's open() and os cannot reach).

ram:// lives in one process, so each tool runs in a process of its own (`DRIVER`) that copies the inputs there,
runs the tool, and reports what the tool wrote there. Nothing may appear on the local disk.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.cli.test_cli_bad_input import classifier, make_inputs, pretraining

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.slow  # four tools, each trained or run for a few steps: about a minute on 2 quiet cores

DRIVER = """
import importlib, json, os, sys
import tensorflow as tf
name, copies, argv, root = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
for local, remote in copies.items():
    tf.io.gfile.makedirs(os.path.dirname(remote))
    tf.io.gfile.copy(local, remote, overwrite=True)
sys.argv = [name + ".py", *argv]
tool = importlib.import_module(name)
from official_bert.tools import cli
try:
    (tool.run if hasattr(tool, "run") else lambda: cli.run(tool.main))()  # a tool without run() yet: its __main__
    code = 0
except SystemExit as e:
    code = e.code or 0
files = sorted(os.path.join(d, f)[len(root):].lstrip("/") for d, _, fs in tf.io.gfile.walk(root) for f in fs)
report = {"code": code, "files": files}
if name == "run_classifier" and code == 0:
    served = tf.saved_model.load(root + "/export/1").signatures["serving_default"]
    report["served"] = sorted(served(text_a=tf.constant(["the good film ."])))
    with tf.io.gfile.GFile(root + "/run/eval_results.txt") as f:
        report["eval"] = f.read()
if name == "extract_features" and code == 0:
    preprocess, encoder = (tf.saved_model.load(root + "/hub/" + part) for part in ("preprocess", "encoder"))
    outputs = encoder(preprocess(tf.constant(["the good film ."])))
    report["served"] = {key: value.shape.as_list() for key, value in outputs.items() if key != "encoder_outputs"}
print(json.dumps(report))
"""


def run_remote(tool, copies, argv, root, cwd):
    done = subprocess.run([sys.executable, "-c", DRIVER, tool, json.dumps(copies), json.dumps(argv), root],
                          cwd=cwd, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr[-3000:]
    assert os.listdir(cwd) == []  # no "ram:" directory, nothing else, on the local disk
    return report


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("inputs"))


def remote(p, *names):
    """Local input → its ram:// copy, for the inputs named."""
    return {p[name]: f"ram://in/{os.path.basename(p[name])}" for name in names}


def test_create_pretraining_data_reads_and_writes_remote_files(inputs, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the good film .\nthe bad plot .\n\nwho ran ?\nann ran .\nthe dull film .\n", encoding="utf-8")
    copies = {str(corpus): "ram://in/corpus.txt", **remote(inputs, "vocab")}
    work = tmp_path / "cwd"
    work.mkdir()
    report = run_remote("data_prep.create_pretraining_data", copies,
                        ["--input_file=ram://in/corpus.txt", "--output_file=ram://out/train.tfrecord",
                         "--vocab_file=ram://in/vocab.txt", "--max_seq_length=16", "--max_predictions_per_seq=3",
                         "--dupe_factor=2", "--num_workers=1"], "ram://out", str(work))
    assert report["files"] == ["train.tfrecord"]


def test_run_pretraining_trains_from_and_into_remote_paths(inputs, tmp_path):
    copies = remote(inputs, "vocab", "config", "tfrecord")
    paths = {**inputs, **{name: copies[inputs[name]] for name in ("vocab", "config", "tfrecord")}}
    argv = pretraining(paths, "ram://out/run", save_checkpoints_steps=1, iterations_per_loop=1)
    argv += ["--do_eval", "--max_eval_steps=1", "--eval_batch_size=4"]
    report = run_remote("run_pretraining", copies, argv, "ram://out", str(tmp_path))
    files = report["files"]
    for name in ("bert_config.json", "vocab.txt", "checkpoint", "ckpt-2.index", "eval_results.txt"):
        assert f"run/{name}" in files, files
    assert not [f for f in files if ".incomplete-" in f or "_temp" in f or "lock" in f]


def test_run_classifier_trains_evaluates_and_exports_to_remote_paths(inputs, tmp_path):
    data = {inputs["data"] + f"/{split}.tsv": f"ram://in/data/{split}.tsv" for split in ("train", "dev")}
    copies = {**remote(inputs, "vocab", "config"), **data}
    paths = {**inputs, "vocab": copies[inputs["vocab"]], "config": copies[inputs["config"]], "data": "ram://in/data"}
    argv = classifier(paths, "ram://out/run") + ["--do_eval", "--export_dir=ram://out/export", "--eval_batch_size=2"]
    report = run_remote("run_classifier", copies, argv, "ram://out", str(tmp_path))
    files = report["files"]
    for name in ("run/bert_config.json", "run/vocab.txt", "run/checkpoint", "run/eval_results.txt",
                 "run/eval_results.json", "export/1/saved_model.pb", "export/1/model.keras"):
        assert name in files, files
    assert any(f.startswith("run/feature_cache/sst-2-train-") for f in files)
    assert not [f for f in files if ".incomplete-" in f or "/.tmp-" in f or "lock" in f]
    assert "eval_accuracy = " in report["eval"] or "accuracy = " in report["eval"]
    assert "probabilities" in report["served"] or "label" in report["served"], report["served"]


def test_extract_features_writes_the_tf_hub_pair_and_the_embedding_export_to_remote_paths(inputs, tmp_path):
    checkpoint = {os.path.join(inputs["ckpt"], name): f"ram://in/ckpt/{name}" for name in os.listdir(inputs["ckpt"])}
    copies = {**remote(inputs, "vocab", "config"), **checkpoint}
    argv = [f"--vocab_file={copies[inputs['vocab']]}", f"--bert_config_file={copies[inputs['config']]}",
            "--init_checkpoint=ram://in/ckpt", "--max_seq_length=16", "--pooling=mean", "--layers=-1",
            "--export_tfhub_dir=ram://out/hub", "--export_dir=ram://out/embedding"]
    report = run_remote("extract_features", copies, argv, "ram://out", str(tmp_path))
    files = report["files"]
    for name in ("hub/preprocess/saved_model.pb", "hub/encoder/saved_model.pb", "hub/preprocess/assets/vocab.txt",
                 "embedding/1/saved_model.pb"):
        assert name in files, files
    assert not [f for f in files if ".incomplete-" in f or "/.tmp-" in f]
    hidden = json.load(open(inputs["config"]))["hidden_size"]
    assert report["served"]["pooled_output"] == [1, hidden] and report["served"]["sequence_output"] == [1, 16, hidden]
