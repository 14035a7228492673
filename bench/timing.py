"""Timing shared by the benches, importing nothing heavy (the PyTorch peer's process loads no TensorFlow)."""

import time


def seconds_per_call(call, seconds):
    """Median wall seconds of call() over about `seconds`, after two untimed calls (tracing, allocation)."""
    call()
    call()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 3:
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]
