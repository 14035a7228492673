"""Multi-head self-attention with one fused query/key/value projection."""

import math

import keras
import tensorflow as tf
from keras import ops

from official_bert.layers.dense import project
from official_bert.layers.dropout import Dropout, scale_kept
from official_bert.layers.initializers import truncated_normal


def dropped_context(probs, value, keep, scale):
    """einsum("bnts,bsnd->btnd", dropout(probs), value): the attention's weighted sum of values, its float32
    probabilities [B, N, T, S] cast to value's dtype and dropped where `keep` is False (kept ones × `scale`, as
    `Dropout.keep_mask` gives them).

    The backward pass holds the probabilities (the softmax's gradient holds them anyway) and the bool mask, and
    recomputes the dropped probabilities from them; autodiff of the three ops would hold a float mask and the
    dropped probabilities besides: 1.25 instead of 3 times the size of the probabilities (float32), for every
    layer of a training step at once.

    Example:
    >>> import numpy as np
    >>> probs = np.full((1, 1, 2, 2), 0.5, "float32")  # [B, N, T, S]
    >>> value = np.array([[[[1.0]], [[3.0]]]], "float32")  # [B, S, N, D]
    >>> keep = np.array([[[[True, True], [False, True]]]])
    >>> dropped_context(probs, value, keep, 2.0).numpy().ravel()  # row 0: 1 + 3; row 1: 0 + 3
    array([4., 3.], dtype=float32)
    """
    probs, value = tf.convert_to_tensor(probs), tf.convert_to_tensor(value)
    scale = tf.cast(scale, value.dtype)

    @tf.custom_gradient
    def context(probs, value):
        def grad(d_context):
            # Waits for the gradient: depending on forward tensors only, TensorFlow would recompute every layer's
            # dropped probabilities at the start of the backward pass and hold them all.
            with tf.control_dependencies([d_context]):
                recomputed = scale_kept(probs, keep, scale)
            d_value = tf.einsum("bnts,btnd->bsnd", recomputed, d_context)
            # After d_value: the recomputed dropped probabilities are freed before their gradient is made.
            with tf.control_dependencies([d_value]):
                d_dropped = tf.einsum("btnd,bsnd->bnts", d_context, value)
            return scale_kept(d_dropped, keep, scale, probs.dtype), d_value

        # stop_gradient: an eager tape would otherwise record (and hold) the ops inside as well.
        dropped = scale_kept(tf.stop_gradient(probs), keep, scale)
        return tf.einsum("bnts,bsnd->btnd", dropped, tf.stop_gradient(value)), grad

    return context(probs, value)


