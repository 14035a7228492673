"""Activation functions named by `BertConfig.hidden_act`."""

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="official_bert")
def gelu_tanh(x):
    """GELU, tanh approximation: what Google's BERT code computes for hidden_act "gelu".

    0.5·(1 + tanh(z)) = sigmoid(2z), so x·sigmoid(2·√(2/π)·(x + 0.044715·x³)) is the same function with
    fewer elementwise passes over the [B, T, intermediate] activations, forward and backward.
    """
    return x * ops.sigmoid(x * (2.0 * math.sqrt(2.0 / math.pi)) * (1.0 + 0.044715 * ops.square(x)))


@keras.saving.register_keras_serializable(package="official_bert")
def gelu_erf(x):
    """Exact GELU, x·Φ(x): what Hugging Face's BERT computes for hidden_act "gelu"."""
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
    """The activation function for a `BertConfig.hidden_act` value."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown hidden_act {name!r}; expected one of {sorted(_BY_NAME)}") from None
