"""What every command-line tool shares: one-line errors and SIGTERM handling."""

import os
import sys


def fail(message):
    """Prints `<program>: error: <message>` to stderr and exits with status 1 — no traceback."""
    program = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    print(f"{program}: error: {message}", file=sys.stderr)
    sys.exit(1)


def raise_keyboard_interrupt(signum, frame):
    """A SIGTERM handler: `kill` then unwinds like Ctrl-C, through the tool's cleanup and checkpointing."""
    raise KeyboardInterrupt
