"""Token + position + segment embeddings, LayerNorm and dropout: BERT's input layer."""

import keras
import numpy as np
from keras import ops

from official_bert.layers.dense import TokenDense
from official_bert.layers.dropout import Dropout
from official_bert.layers.initializers import truncated_normal
from official_bert.layers.layer_norm import float32_layer_norm, normalize


@keras.saving.register_keras_serializable(package="official_bert")
class BertEmbeddings(keras.layers.Layer):
    """Sums word, learned absolute position and segment embeddings, then LayerNorm and dropout.

    The tables and the sum stay in float32 under mixed precision (only the output is cast to the compute
    dtype), so rare-token embeddings are not rounded away and the MLM head can tie to the float32 table.

    BERT's family (`official_bert.families`) adds options: RoBERTa's positions that start after the padding id
    (`position_offset`), DistilBERT's missing segment table (`type_vocab_size=0`) and fixed sinusoidal positions,
    ELECTRA's narrower tables projected to the hidden width (`embedding_size`).

    Args:
        vocab_size: rows of the word-embedding table.
        hidden_size: output width H.
        max_position_embeddings: rows of the position table; longest accepted sequence (less position_offset).
        type_vocab_size: rows of the segment table; 0 for none (the segment ids are then not read).
        initializer_range: stddev of the truncated-normal initializer.
        dropout_rate: dropout applied after LayerNorm while training.
        layer_norm_eps: LayerNorm epsilon.
        embedding_size: the tables' width E (None: H); a Dense layer "projection" maps them to H after dropout.
        position_offset: the position table's row of the first token (RoBERTa: pad_token_id + 1).
        sinusoidal_positions: the position table holds fixed sines and cosines (DistilBERT's `sinusoidal_pos_embds`)
            and is not trained.

    Example:
    >>> import numpy as np
    >>> layer = BertEmbeddings(vocab_size=10, hidden_size=4, max_position_embeddings=8, type_vocab_size=2)
    >>> tuple(layer(np.array([[1, 2, 3]]), np.array([[0, 0, 1]])).shape)
    (1, 3, 4)
    """

    def __init__(self, vocab_size, hidden_size, max_position_embeddings=512, type_vocab_size=16,
                 initializer_range=0.02, dropout_rate=0.1, layer_norm_eps=1e-12, embedding_size=None,
                 position_offset=0, sinusoidal_positions=False, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.dropout_rate = dropout_rate
        self.layer_norm_eps = layer_norm_eps
        self.embedding_size = embedding_size
        self.position_offset = position_offset
        self.sinusoidal_positions = sinusoidal_positions
        self.layer_norm = float32_layer_norm(layer_norm_eps, "layer_norm")
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy, name="dropout")
        self.projection = None
        if self.table_width != hidden_size:
            self.projection = TokenDense(hidden_size, kernel_initializer=truncated_normal(initializer_range),
                                         dtype=self.dtype_policy, name="projection")

    @property
    def table_width(self):
        """The width E of the tables (ELECTRA's embedding_size), H for BERT."""
        return self.embedding_size or self.hidden_size

    def build(self, input_word_ids_shape, input_type_ids_shape=None):
        # autocast=False: read the tables in float32 even when the layer computes in bfloat16/float16.
        width = self.table_width
        self.word_embeddings = self.add_weight(
            shape=(self.vocab_size, width), initializer=truncated_normal(self.initializer_range),
            name="word_embeddings", autocast=False)
        self.position_embeddings = self.add_weight(
            shape=(self.max_position_embeddings, width),
            initializer=(sinusoids if self.sinusoidal_positions else truncated_normal(self.initializer_range)),
            name="position_embeddings", autocast=False, trainable=not self.sinusoidal_positions)
        self.token_type_embeddings = None
        if self.type_vocab_size:
            self.token_type_embeddings = self.add_weight(
                shape=(self.type_vocab_size, width), initializer=truncated_normal(self.initializer_range),
                name="token_type_embeddings", autocast=False)
        self.layer_norm.build((None, None, width))
        if self.projection is not None:
            self.projection.build((None, None, width))

    def call(self, input_word_ids, input_type_ids, training=None):
        static_length = input_word_ids.shape[1]
        if static_length is not None and static_length + self.position_offset > self.max_position_embeddings:
            raise ValueError(f"input sequence length {static_length} exceeds max_position_embeddings "
                             f"({self.max_position_embeddings}{self._offset_note()}) of this BERT model")
        seq_length = ops.shape(input_word_ids)[1]
        x = ops.take(self.word_embeddings, input_word_ids, axis=0)
        if self.token_type_embeddings is not None:
            x = x + ops.take(self.token_type_embeddings, input_type_ids, axis=0)
        offset = self.position_offset
        x = x + ops.expand_dims(self.position_embeddings[offset:offset + seq_length], 0)
        x = normalize(self.layer_norm, x, self.compute_dtype, training)
        x = self.dropout(x, training=training)
        return x if self.projection is None else self.projection(x, training=training)

    def _offset_note(self):
        return f", less the {self.position_offset} rows before the first position" if self.position_offset else ""

    def compute_output_shape(self, input_word_ids_shape, input_type_ids_shape=None):
        return tuple(input_word_ids_shape) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size,
            max_position_embeddings=self.max_position_embeddings, type_vocab_size=self.type_vocab_size,
            initializer_range=self.initializer_range, dropout_rate=self.dropout_rate,
            layer_norm_eps=self.layer_norm_eps)
        # The family's options only when set, so that a BERT layer's config is as before.
        for name, default in (("embedding_size", None), ("position_offset", 0), ("sinusoidal_positions", False)):
            if getattr(self, name) != default:
                config[name] = getattr(self, name)
        return config


def sinusoids(shape, dtype=None):
    """DistilBERT's fixed position table (transformers' `create_sinusoidal_embeddings`): row p, columns 2i and 2i + 1
    hold sin and cos of p / 10000^(2i / width).

    Args:
        shape: (positions, width).
        dtype: the table's dtype (float32 if None).

    Example:
    >>> table = sinusoids((3, 4))
    >>> [round(float(v), 3) for v in table[1]]
    [0.841, 0.54, 0.01, 1.0]
    """
    positions, width = shape
    angle = np.arange(positions)[:, None] / np.power(10000, 2 * (np.arange(width) // 2) / width)[None, :]
    table = np.where(np.arange(width) % 2 == 0, np.sin(angle), np.cos(angle))
    return ops.convert_to_tensor(table.astype("float32"), dtype=dtype or "float32")
