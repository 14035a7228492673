"""Runs one function over a stream in worker processes, in input order, with a bounded number in flight."""

import collections
import concurrent.futures
import gc
import multiprocessing
import signal

from official_bert.pretraining_data.errors import PretrainingDataError

_function = None  # set in each worker by _initialize


def _initialize(function):
    global _function
    _function = function
    # Ctrl-C reaches the whole process group; the parent alone decides what to clean up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(item):
    return _function(item)


class OrderedWorkers:
    """`map` applies `function` to each item in `num_workers` processes and yields the results in order.

    At most `window` items are queued or running at once, so a stream of any length uses bounded memory.
    With one worker everything runs in this process. Workers are forked where the platform allows it,
    so `function` (e.g. a tokenizer with its vocabulary) is inherited rather than pickled; create this
    before opening files or starting threads.

    Args:
        function: picklable where fork is unavailable; its exceptions reach the caller of `map`, and a
            worker that dies raises PretrainingDataError there.
        num_workers: processes.
        window: items in flight; default 2 × num_workers, so that a worker never waits for the next item.

    Example:
    >>> with OrderedWorkers(abs, num_workers=2) as workers:
    ...     list(workers.map(range(-3, 2)))
    [3, 2, 1, 0, 1]
    """

    def __init__(self, function, num_workers, window=None):
        self._function = function
        self._num_workers = num_workers
        self._window = window or 2 * num_workers
        self._executor = None

    def __enter__(self):
        if self._num_workers > 1:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            # Frozen objects are skipped by the garbage collector, which would otherwise write to every
            # inherited object and turn the pages that parent and workers share into private copies.
            gc.freeze()
            self._executor = concurrent.futures.ProcessPoolExecutor(
                self._num_workers, mp_context=context, initializer=_initialize, initargs=(self._function,))
            self._executor.submit(abs, 0).result()  # forks every worker now, not at the first real item
        return self

    def __exit__(self, *exc_info):
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            gc.unfreeze()

    def map(self, items):
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