@keras.saving.register_keras_serializable(package="official_bert")
class MultiHeadSelfAttention(keras.layers.Layer):
    """Scaled dot-product self-attention over `num_heads` heads, as in BERT.

    Query, key and value come from one [H, 3H] projection (columns: query, key, value, each laid out
    head-major as the original's [H, num_heads·head_size]): one matmul instead of three.
    Scores and softmax are computed in float32 whatever the compute dtype.

    Args:
        num_heads: number of attention heads.
        head_size: width of each head; H = num_heads · head_size.
        dropout_rate: dropout on the attention probabilities while training.
        initializer_range: stddev of the truncated-normal kernel initializer.

    Call args:
        x: [B, T, H] hidden states.
        attention_bias: float32, broadcastable to [B, num_heads, T, T]; 0 where a key may be attended,
            a large negative number (-10000, as the original) where not. A bias with a query axis
            ([B, 1, T, T], e.g. a causal mask) has its rows taken at `query_positions` when those are given.
        query_positions: optional int [B, Q]; when given, only these positions attend and the output is
            [B, Q, H] (used to skip work that pretraining's last layer does not need).
        training: enables dropout.

    Example:
    >>> import numpy as np
    >>> layer = MultiHeadSelfAttention(num_heads=2, head_size=4)
    >>> tuple(layer(np.zeros((1, 3, 8), "float32"), np.zeros((1, 1, 1, 3), "float32")).shape)
    (1, 3, 8)
    """

    def __init__(self, num_heads, head_size, dropout_rate=0.1, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.head_size = head_size
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="dropout")

    def build(self, x_shape, attention_bias_shape=None):
        hidden = self.num_heads * self.head_size
        self.qkv_kernel = self.add_weight(shape=(x_shape[-1], 3 * hidden),
                                          initializer=truncated_normal(self.initializer_range), name="qkv_kernel")
        self.qkv_bias = self.add_weight(shape=(3 * hidden,), initializer="zeros", name="qkv_bias")
        self.output_kernel = self.add_weight(shape=(hidden, hidden),
                                             initializer=truncated_normal(self.initializer_range), name="output_kernel")
        self.output_bias = self.add_weight(shape=(hidden,), initializer="zeros", name="output_bias")

    def call(self, x, attention_bias, query_positions=None, training=None):
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        hidden = self.num_heads * self.head_size
        if query_positions is None:
            query, key, value = ops.split(project(x, self.qkv_kernel, self.qkv_bias), 3, axis=-1)
        else:
            # Only these rows attend (e.g. the masked positions in the last layer of pretraining): keys and
            # values still come from every position, queries from the gathered rows only.
            rows = tf.gather(x, ops.cast(query_positions, "int32"), batch_dims=1)
            if attention_bias.shape[2] != 1:
                attention_bias = tf.gather(attention_bias, ops.cast(query_positions, "int32"), axis=2, batch_dims=1)
            query = project(rows, self.qkv_kernel[:, :hidden], self.qkv_bias[:hidden])
            key, value = ops.split(project(x, self.qkv_kernel[:, hidden:], self.qkv_bias[hidden:]), 2, axis=-1)
        scores = self._scores(query, key, attention_bias)
        value = ops.reshape(value, (batch, length, self.num_heads, self.head_size))
        probs = ops.softmax(scores, axis=-1)
        mask = self.dropout.keep_mask(probs, training)
        if mask is None:
            context = ops.einsum("bnts,bsnd->btnd", ops.cast(probs, self.compute_dtype), value)
        else:
            context = dropped_context(probs, value, *mask)
        context = ops.reshape(context, (batch, -1, hidden))
        return project(context, self.output_kernel, self.output_bias)

    def scores(self, x, attention_bias):
        """The attention scores before the softmax, float32 [B, num_heads, T, T]: what `call` computes from `x`
        (its query and key projections; the bias added), for losses on attention maps (TinyBERT's)."""
        hidden = self.num_heads * self.head_size
        query, key = ops.split(project(x, self.qkv_kernel[:, :2 * hidden], self.qkv_bias[:2 * hidden]), 2, axis=-1)
        return self._scores(query, key, attention_bias)

    def _scores(self, query, key, attention_bias):
        batch, length = ops.shape(key)[0], ops.shape(key)[1]
        # Scaling the queries (T·D values) rather than the scores (T·T) is cheaper and equivalent.
        query = query * ops.cast(1.0 / math.sqrt(self.head_size), query.dtype)
        query = ops.reshape(query, (batch, -1, self.num_heads, self.head_size))
        key = ops.reshape(key, (batch, length, self.num_heads, self.head_size))
        # einsum over [B, T, N, D] without explicit transposes measured 2.5x faster on CPU (fwd + bwd) than
        # transposing to [B, N, T, D] for batched matmuls.
        scores = ops.einsum("btnd,bsnd->bnts", query, key)
        # Keras casts float inputs to the compute dtype; the bias joins the scores in float32.
        return ops.cast(scores, "float32") + ops.cast(attention_bias, "float32")

    def compute_output_shape(self, x_shape, attention_bias_shape=None, query_positions_shape=None):
        rows = tuple(x_shape[:-1]) if query_positions_shape is None else tuple(query_positions_shape)
        return rows + (self.num_heads * self.head_size,)

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, head_size=self.head_size, dropout_rate=self.dropout_rate,
                      initializer_range=self.initializer_range)
        return config

