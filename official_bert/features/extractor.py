"""The encoder's hidden states at chosen layers for a stream of tokenized texts, in batches, pooled or per token."""

import dataclasses
import itertools

import numpy as np
import tensorflow as tf

from official_bert.features.errors import FeatureError
from official_bert.features.pooling import SentencePooling

# Texts sorted by length together, so that a batch pads to little more than its longest; their results are
# written back in input order, so memory stays bounded by one window.
WINDOW_BATCHES = 16


@dataclasses.dataclass(frozen=True)
class Extracted:
    """One text's features.

    Args:
        unique_id: the input's line number.
        tokens: its tokens, [CLS] and [SEP]s included.
        input_ids: their ids.
        values: float32 [len(tokens), len(layers), H], each token's vector at each requested layer, or
            [len(layers), H] when pooled.
    """

    unique_id: int
    tokens: tuple
    input_ids: tuple
    values: np.ndarray


def parse_layers(text, num_layers):
    """The --layers flag ("-1,-2,-3,-4") as a list of layer indexes, Python-style (-1 the last layer).

    Args:
        text: comma-separated integers.
        num_layers: the model's num_hidden_layers.

    Raises:
        FeatureError: not integers, or out of range for the model.

    Example:
    >>> parse_layers("-1,-2,0", num_layers=4)
    [-1, -2, 0]
    >>> parse_layers("-5", num_layers=4)
    Traceback (most recent call last):
    ...
    official_bert.features.errors.FeatureError: --layers=-5: layer -5 does not exist in a model of 4 layers (use -4 ... 3)
    """
    try:
        layers = [int(x) for x in text.split(",")]
    except ValueError:
        raise FeatureError(f"--layers={text}: expected comma-separated integers such as -1,-2,-3,-4") from None
    for layer in layers:
        if not -num_layers <= layer < num_layers:
            raise FeatureError(f"--layers={text}: layer {layer} does not exist in a model of {num_layers} layers "
                               f"(use {-num_layers} ... {num_layers - 1})")
    return layers


class FeatureExtractor:
    """Runs a `BertEncoder` over `TokenizedInput`s and yields their `Extracted` features in input order.

    The values are the encoder's `encoder_outputs` at `layers` (the original's `get_all_encoder_layers()`), at
    every real token, or pooled over the real tokens by `SentencePooling`. Each batch is padded only to its
    longest text.

    Args:
        encoder: a `BertEncoder` with its weights loaded.
        layers: layer indexes (see `parse_layers`).
        pooling: None for every token's vector, else one of `pooling.POOLINGS`.
        normalize: L2-normalise each pooled vector.
        batch_size: texts per forward pass.

    Example:
    >>> from official_bert import BertConfig, BertEncoder
    >>> from official_bert.features.inputs import TokenizedInput
    >>> encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=10, num_hidden_layers=2))
    >>> texts = [TokenizedInput(0, ("[CLS]", "a", "[SEP]"), (2, 5, 3), (0, 0, 0)),
    ...          TokenizedInput(1, ("[CLS]", "[SEP]"), (2, 3), (0, 0))]
    >>> [f.values.shape for f in FeatureExtractor(encoder, [-1, 0]).extract(texts)]
    [(3, 2, 128), (2, 2, 128)]
    >>> [f.values.shape for f in FeatureExtractor(encoder, [-1], pooling="mean").extract(texts)]
    [(1, 128), (1, 128)]
    """

    def __init__(self, encoder, layers, pooling=None, normalize=False, batch_size=32):
        if normalize and not pooling:
            raise FeatureError("--normalize needs --pooling=cls, mean or max: it normalises pooled vectors")
        self.encoder = encoder
        self.layers = list(layers)
        self.pooling = pooling
        self.batch_size = batch_size
        self._pool = SentencePooling(pooling, normalize) if pooling else None
        spec = tf.TensorSpec([None, None], tf.int32)
        self._forward = tf.function(self._values, input_signature=[spec, spec, spec])

    def _values(self, input_word_ids, input_mask, input_type_ids):
        outputs = self.encoder({"input_word_ids": input_word_ids, "input_mask": input_mask,
                                "input_type_ids": input_type_ids}, training=False)["encoder_outputs"]
        values = tf.stack([outputs[i] for i in self.layers], axis=1)  # [B, L, T, H]
        if self._pool is not None:
            return self._pool(values, input_mask)
        return tf.transpose(values, [0, 2, 1, 3])

    def extract(self, tokenized):
        """Yields an `Extracted` for each `TokenizedInput` of the iterable `tokenized`, in its order."""
        tokenized = iter(tokenized)
        while window := list(itertools.islice(tokenized, self.batch_size * WINDOW_BATCHES)):
            values = [None] * len(window)
            order = sorted(range(len(window)), key=lambda i: len(window[i].input_ids))
            for start in range(0, len(order), self.batch_size):
                rows = order[start:start + self.batch_size]
                batch = self._forward(*_padded([window[i] for i in rows])).numpy()
                for row, i in enumerate(rows):
                    values[i] = batch[row] if self._pool is not None else batch[row, :len(window[i].input_ids)]
            for text, text_values in zip(window, values):
                yield Extracted(text.unique_id, text.tokens, text.input_ids, text_values)


def _padded(texts):
    """input_word_ids, input_mask, input_type_ids: int32 [len(texts), longest], zero-padded."""
    length = max(len(t.input_ids) for t in texts)
    arrays = np.zeros((3, len(texts), length), np.int32)
    for row, text in enumerate(texts):
        arrays[0, row, :len(text.input_ids)] = text.input_ids
        arrays[1, row, :len(text.input_ids)] = 1
        arrays[2, row, :len(text.input_ids)] = text.input_type_ids
    return tuple(arrays)
