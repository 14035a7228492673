"""Paths on every tf.io.gfile filesystem: which are remote, which are files, the files under a directory, a file's
content hash, and local copies for libraries that read only local files (safetensors, sentencepiece)."""

import contextlib
import hashlib
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


def files_under(directory):
    """The paths, relative to `directory`, of every file below it (any filesystem), sorted.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(work, "variables"))
    >>> for name in ("saved_model.pb", "variables/variables.index"):
    ...     _ = open(os.path.join(work, name), "w").write("x")
    >>> files_under(work)
    ['saved_model.pb', 'variables/variables.index']
    """
    directory = os.fspath(directory).rstrip("/")
    found = []
    for parent, _, names in tf.io.gfile.walk(directory):
        relative = parent.rstrip("/")[len(directory):].strip("/")
        found += [os.path.join(relative, name.rstrip("/")) for name in names]
    return sorted(found)


def hash_file(path, digest=None):
    """Feeds the bytes of `path` (any filesystem, read once in 1 MiB chunks) to `digest` (default: a new sha256);
    returns (digest, the file's number of newlines).

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "w").write("one\\ntwo\\n")
    >>> digest, lines = hash_file(path)
    >>> digest.hexdigest() == hashlib.sha256(b"one\\ntwo\\n").hexdigest(), lines
    (True, 2)
    """
    digest = hashlib.sha256() if digest is None else digest
    lines = 0
    with tf.io.gfile.GFile(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
            lines += chunk.count(b"\n")
    return digest, lines
