"""Writing outputs atomically: a temporary name first, then `os.replace`, so no reader sees half a file."""

import contextlib
import os
import shutil

# The two files of a TF checkpoint bundle with one shard, index last: a prefix whose `.index` exists is
# complete, because the data file was renamed into place first.
BUNDLE_SUFFIXES = (".data-00000-of-00001", ".index")


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path beside `path`; on success it is renamed to `path`, on failure removed.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.TemporaryDirectory()
    >>> target = os.path.join(work.name, "out.txt")
    >>> with atomic_path(target) as tmp:
    ...     _ = open(tmp, "w").write("done")
    >>> open(target).read()
    'done'
    """
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@contextlib.contextmanager
def atomic_bundle(prefix):
    """Like `atomic_path`, for a TF checkpoint prefix: yields a temporary prefix, renames its files after."""
    tmp = f"{prefix}.tmp{os.getpid()}"
    try:
        yield tmp
        for suffix in BUNDLE_SUFFIXES:
            os.replace(tmp + suffix, prefix + suffix)
    finally:
        for suffix in BUNDLE_SUFFIXES:
            if os.path.exists(tmp + suffix):
                os.remove(tmp + suffix)


def copy_atomically(src, dst):
    """Copies a file (e.g. the vocabulary) so that `dst` appears complete or not at all."""
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)
