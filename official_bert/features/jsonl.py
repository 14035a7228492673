"""The original extract_features.py's output: one JSON object per input, every token's values at every layer."""

import json

import numpy as np
import tensorflow as tf

from official_bert.features.output_file import OutputFile

# Above this, x * 1e6 is no longer an exact integer in float64 and `round6` takes the slow path.
_FAST_LIMIT = 2.0 ** 53 / 1e6


def round6(values):
    """`round(float(x), 6)` for every element of a float32 array, vectorised: the same float64 values.

    For float32 x, x * 1e6 is exact in float64 (24 + 14 significant bits), so rint (ties to even) rounds it as
    Python's correctly rounded `round` does, and the IEEE division by 1e6 gives the double nearest to the
    decimal result, which is what `round` returns.

    Args:
        values: a float32 array.

    Example:
    >>> x = np.array([0.0078125, 0.0234375, -1e-7, 0.1234565], np.float32)  # two exact ties, a -0.0
    >>> round6(x).tolist() == [round(float(v), 6) for v in x]
    True
    """
    wide = np.asarray(values, np.float32).astype(np.float64)
    if np.abs(wide).max(initial=0.0) >= _FAST_LIMIT:
        return np.array([round(float(x), 6) for x in wide.flat]).reshape(wide.shape)
    return np.rint(wide * 1e6) / 1e6


def jsonl_record(extracted, layers):
    """The JSON line of one input, key for key and digit for digit as the original writes it.

    Per token: `{"linex_index": i, "features": [{"token": t, "layers": [{"index": l, "values": [...]}, ...]},
    ...]}`, values rounded to 6 decimals. Pooled features have no tokens: `{"linex_index": i, "layers": [...]}`.

    Args:
        extracted: an `extractor.Extracted`.
        layers: the layer indexes its values hold, in order.

    Example:
    >>> from official_bert.features.extractor import Extracted
    >>> values = np.array([[[0.25, -1.0]], [[0.0000123, 3.0]]], np.float32)  # 2 tokens, 1 layer, H = 2
    >>> jsonl_record(Extracted(7, ("[CLS]", "[SEP]"), (2, 3), values), [-1])
    '{"linex_index": 7, "features": [{"token": "[CLS]", "layers": [{"index": -1, "values": [0.25, -1.0]}]}, {"token": "[SEP]", "layers": [{"index": -1, "values": [1.2e-05, 3.0]}]}]}'
    """
    rounded = round6(extracted.values).tolist()
    if extracted.values.ndim == 2:
        record = {"linex_index": extracted.unique_id, "layers": _layers(layers, rounded)}
    else:
        record = {"linex_index": extracted.unique_id,
                  "features": [{"token": token, "layers": _layers(layers, token_values)}
                               for token, token_values in zip(extracted.tokens, rounded)]}
    return json.dumps(record)


def _layers(layers, values):
    return [{"index": layer, "values": layer_values} for layer, layer_values in zip(layers, values)]


class JsonlWriter(OutputFile):
    """Writes `jsonl_record`s, one line each.

    Args:
        path: the output file (local or any tf.io.gfile filesystem).
        layers: the layer indexes of the values.

    Example:
    >>> import os, tempfile
    >>> from official_bert.features.extractor import Extracted
    >>> path = os.path.join(tempfile.mkdtemp(), "features.jsonl")
    >>> with JsonlWriter(path, [-1]) as writer:
    ...     writer.write(Extracted(0, ("[CLS]",), (2,), np.ones((1, 1, 2), np.float32)))
    >>> open(path).read()
    '{"linex_index": 0, "features": [{"token": "[CLS]", "layers": [{"index": -1, "values": [1.0, 1.0]}]}]}\\n'
    """

    def __init__(self, path, layers):
        super().__init__(path)
        self.layers = list(layers)

    def _open(self, tmp, stack):
        self._file = stack.enter_context(tf.io.gfile.GFile(tmp, "w"))

    def write(self, extracted):
        self._file.write(jsonl_record(extracted, self.layers) + "\n")
        self.count += 1

    def _close(self):
        pass
