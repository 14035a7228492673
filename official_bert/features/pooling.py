"""Keras layer: token vectors → one vector per text (the [CLS] vector, or the mean or max over real tokens),
optionally L2-normalised, as sentence-transformers' Pooling and Normalize modules compute them."""

import keras
from keras import ops

POOLINGS = ("cls", "mean", "max")
# sentence-transformers' constants: the smallest token count it divides by, the value padding takes before a max,
# and torch.nn.functional.normalize's smallest norm.
_MIN_COUNT = 1e-9
_PADDING_FOR_MAX = -1e9
_MIN_NORM = 1e-12


@keras.saving.register_keras_serializable(package="official_bert")
class SentencePooling(keras.layers.Layer):
    """Pools token vectors [batch, ..., T, H] over T with the input mask [batch, T] into [batch, ..., H].

    "cls" takes position 0; "mean" averages the positions whose mask is 1 (sentence-transformers'
    `pooling_mode_mean_tokens`); "max" takes the per-dimension maximum over them. Axes between the batch and
    T (e.g. several layers, [batch, L, T, H]) are pooled independently.

    Args:
        pooling: one of `POOLINGS`.
        normalize: divide each pooled vector by its L2 norm (sentence-transformers' Normalize).
        **kwargs: passed to keras.layers.Layer.

    Example:
    >>> import numpy as np
    >>> x = np.array([[[1.0, 2.0], [3.0, 6.0], [100.0, 100.0]]])  # the third position is padding
    >>> mask = np.array([[1, 1, 0]])
    >>> [SentencePooling(p)(x, mask).numpy().tolist() for p in POOLINGS]
    [[[1.0, 2.0]], [[2.0, 4.0]], [[3.0, 6.0]]]
    >>> [round(v, 4) for v in SentencePooling("mean", normalize=True)(x, mask).numpy()[0].tolist()]
    [0.4472, 0.8944]
    """

    def __init__(self, pooling="mean", normalize=False, **kwargs):
        super().__init__(**kwargs)
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
        self.pooling = pooling
        self.normalize = normalize

    def call(self, inputs, mask):
        if self.pooling == "cls":
            pooled = inputs[..., 0, :]
        else:
            # [batch, T] → [batch, 1, ..., T, 1], to broadcast over the axes in between and H.
            real = ops.cast(mask, inputs.dtype)[..., None]
            for _ in range(len(inputs.shape) - 3):
                real = ops.expand_dims(real, 1)
            if self.pooling == "mean":
                count = ops.maximum(ops.sum(real, axis=-2), _MIN_COUNT)
                pooled = ops.sum(inputs * real, axis=-2) / count
            else:
                pooled = ops.max(ops.where(real > 0, inputs, _PADDING_FOR_MAX), axis=-2)
        if self.normalize:
            norm = ops.sqrt(ops.sum(ops.square(pooled), axis=-1, keepdims=True))
            pooled = pooled / ops.maximum(norm, _MIN_NORM)
        return pooled

    def get_config(self):
        return {**super().get_config(), "pooling": self.pooling, "normalize": self.normalize}
