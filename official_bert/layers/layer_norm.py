"""Layer normalization that computes in float32 whatever the model computes in, with one cast in and one out."""

import keras
from keras import ops


def float32_layer_norm(epsilon, name):
    """A Keras `LayerNormalization` over the last axis that computes (and keeps its weights) in float32.

    Example:
    >>> layer = float32_layer_norm(1e-12, "layer_norm")
    >>> layer.dtype_policy.name, layer.epsilon
    ('float32', 1e-12)
    """
    return keras.layers.LayerNormalization(epsilon=epsilon, dtype="float32", name=name)


def normalize(layer, x, dtype):
    """`layer` (a `float32_layer_norm`) applied to `x`, returned in `dtype`.

    `x` is cast to float32 here: given a bfloat16 `x`, Keras's layer normalization casts it to float32 for the
    statistics, rounds its output back to bfloat16 and the layer returns it as float32 again — four passes over the
    tensor instead of these two, for the same values.

    Example:
    >>> import numpy as np
    >>> layer = float32_layer_norm(1e-6, "ln")
    >>> out = normalize(layer, ops.cast(np.array([[1.0, 2.0, 3.0, 6.0]]), "bfloat16"), "bfloat16")
    >>> keras.backend.standardize_dtype(out.dtype), [round(float(v), 2) for v in out[0]]
    ('bfloat16', [-1.07, -0.54, 0.0, 1.6])
    """
    return ops.cast(layer(ops.cast(x, "float32")), dtype)
