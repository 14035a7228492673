"""Versioned export directories as TF Serving reads them: export_dir/1/, export_dir/2/, ... each complete or absent.

A new version is written into a hidden temporary directory inside export_dir and renamed to the next number
when it is complete, so a server polling export_dir (it loads only numbered directories) never sees half of one.
A killed export's temporary directory (as big as the model) is removed by the next export into export_dir.
"""

import os
import uuid

import tensorflow as tf

from official_bert.io.atomic import OutputError, move_tree, remove_tree, temporary_path
from official_bert.io.files import is_remote, remove_stale_temporaries


def versions(export_dir):
    """The version numbers present in export_dir, ascending.

    Args:
        export_dir: the directory of versions (may not exist).

    Example:
    >>> import tempfile
    >>> export_dir = tempfile.mkdtemp()
    >>> for name in ("1", "7", "notes", ".version.incomplete-9"):
    ...     os.mkdir(os.path.join(export_dir, name))
    >>> versions(export_dir)
    [1, 7]
    """
    if not tf.io.gfile.isdir(export_dir):
        return []
    names = (name.rstrip("/") for name in tf.io.gfile.listdir(export_dir))  # object stores add a "/"
    return sorted(int(name) for name in names
                  if name.isdigit() and tf.io.gfile.isdir(os.path.join(export_dir, name)))


def write_new_version(export_dir, write):
    """Calls `write(directory)` on an empty temporary directory, then renames it to export_dir/<n>, n the next
    version number; returns that path. If `write` raises, nothing is left behind; what a killed export left in
    export_dir is removed first.

    Args:
        export_dir: the directory of versions (created if needed).
        write: a function that fills the directory it is given.

    Example:
    >>> import tempfile
    >>> export_dir = tempfile.mkdtemp()
    >>> def write(directory):
    ...     open(os.path.join(directory, "saved_model.pb"), "w").close()
    >>> [os.path.basename(write_new_version(export_dir, write)) for _ in range(2)]
    ['1', '2']
    >>> _ = open(os.path.join(export_dir, "3"), "w").write("a file of the user's, named like a version")
    >>> os.path.basename(write_new_version(export_dir, write))
    '4'
    >>> sorted(os.listdir(export_dir))
    ['1', '2', '3', '4']
    """
    remove_stale_temporaries(export_dir)  # killed exports' (a running one's is left alone)
    tmp = temporary_path(os.path.join(export_dir, f"version-{uuid.uuid4().hex[:8]}"))
    tf.io.gfile.makedirs(tmp)
    try:
        write(tmp)
        for _ in range(_ATTEMPTS):
            target = os.path.join(export_dir, str(_next_number(export_dir)))
            try:
                move_tree(tmp, target)
                return target
            except tf.errors.AlreadyExistsError:
                continue  # another exporter took this number meanwhile: try the next
            except (OSError, tf.errors.OpError):
                if is_remote(target):
                    # Renamed file by file there, and failed on the way: what was moved is not a version.
                    remove_tree(target)
                    raise
                if not tf.io.gfile.exists(target):
                    raise  # else another exporter took this number meanwhile: try the next
        raise OutputError(f"{export_dir}: no free version number after {_ATTEMPTS} attempts (other exports keep "
                          "taking them?)")
    finally:
        remove_tree(tmp)


# Tries at a free version number: each failed try means another exporter took one meanwhile.
_ATTEMPTS = 100


def _next_number(export_dir):
    """One more than every numbered name in export_dir, directories or not: a user's file named `2` is skipped
    over, never taken for a free number."""
    names = (name.rstrip("/") for name in tf.io.gfile.listdir(export_dir))
    return max([int(name) for name in names if name.isdigit()] + [0]) + 1
