"""official_bert's Dropout: 16-bit draws with the keep probability its docstring states, kept elements scaled by
1 / keep in the compute dtype, the identity outside training, Keras's seeding, no float uniform draw in the
encoder's training graph, and the gradients of autodiff from the bool masks it holds (the attention's fused with
the weighted sum of values)."""

import keras
import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder
from official_bert.layers import Dropout
from official_bert.layers.attention import dropped_context

# rate 0.1: k = round(0.1 · 65536) = round(6553.6) = 6554 of the 65536 values of a 16-bit draw drop an element.
KEEP = (65536 - 6554) / 65536  # 0.899993896484375


def test_keep_rate_is_one_minus_k_over_65536():
    n = 1000 * 1000
    kept = Dropout(0.1, seed=11)(np.ones((1000, 1000), np.float32), training=True).numpy().ravel() != 0
    sigma = np.sqrt(KEEP * (1 - KEEP) / n)
    assert abs(kept.mean() - KEEP) < 4 * sigma
    # Both halves of each 32-bit draw are used, each as an independent draw: even and odd positions keep at the
    # same rate, and a pair of neighbours is dropped together as often as two independent elements are.
    for half in (kept[0::2], kept[1::2]):
        assert abs(half.mean() - KEEP) < 4 * sigma * np.sqrt(2)
    both_dropped = (~kept[0::2] & ~kept[1::2]).mean()
    assert abs(both_dropped - (1 - KEEP) ** 2) < 4 * np.sqrt((1 - KEEP) ** 2 / (n / 2))


def test_kept_elements_are_scaled_by_one_over_keep_in_float32():
    x = np.random.default_rng(0).normal(size=(64, 257)).astype(np.float32)  # an odd size: the last draw half-used
    out = Dropout(0.1, seed=3)(x, training=True).numpy()
    kept = out != 0
    assert 0.85 < kept.mean() < 0.95
    np.testing.assert_array_equal(out[kept], x[kept] * np.float32(1 / KEEP))


def test_bfloat16_in_bfloat16_out_scaled_by_the_rounded_ratio():
    x = tf.cast(np.random.default_rng(1).normal(size=(32, 100)), tf.bfloat16)
    out = Dropout(0.1, seed=5, dtype="mixed_bfloat16")(x, training=True)
    assert out.dtype == tf.bfloat16
    x, out = x.numpy(), out.numpy()
    kept = out != 0
    assert 0.85 < kept.mean() < 0.95
    # 1 / 0.899994 = 1.1111186 is 1.109375 in bfloat16 (8 bits: 1 + 14/128); the bfloat16 product is rounded once.
    assert float(ml_dtypes.bfloat16(1 / KEEP)) == 1.109375
    expected = (x[kept].astype(np.float32) * np.float32(1.109375)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out[kept], expected)


@pytest.mark.parametrize("training", [False, None])
def test_identity_outside_training(training):
    x = np.random.default_rng(2).normal(size=(4, 7)).astype(np.float32)
    np.testing.assert_array_equal(Dropout(0.5, seed=1)(x, training=training).numpy(), x)


def test_rate_rounded_to_no_dropout_and_rate_one():
    x = np.random.default_rng(3).normal(size=(4, 7)).astype(np.float32)
    np.testing.assert_array_equal(Dropout(0.4 / 65536, seed=1)(x, training=True).numpy(), x)  # k = round(0.4) = 0
    np.testing.assert_array_equal(Dropout(1.0, seed=1)(x, training=True).numpy(), np.zeros_like(x))


def test_noise_shape_broadcasts_one_mask_over_an_axis():
    out = Dropout(0.5, noise_shape=(None, 1, 8), seed=2)(np.ones((3, 5, 8), np.float32), training=True).numpy()
    assert set(np.unique(out)) == {0.0, 2.0}
    np.testing.assert_array_equal(out, np.broadcast_to(out[:, :1], out.shape))


