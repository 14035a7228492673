"""What every command-line tool shares: one-line errors, SIGTERM handling, the original's casing check."""

import os
import sys

from official_bert import tokenization


def fail(message):
    """Prints `<program>: error: <message>` to stderr and exits with status 1 — no traceback."""
    program = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    print(f"{program}: error: {message}", file=sys.stderr)
    sys.exit(1)


def raise_keyboard_interrupt(signum, frame):
    """A SIGTERM handler: `kill` then unwinds like Ctrl-C, through the tool's cleanup and checkpointing."""
    raise KeyboardInterrupt


def check_case(do_lower_case, init_checkpoint):
    """The original's check that --do_lower_case suits a released Google checkpoint (judged by its directory's
    name, e.g. uncased_L-12_H-768_A-12); `fail`s when it does not.

    Example:
    >>> check_case(True, "uncased_L-12_H-768_A-12/bert_model.ckpt")
    """
    try:
        tokenization.validate_case_matches_checkpoint(do_lower_case, init_checkpoint)
    except ValueError as e:
        fail(str(e))
