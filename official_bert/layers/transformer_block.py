"""One post-LayerNorm transformer block, as in BERT."""

import keras
import tensorflow as tf
from keras import ops

from official_bert.layers import activations
from official_bert.layers.attention import MultiHeadSelfAttention
from official_bert.layers.dense import TokenDense, project
from official_bert.layers.dropout import Dropout
from official_bert.layers.initializers import truncated_normal
from official_bert.layers.layer_norm import float32_layer_norm, normalize


@keras.saving.register_keras_serializable(package="official_bert")
class TransformerBlock(keras.layers.Layer):
    """x = LN(x + Dropout(Attention(x))); x = LN(x + Dropout(FFN(x))), LayerNorm in float32.

    With `output_positions` (int [B, Q]) only those rows are computed and returned ([B, Q, H]); they still
    attend to every position.

    With `remat`, the block keeps for the backward pass its input, the attention half's output and the
    intermediate (feed-forward) matmul's output, and computes everything else again there (`keras.remat`, i.e.
    `tf.recompute_grad`, once per half): activation memory of about one block instead of all of them, for about
    three quarters of one more forward pass. The recomputation replays the same dropout masks, so losses and
    gradients are the same as without.

    Args:
        num_heads: attention heads.
        hidden_size: width H.
        intermediate_size: width of the feed-forward layer.
        activation: a `BertConfig.hidden_act` name for the feed-forward activation.
        dropout_rate: dropout on the attention output and the feed-forward output.
        attention_dropout_rate: dropout on the attention probabilities.
        initializer_range: stddev of the truncated-normal kernel initializer.
        layer_norm_eps: LayerNorm epsilon.
        remat: recompute the block's activations in the backward pass instead of keeping them.

    Example:
    >>> import numpy as np
    >>> block = TransformerBlock(num_heads=2, hidden_size=8, intermediate_size=16)
    >>> tuple(block(np.zeros((1, 3, 8), "float32"), np.zeros((1, 1, 1, 3), "float32")).shape)
    (1, 3, 8)
    """

    def __init__(self, num_heads, hidden_size, intermediate_size, activation="gelu", dropout_rate=0.1,
                 attention_dropout_rate=0.1, initializer_range=0.02, layer_norm_eps=1e-12, remat=False, **kwargs):
        super().__init__(**kwargs)
        self.remat = remat
        self.num_heads = num_heads
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.activation = activation
        self.dropout_rate = dropout_rate
        self.attention_dropout_rate = attention_dropout_rate
        self.initializer_range = initializer_range
        self.layer_norm_eps = layer_norm_eps
        self.attention = MultiHeadSelfAttention(
            num_heads, hidden_size // num_heads, dropout_rate=attention_dropout_rate,
            initializer_range=initializer_range, dtype=self.dtype_policy, name="attention")
        self.attention_dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="attention_dropout")
        self.attention_layer_norm = float32_layer_norm(layer_norm_eps, "attention_layer_norm")
        self.intermediate = TokenDense(intermediate_size, activation=activations.get(activation),
                                       kernel_initializer=truncated_normal(initializer_range),
                                       dtype=self.dtype_policy, name="intermediate")
        self.output_dense = TokenDense(hidden_size, kernel_initializer=truncated_normal(initializer_range),
                                       dtype=self.dtype_policy, name="output")
        self.output_dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="output_dropout")
        self.output_layer_norm = float32_layer_norm(layer_norm_eps, "output_layer_norm")

    def build(self, x_shape, attention_bias_shape=None):
        self.attention.build(x_shape)
        self.attention_layer_norm.build(x_shape)
        self.intermediate.build(x_shape)
        self.output_dense.build(tuple(x_shape[:-1]) + (self.intermediate_size,))
        self.output_layer_norm.build(x_shape)

    def call(self, x, attention_bias, output_positions=None, training=None):
        def attention_half(x, attention_bias):
            attention_output = self.attention(x, attention_bias, query_positions=output_positions, training=training)
            attention_output = self.attention_dropout(attention_output, training=training)
            if output_positions is not None:
                x = tf.gather(x, ops.cast(output_positions, "int32"), batch_dims=1)
            return normalize(self.attention_layer_norm, x + attention_output, self.compute_dtype, training)

        def output_half(x, hidden):  # hidden: the feed-forward layer's activations
            ffn_output = self.output_dropout(self.output_dense(hidden), training=training)
            return normalize(self.output_layer_norm, x + ffn_output, self.compute_dtype, training)

        if not self.remat:
            x = attention_half(x, attention_bias)
            return output_half(x, self.intermediate(x, training=training))
        x = _recomputed(attention_half, [self.attention, self.attention_dropout])(x, attention_bias)
        # The intermediate matmul is the one not recomputed: a quarter of the block's matmul work for 4·H floats
        # kept a position, where the attention half would keep S a head (its scores, softmax and masks).
        pre_activation = project(x, self.intermediate.kernel, self.intermediate.bias)
        activation = self.intermediate.activation_for(training)
        return _recomputed(lambda x, pre_activation: output_half(x, activation(pre_activation)),
                           [self.output_dropout])(x, pre_activation)

    def compute_output_shape(self, x_shape, attention_bias_shape=None, output_positions_shape=None):
        return tuple(x_shape) if output_positions_shape is None else tuple(output_positions_shape) + (x_shape[-1],)

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads, hidden_size=self.hidden_size, intermediate_size=self.intermediate_size,
            activation=self.activation, dropout_rate=self.dropout_rate,
            attention_dropout_rate=self.attention_dropout_rate, initializer_range=self.initializer_range,
            layer_norm_eps=self.layer_norm_eps, remat=self.remat)
        return config


def _recomputed(forward, layers):
    """`forward` under `keras.remat`, replaying in the recomputation the dropout masks the forward pass drew.

    Dropout draws its masks from seed-generator variables that advance at every draw; the recomputation first puts
    those of `layers` (and the layers inside them) back to where they stood before the forward pass."""
    generators = [layer.seed_generator for outer in layers for layer in outer._flatten_layers()
                  if isinstance(layer, Dropout) and getattr(layer, "seed_generator", None)]
    before = [ops.copy(generator.state.value) for generator in generators]

    def replay(*args):
        for generator, state in zip(generators, before):
            generator.state.assign(state)
        return forward(*args)

    return keras.remat(replay)
