"""Paths as the data tools use them: local files through `os`, `scheme://` paths (gs://, ...) through tf.io.gfile.

TensorFlow is imported only for a `scheme://` path: its import takes longer than a whole run on a corpus of a few
MB, and nothing else in the data tools needs it.
"""

import errno
import glob as _glob
import os
import tempfile

from official_bert.pretraining_data.errors import PretrainingDataError


def is_remote(path):
    """True for a `scheme://` path, which goes through tf.io.gfile.

    >>> is_remote("gs://bucket/corpus.txt"), is_remote("corpus.txt")
    (True, False)
    """
    return "://" in path


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


def check_output_file(path, flag="--output_file"):
    """Raises PretrainingDataError unless `path` can be written as a file, before any work is done.

    The path must not be a directory; its directory, or the nearest one above it that exists (missing ones are
    created when the output is written), must be a directory where a file can be created. Nothing is left behind.

    Example:
    >>> import tempfile
    >>> check_output_file(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.pretraining_data.errors.PretrainingDataError: --output_file: ... is a directory; expected a file name
    """
    if isdir(path):
        raise PretrainingDataError(f"{flag}: {path} is a directory; expected a file name")
    if is_remote(path):
        return  # permissions are the object store's; a failure to write is reported when it happens
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise PretrainingDataError(f"{flag}: cannot write {path}: {parent} is a file, not a directory")
    try:  # an unnamed file, gone when closed: os.access would say yes to root on a read-only directory
        tempfile.TemporaryFile(dir=parent).close()
    except OSError as e:
        raise PretrainingDataError(f"{flag}: cannot write {path}: the directory {parent} is not writable "
                                   f"({e.strerror})") from None


def write_error(path, error, flag="--output_file"):
    """A PretrainingDataError for a failed write of `path`, in one line ("No space left on device", ...)."""
    reason = os.strerror(error.errno) if getattr(error, "errno", None) in errno.errorcode else str(error)
    return PretrainingDataError(f"{flag}: cannot write {path}: {reason}")
