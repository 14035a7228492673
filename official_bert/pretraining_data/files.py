"""The data tools' checks of their output paths, and their one-line write errors."""

import errno
import os
import tempfile

from official_bert.io.files import is_remote, isdir
from official_bert.pretraining_data.errors import PretrainingDataError


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
