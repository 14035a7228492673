"""The masked-LM head: transform, LayerNorm, and logits tied to the word embeddings."""

import keras
import tensorflow as tf
from keras import ops

from official_bert.layers import activations
from official_bert.layers.dense import TokenDense
from official_bert.layers.initializers import truncated_normal
from official_bert.layers.layer_norm import float32_layer_norm, normalize


@keras.saving.register_keras_serializable(package="official_bert")
class MaskedLMHead(keras.layers.Layer):
    """Predicts vocabulary logits at the masked positions only.

    The hidden states are gathered at `masked_positions` first, so the transform and the [H, V] output
    matmul run on B·P rows instead of B·T. The output matrix is the encoder's word-embedding table
    (transposed), plus a per-token output bias, as in the original. The transform maps the hidden width to the
    table's (ELECTRA's generator: H to its embedding_size E, whose LayerNorm follows).

    Args:
        embeddings: the `BertEmbeddings` layer whose `word_embeddings` table is tied to the output.
            Not serialized: the owning task model passes it again when it is rebuilt.
        activation: a `BertConfig.hidden_act` name for the transform.
        initializer_range: stddev of the truncated-normal kernel initializer.
        layer_norm_eps: LayerNorm epsilon.

    Call args:
        sequence_output: [B, T, H] encoder output.
        masked_positions: int [B, P] positions to predict; None when `sequence_output` already holds
            only the masked rows ([B, P, H], as `BertEncoder.masked_outputs` returns them).
        training: True in a training step (the transform's GELU and layer norm then run as XLA kernels).

    Returns:
        float32 logits [B, P, vocab_size].

    Example:
    >>> import numpy as np
    >>> from official_bert.layers import BertEmbeddings
    >>> emb = BertEmbeddings(vocab_size=10, hidden_size=4)
    >>> _ = emb(np.array([[1, 2]]), np.array([[0, 0]]))
    >>> head = MaskedLMHead(emb)
    >>> tuple(head(np.zeros((1, 5, 4), "float32"), np.array([[0, 3]])).shape)
    (1, 2, 10)
    """

    def __init__(self, embeddings, activation="gelu", initializer_range=0.02, layer_norm_eps=1e-12, **kwargs):
        super().__init__(**kwargs)
        # Untracked reference: the table belongs to the encoder, and tracking it here too would list
        # (and save) the same variable twice.
        object.__setattr__(self, "embeddings", embeddings)
        self.activation = activation
        self.initializer_range = initializer_range
        self.layer_norm_eps = layer_norm_eps
        self.dense = TokenDense(
            embeddings.table_width, activation=activations.get(activation),
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy, name="transform")
        self.layer_norm = float32_layer_norm(layer_norm_eps, "layer_norm")

    def build(self, sequence_output_shape, masked_positions_shape=None):
        self.dense.build((None, None, self.embeddings.hidden_size))
        self.layer_norm.build((None, None, self.embeddings.table_width))
        self.output_bias = self.add_weight(shape=(self.embeddings.vocab_size,), initializer="zeros",
                                           name="output_bias", autocast=False)

    def call(self, sequence_output, masked_positions=None, training=None):
        x = sequence_output
        if masked_positions is not None:
            x = tf.gather(x, ops.cast(masked_positions, "int32"), batch_dims=1)
        x = normalize(self.layer_norm, self.dense(x, training=training), self.compute_dtype, training)
        table = ops.cast(self.embeddings.word_embeddings, self.compute_dtype)
        # One 2-D MatMul reading the [V, H] table as is (no broadcast batch-matmul, no materialized transpose).
        logits = tf.matmul(tf.reshape(x, [-1, tf.shape(x)[-1]]), table, transpose_b=True)
        logits = tf.reshape(logits, tf.concat([tf.shape(x)[:-1], [-1]], axis=0))
        return ops.cast(logits, "float32") + self.output_bias

    def compute_output_shape(self, sequence_output_shape, masked_positions_shape=None):
        rows = tuple(sequence_output_shape[:-1]) if masked_positions_shape is None else tuple(masked_positions_shape)
        return rows + (self.embeddings.vocab_size,)

    def get_config(self):
        config = super().get_config()
        config.update(activation=self.activation, initializer_range=self.initializer_range,
                      layer_norm_eps=self.layer_norm_eps)
        return config
