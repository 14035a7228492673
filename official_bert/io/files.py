"""Files as the data tools use them: local paths through `os`, `scheme://` paths (gs://, ram://, ...) through
tf.io.gfile; user globs that take an existing path literally (`glob`); the one check of a file a user names as input
(`check_input_file`: a directory given where a file goes); and the hidden temporary names outputs are written under
(`temporary_path`), which a later run removes once their writer is dead (`remove_stale_temporaries`).

TensorFlow is imported only for a `scheme://` path: its import takes longer than a whole run of
create_pretraining_data or build_vocab on a corpus of a few MB, and nothing else in those tools needs it.
"""

import fnmatch
import glob as _glob
import os
import re
import shutil

from official_bert.errors import Error


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


_MAGIC = re.compile(r"[*?[]")  # what makes a path a glob pattern


def glob(pattern, directory=None):
    """Sorted paths matching `pattern`; with `directory`, the paths of its entries whose names match `pattern`.

    A path that exists is taken as itself before it is globbed: a file named corpus[1].txt is that file, not a
    pattern that matches corpus1.txt; so is an existing directory before the last `/` of a pattern. `directory`
    is never a pattern, whatever characters its name has. As the shell's globs, `*`, `?` and `[...]` match a
    name that starts with "." only when the pattern starts with one.

    Example:
    >>> import tempfile
    >>> work = tempfile.mkdtemp(suffix="[1]")
    >>> for name in ("corpus[1].txt", "corpus1.txt", ".corpus2.txt"):
    ...     _ = open(os.path.join(work, name), "w").write("a")
    >>> [os.path.basename(p) for p in glob(os.path.join(work, "corpus[1].txt"))]
    ['corpus[1].txt']
    >>> [os.path.basename(p) for p in glob(os.path.join(work, "corpus*.txt"))]
    ['corpus1.txt', 'corpus[1].txt']
    >>> [os.path.basename(p) for p in glob("*corpus2.txt", directory=work)]
    []
    """
    if directory is not None:
        try:
            names = listdir(directory)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [os.path.join(directory, name) for name in sorted(names) if fnmatch.fnmatchcase(name, pattern)
                and (pattern.startswith(".") or not name.startswith("."))]
    if exists(pattern):
        return [pattern]
    head, tail = os.path.split(pattern)
    if _MAGIC.search(head) and isdir(head):
        return glob(tail, directory=head)
    return sorted(_gfile().glob(pattern) if is_remote(pattern) else _glob.glob(pattern))


def exists(path):
    """Whether a file or directory `path` exists."""
    return _gfile().exists(path) if is_remote(path) else os.path.exists(path)


def listdir(path):
    """The names of the entries of the directory `path` (a missing one raises FileNotFoundError)."""
    if not is_remote(path):
        return os.listdir(path)
    if not _gfile().isdir(path):
        raise FileNotFoundError(path)
    return [name.rstrip("/") for name in _gfile().listdir(path)]


def isdir(path):
    return _gfile().isdir(path) if is_remote(path) else os.path.isdir(path)


def check_input_file(path, expected, flag=None, error=Error):
    """Raises `error` in one line when `path`, an input a user named, is a directory: the flag and path, that it is
    a directory, what was expected and the first names in it (a file there is often what was meant). Every reader of
    a user's file calls it before opening one, so that a directory is never a traceback (IsADirectoryError) or a
    message about the file's extension or content.

    Args:
        path: the path given.
        expected: what the path should be, for the message (e.g. "a CSV, TSV or JSON Lines file").
        flag: the flag or argument that gave it (e.g. "--train_file"), or None.
        error: the exception class to raise (the reader's own `official_bert.errors.Error` subclass).

    Example:
    >>> import tempfile
    >>> work = tempfile.mkdtemp()
    >>> _ = open(os.path.join(work, "train.csv"), "w").write("text,label\\n")
    >>> check_input_file(os.path.join(work, "train.csv"), "a CSV file", "--train_file")
    >>> check_input_file(work, "a CSV file", "--train_file")
    Traceback (most recent call last):
    ...
    official_bert.errors.Error: --train_file=...: is a directory; expected a CSV file (it holds train.csv)
    """
    if not isdir(path):
        return
    try:
        names = sorted(name for name in listdir(path) if not name.startswith("."))
    except Exception:  # unreadable (an OSError, or a tf.errors.OpError on gs://): the message goes without names
        names = None
    holds = ("" if names is None else " (it is empty)" if not names else
             f" (it holds {', '.join(names[:3])}{', ...' if len(names) > 3 else ''})")
    raise error(f"{f'{flag}={path}' if flag else path}: is a directory; expected {expected}{holds}")


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
    """Removes the file `path` if it exists."""
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


