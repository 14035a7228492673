"""Progress lines of a feature extraction: inputs and tokens done, with their rates."""

import time

from absl import logging


class Progress:
    """Counts inputs and tokens and logs them with per-second rates at most every `interval` seconds.

    Args:
        interval: seconds between lines.
        clock: a `time.monotonic`-like function (tests pass a fake one).

    Example:
    >>> ticks = iter([0.0, 10.0])
    >>> progress = Progress(interval=5.0, clock=lambda: next(ticks))
    >>> progress.add(tokens=30)
    >>> progress.add(tokens=10)
    >>> progress.summary()
    '2 inputs, 40 tokens in 10.0 s: 0.2 inputs/s, 4 tokens/s'
    """

    def __init__(self, interval=10.0, clock=time.monotonic):
        self._clock = clock
        self._start = self._last = clock()
        self._interval = interval
        self.inputs = self.tokens = 0

    def add(self, tokens):
        """Counts one more input of `tokens` tokens; logs a line when `interval` has passed."""
        self.inputs += 1
        self.tokens += tokens
        if self.inputs % 64 == 0 and self._clock() - self._last >= self._interval:
            self._last = self._clock()
            logging.info("%s", self.summary(self._last))

    def summary(self, now=None):
        """"N inputs, M tokens in S s: R inputs/s, Q tokens/s" since the start."""
        elapsed = max(1e-9, (self._clock() if now is None else now) - self._start)
        return (f"{self.inputs:,} inputs, {self.tokens:,} tokens in {elapsed:.1f} s: "
                f"{self.inputs / elapsed:,.1f} inputs/s, {self.tokens / elapsed:,.0f} tokens/s")
