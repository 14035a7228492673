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
