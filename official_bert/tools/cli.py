"""What every command-line tool shares: `run` (absl start-up, one-line errors, SIGTERM handling, exit codes) and the
interrupted-run message.

A tool reads top to bottom — flags, then `main()` — and ends with

    def run():  # the console script's entry point too
        cli.run(main, required_flags=["output_dir"])


    if __name__ == "__main__":
        run()

`main()` raises `official_bert.errors.Error` (or a subclass) for bad input; `run` prints it as one line and exits
with status 1. A training tool calls `cli.watch(run)` once its run exists, so that Ctrl-C or `kill` reports the
step it stopped at. A tool that writes an output directory calls `cli.output_lock(directory)` before writing
to it, so that a second run on the same directory refuses instead of mixing its outputs in.

Before `main()`, from what each flag is (`flag_kinds`), `run` checks every tool the same way: a flag value outside
its range, or not finite, is refused in one line when the flags are parsed; the outputs the flags name are checked
against every input they name (`io/guard.py`); and a run that trains in a run directory is checked against the run
that directory holds (`run_identity.py`) and recorded there. All before any work and any write.
"""

import contextlib
import os
import signal
import sys

# TensorFlow's C++ INFO and WARNING lines (CUDA probing, oneDNN notes) drown a tool's own output; a tool imports
# this module before TensorFlow so that the default applies. Set TF_CPP_MIN_LOG_LEVEL=0 to see them.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from official_bert.errors import Error, Interrupted  # noqa: E402
from official_bert.io import guard  # noqa: E402
from official_bert.text.tokenization import decomposed_text_warning  # noqa: E402
from official_bert.tools import flag_kinds, run_identity  # noqa: E402

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
                guard.check_outputs(*_outputs_and_inputs())
                recorded = _check_run_identity(_tool_name(main))
                try:
                    main()
                except Error:
                    if recorded:  # before the lock goes: a directory the run created and left empty goes too
                        run_identity.forget_if_unused(recorded)
                    raise
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
    app.run(_main, flags_parser=_parse_flags)


def _parse_flags(argv):
    """absl's parsing, its errors (a value outside a flag's range, a missing required flag) as one line."""
    from absl import flags

    try:
        return flags.FLAGS(argv)
    except flags.Error as e:
        fail(f"{e} (--helpfull lists the flags)")


def _outputs_and_inputs():
    """The guard's `Write`s and `Read`s of the flags given, from their declared kinds."""
    from absl import flags

    writes, reads = [], []
    for name in run_identity.tool_flags():
        declared, value = flag_kinds.declared(name), flags.FLAGS[name].value
        if declared is None or not value or declared.kind not in flag_kinds.PATH_KINDS:
            continue
        paths = value.split(",") if declared.kind == flag_kinds.OUTPUT_FILES else [value]
        for path in paths:
            if declared.kind in flag_kinds.OUTPUTS:
                kind = guard.FILE if declared.kind in (flag_kinds.OUTPUT_FILE, flag_kinds.OUTPUT_FILES) else \
                    guard.DIRECTORY
                writes.append(guard.Write(f"--{name}", path.strip(), kind))
            else:
                reads.append(guard.Read(f"--{name}", path, _READ_KINDS[declared.kind]))
    return writes, reads


_READ_KINDS = {flag_kinds.INPUT_FILE: guard.FILE, flag_kinds.INPUT_FILES: guard.FILES,
               flag_kinds.INPUT_DIRECTORY: guard.DIRECTORY, flag_kinds.MODEL: guard.MODEL}


def _tool_name(main):
    """The tool's name however it was started (run_classifier.py, bert-run-classifier, python -m ...)."""
    module = main.__module__
    return module.rsplit(".", 1)[-1] if module != "__main__" else _program()


def _check_run_identity(tool):
    """For a run that trains in its run directory: checks the run there against this one, or records this one;
    returns the directory if this call recorded it (None otherwise)."""
    from absl import flags

    trains = "do_train" not in flags.FLAGS or flags.FLAGS.do_train
    directories = [name for name in run_identity.tool_flags()
                   if flag_kinds.declared(name) and flag_kinds.declared(name).kind == flag_kinds.RUN_DIRECTORY
                   and flags.FLAGS[name].value]
    from official_bert import distribution

    if not trains or not directories or not distribution.chief_by_tf_config():  # the chief's run is the workers'
        return None
    directory = flags.FLAGS[directories[0]].value
    output_lock(directory, f"--{directories[0]}")
    identity = run_identity.identity_from_flags(tool)
    return directory if run_identity.check_and_record(directory, identity, f"--{directories[0]}") else None


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

    return _held.enter_context(locks.output_lock(directory, flag, strategy, shared=True))


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