def test_masks_follow_keras_seeding():
    x = np.ones((16, 16), np.float32)
    keras.utils.set_random_seed(4)
    first = Dropout(0.5)
    keras.utils.set_random_seed(4)
    again = Dropout(0.5)
    a1, a2 = first(x, training=True).numpy(), first(x, training=True).numpy()
    np.testing.assert_array_equal(again(x, training=True).numpy(), a1)  # same global seed, same stream
    assert (a1 != a2).any()  # each call draws a new mask
    np.testing.assert_array_equal(Dropout(0.5, seed=9)(x, training=True).numpy(),
                                  Dropout(0.5, seed=9)(x, training=True).numpy())


def test_serialization_round_trip():
    layer = Dropout(0.2, seed=7, name="d")
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is Dropout and (restored.rate, restored.seed, restored.name) == (0.2, 7, "d")


def test_bf16_training_graph_draws_no_float_uniform():
    """Every dropout of the encoder draws uint32 bits and builds its mask in bfloat16 under mixed_bfloat16: no
    float uniform op."""
    config = BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=2)
    encoder = BertEncoder(config, dtype="mixed_bfloat16")
    ids = tf.constant(np.full((2, 9), 7, np.int32))
    inputs = {"input_word_ids": ids, "input_mask": tf.ones_like(ids), "input_type_ids": tf.zeros_like(ids)}
    graph = tf.function(lambda x: encoder(x, training=True)).get_concrete_function(inputs).graph
    ops = graph.get_operations()
    types = [op.type for op in ops]
    assert not [t for t in types if t.startswith("StatelessRandomUniform") and t != "StatelessRandomUniformFullIntV2"]
    draws = [op for op in ops if op.type == "StatelessRandomUniformFullIntV2"]
    # The embeddings', then per block the attention probabilities', attention output's and feed-forward output's.
    assert len(draws) == 1 + 3 * config.num_hidden_layers
    assert {op.get_attr("dtype") for op in draws} == {tf.uint32}
    # Each draw's comparison is the bool mask one compiled kernel applies (`scale_kept`).
    masks = [op for op in ops if any(t.op.type == "GreaterEqual" for t in op.inputs)]
    assert len(masks) == len(draws) and {op.outputs[0].dtype for op in masks} == {tf.bfloat16}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_fused_attention_dropout_has_autodiffs_values_and_gradients(dtype):
    """`dropped_context` (custom gradient, holding a bool mask) against autodiff of the three ops it fuses: cast the
    float32 probabilities, multiply by a float mask of 0 and 1 / keep, weight the values."""
    rng = np.random.default_rng(5)
    probs = tf.nn.softmax(tf.constant(rng.normal(size=(2, 3, 5, 5)), tf.float32))  # [B, N, T, S]
    value = tf.cast(rng.normal(size=(2, 5, 3, 4)), dtype)  # [B, S, N, D]
    keep = tf.constant(rng.random((2, 3, 5, 5)) > 0.3)
    scale = tf.constant(1 / 0.7, dtype)
    upstream = tf.cast(rng.normal(size=(2, 5, 3, 4)), dtype)

    def reference(p, v):
        return tf.einsum("bnts,bsnd->btnd", tf.cast(p, dtype) * tf.where(keep, scale, tf.zeros([], dtype)), v)

    results = []
    for fn in (lambda p, v: dropped_context(p, v, keep, scale), reference):
        with tf.GradientTape() as tape:
            tape.watch([probs, value])
            out = fn(probs, value)
            loss = tf.reduce_sum(tf.cast(out * upstream, tf.float32))
        results.append([out, *tape.gradient(loss, [probs, value])])
    for got, want in zip(*results):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(tf.cast(got, tf.float32).numpy(), tf.cast(want, tf.float32).numpy())


def test_dropout_gradient_is_the_upstream_times_the_mask():
    layer = Dropout(0.3, seed=2)
    x = tf.constant(np.random.default_rng(3).normal(size=(40, 50)), tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = layer(x, training=True)
        loss = tf.reduce_sum(out * 2.0 * x)  # d loss / d out = 2x
    kept = out.numpy() != 0
    scale = np.float32(65536 / (65536 - round(0.3 * 65536)))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(),
                                  np.where(kept, 2 * x.numpy() * scale, 0) + 2 * out.numpy())
