"""A left-to-right model keeps its constraint in every tool: `run_pretraining.py --objective=ltr` records it in the
bert_config.json it writes, and run_classifier, run_squad, run_ner (with no extra flag), their exports and the TF
Hub pair all compute causally — changing a later token changes no earlier position's output."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder, load_checkpoint
from official_bert.finetuning import load_trained_weights
from official_bert.finetuning.driver import build_encoder
from official_bert.tasks.classification import ClassificationTask
from tests.cli import test_run_ner, test_run_squad
from tests.finetuning import test_run_classifier
from tests.training.test_run_pretraining import PREDICTIONS, SEQ_LENGTH, write_examples

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.slow  # a pretraining run and four tools: about two minutes on 2 cores
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def tool(name, *argv):
    done = subprocess.run([sys.executable, os.path.join(REPO, name), *map(str, argv)], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES=""))
    assert done.returncode == 0, (name, done.stderr[-3000:])
    return done


def causal_inputs(length, vocab_size, seed=0):
    """Two batches of encoder inputs that differ only from position length // 2 on; returns them and that position."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, vocab_size, size=(1, length)).astype(np.int32)
    changed = ids.copy()
    cut = length // 2
    changed[0, cut:] = rng.integers(5, vocab_size, size=length - cut)
    inputs = [{"input_word_ids": tf.constant(x), "input_mask": tf.ones_like(x), "input_type_ids": tf.zeros_like(x)}
              for x in (ids, changed)]
    return inputs, cut


def assert_causal(outputs, cut):
    """outputs: the same [1, T, ...] output for the two inputs of `causal_inputs`: equal before `cut`, not after."""
    before, after = (np.asarray(o) for o in outputs)
    np.testing.assert_allclose(before[:, :cut], after[:, :cut], atol=1e-5)
    assert not np.allclose(before[:, cut:], after[:, cut:], atol=1e-5)


@pytest.fixture(scope="module")
def ltr(tmp_path_factory):
    """An LTR pretraining run whose vocabulary covers the classifier's, SQuAD's and NER's test data."""
    root = tmp_path_factory.mktemp("ltr")
    vocabs = [test_run_classifier.VOCAB]
    squad = test_run_squad.write_inputs(str(root / "squad"), version_2=False)
    ner = test_run_ner.write_model_files(str(root / "ner"))
    for path in (squad["vocab.txt"], ner["vocab"]):
        with open(path, encoding="utf-8") as f:
            vocabs.append(f.read().split())
    words = sorted({word for vocab in vocabs for word in vocab} - set(SPECIALS))
    vocab = SPECIALS + words + [f"[unused{i}]" for i in range(max(0, 60 - len(SPECIALS) - len(words)))]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=64, type_vocab_size=2).to_json_file(
        str(root / "bert_config.json"))
    write_examples(root / "train.tfrecord", 16)
    tool("run_pretraining.py", f"--input_file={root / 'train.tfrecord'}", f"--output_dir={root / 'run'}",
         f"--bert_config_file={root / 'bert_config.json'}", f"--vocab_file={root / 'vocab.txt'}", "--objective=ltr",
         "--do_train", f"--max_seq_length={SEQ_LENGTH}", f"--max_predictions_per_seq={PREDICTIONS}",
         "--train_batch_size=4", "--num_train_steps=2", "--num_warmup_steps=0", "--save_checkpoints_steps=2")
    run = root / "run"
    return {"run": run, "config": run / "bert_config.json", "vocab": run / "vocab.txt", "squad": squad, "root": root}


def model_flags(ltr):
    # The vocabulary holds NER's cased words (EU, Peter): a cased model, which every tool is told.
    return [f"--bert_config_file={ltr['config']}", f"--vocab_file={ltr['vocab']}", f"--init_checkpoint={ltr['run']}",
            "--do_lower_case=False"]


