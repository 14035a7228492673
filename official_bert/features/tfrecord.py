"""Features as a TFRecord file of tf.train.Examples, one per input, for tf.data pipelines.

Each Example holds `linex_index` (int64), `layers` (int64 [L]), `values` (the array's raw little-endian bytes),
`shape` (int64: [tokens, L, H], or [L, H] when pooled) and `dtype` ("float32" or "float16"); per-token features
add `tokens` (bytes [tokens]) and `token_ids` (int64 [tokens]). In a graph:
`tf.reshape(tf.io.decode_raw(values, tf.float16), shape)`.
"""

import numpy as np
import tensorflow as tf

from official_bert.features.output_file import OutputFile


def feature_example(extracted, layers, dtype="float32"):
    """The tf.train.Example of one input's features.

    Args:
        extracted: an `extractor.Extracted`.
        layers: the layer indexes of its values.
        dtype: "float32" or "float16".

    Example:
    >>> from official_bert.features.extractor import Extracted
    >>> example = feature_example(Extracted(3, ("[CLS]", "[SEP]"), (2, 3), np.ones((2, 1, 4), np.float32)), [-1])
    >>> sorted(example.features.feature)
    ['dtype', 'layers', 'linex_index', 'shape', 'token_ids', 'tokens', 'values']
    """
    values = np.ascontiguousarray(extracted.values, np.dtype(dtype).newbyteorder("<"))
    feature = {"linex_index": _int64s([extracted.unique_id]), "layers": _int64s(layers),
               "values": _bytes([values.tobytes()]), "shape": _int64s(values.shape),
               "dtype": _bytes([np.dtype(dtype).name.encode()])}
    if values.ndim == 3:
        feature["tokens"] = _bytes([token.encode("utf-8") for token in extracted.tokens])
        feature["token_ids"] = _int64s(extracted.input_ids)
    return tf.train.Example(features=tf.train.Features(feature=feature))


def parse_feature_example(serialized):
    """A serialized `feature_example` → {"linex_index": int, "layers": [...], "values": ndarray, "tokens": [...],
    "token_ids": [...]} (the last two for per-token features).

    Args:
        serialized: the record's bytes.

    Example:
    >>> from official_bert.features.extractor import Extracted
    >>> extracted = Extracted(3, ("[CLS]", "[SEP]"), (2, 3), np.arange(8, dtype=np.float32).reshape(2, 1, 4))
    >>> parsed = parse_feature_example(feature_example(extracted, [-1], "float16").SerializeToString())
    >>> parsed["linex_index"], parsed["tokens"], parsed["values"].dtype, parsed["values"][1, 0].tolist()
    (3, ['[CLS]', '[SEP]'], dtype('float16'), [4.0, 5.0, 6.0, 7.0])
    """
    feature = tf.train.Example.FromString(serialized).features.feature
    dtype = np.dtype(feature["dtype"].bytes_list.value[0].decode()).newbyteorder("<")
    values = np.frombuffer(feature["values"].bytes_list.value[0], dtype).reshape(feature["shape"].int64_list.value)
    parsed = {"linex_index": feature["linex_index"].int64_list.value[0],
              "layers": list(feature["layers"].int64_list.value), "values": values.astype(dtype.name)}
    if "tokens" in feature:
        parsed["tokens"] = [token.decode("utf-8") for token in feature["tokens"].bytes_list.value]
        parsed["token_ids"] = list(feature["token_ids"].int64_list.value)
    return parsed


def _int64s(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))


def _bytes(values):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


class TfrecordWriter(OutputFile):
    """Writes a `feature_example` per input.

    Args:
        path: the output file (local or any tf.io.gfile filesystem).
        layers: the layer indexes of the values.
        dtype: "float32" or "float16", the values' type in the file.

    Example:
    >>> import os, tempfile
    >>> from official_bert.features.extractor import Extracted
    >>> path = os.path.join(tempfile.mkdtemp(), "features.tfrecord")
    >>> with TfrecordWriter(path, [-1]) as writer:
    ...     writer.write(Extracted(0, ("[CLS]",), (2,), np.ones((1, 1, 2), np.float32)))
    >>> [parse_feature_example(r.numpy())["values"].shape for r in tf.data.TFRecordDataset(path)]
    [(1, 1, 2)]
    """

    def __init__(self, path, layers, dtype="float32"):
        super().__init__(path)
        self.layers = list(layers)
        self.dtype = dtype

    def _open(self, tmp, stack):
        self._writer = stack.enter_context(tf.io.TFRecordWriter(tmp))

    def write(self, extracted):
        self._writer.write(feature_example(extracted, self.layers, self.dtype).SerializeToString())
        self.count += 1

    def _close(self):
        pass
