"""Features as NumPy arrays in one .npz file, written in bounded memory however many inputs there are.

Per-token features are ragged, so they are stored flat with offsets: input i's tokens are rows
`token_offsets[i]:token_offsets[i + 1]` of `values` [total tokens, len(layers), H], `tokens` and `token_ids`.
Pooled features are `values` [inputs, len(layers), H]. Both have `linex_index` [inputs] and `layers`.
"""

import shutil
import tempfile
import zipfile

import numpy as np
import tensorflow as tf

from official_bert.features.output_file import OutputFile

_TOKENS_PER_CHUNK = 1 << 16


class NpzWriter(OutputFile):
    """Writes features as an .npz archive (see the module docstring for its arrays).

    Rows are appended to local temporary files as they come and copied into the archive when it closes, since
    an array's header holds its final length.

    Args:
        path: the output file (local or any tf.io.gfile filesystem).
        layers: the layer indexes of the values.
        dtype: "float32" or "float16", the values' type in the file.

    Example:
    >>> import os
    >>> from official_bert.features.extractor import Extracted
    >>> path = os.path.join(tempfile.mkdtemp(), "features.npz")
    >>> with NpzWriter(path, [-1, -2], dtype="float16") as writer:
    ...     writer.write(Extracted(0, ("[CLS]", "hi", "[SEP]"), (2, 5, 3), np.ones((3, 2, 4), np.float32)))
    ...     writer.write(Extracted(1, ("[CLS]", "[SEP]"), (2, 3), np.zeros((2, 2, 4), np.float32)))
    >>> f = np.load(path)
    >>> f["values"].shape, f["values"].dtype, f["token_offsets"].tolist(), f["tokens"][3:].tolist()
    ((5, 2, 4), dtype('float16'), [0, 3, 5], ['[CLS]', '[SEP]'])
    """

    def __init__(self, path, layers, dtype="float32"):
        super().__init__(path)
        self.layers = list(layers)
        self.dtype = np.dtype(dtype)
        self._pooled = None

    def _open(self, tmp, stack):
        self._tmp = tmp
        self._values = stack.enter_context(_Column(self.dtype))
        self._ids = stack.enter_context(_Column(np.int64))
        self._token_ids = stack.enter_context(_Column(np.int32))
        self._tokens = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
        self._offsets, self._longest_token = [0], 1

    def write(self, extracted):
        pooled = extracted.values.ndim == 2
        if self._pooled is None:
            self._pooled = pooled
        self._values.append(extracted.values[None] if pooled else extracted.values)
        self._ids.append(np.array([extracted.unique_id]))
        if not pooled:
            self._token_ids.append(np.array(extracted.input_ids))
            self._tokens.write("".join(token + "\n" for token in extracted.tokens))
            self._longest_token = max(self._longest_token, *map(len, extracted.tokens))
            self._offsets.append(self._offsets[-1] + len(extracted.tokens))
        self.count += 1

    def _close(self):
        with tf.io.gfile.GFile(self._tmp, "wb") as f, zipfile.ZipFile(_Stream(f), "w") as archive:
            self._values.copy_into(archive, "values", tail=self._values_shape())
            self._ids.copy_into(archive, "linex_index")
            _write_array(archive, "layers", np.array(self.layers, np.int64))
            if not self._pooled:
                _write_array(archive, "token_offsets", np.array(self._offsets, np.int64))
                self._token_ids.copy_into(archive, "token_ids")
                self._write_tokens(archive)

    def _values_shape(self):
        return self._values.row_shape or (len(self.layers), 0)

    def _write_tokens(self, archive):
        dtype = np.dtype(f"<U{self._longest_token}")
        self._tokens.seek(0)
        with archive.open("tokens.npy", "w", force_zip64=True) as entry:
            np.lib.format.write_array_header_1_0(entry, _header(dtype, (self._offsets[-1],)))
            chunk = []
            for line in self._tokens:
                chunk.append(line[:-1])
                if len(chunk) == _TOKENS_PER_CHUNK:
                    entry.write(np.array(chunk, dtype).tobytes())
                    chunk = []
            entry.write(np.array(chunk, dtype).tobytes())


class _Column:
    """The rows of one array, appended to a local temporary file."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.rows = 0
        self.row_shape = None

    def __enter__(self):
        self._file = tempfile.TemporaryFile()
        return self

    def __exit__(self, *exc):
        self._file.close()

    def append(self, array):
        array = np.ascontiguousarray(array, self.dtype)
        self.row_shape = array.shape[1:]
        self._file.write(array.tobytes())
        self.rows += len(array)

    def copy_into(self, archive, name, tail=()):
        self._file.seek(0)
        with archive.open(f"{name}.npy", "w", force_zip64=True) as entry:
            np.lib.format.write_array_header_1_0(entry, _header(self.dtype, (self.rows, *(self.row_shape or tail))))
            shutil.copyfileobj(self._file, entry)


class _Stream:
    """A file with only `write` and `flush`, so that zipfile streams into it instead of seeking back (a
    tf.io.gfile file being written cannot seek)."""

    def __init__(self, file):
        self._file = file

    def write(self, data):
        self._file.write(data)
        return len(data)

    def flush(self):
        self._file.flush()


def _header(dtype, shape):
    return {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": tuple(shape)}


def _write_array(archive, name, array):
    with archive.open(f"{name}.npy", "w", force_zip64=True) as entry:
        np.lib.format.write_array(entry, array)
