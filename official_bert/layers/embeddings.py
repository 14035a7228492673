"""Token + position + segment embeddings, LayerNorm and dropout: BERT's input layer."""

import keras
from keras import ops

from official_bert.layers.dropout import Dropout
from official_bert.layers.initializers import truncated_normal
from official_bert.layers.layer_norm import float32_layer_norm, normalize


@keras.saving.register_keras_serializable(package="official_bert")
class BertEmbeddings(keras.layers.Layer):
    """Sums word, learned absolute position and segment embeddings, then LayerNorm and dropout.

    The tables and the sum stay in float32 under mixed precision (only the output is cast to the compute
    dtype), so rare-token embeddings are not rounded away and the MLM head can tie to the float32 table.

    Args:
        vocab_size: rows of the word-embedding table.
        hidden_size: embedding width H.
        max_position_embeddings: rows of the position table; longest accepted sequence.
        type_vocab_size: rows of the segment table.
        initializer_range: stddev of the truncated-normal initializer.
        dropout_rate: dropout applied after LayerNorm while training.
        layer_norm_eps: LayerNorm epsilon.

    Example:
    >>> import numpy as np
    >>> layer = BertEmbeddings(vocab_size=10, hidden_size=4, max_position_embeddings=8, type_vocab_size=2)
    >>> tuple(layer(np.array([[1, 2, 3]]), np.array([[0, 0, 1]])).shape)
    (1, 3, 4)
    """

    def __init__(self, vocab_size, hidden_size, max_position_embeddings=512, type_vocab_size=16,
                 initializer_range=0.02, dropout_rate=0.1, layer_norm_eps=1e-12, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.dropout_rate = dropout_rate
        self.layer_norm_eps = layer_norm_eps
        self.layer_norm = float32_layer_norm(layer_norm_eps, "layer_norm")
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="dropout")

    def build(self, input_word_ids_shape, input_type_ids_shape=None):
        # autocast=False: read the tables in float32 even when the layer computes in bfloat16/float16.
        self.word_embeddings = self.add_weight(
            shape=(self.vocab_size, self.hidden_size), initializer=truncated_normal(self.initializer_range),
            name="word_embeddings", autocast=False)
        self.position_embeddings = self.add_weight(
            shape=(self.max_position_embeddings, self.hidden_size),
            initializer=truncated_normal(self.initializer_range), name="position_embeddings", autocast=False)
        self.token_type_embeddings = self.add_weight(
            shape=(self.type_vocab_size, self.hidden_size), initializer=truncated_normal(self.initializer_range),
            name="token_type_embeddings", autocast=False)
        self.layer_norm.build((None, None, self.hidden_size))

    def call(self, input_word_ids, input_type_ids, training=None):
        static_length = input_word_ids.shape[1]
        if static_length is not None and static_length > self.max_position_embeddings:
            raise ValueError(f"input sequence length {static_length} exceeds max_position_embeddings "
                             f"({self.max_position_embeddings}) of this BERT model")
        seq_length = ops.shape(input_word_ids)[1]
        x = ops.take(self.word_embeddings, input_word_ids, axis=0)
        x = x + ops.take(self.token_type_embeddings, input_type_ids, axis=0)
        x = x + ops.expand_dims(self.position_embeddings[:seq_length], 0)
        x = normalize(self.layer_norm, x, self.compute_dtype, training)
        return self.dropout(x, training=training)

    def compute_output_shape(self, input_word_ids_shape, input_type_ids_shape=None):
        return tuple(input_word_ids_shape) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size,
            max_position_embeddings=self.max_position_embeddings, type_vocab_size=self.type_vocab_size,
            initializer_range=self.initializer_range, dropout_rate=self.dropout_rate,
            layer_norm_eps=self.layer_norm_eps)
        return config
