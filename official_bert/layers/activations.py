"""Activation functions named by `BertConfig.hidden_act`.

Both GELUs are written in the op pattern that TensorFlow's grappler remapper fuses into the matmul before them
when oneDNN runs the CPU ops (TensorFlow's default on CPUs with AVX512_VNNI, AVX512_BF16 or AMX, or with
TF_ENABLE_ONEDNN_OPTS=1): MatMul + BiasAdd + GELU become one `_MklNativeFusedMatMul` kernel, which on a bf16 CPU
spends less time than the GELU alone does unfused. `layers/dense.py` keeps the matmul, the bias and the
activation adjacent for that.
"""

import functools
import math

import keras
import tensorflow as tf
from keras import ops


@functools.lru_cache(maxsize=None)
def onednn_enabled():
    """Whether this TensorFlow runs its CPU ops with oneDNN (decided once per process, from the CPU and
    TF_ENABLE_ONEDNN_OPTS). TensorFlow exposes it only privately; False if that moves.

    Example:
    >>> onednn_enabled() in (True, False)
    True
    """
    try:
        from tensorflow.python.util import _pywrap_util_port  # pylint: disable=import-outside-toplevel
        return bool(_pywrap_util_port.IsMklEnabled())
    except (ImportError, AttributeError):
        return False


@keras.saving.register_keras_serializable(package="official_bert")
def gelu_tanh(x):
    """GELU, tanh approximation: what Google's BERT code computes for hidden_act "gelu".

    With oneDNN this is `tf.nn.gelu(approximate=True)`, the pattern oneDNN fuses into the preceding
    MatMul + BiasAdd. Without it (Eigen's kernels, one pass over memory per op) the same function is computed as
    x·sigmoid(2·√(2/π)·(x + 0.044715·x³)), since 0.5·(1 + tanh(z)) = sigmoid(2z): fewer element-wise passes
    over the [B, T, intermediate] activations, forward and backward. The two differ by rounding only.

    Example:
    >>> import numpy as np
    >>> round(float(gelu_tanh(np.float32(1.0))), 5)
    0.84119
    """
    if onednn_enabled():
        return tf.nn.gelu(x, approximate=True)
    return x * ops.sigmoid(x * (2.0 * math.sqrt(2.0 / math.pi)) * (1.0 + 0.044715 * ops.square(x)))


@keras.saving.register_keras_serializable(package="official_bert")
def gelu_erf(x):
    """Exact GELU, x·Φ(x): what Hugging Face's BERT computes for hidden_act "gelu".

    This form is the one oneDNN's remapper fuses (as GeluExact) into the preceding MatMul + BiasAdd, and it is
    cheaper unfused than `tf.nn.gelu(approximate=False)`'s erfc form.

    Example:
    >>> import numpy as np
    >>> round(float(gelu_erf(np.float32(1.0))), 5)
    0.84134
    """
    return 0.5 * x * (1.0 + ops.erf(x / math.sqrt(2.0)))


def _compiled_in_float32(function):
    """`function` compiled by XLA, computing in float32 whatever the dtype of its tensors, returning x's dtype."""
    @tf.function(jit_compile=True)
    def compiled(x, *tensors):
        return tf.cast(function(*(tf.cast(t, tf.float32) for t in (x,) + tensors)), x.dtype)

    return compiled


def _gelu_tanh_gradient(x, dy):
    t = tf.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x))
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * math.sqrt(2.0 / math.pi) * (1.0 + 3 * 0.044715 * x * x))


def _gelu_erf_gradient(x, dy):
    return dy * (0.5 * (1.0 + tf.math.erf(x / math.sqrt(2.0))) + x * tf.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))


def _fused_for_training(function, gradient):
    """`function` with its gradient, each one XLA kernel (a pass over x forward, one over x and dy backward).

    Differentiated op by op, a GELU over BERT-base's [B·T, 3072] activations took ten passes in bf16 (78 ms
    forward + backward at batch 32 on 2 AMX cores; 16 ms compiled). Only training takes this form: in inference
    the activation runs inside oneDNN's fused matmul, and an export holds no XLA.
    """
    forward, backward = _compiled_in_float32(function), _compiled_in_float32(gradient)

    @tf.custom_gradient
    def fused(x):
        return forward(x), lambda dy: backward(x, dy)

    return fused


_FOR_TRAINING = {gelu: _fused_for_training(gelu, gradient)
                 for gelu, gradient in ((gelu_tanh, _gelu_tanh_gradient), (gelu_erf, _gelu_erf_gradient))}


def for_training(activation):
    """The form of `activation` to differentiate: the GELUs compiled by XLA with their gradients (same values
    to rounding; computed in float32), any other activation itself.

    Example:
    >>> import numpy as np
    >>> x = tf.constant([-1.0, 0.5, 2.0])
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = for_training(gelu_tanh)(x)
    >>> np.round(y.numpy(), 4), np.round(tape.gradient(y, x).numpy(), 4)  # the derivative, as central differences give
    (array([-0.1588,  0.3457,  1.9546], dtype=float32), array([-0.083 ,  0.8674,  1.0861], dtype=float32))
    >>> for_training(keras.activations.relu) is keras.activations.relu
    True
    """
    return _FOR_TRAINING.get(activation, activation)


_BY_NAME = {
    "gelu": gelu_tanh,
    "gelu_new": gelu_tanh,
    "gelu_tanh": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "gelu_erf": gelu_erf,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "swish": keras.activations.silu,
    "silu": keras.activations.silu,
}


def get(name):
    """The activation function for a `BertConfig.hidden_act` value.

    Args:
        name: a `BertConfig.hidden_act` value.

    Example:
    >>> get("gelu").__name__, get("gelu_erf").__name__
    ('gelu_tanh', 'gelu_erf')
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown hidden_act {name!r}; expected one of {sorted(_BY_NAME)}") from None
