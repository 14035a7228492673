"""Every way a BERT checkpoint arrives: Hugging Face files in their variants, training checkpoints, .keras
files, the paths people pass, and the convert_checkpoint CLI."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file, save_file

from official_bert import BertClassifier, BertEncoder, BertPretrainer, BertSpanLabeler
from official_bert.checkpoints import load_checkpoint, save_checkpoint
from official_bert.checkpoints.convert import convert_checkpoint
from tests import numpy_bert
from tests.checkpoints.test_checkpoints import (HEADS, HIDDEN, INTER, LAYERS, POSITIONS, VOCAB, assert_same_weights,
                                    randomized, sample_inputs, tiny_config, weights_of)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hf_named(google_weights, prefix="bert.", layer_norm=("weight", "bias")):
    """The test's own Google → Hugging Face naming, written out from transformers' BertModel layout."""
    gamma, beta = layer_norm
    out = {}
    for name, value in google_weights.items():
        if name.startswith("cls/"):
            continue
        hf = name.replace("bert/", prefix).replace("/", ".")
        for i in range(LAYERS):
            hf = hf.replace(f"layer_{i}.", f"layer.{i}.")
        if name.endswith("_embeddings"):
            hf += ".weight"
        elif name.endswith("/kernel"):
            hf, value = hf[:-len("kernel")] + "weight", value.T  # torch Linear stores [out, in]
        hf = hf.replace("LayerNorm.gamma", f"LayerNorm.{gamma}").replace("LayerNorm.beta", f"LayerNorm.{beta}")
        out[hf] = np.ascontiguousarray(value)
    return out


def write_hf(directory, tensors, config):
    directory.mkdir(exist_ok=True)
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})
    values = dict(model_type="bert", hidden_act="gelu", layer_norm_eps=1e-12, **{
        k: getattr(config, k) for k in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                                        "intermediate_size", "max_position_embeddings", "type_vocab_size")})
    (directory / "config.json").write_text(json.dumps(values))
    return directory


@pytest.mark.parametrize("prefix,layer_norm", [("bert.", ("weight", "bias")), ("", ("weight", "bias")),
                                               ("bert.", ("gamma", "beta"))])
def test_hugging_face_variants_match_numpy_reference(tmp_path, prefix, layer_norm):
    rng = np.random.default_rng(4)
    weights = numpy_bert.random_weights(rng, VOCAB, HIDDEN, LAYERS, INTER, max_positions=POSITIONS)
    tensors = hf_named(weights, prefix, layer_norm)
    tensors["classifier.weight"] = rng.standard_normal((3, HIDDEN)).astype(np.float32)
    tensors["classifier.bias"] = rng.standard_normal(3).astype(np.float32)
    tensors[prefix + "embeddings.position_ids"] = np.arange(POSITIONS, dtype=np.int64)[None]  # a buffer
    write_hf(tmp_path / "hf", tensors, tiny_config(hidden_act="gelu_erf"))

    model = BertClassifier(BertEncoder(tiny_config(hidden_act="gelu_erf")), num_classes=3)
    report = load_checkpoint(model, str(tmp_path / "hf"))
    assert (report.missing, report.unexpected) == ([], [])
    batch = sample_inputs(rng)
    layers, pooled = numpy_bert.encoder_forward(
        weights, batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"], HEADS, False)
    out = model.encoder(batch, training=False)
    np.testing.assert_allclose(out["sequence_output"].numpy(), layers[-1], atol=1e-5, rtol=0)
    expected = pooled @ tensors["classifier.weight"].T + tensors["classifier.bias"]
    np.testing.assert_allclose(model(batch, training=False).numpy(), expected, atol=1e-5, rtol=0)


def test_hugging_face_without_pooler_and_with_qa_head(tmp_path):
    rng = np.random.default_rng(5)
    weights = numpy_bert.random_weights(rng, VOCAB, HIDDEN, LAYERS, INTER, max_positions=POSITIONS)
    tensors = {k: v for k, v in hf_named(weights).items() if "pooler" not in k}
    tensors["qa_outputs.weight"] = rng.standard_normal((2, HIDDEN)).astype(np.float32)
    tensors["qa_outputs.bias"] = rng.standard_normal(2).astype(np.float32)
    write_hf(tmp_path / "hf", tensors, tiny_config(hidden_act="gelu_erf"))
    model = BertSpanLabeler(BertEncoder(tiny_config(hidden_act="gelu_erf")))
    pooler_before = model.encoder.pooler.kernel.numpy()
    # A bare .safetensors file is accepted as well as its directory.
    report = load_checkpoint(model, str(tmp_path / "hf" / "model.safetensors"))
    assert report.missing == ["pooler/kernel", "pooler/bias"]
    np.testing.assert_array_equal(model.encoder.pooler.kernel.numpy(), pooler_before)
    batch = sample_inputs(rng)
    layers, _ = numpy_bert.encoder_forward(
        weights, batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"], HEADS, False)
    expected = layers[-1] @ tensors["qa_outputs.weight"].T + tensors["qa_outputs.bias"]
    out = model(batch, training=False)
    np.testing.assert_allclose(out["start_logits"].numpy(), expected[..., 0], atol=1e-5, rtol=0)
    np.testing.assert_allclose(out["end_logits"].numpy(), expected[..., 1], atol=1e-5, rtol=0)


def test_hugging_face_export_names(tmp_path):
    """An encoder is written like BertModel (no prefix), a pretrainer like BertForPreTraining."""
    save_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "enc"), "huggingface")
    save_checkpoint(BertPretrainer(BertEncoder(tiny_config())), str(tmp_path / "pre"), "huggingface")
    enc = load_file(str(tmp_path / "enc" / "model.safetensors"))
    pre = load_file(str(tmp_path / "pre" / "model.safetensors"))
    assert enc["encoder.layer.1.intermediate.dense.weight"].shape == (INTER, HIDDEN)
    assert pre["bert.encoder.layer.1.attention.self.value.weight"].shape == (HIDDEN, HIDDEN)
    assert pre["cls.seq_relationship.weight"].shape == (2, HIDDEN)
    assert pre["cls.predictions.bias"].shape == (VOCAB,)


def test_training_checkpoint_with_optimizer_state(tmp_path):
    """What run_pretraining writes: CheckpointManager over tf.train.Checkpoint(model=..., optimizer=...)."""
    pretrainer = randomized(BertPretrainer(BertEncoder(tiny_config())), seed=11)
    pretrainer.compile(optimizer=keras.optimizers.Adam(), jit_compile=False)  # the model now links its optimizer
    pretrainer.optimizer.build(pretrainer.trainable_variables)
    checkpoint = tf.train.Checkpoint(model=pretrainer, optimizer=pretrainer.optimizer)
    manager = tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=2)
    manager.save()
    for variable in pretrainer.weights:  # a later step: the directory must resolve to the latest
        variable.assign(variable.numpy() + 1)
    latest = manager.save()

    restored = BertPretrainer(BertEncoder(tiny_config()))
    report = load_checkpoint(restored, str(tmp_path))
    assert report.path == latest and report.format == "official_bert"
    assert (report.missing, report.unexpected) == ([], [])
    assert any(name.startswith("optimizer/") for name in report.skipped)
    assert_same_weights(pretrainer, restored)

    classifier = BertClassifier(BertEncoder(tiny_config()), num_classes=2)
    report = load_checkpoint(classifier, latest + ".index")
    assert report.missing == ["classifier/kernel", "classifier/bias"]
    assert "next_sentence/kernel" in report.unexpected
    assert_same_weights(pretrainer.encoder, classifier.encoder)


def test_keras_model_file(tmp_path):
    original = randomized(BertPretrainer(BertEncoder(tiny_config())), seed=12)
    original.save(str(tmp_path / "pretrainer.keras"))
    encoder = BertEncoder(tiny_config())
    report = load_checkpoint(encoder, str(tmp_path / "pretrainer.keras"))
    assert report.format == "keras" and report.missing == []
    assert_same_weights(original.encoder, encoder)


def test_convert_keeps_every_head(tmp_path):
    classifier = randomized(BertClassifier(BertEncoder(tiny_config()), num_classes=4), seed=13)
    save_checkpoint(classifier, str(tmp_path / "ours"), "official_bert")
    convert_checkpoint(str(tmp_path / "ours"), str(tmp_path / "google"), "google")
    convert_checkpoint(str(tmp_path / "google"), str(tmp_path / "hf"), "huggingface")
    restored = BertClassifier(BertEncoder(tiny_config()), num_classes=4)
    assert load_checkpoint(restored, str(tmp_path / "hf")).missing == []
    assert_same_weights(classifier, restored)


def test_a_google_checkpoint_of_an_erf_gelu_model_says_the_original_cannot_compute_it(tmp_path, caplog):
    encoder = BertEncoder(tiny_config(hidden_act="gelu_erf"))
    with caplog.at_level("WARNING"):
        save_checkpoint(encoder, str(tmp_path / "erf"), "google")
    assert "rejects hidden_act \"gelu_erf\"" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        save_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "tanh"), "google")
    assert "gelu_erf" not in caplog.text
    # Read back exactly, erf GELU included.
    assert json.loads((tmp_path / "erf" / "bert_config.json").read_text())["hidden_act"] == "gelu_erf"


def run_cli(*args):
    return subprocess.run([sys.executable, os.path.join(REPO, "convert_checkpoint.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO, "TF_CPP_MIN_LOG_LEVEL": "3"})


@pytest.mark.slow
def test_convert_cli(tmp_path):
    pretrainer = randomized(BertPretrainer(BertEncoder(tiny_config())), seed=14)
    save_checkpoint(pretrainer, str(tmp_path / "in"), "google")
    (tmp_path / "in" / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    done = run_cli(f"--input_path={tmp_path / 'in'}", f"--output_path={tmp_path / 'out'}",
                   "--output_format=huggingface")
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["config.json", "model.safetensors", "vocab.txt"]
    restored = BertPretrainer(BertEncoder(tiny_config()))
    load_checkpoint(restored, str(tmp_path / "out"))
    assert weights_of(restored).keys() == weights_of(pretrainer).keys()
    assert_same_weights(pretrainer, restored)

    failed = run_cli(f"--input_path={tmp_path / 'nowhere'}", f"--output_path={tmp_path / 'out2'}")
    assert failed.returncode != 0
    assert f"{tmp_path / 'nowhere'}: no checkpoint there" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not (tmp_path / "out2").exists()