def test_the_pretraining_run_records_the_constraint(ltr):
    with open(ltr["config"]) as f:
        assert json.load(f)["causal_attention"] is True
    encoder = BertEncoder(BertConfig.from_json_file(str(ltr["config"])))
    load_checkpoint(encoder, str(ltr["run"]))
    inputs, cut = causal_inputs(16, encoder.config.vocab_size)
    assert encoder.causal_attention
    assert_causal([encoder(x)["sequence_output"] for x in inputs], cut)


def test_run_classifier_fine_tunes_and_exports_left_only(ltr, tmp_path):
    test_run_classifier.write_task("mrpc", str(tmp_path / "data"))
    tool("run_classifier.py", "--task_name=mrpc", f"--data_dir={tmp_path / 'data'}", *model_flags(ltr),
         f"--output_dir={tmp_path / 'run'}", "--max_seq_length=16", "--train_batch_size=4", "--do_train",
         "--num_train_epochs=1", f"--export_dir={tmp_path / 'export'}",
         # "auto" is bf16 on a CPU with AVX512_BF16; the comparison below is float32.
         "--mixed_precision=fp32", "--export_precision=fp32")
    config = BertConfig.from_json_file(str(tmp_path / "run" / "bert_config.json"))
    assert config.causal_attention  # recorded again, for whatever loads this fine-tuned model next
    encoder = BertEncoder(config)
    load_checkpoint(encoder, str(tmp_path / "run"))
    inputs, cut = causal_inputs(16, config.vocab_size)
    assert_causal([encoder(x)["sequence_output"] for x in inputs], cut)
    # The export computes as the causal model does, and not as the same weights computed bidirectionally.
    task = ClassificationTask("mrpc", str(tmp_path / "data"))
    models = {causal: task.build_model(build_encoder(config.replace(causal_attention=causal)))
              for causal in (True, False)}
    load_trained_weights(models[True], str(tmp_path / "run"))  # as the tool does before it exports: head included
    models[False].set_weights(models[True].get_weights())  # the same weights bidirectionally (a load refuses them)
    logits = {causal: np.asarray(model(inputs[1])) for causal, model in models.items()}
    served = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serve_tensors"]
    np.testing.assert_allclose(served(**inputs[1])["logits"], logits[True], atol=1e-5)
    assert not np.allclose(logits[True], logits[False], atol=1e-3)


def test_run_squad_fine_tunes_and_exports_left_only(ltr, tmp_path):
    paths = ltr["squad"]
    tool("run_squad.py", *model_flags(ltr), f"--output_dir={tmp_path / 'run'}", f"--train_file={paths['train.json']}",
         f"--predict_file={paths['dev.json']}", "--max_seq_length=40", "--doc_stride=8", "--max_query_length=10",
         "--train_batch_size=4", "--do_train", "--num_train_epochs=1", f"--export_dir={tmp_path / 'export'}")
    assert BertConfig.from_json_file(str(tmp_path / "run" / "bert_config.json")).causal_attention
    served = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serve_tensors"]
    inputs, cut = causal_inputs(40, BertConfig.from_json_file(str(ltr["config"])).vocab_size)
    for name in ("start_logits", "end_logits"):  # a start logit sees no right context, as the paper's LTR row
        assert_causal([served(**x)[name] for x in inputs], cut)


def test_run_ner_fine_tunes_and_exports_left_only(ltr, tmp_path):
    data = os.path.join(REPO, "tests", "fixtures", "ner")
    tool("run_ner.py", f"--data_dir={data}", *model_flags(ltr), f"--output_dir={tmp_path / 'run'}",
         "--max_seq_length=24", "--train_batch_size=8", "--do_train", "--num_train_epochs=1",
         f"--export_dir={tmp_path / 'export'}")
    assert BertConfig.from_json_file(str(tmp_path / "run" / "bert_config.json")).causal_attention
    served = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serve_tensors"]
    inputs, cut = causal_inputs(24, BertConfig.from_json_file(str(ltr["config"])).vocab_size)
    assert_causal([served(**x)["logits"] for x in inputs], cut)


