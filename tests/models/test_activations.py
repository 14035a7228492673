"""The GELUs training differentiates (`activations.for_training`, XLA-compiled with a hand-written gradient)
against NumPy in float64: their values and derivatives (central differences), in float32 and bfloat16."""

import math

import numpy as np
import pytest
import tensorflow as tf

from official_bert.layers import activations

NUMPY = {"gelu": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
         "gelu_erf": lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))}


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_erf"])
@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-5), ("bfloat16", 1e-2)])
def test_training_gelu_and_its_gradient_match_numpy(hidden_act, dtype, tolerance):
    x64 = np.linspace(-6, 6, 241)
    x = tf.cast(tf.constant(x64, tf.float32), dtype)
    x64 = tf.cast(x, tf.float64).numpy()  # what the bf16 input holds
    dy = tf.cast(tf.constant(np.cos(x64), tf.float32), dtype)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = activations.for_training(activations.get(hidden_act))(x)
    dx = tape.gradient(y, x, output_gradients=dy)
    assert y.dtype == dx.dtype == dtype
    f, h = NUMPY[hidden_act], 1e-6
    np.testing.assert_allclose(tf.cast(y, tf.float64), f(x64), rtol=tolerance, atol=tolerance)
    want = tf.cast(dy, tf.float64).numpy() * (f(x64 + h) - f(x64 - h)) / (2 * h)
    np.testing.assert_allclose(tf.cast(dx, tf.float64), want, rtol=tolerance, atol=tolerance)
    # the same values as the plain activation, which inference runs
    np.testing.assert_allclose(tf.cast(y, tf.float64), tf.cast(activations.get(hidden_act)(x), tf.float64),
                               rtol=tolerance, atol=tolerance)
