"""What every command-line tool shares: `run` (absl start-up, one-line errors, SIGTERM handling, exit codes), the
interrupted-run message and the original's casing check.

A tool reads top to bottom — flags, then `main()` — and ends with

    def run():  # the console script's entry point too
        cli.run(main, required_flags=["output_dir"])


    if __name__ == "__main__":
        run()

`main()` raises `official_bert.errors.Error` (or a subclass) for bad input; `run` prints it as one line and exits
with status 1. A training tool calls `cli.watch(run)` once its run exists, so that Ctrl-C or `kill` reports the
step it stopped at. A tool that writes an output directory calls `cli.output_lock(directory)` before writing
to it, so that a second run on the same directory refuses instead of mixing its outputs in.
"""

import contextlib
import os
import signal
import sys

# TensorFlow's C++ INFO and WARNING lines (CUDA probing, oneDNN notes) drown a tool's own output; a tool imports
# this module before TensorFlow so that the default applies. Set TF_CPP_MIN_LOG_LEVEL=0 to see them.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from official_bert import tokenization  # noqa: E402
from official_bert.text.tokenization import decomposed_text_warning  # noqa: E402
from official_bert.errors import Error, Interrupted  # noqa: E402

_watched = None
# What the tool holds until it ends (output locks); `run` releases it after main() returns, fails or is interrupted.
_held = contextlib.ExitStack()


def run(main, required_flags=()):
    """Parses the flags and calls `main()`: stray positional arguments, an `Error`, Ctrl-C and SIGTERM each end
    the tool with one line on stderr and a non-zero status (1, 1, 130, 130); success exits with 0.

    Args:
        main: the tool, called with no arguments once the flags are parsed.
        required_flags: names of flags that must be given.
    """
    from absl import app, flags, logging

    def _main(argv):
        if len(argv) > 1:
            fail(f"unexpected arguments: {' '.join(argv[1:])}")
        signal.signal(signal.SIGTERM, raise_keyboard_interrupt)
        try:
            with _held:
                main()
            if decomposed_text_warning():
                logging.warning("%s", decomposed_text_warning())
        except Error as e:
            fail(str(e))
        except Interrupted as e:
            print(f"{_program()}: interrupted {e}", file=sys.stderr)
            sys.exit(130)
        except KeyboardInterrupt:
            exit_interrupted(_watched)

    flags.mark_flags_as_required(list(required_flags))
    app.run(_main)


def watch(training_run):
    """Makes an interruption report `training_run`'s step and whether a checkpoint holds it; returns it."""
    global _watched
    _watched = training_run
    return training_run


def output_lock(directory, flag="--output_dir", strategy=None):
    """Takes the exclusive lock of an output directory until the tool ends (`official_bert.io.output_lock`):
    creates the directory, checks that it can be written, and makes a second run on it refuse in one line.

    Args:
        directory: the output directory.
        flag: the flag that named it, for messages.
        strategy: the distribution strategy, if any: only the chief locks (the other workers write nothing there).

    Returns:
        `directory`.

    Example:
    >>> import tempfile
    >>> run_dir = output_lock(os.path.join(tempfile.mkdtemp(), "run"))
    >>> os.path.isdir(run_dir)
    True
    >>> _held.close()  # what `run` does when the tool ends
    >>> os.path.isdir(run_dir)  # created for the run and left empty: removed again
    False
    """
    from official_bert.io import locks  # here: it imports TensorFlow, which this module must precede

    return _held.enter_context(locks.output_lock(directory, flag, strategy))


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