def copy_without_config(ltr, destination):
    """The LTR run's newest checkpoint copied alone, as a user copies the weights and leaves the config behind."""
    prefix = tf.train.latest_checkpoint(str(ltr["run"]))
    os.makedirs(destination)
    for path in tf.io.gfile.glob(prefix + ".*"):
        shutil.copy(path, destination)
    return os.path.join(destination, os.path.basename(prefix))


def test_the_tf_hub_encoder_is_left_only_under_the_pretraining_config_and_a_copied_checkpoint(ltr, tmp_path):
    # The config first given to run_pretraining.py (no "causal_attention" key) and the weights without their config:
    # the marker inside the checkpoint keeps the encoder left-only.
    copy = copy_without_config(ltr, tmp_path / "copy")
    tool("extract_features.py", f"--bert_config_file={ltr['root'] / 'bert_config.json'}",
         f"--vocab_file={ltr['vocab']}", f"--init_checkpoint={copy}", f"--export_tfhub_dir={tmp_path / 'hub'}",
         "--max_seq_length=16")
    encoder = tf.saved_model.load(str(tmp_path / "hub" / "encoder"))
    inputs, cut = causal_inputs(16, BertConfig.from_json_file(str(ltr["config"])).vocab_size)
    assert_causal([encoder(x)["sequence_output"] for x in inputs], cut)


def test_a_flag_that_contradicts_the_config_is_refused(ltr, tmp_path):
    test_run_classifier.write_task("sst-2", str(tmp_path / "data"))
    done = subprocess.run([sys.executable, os.path.join(REPO, "run_classifier.py"), "--task_name=sst-2",
                           f"--data_dir={tmp_path / 'data'}", *model_flags(ltr), f"--output_dir={tmp_path / 'run'}",
                           "--max_seq_length=16", "--do_train", "--nocausal_attention"],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES=""))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"run_classifier: error: --nocausal_attention contradicts {ltr['config']}, which records a left-to-right "
        "model (causal_attention: true): leave the flag out to fine-tune the model as it was pretrained")
    assert not (tmp_path / "run").exists()


def test_fine_tuning_under_the_pretraining_config_from_a_copied_checkpoint_stays_left_only(ltr, tmp_path):
    pretraining_config = ltr["root"] / "bert_config.json"
    assert "causal_attention" not in json.loads(pretraining_config.read_text())
    copy = copy_without_config(ltr, tmp_path / "copy")
    test_run_classifier.write_task("mrpc", str(tmp_path / "data"))
    flags = ["run_classifier.py", "--task_name=mrpc", f"--data_dir={tmp_path / 'data'}",
             f"--bert_config_file={pretraining_config}", f"--vocab_file={ltr['vocab']}", f"--init_checkpoint={copy}",
             f"--output_dir={tmp_path / 'run'}", "--max_seq_length=16", "--train_batch_size=4", "--do_train",
             "--num_train_epochs=1", "--mixed_precision=fp32"]
    # A flag that contradicts the checkpoint's marker is refused before anything is written.
    done = subprocess.run([sys.executable, os.path.join(REPO, flags[0]), *flags[1:], "--nocausal_attention"],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES=""))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"run_classifier: error: --nocausal_attention contradicts the checkpoint {copy}, which records a "
        "left-to-right model (causal_attention: true): leave the flag out to fine-tune the model as it was pretrained")
    assert not (tmp_path / "run").exists()
    tool(*flags)
    # The fine-tuned run records the constraint (config and marker) and its encoder computes left-only.
    config = BertConfig.from_json_file(str(tmp_path / "run" / "bert_config.json"))
    assert config.causal_attention
    encoder = BertEncoder(config)
    load_checkpoint(encoder, copy_without_config({"run": tmp_path / "run"}, tmp_path / "copy2"))
    inputs, cut = causal_inputs(16, config.vocab_size)
    assert_causal([encoder(x)["sequence_output"] for x in inputs], cut)
