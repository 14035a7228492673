"""The encoder, heads and task models against the independent NumPy reference and the paper's rules."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import (BertClassifier, BertConfig, BertEncoder, BertMultipleChoice, BertPretrainer,
                           BertSpanLabeler, BertTokenClassifier, ConfigError)
from official_bert.models import pretraining_losses as losses
from official_bert.training.step_functions import install_step_functions
from tests import numpy_bert

VOCAB, HIDDEN, LAYERS, HEADS, INTER, POSITIONS = 50, 16, 2, 4, 32, 64


def tiny_config(**overrides):
    values = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  intermediate_size=INTER, max_position_embeddings=POSITIONS, type_vocab_size=2)
    values.update(overrides)
    return BertConfig(**values)


def assign_google_weights(pretrainer, w):
    """Copies Google-named arrays into our variables (the test's own mapping, independent of the converters)."""
    encoder = pretrainer.encoder
    emb = encoder.embeddings
    emb.word_embeddings.assign(w["bert/embeddings/word_embeddings"])
    emb.token_type_embeddings.assign(w["bert/embeddings/token_type_embeddings"])
    emb.position_embeddings.assign(w["bert/embeddings/position_embeddings"])
    emb.layer_norm.set_weights([w["bert/embeddings/LayerNorm/gamma"], w["bert/embeddings/LayerNorm/beta"]])
    for i, block in enumerate(encoder.transformer_layers):
        p = f"bert/encoder/layer_{i}/"
        att = block.attention
        att.qkv_kernel.assign(np.concatenate(
            [w[p + f"attention/self/{n}/kernel"] for n in ("query", "key", "value")], axis=1))
        att.qkv_bias.assign(np.concatenate([w[p + f"attention/self/{n}/bias"] for n in ("query", "key", "value")]))
        att.output_kernel.assign(w[p + "attention/output/dense/kernel"])
        att.output_bias.assign(w[p + "attention/output/dense/bias"])
        block.attention_layer_norm.set_weights(
            [w[p + "attention/output/LayerNorm/gamma"], w[p + "attention/output/LayerNorm/beta"]])
        block.intermediate.set_weights([w[p + "intermediate/dense/kernel"], w[p + "intermediate/dense/bias"]])
        block.output_dense.set_weights([w[p + "output/dense/kernel"], w[p + "output/dense/bias"]])
        block.output_layer_norm.set_weights([w[p + "output/LayerNorm/gamma"], w[p + "output/LayerNorm/beta"]])
    encoder.pooler.set_weights([w["bert/pooler/dense/kernel"], w["bert/pooler/dense/bias"]])
    head = pretrainer.masked_lm
    head.dense.set_weights([w["cls/predictions/transform/dense/kernel"], w["cls/predictions/transform/dense/bias"]])
    head.layer_norm.set_weights([w["cls/predictions/transform/LayerNorm/gamma"],
                                 w["cls/predictions/transform/LayerNorm/beta"]])
    head.output_bias.assign(w["cls/predictions/output_bias"])
    if any(layer.name == "next_sentence" for layer in pretrainer.layers):
        pretrainer.get_layer("next_sentence").set_weights(
            [w["cls/seq_relationship/output_weights"].T, w["cls/seq_relationship/output_bias"]])


def sample_batch(rng, batch=3, length=12):
    ids = rng.integers(5, VOCAB, size=(batch, length))
    ids[:, 0] = 2
    lengths = [length, length - 4, 5][:batch]
    mask = np.zeros((batch, length), np.int32)
    segments = np.zeros((batch, length), np.int32)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
        segments[b, n // 2:n] = 1  # two segments, then padding
        ids[b, n:] = 0
    return {"input_word_ids": ids.astype(np.int32), "input_mask": mask, "input_type_ids": segments}


@pytest.mark.parametrize("hidden_act,approximate", [("gelu", True), ("gelu_erf", False)])
def test_encoder_and_heads_match_numpy_reference(hidden_act, approximate):
    rng = np.random.default_rng(0)
    w = numpy_bert.random_weights(rng, VOCAB, HIDDEN, LAYERS, INTER, max_positions=POSITIONS)
    model = BertPretrainer(BertEncoder(tiny_config(hidden_act=hidden_act)))
    assign_google_weights(model, w)
    batch = sample_batch(rng)
    positions = np.array([[1, 3, 5], [2, 4, 6], [1, 2, 3]], np.int32)

    ref_layers, ref_pooled = numpy_bert.encoder_forward(
        w, batch["input_word_ids"], batch["input_mask"], batch["input_type_ids"], HEADS, approximate)
    out = model.encoder(batch, training=False)
    assert len(out["encoder_outputs"]) == LAYERS
    for ours, ref in zip(out["encoder_outputs"], ref_layers):
        np.testing.assert_allclose(ours.numpy(), ref, atol=1e-5, rtol=0)
    np.testing.assert_allclose(out["sequence_output"].numpy(), ref_layers[-1], atol=1e-5, rtol=0)
    np.testing.assert_allclose(out["pooled_output"].numpy(), ref_pooled, atol=1e-5, rtol=0)

    ref_mlm, ref_nsp = numpy_bert.pretraining_heads(w, ref_layers[-1], ref_pooled, positions, approximate)
    heads = model({**batch, "masked_lm_positions": positions}, training=False)
    np.testing.assert_allclose(heads["mlm_logits"].numpy(), ref_mlm, atol=1e-4, rtol=1e-5)
    np.testing.assert_allclose(heads["nsp_logits"].numpy(), ref_nsp, atol=1e-5, rtol=0)


def test_gelu_forms_differ():
    """The two GELU forms must really be different functions (else the test above proves nothing)."""
    x = np.linspace(-4, 4, 101)
    assert np.abs(numpy_bert.gelu(x, True) - numpy_bert.gelu(x, False)).max() > 1e-4


def test_padding_does_not_change_real_positions():
    encoder = BertEncoder(tiny_config())
    rng = np.random.default_rng(1)
    batch = sample_batch(rng, batch=1, length=8)
    padded = {k: np.pad(v, ((0, 0), (0, 7))) for k, v in batch.items()}
    padded["input_word_ids"][:, 8:] = rng.integers(0, VOCAB, size=(1, 7))  # garbage under the mask
    short = encoder(batch)["sequence_output"].numpy()
    long = encoder(padded)["sequence_output"].numpy()
    np.testing.assert_allclose(long[:, :8], short, atol=1e-5)


def test_int64_inputs_and_length_limit():
    encoder = BertEncoder(tiny_config())
    batch = {k: v.astype(np.int64) for k, v in sample_batch(np.random.default_rng(2)).items()}
    assert encoder(batch)["sequence_output"].shape == (3, 12, HIDDEN)
    too_long = {k: np.zeros((1, POSITIONS + 1), np.int32) for k in batch}
    with pytest.raises(ValueError, match="max_position_embeddings"):
        encoder(too_long)


def test_dropout_only_when_training():
    encoder = BertEncoder(tiny_config(hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3))
    batch = sample_batch(np.random.default_rng(3))
    a = encoder(batch, training=False)["sequence_output"].numpy()
    b = encoder(batch, training=False)["sequence_output"].numpy()
    c = encoder(batch, training=True)["sequence_output"].numpy()
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - c).max() > 1e-3


def test_masked_lm_loss_ignores_zero_weight_positions():
    logits = np.log(np.array([[[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]]], np.float32))
    labels = np.array([[0, 2, 1]])
    weights = np.array([[1.0, 1.0, 0.0]], np.float32)
    expected = -(np.log(0.7) + np.log(0.8)) / (2 + 1e-5)  # the third position does not count
    assert float(losses.masked_lm_loss(labels, logits, weights)) == pytest.approx(expected, rel=1e-5)
    nsp_logits = np.log(np.array([[0.9, 0.1], [0.25, 0.75]], np.float32))
    expected_nsp = -(np.log(0.9) + np.log(0.25)) / 2
    assert float(losses.next_sentence_loss(np.array([[0], [0]]), nsp_logits)) == pytest.approx(expected_nsp, 1e-5)
    assert float(losses.next_sentence_accuracy(np.array([[0], [0]]), nsp_logits)) == pytest.approx(0.5)


def test_base_preset_parameter_count_matches_released_bert_base():
    assert BertEncoder(BertConfig.from_preset("base")).count_params() == 109_482_240


def _task_models():
    yield "pretrainer", BertPretrainer(BertEncoder(tiny_config())), True
    yield "pretrainer_no_nsp", BertPretrainer(BertEncoder(tiny_config()), use_nsp=False), True
    yield "classifier", BertClassifier(BertEncoder(tiny_config()), num_classes=3), False
    yield "regression", BertClassifier(BertEncoder(tiny_config()), num_classes=1), False
    yield "feature_based", BertClassifier(BertEncoder(tiny_config()), num_classes=3, feature_layers=2), False
    yield "causal", BertClassifier(BertEncoder(tiny_config(), causal_attention=True), num_classes=3), False
    yield "span", BertSpanLabeler(BertEncoder(tiny_config())), False
    yield "token", BertTokenClassifier(BertEncoder(tiny_config()), num_classes=5), False


def test_keras_file_round_trip_gives_identical_outputs(tmp_path):
    batch = sample_batch(np.random.default_rng(4))
    for name, model, needs_positions in _task_models():
        inputs = dict(batch)
        if needs_positions:
            inputs["masked_lm_positions"] = np.array([[1, 2], [3, 4], [1, 1]], np.int32)
        before = model(inputs)
        path = str(tmp_path / f"{name}.keras")
        model.save(path)
        after = keras.models.load_model(path)(inputs)
        for a, b in zip(tf.nest.flatten(before), tf.nest.flatten(after)):
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    # Multiple choice folds [B, C, T] → [B·C, T].
    model = BertMultipleChoice(BertEncoder(tiny_config()), num_choices=2)
    choices = {k: np.stack([v, v[::-1]], axis=1) for k, v in batch.items()}
    path = str(tmp_path / "mc.keras")
    model.save(path)
    np.testing.assert_array_equal(model(choices).numpy(), keras.models.load_model(path)(choices).numpy())


def test_multiple_choice_scores_each_choice_with_the_encoder():
    encoder = BertEncoder(tiny_config())
    model = BertMultipleChoice(encoder, num_choices=2, dropout_rate=0.0)
    batch = sample_batch(np.random.default_rng(5), batch=2)
    choices = {k: np.stack([v, v[::-1]], axis=1) for k, v in batch.items()}
    logits = model(choices).numpy()
    dense = model.get_layer("classifier")
    for c in range(2):
        pooled = encoder({k: v[:, c] for k, v in choices.items()})["pooled_output"]
        np.testing.assert_allclose(logits[:, c], dense(pooled).numpy()[:, 0], atol=1e-5)


def test_feature_based_classifier_trains_a_head_on_the_frozen_last_layers():
    """Paper Table 7's feature-based approach: the concatenated last layers, averaged over real tokens, feed
    the only trained layer."""
    keras.utils.set_random_seed(9)
    encoder = BertEncoder(tiny_config())
    model = BertClassifier(encoder, num_classes=2, dropout_rate=0.0, feature_layers=2)
    batch = sample_batch(np.random.default_rng(10))
    layers = [o.numpy() for o in encoder(batch, training=False)["encoder_outputs"]]
    mask = batch["input_mask"][..., None].astype(np.float64)
    features = (np.concatenate(layers[-2:], axis=-1) * mask).sum(1) / mask.sum(1)
    kernel, bias = model.get_layer("classifier").get_weights()
    np.testing.assert_allclose(model(batch).numpy(), features @ kernel + bias, atol=1e-5)
    assert [w.path for w in model.trainable_weights] == ["classifier/kernel", "classifier/bias"]
    before = [w.numpy().copy() for w in encoder.weights]
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(batch, np.array([0, 1, 1]), epochs=3, verbose=0)
    assert not np.array_equal(kernel, model.get_layer("classifier").get_weights()[0])
    for a, w in zip(before, encoder.weights):
        np.testing.assert_array_equal(a, w.numpy(), err_msg=w.path)
    with pytest.raises(ConfigError, match="feature_layers=3"):
        BertClassifier(BertEncoder(tiny_config()), num_classes=2, feature_layers=3)


@pytest.mark.slow
def test_encoder_trains_inside_a_users_functional_model():
    encoder = BertEncoder(tiny_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    inputs = {k: keras.Input(shape=(None,), dtype="int32", name=k)
              for k in ("input_word_ids", "input_mask", "input_type_ids")}
    layers = encoder(inputs)["encoder_outputs"]
    x = keras.layers.Concatenate()([layers[-1], layers[-2]])  # a user's feature choice: the last two layers
    x = keras.layers.GlobalAveragePooling1D()(x)
    model = keras.Model(inputs, keras.layers.Dense(1)(x))
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", jit_compile=False)
    batch = sample_batch(np.random.default_rng(6))
    y = np.array([[1.0], [-1.0], [0.5]], np.float32)
    first = model.evaluate(batch, y, verbose=0)
    before = encoder.embeddings.word_embeddings.numpy().copy()
    model.fit(batch, y, epochs=20, verbose=0)
    assert model.evaluate(batch, y, verbose=0) < first / 2
    assert not np.array_equal(before, encoder.embeddings.word_embeddings.numpy())


def pretraining_data(rng, batch=4, length=12, predictions=3):
    x = sample_batch(rng, batch=3, length=length)
    x = {k: np.concatenate([v, v[:1]])[:batch] for k, v in x.items()}
    x["masked_lm_positions"] = rng.integers(1, 5, size=(batch, predictions)).astype(np.int32)
    y = {"masked_lm_ids": rng.integers(5, VOCAB, size=(batch, predictions)).astype(np.int32),
         "masked_lm_weights": np.ones((batch, predictions), np.float32),
         "next_sentence_labels": rng.integers(0, 2, size=(batch, 1)).astype(np.int32)}
    y["masked_lm_weights"][:, -1] = 0.0
    return x, y


@pytest.mark.slow
@pytest.mark.parametrize("jit_compile", [False, True])
def test_pretrainer_fits_and_reports_the_original_metrics(jit_compile):
    keras.utils.set_random_seed(0)
    model = BertPretrainer(BertEncoder(tiny_config()))
    model.compile(optimizer=keras.optimizers.Adam(3e-3), jit_compile=jit_compile)
    x, y = pretraining_data(np.random.default_rng(7))
    history = model.fit(x, y, epochs=30, verbose=0).history
    for name in ("loss", "masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy", "next_sentence_loss"):
        assert name in history, name
    assert history["loss"][-1] < history["loss"][0] * 0.5
    np.testing.assert_allclose(history["loss"], np.array(history["masked_lm_loss"])
                               + np.array(history["next_sentence_loss"]), rtol=1e-4)


def test_evaluation_pools_masked_lm_metrics_over_every_real_position():
    """As the original's tf.metrics with weights=masked_lm_weights: a batch of 1 real prediction and one of 11
    weigh 1:11, not 1:1 as a mean of the two batch means would."""
    keras.utils.set_random_seed(2)
    model = BertPretrainer(BertEncoder(tiny_config()))
    model.compile(optimizer="sgd")
    install_step_functions(model, tf.distribute.get_strategy(), steps_per_execution=2)
    rng = np.random.default_rng(8)
    batches = []
    for real, right in ((1, 1), (11, 3)):  # real predictions, of which the model gets `right` right
        x, y = pretraining_data(rng, batch=4, predictions=3)
        y["masked_lm_weights"] = (np.arange(12) < real).reshape(4, 3).astype(np.float32)
        guesses = model(x)["mlm_logits"].numpy().argmax(-1).reshape(-1)
        ids = y["masked_lm_ids"].reshape(-1)
        ids[:right] = guesses[:right]
        ids[right:] = np.where(ids[right:] == guesses[right:], (ids[right:] + 1) % VOCAB, ids[right:])
        batches.append((x, y))
    correct = losses_sum = count = 0.0
    for x, y in batches:
        logits = model(x)["mlm_logits"].numpy().astype(np.float64)
        log_probs = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
            - logits.max(-1, keepdims=True)
        ids, weights = y["masked_lm_ids"], y["masked_lm_weights"]
        correct += ((logits.argmax(-1) == ids) * weights).sum()
        losses_sum += (-np.take_along_axis(log_probs, ids[..., None], -1)[..., 0] * weights).sum()
        count += weights.sum()
    per_batch_means = [float(losses.masked_lm_loss(y["masked_lm_ids"], model(x)["mlm_logits"],
                                                   y["masked_lm_weights"])) for x, y in batches]
    dataset = tf.data.Dataset.from_tensor_slices(tuple(
        {k: np.stack([b[i][k] for b in batches]) for k in batches[0][i]} for i in (0, 1)))
    results = model.evaluate(dataset, steps=2, verbose=0, return_dict=True)
    assert results["masked_lm_loss"] == pytest.approx(losses_sum / count, rel=1e-5)
    assert correct == 4 and count == 12
    assert results["masked_lm_accuracy"] == pytest.approx(4 / 12, abs=1e-6)  # not (1/1 + 3/11) / 2
    assert abs(results["masked_lm_loss"] - np.mean(per_batch_means)) > 1e-3  # the two ways differ here


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_keeps_layer_norm_softmax_and_losses_in_float32(policy, monkeypatch):
    model = BertPretrainer(BertEncoder(tiny_config(), dtype=policy))
    x, y = pretraining_data(np.random.default_rng(8))
    out = model(x)
    compute = keras.dtype_policies.get(policy).compute_dtype
    encoder_inputs = {k: x[k] for k in ("input_word_ids", "input_mask", "input_type_ids")}
    assert model.encoder(encoder_inputs)["sequence_output"].dtype == compute
    assert out["mlm_logits"].dtype == "float32" and out["nsp_logits"].dtype == "float32"
    block = model.encoder.transformer_layers[0]
    assert block.intermediate.compute_dtype == compute
    assert block.intermediate.kernel.dtype == "float32"  # variables stay float32
    for ln in (block.attention_layer_norm, block.output_layer_norm, model.encoder.embeddings.layer_norm):
        assert ln.compute_dtype == "float32"
    assert model.encoder.embeddings.word_embeddings.dtype == "float32"
    loss = model.compute_loss(x, y, out)
    assert loss.dtype == "float32" and np.isfinite(float(loss))
    # Softmax in float32: the attention scores reach softmax as float32 whatever the compute dtype.
    att = block.attention
    hidden = model.encoder.embeddings(x["input_word_ids"], x["input_type_ids"])
    bias = np.where(x["input_mask"][:, None, None, :] > 0, 0.0, -10000.0).astype(np.float32)
    softmax, seen = keras.ops.softmax, []

    def recording_softmax(scores, *args, **kwargs):
        seen.append(keras.backend.standardize_dtype(scores.dtype))
        return softmax(scores, *args, **kwargs)

    monkeypatch.setattr(keras.ops, "softmax", recording_softmax)
    assert att(hidden, bias).dtype == compute
    assert seen == ["float32"]


def test_config_json_round_trip_and_hugging_face_names(tmp_path):
    config = BertConfig.from_preset("mini", vocab_size=1234)
    path = tmp_path / "bert_config.json"
    config.to_json_file(path)
    assert BertConfig.from_json_file(path) == config
    assert json.loads(path.read_text())["hidden_act"] == "gelu"
    hf = {"model_type": "bert", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
          "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "gelu", "layer_norm_eps": 1e-7,
          "max_position_embeddings": 32, "type_vocab_size": 2, "architectures": ["BertModel"],
          "pad_token_id": 0, "initializer_range": 0.02, "hidden_dropout_prob": 0.1,
          "attention_probs_dropout_prob": 0.1}
    (tmp_path / "config.json").write_text(json.dumps(hf))
    loaded = BertConfig.from_json_file(tmp_path / "config.json")
    assert loaded.hidden_act == "gelu_erf" and loaded.layer_norm_eps == 1e-7
    for hf_act in ("gelu_new", "gelu_pytorch_tanh"):
        (tmp_path / "config.json").write_text(json.dumps({**hf, "hidden_act": hf_act}))
        assert BertConfig.from_json_file(tmp_path / "config.json").hidden_act == "gelu_tanh"


@pytest.mark.parametrize("changes,message", [
    (dict(hidden_size=10, num_attention_heads=3), "divisible by num_attention_heads"),
    (dict(num_hidden_layers=0), "num_hidden_layers must be a positive integer"),
    (dict(vocab_size=-5), "vocab_size must be a positive integer"),
    (dict(hidden_act="gelu_fancy"), "hidden_act 'gelu_fancy' is not supported"),
])
def test_config_validation_messages(changes, message):
    with pytest.raises(ValueError, match=message):
        tiny_config(**changes)


def test_config_file_errors_name_the_file(tmp_path):
    with pytest.raises(ValueError, match="missing.json: BERT config file not found"):
        BertConfig.from_json_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"vocab_size": 10, "hidden_sise": 8}')
    with pytest.raises(ValueError, match=r"bad.json: unknown BERT config keys \['hidden_sise'\]"):
        BertConfig.from_json_file(bad)
    with pytest.raises(ValueError, match="unknown BERT preset 'huge'"):
        BertConfig.from_preset("huge")


def test_presets_have_the_released_shapes():
    expected = {"tiny": (2, 128, 2, 512), "mini": (4, 256, 4, 1024), "small": (4, 512, 8, 2048),
                "medium": (8, 512, 8, 2048), "base": (12, 768, 12, 3072), "large": (24, 1024, 16, 4096)}
    for name, shape in expected.items():
        c = BertConfig.from_preset(name)
        assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.intermediate_size) == shape
        assert c.vocab_size == 30522 and c.type_vocab_size == 2


def test_masked_outputs_equal_gathering_the_full_sequence_output():
    encoder = BertEncoder(tiny_config())
    batch = sample_batch(np.random.default_rng(9))
    positions = np.array([[0, 3, 11], [2, 2, 7], [4, 1, 0]], np.int32)
    full = encoder(batch)
    masked, pooled = encoder.masked_outputs(batch, positions)
    np.testing.assert_allclose(masked.numpy(), np.take_along_axis(
        full["sequence_output"].numpy(), positions[:, :, None], axis=1), atol=1e-5)
    np.testing.assert_allclose(pooled.numpy(), full["pooled_output"].numpy(), atol=1e-6)
