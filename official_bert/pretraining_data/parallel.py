"""Runs one function over a stream in worker processes, in input order, with a bounded number in flight.

Workers die with their parent: on Linux the kernel kills them when it exits (prctl PR_SET_PDEATHSIG), and
elsewhere (or if that call fails) a thread in each worker ends it once its parent is gone. Otherwise a parent
killed with SIGKILL would leave them blocked forever, holding its stderr pipe open.
"""

import collections
import concurrent.futures
import gc
import multiprocessing
import os
import signal
import threading

from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.processes import die_with_parent

_function = None  # set in each worker by _initialize


def _die_with_parent(parent_pid, poll_seconds=0.5):
    die_with_parent()

    def watch():
        while os.getppid() == parent_pid:
            threading.Event().wait(poll_seconds)
        os._exit(1)

    # Also covers a parent that died before prctl took effect: then getppid() has already changed.
    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _initialize(function, parent_pid):
    global _function
    _function = function
    _die_with_parent(parent_pid)
    # Ctrl-C reaches the whole process group; the parent alone decides what to clean up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(item):
    return _function(item)


class OrderedWorkers:
    """`map` applies `function` to each item in `num_workers` processes and yields the results in order.

    At most `window` items are queued or running at once, so a stream of any length uses bounded memory.
    With one worker, or where processes cannot be forked, everything runs in this process. Workers are
    forked, so `function` (e.g. a tokenizer with its vocabulary, open temporary files) is inherited rather
    than pickled; create this before opening input files or starting threads.

    Args:
        function: its exceptions reach the caller of `map`; a worker that dies raises PretrainingDataError there.
        num_workers: processes.
        window: items in flight; default 2 × num_workers, so that a worker never waits for the next item.

    Example:
    >>> with OrderedWorkers(abs, num_workers=2) as workers:
    ...     list(workers.map(range(-3, 2)))
    [3, 2, 1, 0, 1]
    """

    def __init__(self, function, num_workers, window=None):
        self._function = function
        self._num_workers = num_workers if "fork" in multiprocessing.get_all_start_methods() else 1
        self._window = window or 2 * self._num_workers
        self._executor = None

    def __enter__(self):
        if self._num_workers > 1:
            # Frozen objects are skipped by the garbage collector, which would otherwise write to every
            # inherited object and turn the pages that parent and workers share into private copies.
            gc.freeze()
            self._executor = concurrent.futures.ProcessPoolExecutor(
                self._num_workers, mp_context=multiprocessing.get_context("fork"), initializer=_initialize,
                initargs=(self._function, os.getpid()))
            self._executor.submit(abs, 0).result()  # forks every worker now, not at the first real item
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        """Ends the workers (after the items in flight); `map` then runs nothing more."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
            gc.unfreeze()

    def map(self, items):
        """Yields function(item) for each item, in order."""
        if self._executor is None:
            yield from map(self._function, items)
            return
        pending = collections.deque()
        try:
            for item in items:
                pending.append(self._executor.submit(_call, item))
                if len(pending) >= self._window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except concurrent.futures.process.BrokenProcessPool:
            raise PretrainingDataError("a worker process died (killed, or out of memory?)") from None
        finally:
            for future in pending:
                future.cancel()
