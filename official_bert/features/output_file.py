"""The base of the feature writers: an output file that appears complete when the writer closes, or not at all."""

import contextlib

from official_bert.io import atomic_path
from official_bert.io.atomic import make_parent_directory


class OutputFile:
    """A context manager that hands a subclass the temporary path it writes, renamed to `path` on success.

    Subclasses implement `_open(tmp, stack)` (start writing, entering the files they open into the
    contextlib.ExitStack `stack`, which closes them), `write(extracted)` and `_close()` (finish writing, before
    the files close; an exception inside the `with` block skips it and removes the temporary file).

    Args:
        path: the output file (its directory is created).
    """

    def __init__(self, path):
        self.path = path
        self.count = 0
        self._stack = None

    def __enter__(self):
        make_parent_directory(self.path)
        with contextlib.ExitStack() as stack:
            self._open(stack.enter_context(atomic_path(self.path)), stack)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self._close()
        finally:
            self._stack.__exit__(exc_type, exc, tb)
        return False

    def _open(self, tmp, stack):
        raise NotImplementedError

    def write(self, extracted):
        raise NotImplementedError

    def _close(self):
        raise NotImplementedError
