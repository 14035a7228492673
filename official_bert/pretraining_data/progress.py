"""Periodic progress lines: documents read and instances written, with their rates."""

import time

from absl import logging


class Progress:
    """Logs `documents` and `instances` counts with per-second rates at most every `interval` seconds.

    Args:
        interval: seconds between lines.
        clock: a `time.monotonic`-like function (tests pass a fake one).

    Example:
    >>> ticks = iter([0.0, 5.0, 12.0, 12.0])
    >>> progress = Progress(interval=10.0, clock=lambda: next(ticks))
    >>> progress.update(documents=100, instances=0)
    >>> progress.update(documents=1200, instances=3600)
    >>> progress.rates()
    (100.0, 300.0)
    """

    def __init__(self, interval=10.0, clock=time.monotonic):
        self._clock = clock
        self._start = self._last = clock()
        self._interval = interval
        self.documents = self.instances = 0

    def update(self, documents, instances):
        self.documents, self.instances = documents, instances
        now = self._clock()
        if now - self._last >= self._interval:
            self._last = now
            docs_per_s, instances_per_s = self.rates(now)
            logging.info("%s documents read (%.0f/s), %s instances written (%.0f/s)",
                         f"{documents:,}", docs_per_s, f"{instances:,}", instances_per_s)

    def rates(self, now=None):
        """(documents/s, instances/s) since the start."""
        elapsed = max(1e-9, (self._clock() if now is None else now) - self._start)
        return self.documents / elapsed, self.instances / elapsed
