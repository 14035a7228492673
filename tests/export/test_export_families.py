"""A RoBERTa checkpoint through run_classifier.py on the shipped era task, and its raw-text export served by core
TensorFlow alone: the run's own predictions. And which ops an XLM-R export needs (tensorflow-text's SentencePiece)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertConfig, BertEncoder
from official_bert.export import export_classifier
from official_bert.text import tokenizer_spec

pytestmark = pytest.mark.slow  # a fine-tuning run, an export and a process that serves it: about a minute

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "families")
ERA_DATA = os.path.join(REPO, "data", "classification")
LABELS = "1790-1860,1861-1945,1946-2021"

SERVE = textwrap.dedent("""
    import json, sys

    class NoTensorflowText:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "tensorflow_text":
                raise ImportError(f"{name} is blocked in this process")

    sys.meta_path.insert(0, NoTensorflowText())
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2
    from tensorflow.python.framework import op_def_registry

    path, texts, out = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
    with open(path + "/saved_model.pb", "rb") as f:
        model = saved_model_pb2.SavedModel.FromString(f.read())
    ops, functions = set(), set()
    for graph in model.meta_graphs:
        ops.update(node.op for node in graph.graph_def.node)
        for function in graph.graph_def.library.function:
            functions.add(function.signature.name)
            ops.update(node.op for node in function.node_def)
    ops -= functions
    outputs = tf.saved_model.load(path).signatures["serving_default"](text_a=tf.constant(texts))
    json.dump({"unregistered": sorted(op for op in ops if op_def_registry.get(op) is None), "ops": sorted(ops),
               "probabilities": outputs["probabilities"].numpy().tolist(),
               "label": [label.decode() for label in outputs["label"].numpy()],
               "project_imported": sorted(m for m in sys.modules if m.startswith("official_bert"))}, open(out, "w"))
""")


def era_subset(directory, train=96, dev=32, test=24):
    """The shipped era task's first rows: train.tsv and dev.tsv (SST-2's layout), test.tsv of dev's sentences."""
    os.makedirs(directory)
    rows = {}
    for split, count in (("train", train), ("dev", dev)):
        with open(os.path.join(ERA_DATA, f"{split}.tsv"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        rows[split] = lines[1:count + 1]
        with open(os.path.join(directory, f"{split}.tsv"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines[:count + 1]) + "\n")
    sentences = [line.split("\t")[0] for line in rows["dev"][:test]]
    with open(os.path.join(directory, "test.tsv"), "w", encoding="utf-8") as f:
        f.write("index\tsentence\n" + "".join(f"{i}\t{s}\n" for i, s in enumerate(sentences)))
    return sentences


def run_tool(script, *flags, cwd):
    env = {**os.environ, "PYTHONPATH": REPO, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run([sys.executable, os.path.join(REPO, script), *flags], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def roberta_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("roberta_era")
    sentences = era_subset(str(work / "data"))
    roberta = os.path.join(FIXTURES, "roberta")
    result = run_tool("run_classifier.py", "--task_name=single", f"--label_list={LABELS}",
                      f"--data_dir={work / 'data'}", f"--bert_config_file={roberta}/config.json",
                      f"--init_checkpoint={roberta}", f"--output_dir={work / 'out'}", f"--export_dir={work / 'export'}",
                      "--do_train", "--do_eval", "--do_predict", "--max_seq_length=32", "--train_batch_size=16",
                      "--learning_rate=3e-3", "--num_train_epochs=2", "--mixed_precision=fp32", cwd=str(work))
    assert result.returncode == 0, result.stderr[-3000:]
    with open(work / "texts.json", "w") as f:
        json.dump(sentences, f)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    served = subprocess.run([sys.executable, "-c", SERVE, str(work / "export" / "1"), str(work / "texts.json"),
                             str(work / "served.json")], cwd=str(work), env={**env, "TF_CPP_MIN_LOG_LEVEL": "2"},
                            capture_output=True, text=True, timeout=600)
    assert served.returncode == 0, served.stderr[-3000:]
    with open(work / "served.json") as f:
        report = json.load(f)
    predictions = np.loadtxt(work / "out" / "test_results.tsv", delimiter="\t")
    return dict(work=work, report=report, predictions=predictions, stderr=result.stderr)


def test_run_classifier_fine_tunes_a_roberta_directory_without_tokenizer_flags(roberta_run):
    out = roberta_run["work"] / "out"
    results = json.load(open(out / "eval_results.json"))
    assert results["global_step"] == 12 and 0 <= results["eval_accuracy"] <= 1
    # The run's directory holds the tokenizer it was trained with, and its config says RoBERTa.
    assert {"vocab.json", "merges.txt", "bert_config.json"} <= set(os.listdir(out))
    assert json.load(open(out / "bert_config.json"))["family"] == "roberta"
    assert roberta_run["predictions"].shape == (24, 3)


def test_the_export_served_by_core_tensorflow_gives_the_runs_predictions(roberta_run):
    report = roberta_run["report"]
    assert report["unregistered"] == [] and report["project_imported"] == []
    # The byte-level BPE is in the graph: its loop, lookups and string ops.
    assert {"While", "LookupTableFindV2", "DecodeRaw", "StringJoin"} <= set(report["ops"])
    served, predictions = np.array(report["probabilities"]), roberta_run["predictions"]
    np.testing.assert_allclose(served, predictions, atol=1e-4, rtol=0)
    # The tiny random encoder answers every text alike to a few 1e-4 (its pooled output hardly varies), so the
    # served answers must also be far closer to the run's than the texts' answers are to one another.
    spread = np.ptp(predictions, axis=0).max()
    assert spread > 1e-4 and np.abs(served - predictions).max() < spread / 100
    labels = LABELS.split(",")
    assert report["label"] == [labels[i] for i in roberta_run["predictions"].argmax(axis=1)]


def test_an_xlm_roberta_export_needs_exactly_tensorflow_texts_sentencepiece_ops(tmp_path):
    """What docs/guides/family.md states: the ops beyond core TensorFlow are SentencepieceOp and
    SentencepieceTokenizeOp, which TF Serving images built with tensorflow-text's ops serve."""
    directory = os.path.join(FIXTURES, "xlm-roberta")
    config = BertConfig.from_json_file(os.path.join(directory, "config.json"))
    spec = tokenizer_spec.for_checkpoint(directory, config)
    path = export_classifier(str(tmp_path), BertClassifier(BertEncoder(config), 3), spec, 32, LABELS.split(","))
    from tensorflow.core.protobuf import saved_model_pb2
    from tensorflow.python.framework import op_def_registry

    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        model = saved_model_pb2.SavedModel.FromString(f.read())
    ops = {node.op for graph in model.meta_graphs for function in graph.graph_def.library.function
           for node in function.node_def} | {node.op for graph in model.meta_graphs for node in graph.graph_def.node}
    import tensorflow_text  # noqa: F401  registers its ops, so that those left unregistered are nobody's

    not_core = {op for op in ops if op.startswith("Sentencepiece")}
    assert not_core == {"SentencepieceOp", "SentencepieceTokenizeOp"}
    assert all(op_def_registry.get(op) is not None for op in not_core)
    served = tf.saved_model.load(path).signatures["serving_default"](text_a=tf.constant(["The Union is strong."]))
    assert served["probabilities"].shape == (1, 3)
