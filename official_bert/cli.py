"""What every command-line tool shares: one-line errors, SIGTERM handling and the interrupted-run message, the
original's casing check."""

import os
import sys

from official_bert import tokenization


def _program():
    return os.path.splitext(os.path.basename(sys.argv[0]))[0]


def fail(message):
    """Prints `<program>: error: <message>` to stderr and exits with status 1 — no traceback."""
    print(f"{_program()}: error: {message}", file=sys.stderr)
    sys.exit(1)


def exit_interrupted(run):
    """After Ctrl-C or SIGTERM: says at which step a training `run` (None before it began) stopped and whether a
    checkpoint holds that step, then exits with status 130, as a shell does for Ctrl-C."""
    where = f" at step {run.step}" if run else ""
    saved = run and run.checkpoints.saved_step == run.step
    print(f"{_program()}: interrupted{where}; "
          + ("checkpoint saved: rerun the same command to resume" if saved else "nothing saved"), file=sys.stderr)
    sys.exit(130)


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
