"""Paths on every tf.io.gfile filesystem: which are remote, which are files, and local copies for libraries that
read only local files (safetensors, sentencepiece)."""

import contextlib
import os
import tempfile

import tensorflow as tf

from official_bert.io.files import is_remote


def is_file(path):
    """Whether `path` exists and is not a directory, on any filesystem.

    Example:
    >>> import tempfile
    >>> is_file(tempfile.mkdtemp()), is_file("/nonexistent/vocab.txt")
    (False, False)
    """
    return tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path)


@contextlib.contextmanager
def local_copy(path):
    """Yields a local file with the contents of `path`: `path` itself when local, else a temporary copy.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "w").write("x")
    >>> with local_copy(path) as local:
    ...     local == path
    True
    """
    if not is_remote(path):
        yield os.fspath(path)
        return
    with tempfile.TemporaryDirectory(prefix="official_bert_") as directory:
        local = os.path.join(directory, os.path.basename(path))
        tf.io.gfile.copy(path, local, overwrite=True)
        yield local
