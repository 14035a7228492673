"""The output guard: what a call is about to write, checked against everything it reads, before any work.

Every tool (through `tools/cli.py`, from its flags' declared kinds) and every Python API that writes (bert-predict's
`predict_files`, the Keras models' `export`) names its outputs and its inputs and calls `check_outputs` first. It
refuses, in one line naming both flags:

- an output that is one of the inputs (the same file, through any path, link or relative form);
- an output inside a directory the call reads: a model, checkpoint, teacher, export or run directory (writing
  there would change what is read, or a model's own files);
- for a checkpoint given as a prefix or a file: its own files, its directory, or a model file beside it (its config
  or vocabulary); a new path beside it harms nothing and is allowed;
- an output that an input glob matches (a rerun would read its own output as input);
- two outputs that are the same file (an errors file equal to the output);
- a directory where a file goes, a file where a directory goes (found now, not after the work).

Paths on `scheme://` filesystems (gs://, ram://) are compared as written, normalised; local ones resolved. Nothing
here imports TensorFlow for local paths, so the data tools start without it.
"""

import dataclasses
import fnmatch
import glob
import os

from official_bert.errors import Error
from official_bert.io import files, fingerprints

FILE, FILES, DIRECTORY, MODEL = "file", "files", "directory", "model"


class OutputConflictError(Error):
    """An output that would overwrite, or land inside, what the call reads; or of the wrong kind (a directory
    where a file goes)."""


@dataclasses.dataclass(frozen=True)
class Read:
    """Something a call reads.

    Args:
        name: how the user named it: a flag (`--input_file`) or an argument (`input_file`).
        path: the path, as given.
        kind: FILE; FILES (a glob or comma-separated globs); DIRECTORY (read whole); MODEL (a run, export or
            model directory, read whole; or a checkpoint prefix or file: its files, its directory and the model
            files beside it are what is read).
    """

    name: str
    path: str
    kind: str = FILE


@dataclasses.dataclass(frozen=True)
class Write:
    """Something a call writes.

    Args:
        name: how the user named it: a flag or an argument.
        path: the path, as given.
        kind: FILE or DIRECTORY.
    """

    name: str
    path: str
    kind: str = FILE


def check_outputs(writes, reads=()):
    """Refuses, in one line, outputs that would overwrite or land inside what is read, and outputs of the wrong
    kind; returns None when all is well. Call it before any work and any write.

    Args:
        writes: the `Write`s of the call (those whose path is empty or None are left out).
        reads: its `Read`s (likewise).

    Raises:
        OutputConflictError: naming the output, the input and what to do.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> data = os.path.join(work, "in.csv")
    >>> _ = open(data, "w").write("text\\nhi\\n")
    >>> check_outputs([Write("--output_file", os.path.join(work, "out.jsonl"))], [Read("--input_file", data)])
    >>> check_outputs([Write("--output_file", data)], [Read("--input_file", data)])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.io.guard.OutputConflictError: --output_file=.../in.csv is the --input_file: writing it would ...
    >>> check_outputs([Write("--output_file", os.path.join(work, "new.csv"))],
    ...               [Read("--input_file", os.path.join(work, "*.csv"), FILES)])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.io.guard.OutputConflictError: --output_file=.../new.csv matches --input_file=.../*.csv: ...
    """
    writes = [w for w in writes if w.path]
    reads = [r for r in reads if r.path]
    for i, write in enumerate(writes):
        for other in writes[i + 1:]:
            if _same(write.path, other.path):
                raise OutputConflictError(f"{write.name}={write.path} is also the {other.name}: give them two "
                                          "different paths")
        for read in reads:
            problem = _conflict(write, read)
            if problem:
                raise OutputConflictError(f"{write.name}={write.path} {problem}")
    for write in writes:
        _check_kind(write)


def _check_kind(write):
    path = os.fspath(write.path)
    if write.kind == FILE:
        if path.endswith(("/", os.sep)) or files.isdir(path):
            raise OutputConflictError(f"{write.name}={path} is a directory; expected a file path")
        parent = os.path.dirname(path)
        while parent and not files.exists(parent):
            parent, previous = os.path.dirname(parent), parent
            if parent == previous:
                break
        if parent and files.exists(parent) and not files.isdir(parent):
            raise OutputConflictError(f"{write.name}={path}: {parent} is a file; expected a directory")
    elif files.exists(path) and not files.isdir(path):
        raise OutputConflictError(f"{write.name}={path} is a file; expected a directory (a new or existing one)")


def _conflict(write, read):
    """What is wrong with writing `write` given that `read` is read, or None."""
    given = f"{read.name}={read.path}"
    if read.kind == FILES:
        for pattern in (p.strip() for p in os.fspath(read.path).split(",")):
            if not pattern:
                continue
            if _same(write.path, pattern):
                return f"is the {read.name}: writing it would destroy the input; choose another path"
            for path in files.glob(pattern):
                if _same(write.path, path):
                    return f"is one of {given}: writing it would destroy the input; choose another path"
                if _inside(write.path, path):
                    return f"is inside {path}, which {read.name} reads; write it elsewhere"
            if _matches(write.path, pattern):
                return (f"matches {given}: the output would be read as input (by this run or the next); write it "
                        "outside that glob")
        return None
    if read.kind == MODEL and not files.isdir(read.path):
        return _model_file_conflict(write, read)
    if read.kind in (DIRECTORY, MODEL):
        if _same(write.path, read.path):
            return f"is {given}, which this run reads: writing there would change or destroy it; use another path"
        if _inside(write.path, read.path):
            return f"is inside {given}, which this run reads: writing there would change it; write it elsewhere"
        return None
    if _same(write.path, read.path):
        return f"is the {read.name}: writing it would destroy the input; choose another path"
    return None


def _model_file_conflict(write, read):
    """A checkpoint prefix or a model file: what is read is that file (or the prefix's files) and its companions in
    the same directory (config, vocabulary, the `checkpoint` file); a new path beside them harms nothing."""
    given, path = f"{read.name}={read.path}", os.fspath(read.path)
    directory = os.path.dirname(path) or "."
    if _same(write.path, path) or _matches(write.path, glob.escape(path) + ".*"):
        return f"is the {read.name}: writing it would destroy what the run reads; choose another path"
    if _same(write.path, directory):
        return (f"is the directory of {given}, which this run reads: writing there would change or destroy it; use "
                "another path")
    if (_same(os.path.dirname(os.fspath(write.path)) or ".", directory)
            and fingerprints.is_model_file(os.path.basename(os.fspath(write.path)))):
        return f"would replace a file of the model at {given} (its config, vocabulary or weights); write it elsewhere"
    return None


def _resolved(path):
    path = os.fspath(path)
    if files.is_remote(path):
        scheme, rest = path.split("://", 1)
        return f"{scheme}://{os.path.normpath('/' + rest).lstrip('/')}"
    return os.path.realpath(os.path.expanduser(path))


def _same(a, b):
    return _resolved(a) == _resolved(b)


def _inside(path, directory):
    """Whether `path` lies strictly below `directory`."""
    path, directory = _resolved(path), _resolved(directory).rstrip("/")
    return path.startswith(directory + "/")


def _matches(path, pattern):
    """Whether a glob `pattern` matches `path` (whether or not it exists yet): its directory part resolved, its last
    part matched as the shell does."""
    path, pattern = _resolved(path), os.fspath(pattern)
    if files.is_remote(pattern) != files.is_remote(path):
        return False
    directory, name = os.path.split(pattern)
    return fnmatch.fnmatchcase(path, os.path.join(_resolved(directory or "."), name))
