"""Writing outputs atomically on every filesystem tf.io.gfile reaches (local, gs://, ram://, ...).

Each output is written under a hidden temporary name beside it (`.<name>.incomplete-<pid>`, which globs such as
`out/*.tfrecord` never match) and renamed into place when complete, so a reader never sees half a file and a
failed or interrupted write leaves nothing behind. Only SIGKILL (or a lost machine) can leave the temporary
file: the next write of the same output removes it once its pid is no longer running
(`files.remove_stale_temporaries`). A local rename is atomic; on an object store (gs://) it is a copy and a
delete: the target is whole or absent, never half-written. A directory output replaces only an earlier one of its
own, whose files it listed (`atomic_directory`): it never deletes what it did not write.
"""

import contextlib
import json
import os
import tempfile

import tensorflow as tf

from official_bert.errors import Error
from official_bert.io.files import is_remote, remove_stale_temporaries, remove_tree, temporary_path
from official_bert.io.paths import files_under

# The two files of a TF checkpoint bundle with one shard, index last: a prefix whose `.index` exists is
# complete, because the data file was renamed into place first.
BUNDLE_SUFFIXES = (".data-00000-of-00001", ".index")

# The hidden file in which `atomic_directory` lists the files it wrote: those, and only those, a later write may
# replace.
WRITTEN_NAME = ".official_bert.written"

# What a failed write raises: the OS's errors on local files, TensorFlow's on gfile ones.
WRITE_ERRORS = (OSError, tf.errors.OpError)


class OutputError(Error):
    """An output that cannot be written (read-only location, full disk, a file in the way); names the path."""


