"""One run per output directory (or output file): an exclusive lock, so that two runs never mix their checkpoints,
results or rows.

`output_lock(directory)` creates the directory if needed (checking on the way that it can be written: a file in
the way, a read-only location or a full disk fail here, before any work, with one line) and takes the lock file
`<directory>/.official_bert.lock`, which names the holder: host, pid, program and start time. A second run on
the same directory refuses in one line naming the holder. The lock is released, and the file removed, when the
run ends; directories it created are removed again if the run left them empty. `output_file_lock(path)` is the
same lock for a tool whose output is one file (bert-predict's --output_file): the lock file `.<name>.lock` beside it.

After a crash (SIGKILL, a lost machine) the file stays behind:
- on a local disk the lock itself is an `fcntl.flock` on the file, which the kernel drops when its holder dies,
  so a stale file is taken over with a warning (a file naming another host — a shared disk — is refused instead,
  with how to remove it: that host's run may be alive);
- on other tf.io.gfile filesystems (gs://, ...), which have no locks, the file is created under a temporary name
  and renamed without overwriting (as close to create-if-absent as they allow); a stale file of this host whose
  pid is no longer running is taken over with a warning, one of another host is refused, naming it.
"""

import contextlib
import datetime
import fcntl
import json
import os
import socket
import sys
import uuid

import tensorflow as tf
from absl import logging

from official_bert import distribution
from official_bert.io.atomic import WRITE_ERRORS, OutputError, reason, remove_tree, temporary_path
from official_bert.io.files import is_remote, pid_running

LOCK_NAME = ".official_bert.lock"


class LockError(OutputError):
    """The output directory is in use by another run (or was, by a run on another host that may still be alive)."""


@contextlib.contextmanager
def output_lock(directory, flag="--output_dir", strategy=None, shared=False):
    """Holds the exclusive lock of an output directory for the duration of a `with` block.

    Args:
        directory: the output directory, local or on any tf.io.gfile filesystem; created if missing.
        flag: the flag that named it, for messages.
        strategy: the distribution strategy, if any: only the chief (the process that writes the outputs) locks.
        shared: whether later `output_lock`s of the same directory in this process, while this one holds, hold it
            with it (a tool locks its run directory for its whole run, and the library it calls locks it again)
            instead of refusing.

    Raises:
        OutputError: the directory cannot be created or written.
        LockError: another run holds it.

    Example:
    >>> import os, tempfile
    >>> run = os.path.join(tempfile.mkdtemp(), "run")
    >>> with output_lock(run):
    ...     with output_lock(run):  # doctest: +ELLIPSIS
    ...         pass
    Traceback (most recent call last):
    ...
    official_bert.io.locks.LockError: --output_dir=.../run is in use by another run (pid ... on this host, ...
    >>> os.path.exists(run)  # created for the run, removed again: it stayed empty
    False
    """
    if strategy is not None and not distribution.is_chief(strategy):
        yield directory
        return
    directory = os.fspath(directory)
    with _held(os.path.join(directory, LOCK_NAME), directory, directory, flag, shared):
        yield directory


@contextlib.contextmanager
def output_file_lock(path, flag="--output_file"):
    """Holds the exclusive lock of an output file for the duration of a `with` block: the lock file
    `.<name>.lock` beside it, taken as `output_lock` takes a directory's, so that a second run writing the same
    file refuses in one line naming the first.

    Args:
        path: the output file, local or on any tf.io.gfile filesystem; its directory is created if missing.
        flag: the flag that named it, for messages.

    Raises:
        OutputError: its directory cannot be created or written.
        LockError: another run holds it.

    Example:
    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "predictions.jsonl")
    >>> with output_file_lock(out):
    ...     os.listdir(os.path.dirname(out))
    ['.predictions.jsonl.lock']
    >>> with output_file_lock(out):
    ...     with output_file_lock(out):  # doctest: +ELLIPSIS
    ...         pass
    Traceback (most recent call last):
    ...
    official_bert.io.locks.LockError: --output_file=.../predictions.jsonl is in use by another run (pid ... on this...
    >>> os.listdir(os.path.dirname(out))
    []
    """
    path = os.fspath(path)
    directory, name = os.path.split(path)
    with _held(os.path.join(directory, f".{name}.lock"), path, directory or ".", flag):
        yield path


# Lock files this process holds for its whole run (`shared=True`), and how many `with` blocks hold each: a tool that
# locks its run directory before its library code locks it again holds it once.
_SHARED = {}


@contextlib.contextmanager
def _held(lock_path, target, directory, flag, shared=False):
    """The lock file `lock_path` held, in `directory` (created, and removed again if the run left it empty), for
    the output `target` that `flag` names; if this process holds it `shared`, held once more."""
    key = lock_path if is_remote(lock_path) else os.path.realpath(lock_path)
    if key in _SHARED:
        _SHARED[key] += 1
        try:
            yield
        finally:
            _SHARED[key] -= 1
        return
    created = _make_directories(directory, target, flag)
    lock = (_GfileLock if is_remote(directory) else _LocalLock)(lock_path, target, flag)
    try:
        lock.acquire()
        if shared:
            _SHARED[key] = 1
        try:
            yield
        finally:
            _SHARED.pop(key, None)
            lock.release()
    finally:
        for path in reversed(created):
            with contextlib.suppress(*WRITE_ERRORS):
                if not tf.io.gfile.listdir(path):
                    remove_tree(path)


