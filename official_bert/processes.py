"""Child processes that die with their parent: a tool killed with SIGKILL leaves no worker or sweep run behind."""

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(signum=signal.SIGKILL):
    """Asks the kernel to send this process `signum` when its parent exits (Linux's prctl PR_SET_PDEATHSIG; a
    no-op elsewhere). Call it in the child: first thing in a worker, or as `subprocess.Popen(preexec_fn=...)`.
    Returns whether the request was made.

    Example:
    >>> import subprocess
    >>> subprocess.run([sys.executable, "-c", "pass"], preexec_fn=die_with_parent).returncode
    0
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signum)) == 0
    except (OSError, AttributeError):
        return False
