"""Files as the data tools use them: local paths through `os`, `scheme://` paths (gs://, ram://, ...) through
tf.io.gfile.

TensorFlow is imported only for a `scheme://` path: its import takes longer than a whole run of
create_pretraining_data or build_vocab on a corpus of a few MB, and nothing else in those tools needs it.
"""

import glob as _glob
import os


def is_remote(path):
    """Whether `path` names a tf.io.gfile filesystem other than the local one (gs://, ram://, hdfs://, ...).

    Example:
    >>> is_remote("gs://bucket/corpus.txt"), is_remote("corpus.txt")
    (True, False)
    """
    return "://" in os.fspath(path)


def _gfile():
    import tensorflow as tf
    return tf.io.gfile


def glob(pattern):
    """Sorted paths matching `pattern`."""
    return sorted(_gfile().glob(pattern) if is_remote(pattern) else _glob.glob(pattern))


def isdir(path):
    return _gfile().isdir(path) if is_remote(path) else os.path.isdir(path)


def open_file(path, mode="rb"):
    """A binary file object for reading ("rb") or writing ("wb")."""
    return _gfile().GFile(path, mode) if is_remote(path) else open(path, mode)


def makedirs(path):
    if is_remote(path):
        _gfile().makedirs(path)
    else:
        os.makedirs(path, exist_ok=True)


def rename(source, target):
    """Moves `source` onto `target`, replacing it."""
    if is_remote(source):
        _gfile().rename(source, target, overwrite=True)
    else:
        os.replace(source, target)


def remove(path):
    """Removes `path` if it exists."""
    try:
        if is_remote(path):
            _gfile().remove(path)
        else:
            os.remove(path)
    except FileNotFoundError:
        pass
    except Exception as e:  # tf.errors.NotFoundError, without importing TensorFlow for local paths
        if type(e).__name__ != "NotFoundError":
            raise