def remove_tree(path):
    """Removes a file or a directory tree if present; errors are ignored (cleanup only).

    Example:
    >>> import tempfile
    >>> work = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(work, "ckpt-5_temp", "part"))
    >>> remove_tree(os.path.join(work, "ckpt-5_temp")); remove_tree(os.path.join(work, "absent"))
    >>> os.listdir(work)
    []
    """
    try:
        if isdir(path):
            _gfile().rmtree(path) if is_remote(path) else shutil.rmtree(path)
        else:
            remove(path)
    except Exception:  # OSError, or a tf.errors.OpError without importing TensorFlow for local paths
        pass


def temporary_path(path):
    """The hidden name `path` is written under before it is renamed into place: globs such as out/*.tfrecord
    never match it, and the pid says whose it is (`remove_stale_temporaries`).

    Example:
    >>> temporary_path("out/train.tfrecord") == f"out/.train.tfrecord.incomplete-{os.getpid()}"
    True
    """
    head, tail = os.path.split(os.fspath(path))
    return os.path.join(head, f".{tail}.incomplete-{os.getpid()}")


# temporary_path's names, plus what writers add to them: a bundle's .index / .data-*, atomic_directory's .old.
_TEMPORARY = re.compile(r"\.(?P<output>.+?)\.incomplete-(?P<pid>[0-9]+)(?:\..*)?", re.DOTALL)


def is_stale_temporary(name, output=None):
    """Whether the file name `name` is a `temporary_path` (of the output named `output`, or of any) whose
    writer is no longer running: a killed run's leftover, not content.

    Example:
    >>> is_stale_temporary(f".vocab.txt.incomplete-{os.getpid()}"), is_stale_temporary("vocab.txt")
    (False, False)
    >>> is_stale_temporary(f".model.ckpt.incomplete-{2**22 + 7}.index", "model.ckpt")
    True
    """
    match = _TEMPORARY.fullmatch(name)
    if match is None or (output is not None and not name.startswith(f".{output}.incomplete-{match['pid']}")):
        return False
    return not pid_running(match["pid"])


def remove_stale_temporaries(directory, output=None):
    """Removes what killed runs left in `directory` (`is_stale_temporary`): the temporaries of the output
    named `output`, or of every output; returns their names. Those of running processes are left alone.

    Example:
    >>> import tempfile
    >>> work = tempfile.mkdtemp()
    >>> for name in ("out.txt", f".out.txt.incomplete-{2**22 + 7}", f".out.txt.incomplete-{os.getpid()}"):
    ...     _ = open(os.path.join(work, name), "w").write("a")
    >>> remove_stale_temporaries(work, "out.txt") == [f".out.txt.incomplete-{2**22 + 7}"]
    True
    >>> sorted(os.listdir(work)) == sorted(["out.txt", f".out.txt.incomplete-{os.getpid()}"])
    True
    """
    directory = directory or "."
    try:
        names = listdir(directory)
    except Exception:  # missing or unreadable: nothing to clean (and a tf.errors.OpError on gs://, ...)
        return []
    stale = sorted(name for name in names if is_stale_temporary(name, output))
    for name in stale:
        remove_tree(os.path.join(directory, name))
    return stale


def pid_running(pid):
    """Whether a process of this host has the id `pid` (one of another user's counts as running: not ours to
    judge dead; so does a pid this system cannot have).

    Example:
    >>> pid_running(os.getpid()), pid_running(2**22 + 7)
    (True, False)
    """
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError):
        return True
    return True
