"""`ContrastiveModel`: what `fit` trains with the losses of `retrieval.losses` — an embedder applied to every text
of a batch of rows (anchor, positive, negatives...; or a scored pair), and with a cached loss the gradient computed
a mini-batch at a time (GradCache).

GradCache (Gao et al. 2021, sentence-transformers' Cached* losses) in three steps, here inside Keras's own train
step: the forward pass embeds the batch a mini-batch at a time and keeps no activations (`tf.custom_gradient`), the
loss is computed on the whole batch's embeddings and Keras differentiates it as usual down to them; the custom
gradient then embeds each mini-batch again, with its activations, and pushes that mini-batch's share of the
embeddings' gradient through it, summing the weights' gradients. The second pass draws the dropout masks the first
drew (the seed generators are put back first, as sentence-transformers' RandContext replays torch's RNG), so the
gradient is the plain loss's; the activations alive at once are those of one mini-batch of one column.
"""

import keras
import tensorflow as tf

from official_bert.batch_padding import INPUT_NAMES, trim_to_longest
from official_bert.layers.dropout import seed_generator_states


@keras.saving.register_keras_serializable(package="official_bert")
class ContrastiveModel(keras.Model):
    """Embeds every text of a batch of rows: the encoder's inputs [B, C, T] (C texts a row) → [B, C, D].

    Each column is cut to its own longest text (rounded up to `bucket_width`) and embedded on its own, so short
    queries are not padded to the passages' length. The weights are the embedder's (the same variables, under the
    same paths: a checkpoint of this model loads into the embedder).

    Args:
        embedder: a Keras model from the encoder's inputs [N, T] to embeddings [N, D] (a `TextEmbedder`).
        mini_batch_size: with a cached loss, the rows of a column embedded at once while training (GradCache);
            None embeds each column whole.
        bucket_width: round each column's (or mini-batch's) length up to a multiple of this; None keeps the
            batch's length (fixed shapes, as XLA and TPUs need).
        **kwargs: passed to keras.Model.

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder
    >>> from official_bert.keras_models import TextEmbedder, TextPreprocessor
    >>> embedder = TextEmbedder(BertEncoder(BertConfig.from_preset("tiny", vocab_size=9, num_hidden_layers=1)),
    ...                         TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"], sequence_length=8))
    >>> ids = np.array([[[2, 4, 3, 0], [2, 4, 5, 3]], [[2, 5, 3, 0], [2, 5, 3, 0]]])  # 2 rows of 2 texts
    >>> inputs = {"input_word_ids": ids, "input_mask": np.sign(ids), "input_type_ids": 0 * ids}
    >>> ContrastiveModel(embedder, bucket_width=2)(inputs).shape
    TensorShape([2, 2, 128])
    """

    def __init__(self, embedder, mini_batch_size=None, bucket_width=None, **kwargs):
        super().__init__(name=kwargs.pop("name", "contrastive"), **kwargs)
        if isinstance(embedder, dict):
            embedder = keras.saving.deserialize_keras_object(embedder)
        if mini_batch_size is not None and not (isinstance(mini_batch_size, int) and mini_batch_size >= 1):
            raise ValueError(f"mini_batch_size={mini_batch_size!r}: expected a positive integer or None")
        self.embedder = embedder
        self.mini_batch_size = mini_batch_size
        self.bucket_width = bucket_width

    @property
    def encoder(self):
        """The embedder's encoder (what checkpoint writers read the config of)."""
        return self.embedder.encoder

    def build(self, input_shape=None):
        self.built = True  # the embedder is built; this model adds no weights

    def call(self, inputs, training=False):
        columns = self._columns(inputs)
        if training and self.mini_batch_size:
            return _cached_embeddings(self.embedder, columns, self.mini_batch_size, self.bucket_width)
        return tf.stack([self.embedder(trim_to_longest(column, self.bucket_width), training=training)
                         for column in columns], axis=1)

    def _columns(self, inputs):
        """The batch's columns, each the encoder's inputs [B, T]."""
        count = inputs["input_word_ids"].shape[1]
        if count is None:
            raise ValueError("ContrastiveModel: the number of texts a row (axis 1 of the inputs) must be known")
        return [{name: inputs[name][:, c] for name in INPUT_NAMES} for c in range(count)]

    def get_config(self):
        return {**super().get_config(), "embedder": keras.saving.serialize_keras_object(self.embedder),
                "mini_batch_size": self.mini_batch_size, "bucket_width": self.bucket_width}