def read_holder(directory):
    """What the lock file of `directory` says about its holder (host, pid, program, since), or None.

    Example:
    >>> import tempfile
    >>> read_holder(tempfile.mkdtemp()) is None
    True
    """
    return _read_lock_file(os.path.join(directory, LOCK_NAME))


def _read_lock_file(path):
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            return _parse(f.read())
    except WRITE_ERRORS:
        return None


def _make_directories(directory, target, flag):
    """Creates `directory` (of the output `target`) and its missing parents; returns those created, outermost
    first."""
    missing, path = [], directory
    try:
        while path and not tf.io.gfile.isdir(path):
            if tf.io.gfile.exists(path):
                raise OutputError(f"{flag}={target}: {path} is a file; expected a directory")
            missing.append(path)
            parent = os.path.dirname(path)
            path = parent if parent != path else ""
        tf.io.gfile.makedirs(directory)
    except WRITE_ERRORS as e:
        where = "" if target == directory else f" {directory}"
        raise OutputError(f"{flag}={target}: cannot create the directory{where} ({reason(e)})") from None
    return missing[::-1]


def _record():
    return {"host": socket.gethostname(), "pid": os.getpid(), "program": os.path.basename(sys.argv[0] or "python"),
            "since": datetime.datetime.now().isoformat(timespec="seconds"), "token": uuid.uuid4().hex}


def _parse(data):
    try:
        holder = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return holder if isinstance(holder, dict) and "host" in holder and "pid" in holder else None


def _describe(holder):
    if holder is None:
        return "holder unknown"
    host = "this host" if holder["host"] == socket.gethostname() else f"host {holder['host']}"
    return f"pid {holder['pid']} on {host}, {holder.get('program', '?')} since {holder.get('since', '?')}"


class _Lock:
    def __init__(self, path, target, flag):
        self.path = path
        self.target = target  # the output directory or file the lock is of
        self.flag = flag
        self.record = _record()

    def in_use(self, holder):
        return LockError(f"{self.flag}={self.target} is in use by another run ({_describe(holder)}): wait for "
                         f"it to end, or use another {self.flag}")

    def other_host(self, holder):
        return LockError(f"{self.flag}={self.target} is locked by a run on another host ({_describe(holder)}): "
                         f"if no run is using it, remove {self.path}")

    def take_over(self, holder):
        """Checks a lock file its holder left behind; warns and returns if this run may take it over."""
        if holder is None:
            logging.warning("%s: taking over an unreadable lock file %s", self.target, self.path)
        elif holder["host"] != socket.gethostname():
            raise self.other_host(holder)
        else:
            logging.warning("%s: taking over the lock of %s, which is no longer running (it crashed or was "
                            "killed: its outputs may be incomplete)", self.target, _describe(holder))

    def cannot_write(self, error):
        where = "in it" if os.path.dirname(self.path) == self.target else f"its lock file {self.path}"
        return OutputError(f"{self.flag}={self.target}: cannot write {where} ({reason(error)})")


class _LocalLock(_Lock):
    """An flock on the lock file: held while its holder lives, whatever the file says."""

    def acquire(self):
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as e:
                raise self.cannot_write(e) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _parse(_read_fd(fd))
                os.close(fd)
                raise self.in_use(holder) from None
            # The previous holder may have removed the file between our open and our lock: lock the new one.
            try:
                current = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if current:
                break
            os.close(fd)
        try:
            previous = _read_fd(fd)
            if previous:
                self.take_over(_parse(previous))
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(self.record).encode("utf-8"), 0)
            os.fsync(fd)
        except BaseException as e:
            os.close(fd)
            if isinstance(e, OSError):
                raise self.cannot_write(e) from None
            raise
        self.fd = fd

    def release(self):
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == os.fstat(self.fd).st_ino:
                os.remove(self.path)
        os.close(self.fd)


def _read_fd(fd):
    chunks, offset = [], 0
    while chunk := os.pread(fd, 65536, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


class _GfileLock(_Lock):
    """A lock file created without overwriting and verified by reading it back: no kernel lock to rely on."""

    def acquire(self):
        holder = _read_lock_file(self.path)
        if holder is not None or tf.io.gfile.exists(self.path):
            if holder is not None and holder["host"] == socket.gethostname() and pid_running(holder["pid"]):
                raise self.in_use(holder)
            self.take_over(holder)
            remove_tree(self.path)
        tmp = temporary_path(self.path)
        try:
            with tf.io.gfile.GFile(tmp, "wb") as f:
                f.write(json.dumps(self.record).encode("utf-8"))
            tf.io.gfile.rename(tmp, self.path, overwrite=False)
        except tf.errors.AlreadyExistsError:
            raise self.in_use(_read_lock_file(self.path)) from None
        except WRITE_ERRORS as e:
            raise self.cannot_write(e) from None
        finally:
            remove_tree(tmp)
        holder = _read_lock_file(self.path)
        if holder is None or holder.get("token") != self.record["token"]:
            raise self.in_use(holder)

    def release(self):
        holder = _read_lock_file(self.path)
        if holder is not None and holder.get("token") == self.record["token"]:
            remove_tree(self.path)
