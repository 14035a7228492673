"""The layer norm training differentiates (`layer_norm.fused_layer_norm`: XLA kernels, gradient written out)
against NumPy in float64 — values and the gradients of x, gamma and beta (central differences) — in float32 and
bfloat16; it and the plain-ops form inference runs against Keras's own layer norm, whose layer holds the weights."""

import re

import numpy as np
import pytest
import tensorflow as tf

from official_bert.layers import layer_norm
from official_bert.layers.layer_norm import float32_layer_norm, fused_layer_norm, normalize

EPSILON = 1e-6


def numpy_layer_norm(x, gamma, beta):
    mean, variance = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + EPSILON) * gamma + beta


def central_difference(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = h
        grad[index] = (f(x + step) - f(x - step)) / (2 * h)
    return grad


@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-4), ("bfloat16", 3e-2)])
def test_fused_layer_norm_and_its_gradients_match_numpy(dtype, tolerance):
    rng = np.random.default_rng(0)
    x = tf.cast(tf.constant(rng.normal(size=(2, 3, 8)) * 3 + 1, tf.float32), dtype)
    x64 = tf.cast(x, tf.float64).numpy()
    gamma64, beta64 = rng.uniform(0.5, 1.5, 8), rng.normal(size=8)
    weights64 = rng.normal(size=(2, 3, 8))  # the loss is Σ weights · y, so dy = weights
    gamma, beta = tf.constant(gamma64, tf.float32), tf.constant(beta64, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([x, gamma, beta])
        y = fused_layer_norm(x, gamma, beta, EPSILON)
        loss = tf.reduce_sum(tf.cast(y, tf.float64) * weights64)
    dx, dgamma, dbeta = tape.gradient(loss, [x, gamma, beta])
    assert y.dtype == dx.dtype == dtype and dgamma.dtype == dbeta.dtype == tf.float32

    def loss_of(x=x64, gamma=gamma64, beta=beta64):
        return np.sum(numpy_layer_norm(x, gamma, beta) * weights64)

    close = dict(rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(tf.cast(y, tf.float64), numpy_layer_norm(x64, gamma64, beta64), **close)
    np.testing.assert_allclose(tf.cast(dx, tf.float64), central_difference(lambda v: loss_of(x=v), x64), **close)
    np.testing.assert_allclose(dgamma, central_difference(lambda v: loss_of(gamma=v), gamma64), **close)
    np.testing.assert_allclose(dbeta, central_difference(lambda v: loss_of(beta=v), beta64), **close)


def test_normalize_in_training_and_in_inference_equals_keras_layer_norm():
    layer = float32_layer_norm(1e-12, "ln")
    layer.build((None, 16))
    rng = np.random.default_rng(1)
    layer.gamma.assign(rng.uniform(0.5, 1.5, 16).astype("float32"))
    layer.beta.assign(rng.normal(size=16).astype("float32"))
    x = tf.constant(rng.normal(size=(4, 5, 16)) * 3 + 1, tf.float32)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ours = [normalize(layer, x, "float32", training) for training in (True, False)]
        keras_y = layer(x)
        losses = [tf.reduce_sum(y * tf.sin(x)) for y in ours + [keras_y]]
    weights = [x, layer.gamma, layer.beta]
    keras_gradients = tape.gradient(losses[-1], weights)
    for y, loss in zip(ours, losses):
        np.testing.assert_allclose(y, keras_y, rtol=1e-5, atol=1e-5)
        for gradient, keras_gradient in zip(tape.gradient(loss, weights), keras_gradients):
            np.testing.assert_allclose(gradient, keras_gradient, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kernel, products", [(layer_norm._layer_norm_forward, 2), (layer_norm._layer_norm_backward, 6)])
def test_the_kernels_sum_with_matrix_products_not_xla_reductions(kernel, products):
    # XLA's CPU reductions were 2-3x slower than the whole kernel is now: the mean and variance of the rows (and,
    # backward, the two means of the gradient and the sums over rows for gamma and beta) stay products with ones.
    x = tf.zeros([2, 3, 16], tf.bfloat16)
    ones = tf.ones([16])
    hlo = kernel.experimental_get_compiler_ir(x, ones, ones if products == 2 else x, tf.constant(EPSILON))(
        stage="optimized_hlo")
    instructions = re.findall(r"= \S+ ([\w-]+)\(", hlo)
    assert instructions.count("dot") == products and "reduce" not in instructions
