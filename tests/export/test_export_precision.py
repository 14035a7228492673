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


def test_bf16_encoder_agrees_with_fp32_and_stores_its_weights_in_bf16():
    keras.utils.set_random_seed(3)
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100))
    bf16 = model_in_precision(encoder, "bf16")
    assert model_in_precision(encoder, "fp32") is encoder
    assert {block.compute_dtype for block in bf16.transformer_layers} == {"bfloat16"}
    # The weights are stored as bfloat16, each its float32 value rounded to nearest; the layer norms' stay float32.
    for a, b in zip(encoder.weights, bf16.weights, strict=True):
        layer_norm = "layer_norm" in b.path
        assert b.dtype == ("float32" if layer_norm else "bfloat16"), b.path
        rounded = a.numpy() if layer_norm else keras.ops.convert_to_numpy(keras.ops.cast(
            keras.ops.cast(a, "bfloat16"), "float32"))
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(keras.ops.cast(b, "float32")), rounded)
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


def weight_casts(model, inputs):
    """The Cast ops of `model`'s traced inference graph that read a weight (a ReadVariableOp's value)."""
    import tensorflow as tf

    specs = {name: tf.TensorSpec([None, None], tf.int32) for name in inputs}
    graph = tf.function(lambda x: model(x, training=False)).get_concrete_function(specs).graph
    return [op.name for op in graph.get_operations()
            if op.type == "Cast" and op.inputs[0].op.type == "ReadVariableOp"]


def test_the_bf16_inference_graph_casts_no_weight():
    # What the profile of BERT-base bf16 inference found first: the mixed_bfloat16 policy reads every weight as
    # float32 and casts it at every call (296 Casts a call); the bf16 model for inference stores them as bfloat16.
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100))
    classifier = BertClassifier(encoder, num_classes=3)
    x = inputs(np.random.default_rng(2), batch=2)
    assert weight_casts(model_in_precision(classifier, "bf16"), x) == []
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        mixed = BertClassifier.from_config(classifier.get_config())
    finally:
        keras.mixed_precision.set_global_policy("float32")
    # tiny: 2 layers of 4 kernels and 4 biases, the embeddings' 3 tables and the pooler's 2 weights.
    assert len(weight_casts(mixed, x)) >= 2 * 8 + 3 + 2
