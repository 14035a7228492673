"""--export_precision: a bf16 copy of a trained model agrees with its float32 self, and serves float32."""

import keras
import numpy as np
import pytest

from official_bert import BertClassifier, BertConfig, BertEncoder
from official_bert.export.embedding import embedding_model
from official_bert.export.precision import (ExportPrecisionError, float32_outputs, model_in_precision,
                                            resolve_export_precision)


def inputs(rng, batch=16, length=24, vocab=100):
    ids = rng.integers(5, vocab, (batch, length)).astype(np.int32)
    mask = (np.arange(length)[None, :] < rng.integers(6, length + 1, (batch, 1))).astype(np.int32)
    return {"input_word_ids": ids * mask, "input_mask": mask, "input_type_ids": np.zeros_like(ids)}


def test_auto_is_fp32_without_native_bf16_and_bad_values_are_named():
    assert resolve_export_precision("auto", cpu_flags={"avx2", "fma"}, gpu_capabilities=[]) == "fp32"
    assert resolve_export_precision("auto", cpu_flags={"avx512_bf16"}, gpu_capabilities=[]) == "bf16"
    assert resolve_export_precision("auto", cpu_flags=set(), gpu_capabilities=[(7, 5)]) == "fp32"
    with pytest.raises(ExportPrecisionError, match="--export_precision=fp16: expected one of auto, fp32, bf16"):
        resolve_export_precision("fp16")


def test_bf16_encoder_agrees_with_fp32_and_keeps_the_weights():
    keras.utils.set_random_seed(3)
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100))
    bf16 = model_in_precision(encoder, "bf16")
    assert model_in_precision(encoder, "fp32") is encoder
    assert {block.compute_dtype for block in bf16.transformer_layers} == {"bfloat16"}
    for a, b in zip(encoder.weights, bf16.weights):
        assert b.dtype == "float32"
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = inputs(np.random.default_rng(0))
    want = encoder(x)
    got = float32_outputs(bf16(x))
    assert got["sequence_output"].dtype == "float32"
    real = x["input_mask"].astype(bool)
    seq, seq32 = np.asarray(got["sequence_output"])[real], np.asarray(want["sequence_output"])[real]
    # bfloat16 keeps 8 significant bits (relative rounding 2^-9 per op): LayerNorm'd outputs of unit scale
    # agree to a few hundredths, and their direction to much better.
    assert np.abs(seq - seq32).max() < 0.15
    cosine = (seq * seq32).sum(-1) / np.linalg.norm(seq, axis=-1) / np.linalg.norm(seq32, axis=-1)
    assert cosine.min() > 0.995
    assert np.abs(seq - seq32).max() > 0  # it did compute in bf16


def test_bf16_classifier_and_embedding_model_agree_with_fp32():
    keras.utils.set_random_seed(4)
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100))
    classifier = BertClassifier(encoder, num_classes=3)
    x = inputs(np.random.default_rng(1), batch=64)
    want = np.asarray(classifier(x))
    got = np.asarray(float32_outputs(model_in_precision(classifier, "bf16")(x)))
    probabilities = [np.exp(v) / np.exp(v).sum(-1, keepdims=True) for v in (want, got)]
    assert np.abs(probabilities[0] - probabilities[1]).max() < 0.02
    assert (want.argmax(-1) == got.argmax(-1)).mean() >= 0.95
    embedder = embedding_model(encoder)
    want, got = np.asarray(embedder(x)), model_in_precision(embedder, "bf16")(x)
    assert got.dtype == "float32"  # the pooling layer is float32 outside the bf16 encoder
    assert ((want * np.asarray(got)).sum(-1)).min() > 0.995  # unit vectors: cosine


@pytest.mark.slow
def test_bf16_embedding_export_serves_float32_close_to_fp32(tmp_path):
    import tensorflow as tf

    from official_bert.export.embedding import export_embedding
    from official_bert.text.tokenizer_spec import TokenizerSpec

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "big", "small"]) + "\n")
    keras.utils.set_random_seed(5)
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=8, num_hidden_layers=2))
    path = export_embedding(str(tmp_path / "bf16"), model_in_precision(encoder, "bf16"), TokenizerSpec(str(vocab)), 16)
    served = tf.saved_model.load(path).signatures["serving_default"](text=tf.constant(["hello world big"]))["embedding"]
    assert served.dtype == tf.float32
    ids = np.array([[2, 4, 5, 6, 3]], np.int32)  # [CLS] hello world big [SEP]
    want = embedding_model(encoder)({"input_word_ids": ids, "input_mask": np.ones_like(ids),
                                     "input_type_ids": np.zeros_like(ids)})
    cosine = float(np.sum(np.asarray(want) * served.numpy()))
    assert cosine > 0.995 and np.abs(np.asarray(want) - served.numpy()).max() > 0