def stack_columns(columns):
    """A batch's columns of encoder inputs ({name: [B, L_c]} each) as the rows `ContrastiveModel` takes: {name:
    [B, C, L]}, each column zero-padded to the longest (padding: input_mask 0).

    Example:
    >>> a = {name: tf.ones([2, 3], tf.int32) for name in INPUT_NAMES}
    >>> b = {name: tf.ones([2, 5], tf.int32) for name in INPUT_NAMES}
    >>> stack_columns([a, b])["input_mask"].numpy()[0].tolist()
    [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
    """
    length = tf.reduce_max([tf.shape(column["input_mask"])[1] for column in columns])
    return {name: tf.stack([tf.pad(column[name], [[0, 0], [0, length - tf.shape(column[name])[1]]])
                            for column in columns], axis=1) for name in INPUT_NAMES}


def _cached_embeddings(embedder, columns, mini_batch_size, bucket_width):
    """The columns' embeddings [B, C, D], computed a mini-batch at a time, whose gradient is GradCache's."""
    generators = seed_generator_states(embedder)
    ids = [tf.stack([column[name] for column in columns], axis=1) for name in INPUT_NAMES]

    def chunks():
        """(column, start) of every mini-batch, in the order both passes take them."""
        batch = tf.shape(ids[0])[0]
        starts = tf.range(0, batch, mini_batch_size)
        count = tf.size(starts)
        return tf.repeat(tf.range(len(columns)), count), tf.tile(starts, [len(columns)])

    def chunk_inputs(column, start):
        inputs = {name: value[start:start + mini_batch_size, column] for name, value in zip(INPUT_NAMES, ids)}
        return trim_to_longest(inputs, bucket_width or 1)

    def place(column, start, embeddings):
        """[n, D] embeddings as the rows start... of column `column` of a [C, B, D] buffer (scatter indices)."""
        rows = start + tf.range(tf.shape(embeddings)[0])
        return tf.stack([tf.fill(tf.shape(rows), column), rows], axis=1)

    @tf.custom_gradient
    def embed(*id_tensors):
        del id_tensors  # read through `ids`: the same tensors
        before = [tf.identity(state.value) for state in generators]
        column_of, start_of = chunks()
        batch, width = tf.shape(ids[0])[0], embedder.output_shape[-1]
        buffer = tf.zeros([len(columns), batch, width], tf.float32)

        def forward(i, buffer):
            embeddings = tf.cast(embedder(chunk_inputs(column_of[i], start_of[i]), training=True), tf.float32)
            return i + 1, tf.tensor_scatter_nd_update(buffer, place(column_of[i], start_of[i], embeddings),
                                                      embeddings)

        _, buffer = tf.while_loop(lambda i, _: i < tf.size(column_of), forward, [0, buffer], parallel_iterations=1)
        embeddings = tf.stop_gradient(tf.transpose(buffer, [1, 0, 2]))

        def gradient(upstream, variables=None):
            variables = list(variables or [])
            for state, value in zip(generators, before):
                state.assign(value)  # the second pass draws the first pass's dropout masks
            by_column = tf.transpose(upstream, [1, 0, 2])
            # The weights: the seed generators' states (read by the dropouts) have no gradient.
            weights = [v for v in variables if v.trainable and v.dtype.is_floating]
            unconnected = set()

            def backward(i, *sums):
                column, start = column_of[i], start_of[i]
                with tf.GradientTape(watch_accessed_variables=False) as tape:
                    tape.watch(weights)
                    chunk = tf.cast(embedder(chunk_inputs(column, start), training=True), tf.float32)
                share = tf.gather_nd(by_column, place(column, start, chunk))
                added = []
                for index, (total, grad) in enumerate(zip(sums, tape.gradient(chunk, weights,
                                                                               output_gradients=share))):
                    if grad is None:
                        unconnected.add(index)  # known when the loop is traced: the same every iteration
                        added.append(total)
                    elif isinstance(grad, tf.IndexedSlices):
                        added.append(tf.tensor_scatter_nd_add(total, grad.indices[:, None], grad.values))
                    else:
                        added.append(total + grad)
                return (i + 1, *added)

            _, *sums = tf.while_loop(lambda i, *_: i < tf.size(column_of), backward,
                                     [0, *[tf.zeros_like(w) for w in weights]], parallel_iterations=1)
            found = {id(w): total for index, (w, total) in enumerate(zip(weights, sums)) if index not in unconnected}
            return [None] * len(ids), [found.get(id(v)) for v in variables]

        return embeddings, gradient

    return embed(*ids)