def reason(error):
    """The short reason of an OS or TensorFlow error, for a one-line message.

    Example:
    >>> reason(OSError(28, "No space left on device"))
    'No space left on device'
    """
    if isinstance(error, tf.errors.OpError):
        return error.message.strip().splitlines()[0] if error.message.strip() else type(error).__name__
    return error.strerror or str(error)


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path beside `path`; on success it is renamed to `path`, on failure removed.

    A write that fails (full disk, read-only location, ...) raises `OutputError` naming `path`.

    Args:
        path: the output file, local or on any tf.io.gfile filesystem.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.TemporaryDirectory()
    >>> target = os.path.join(work.name, "out.txt")
    >>> with atomic_path(target) as tmp:
    ...     _ = open(tmp, "w").write("done")
    >>> open(target).read(), os.listdir(work.name)
    ('done', ['out.txt'])
    """
    path = os.fspath(path)
    _remove_stale(path)
    tmp = temporary_path(path)
    try:
        yield tmp
        tf.io.gfile.rename(tmp, path, overwrite=True)
    except WRITE_ERRORS as e:
        raise OutputError(f"{path}: cannot write it ({reason(e)})") from None
    finally:
        remove_tree(tmp)


@contextlib.contextmanager
def atomic_local_path(path):
    """Like `atomic_path`, but the temporary path is always a local file, for libraries that write only local
    files (safetensors, sentencepiece): on another filesystem it is copied there before the rename.

    Example:
    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "model.bin")
    >>> with atomic_local_path(target) as tmp:
    ...     _ = open(tmp, "wb").write(b"\\x00")
    >>> os.path.getsize(target)
    1
    """
    with atomic_path(path) as tmp:
        if not is_remote(path):
            yield tmp
            return
        with tempfile.TemporaryDirectory(prefix="official_bert_") as directory:
            local = os.path.join(directory, os.path.basename(path))
            yield local
            tf.io.gfile.copy(local, tmp, overwrite=True)


@contextlib.contextmanager
def atomic_bundle(prefix, suffixes=BUNDLE_SUFFIXES):
    """Like `atomic_path`, for a TF checkpoint prefix: yields a temporary prefix, renames its files after.

    Args:
        prefix: the checkpoint prefix, e.g. run/model.ckpt.
        suffixes: the bundle's files, renamed in this order (the index last).
    """
    prefix = os.fspath(prefix)
    _remove_stale(prefix)
    tmp = temporary_path(prefix)
    try:
        yield tmp
        for suffix in suffixes:
            tf.io.gfile.rename(tmp + suffix, prefix + suffix, overwrite=True)
    except WRITE_ERRORS as e:
        raise OutputError(f"{prefix}: cannot write the checkpoint ({reason(e)})") from None
    finally:
        for suffix in suffixes:
            remove_tree(tmp + suffix)


@contextlib.contextmanager
def atomic_directory(path):
    """Yields an empty temporary directory beside `path`; on success it replaces `path`, on failure it is removed:
    `path` is the old tree or the new one, never half of one.

    Only what an earlier `atomic_directory` wrote is ever replaced: each directory it fills lists its files in a
    hidden `WRITTEN_NAME` file, and a directory already at `path` must hold nothing else (or nothing). A user's
    files there, or a regular file at `path`, raise `OutputError` naming them and stay as they were — checked
    before the caller's work (`check_replaceable`) and again just before the replacement.

    Args:
        path: the output directory, local or on any tf.io.gfile filesystem (its parent is created).

    Example:
    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "hub", "encoder")
    >>> for text in ("old", "new"):
    ...     with atomic_directory(target) as tmp:
    ...         _ = open(os.path.join(tmp, "saved_model.pb"), "w").write(text)
    >>> open(os.path.join(target, "saved_model.pb")).read(), os.listdir(os.path.dirname(target))
    ('new', ['encoder'])
    >>> _ = open(os.path.join(target, "notes.txt"), "w").write("mine")
    >>> with atomic_directory(target) as tmp:  # doctest: +ELLIPSIS
    ...     pass
    Traceback (most recent call last):
    ...
    official_bert.io.atomic.OutputError: .../hub/encoder holds files this tool did not write (notes.txt): ...
    """
    path = os.fspath(path).rstrip("/")
    _remove_stale(path)
    check_replaceable(path)
    # Neither name extends the other: on a filesystem listed by prefix (ram://), walking one would list the other.
    tmp = temporary_path(path) + ".new"
    old = temporary_path(path) + ".old"
    try:
        remove_tree(tmp)
        tf.io.gfile.makedirs(tmp)
        yield tmp
        with tf.io.gfile.GFile(os.path.join(tmp, WRITTEN_NAME), "w") as f:
            f.write(json.dumps(files_under(tmp)))
        check_replaceable(path)  # a file put there while the caller worked is as much the user's
        if tf.io.gfile.exists(path):
            move_tree(path, old)
        move_tree(tmp, path)
    except WRITE_ERRORS as e:
        if tf.io.gfile.exists(old) and not tf.io.gfile.exists(path):
            move_tree(old, path)
        raise OutputError(f"{path}: cannot write it ({reason(e)})") from None
    finally:
        remove_tree(tmp)
        remove_tree(old)


def check_replaceable(path):
    """Raises `OutputError` unless `atomic_directory(path)` may replace what is at `path`: nothing, an empty
    directory, or one holding only the files an earlier `atomic_directory` wrote there. A caller with long work
    before its `atomic_directory` calls this first, to refuse before the work.

    Args:
        path: the output directory.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> check_replaceable(os.path.join(work, "new")); check_replaceable(work)
    >>> _ = open(os.path.join(work, "model.tflite"), "w").write("a file of the user's")
    >>> check_replaceable(os.path.join(work, "model.tflite"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.io.atomic.OutputError: .../model.tflite is a file; expected a directory (the file is left as it is)
    """
    path = os.fspath(path).rstrip("/")
    try:
        if not tf.io.gfile.exists(path):
            return
        if not tf.io.gfile.isdir(path):
            raise OutputError(f"{path} is a file; expected a directory (the file is left as it is)")
        present = files_under(path)
        try:
            with tf.io.gfile.GFile(os.path.join(path, WRITTEN_NAME), "rb") as f:
                written = set(json.loads(f.read().decode("utf-8")))
        except (*WRITE_ERRORS, UnicodeDecodeError, ValueError, TypeError):
            written = set()
    except WRITE_ERRORS as e:
        raise OutputError(f"{path}: cannot read it ({reason(e)})") from None
    foreign = [name for name in present if name not in written and name != WRITTEN_NAME]
    if foreign:
        raise OutputError(f"{path} holds files this tool did not write ({', '.join(foreign[:5])}"
                          f"{', ...' if len(foreign) > 5 else ''}): they are left as they are; move them, or choose "
                          "a new directory")


def move_tree(src, dst):
    """Renames the directory `src` to `dst` (which must not exist): atomic on a local disk. Other filesystems
    may rename only files, so there each file is renamed, those of the top directory (saved_model.pb, which a
    server loads first) last.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(work, "a", "variables"))
    >>> move_tree(os.path.join(work, "a"), os.path.join(work, "b")); os.listdir(work)
    ['b']
    """
    if not is_remote(src):
        tf.io.gfile.rename(src, dst, overwrite=False)
        return
    if tf.io.gfile.exists(dst):
        raise tf.errors.AlreadyExistsError(None, None, f"{dst} exists")
    moves = []
    for directory, _, files in tf.io.gfile.walk(src):
        target = os.path.join(dst, directory[len(src):].strip("/"))
        tf.io.gfile.makedirs(target)
        moves += [(directory.rstrip("/") == src, os.path.join(directory, name), os.path.join(target, name))
                  for name in files]
    for _, old, new in sorted(moves, key=lambda move: move[0]):
        tf.io.gfile.rename(old, new, overwrite=False)
    tf.io.gfile.rmtree(src)


def write_text(path, text):
    """Writes `text` (UTF-8) to `path` atomically, creating its directory; returns `path`.

    Example:
    >>> import os, tempfile
    >>> path = write_text(os.path.join(tempfile.mkdtemp(), "results", "eval.txt"), "loss = 1.5\\n")
    >>> open(path).read()
    'loss = 1.5\\n'
    """
    make_parent_directory(path)
    with atomic_path(path) as tmp, tf.io.gfile.GFile(tmp, "w") as f:
        f.write(text)
    return path


def make_parent_directory(path):
    """Creates the directory of the output file `path` and the missing ones above it; raises `OutputError`
    naming the directory when it cannot be created (a file in the way, a read-only location).

    Example:
    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "a", "b", "features.jsonl")
    >>> make_parent_directory(target); os.path.isdir(os.path.dirname(target))
    True
    """
    directory = os.path.dirname(os.fspath(path))
    try:
        if directory:
            tf.io.gfile.makedirs(directory)
    except WRITE_ERRORS as e:
        raise OutputError(f"{directory}: cannot create the directory ({reason(e)})") from None


def copy_atomically(src, dst):
    """Copies a file (e.g. the vocabulary) so that `dst` appears complete or not at all.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> src = write_text(os.path.join(work, "vocab.txt"), "[PAD]\\n")
    >>> copy_atomically(src, os.path.join(work, "copy.txt"))
    >>> open(os.path.join(work, "copy.txt")).read()
    '[PAD]\\n'
    """
    with atomic_path(dst) as tmp:
        tf.io.gfile.copy(src, tmp, overwrite=True)


def _remove_stale(path):
    # A killed run's temporaries of this same output would otherwise stay forever: nothing else has their name.
    remove_stale_temporaries(*os.path.split(path))
