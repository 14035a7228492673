"""What each command-line flag is, declared where it is defined, so that every tool is checked the same way.

A tool defines its flags through these functions instead of absl's `DEFINE_string`, `DEFINE_integer` and
`DEFINE_float` (switches and choices stay absl's `DEFINE_bool` and `DEFINE_enum`):

- `define_path(name, default, help, kind)`: a file or directory the tool reads or writes. `tools/cli.py` hands
  every path flag given to the output guard (`io/guard.py`) before the tool starts, so that no output can overwrite
  or land inside what the tool reads, whichever flags name them;
- `define_integer`, `define_real` and `define_numbers`: numbers with the range a run can use, checked when the flags
  are parsed (a float must also be finite): a value outside it is refused in one line before any work;
- `define_text`: a string that is no path (a column name, a label list, a TPU name).

Each flag also says whether it changes what a training run computes (`affects_result`, default True; outputs, eval
and predict settings, logging and devices do not). A resumable tool's run directory (`RUN_DIRECTORY`) records the
flags that do, with the content of every input (`tools/run_identity.py`): a rerun with a difference refuses instead
of resuming across it.

Every flag a tool defines has a kind: tests/hostile/ fails on one without, and tries each kind's hostile values.
"""

import dataclasses
import math
import sys

from absl import flags
from absl.flags import _helpers

# absl files a flag under the module that defines it (--helpfull's groups, a tool's key flags): the tool calling
# these functions, not this module.
_helpers.disclaim_module_ids.add(id(sys.modules[__name__]))

# What a path flag names (see io/guard.py for how each is checked).
INPUT_FILE = "input file"
INPUT_FILES = "input files"  # a glob, or comma-separated globs
INPUT_DIRECTORY = "input directory"
MODEL = "model"  # a checkpoint (prefix, file or directory), a run, an export or a model directory: read
OUTPUT_FILE = "output file"
OUTPUT_FILES = "output files"  # comma-separated output files
OUTPUT_DIRECTORY = "output directory"
RUN_DIRECTORY = "run directory"  # the output directory of a resumable training run
PATH_KINDS = (INPUT_FILE, INPUT_FILES, INPUT_DIRECTORY, MODEL, OUTPUT_FILE, OUTPUT_FILES, OUTPUT_DIRECTORY,
              RUN_DIRECTORY)
INPUTS = (INPUT_FILE, INPUT_FILES, INPUT_DIRECTORY, MODEL)
OUTPUTS = (OUTPUT_FILE, OUTPUT_FILES, OUTPUT_DIRECTORY, RUN_DIRECTORY)
TEXT, NUMBER, NUMBERS, SWITCH, CHOICE = "text", "number", "numbers", "switch", "choice"

# Bounds the tools share: far beyond any published recipe (BERT's 512 positions, LAMB's batches of 65,536), so that
# only a slip is refused.
MAX_SEQ_LENGTH = 8192
MAX_BATCH_SIZE = 1 << 20
MAX_STEPS = 10**9
MAX_SEED = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Declared:
    """A flag's kind, whether it changes a run's result, and for numbers their range.

    Args:
        kind: one of PATH_KINDS, TEXT, NUMBER, NUMBERS, SWITCH or CHOICE.
        affects_result: whether a run made with another value computes something else.
        lower, upper: a number's bounds; None for none on that side.
        open_lower, open_upper: whether the bound itself is excluded.
        integer: whether the number is an integer.
    """

    kind: str
    affects_result: bool = True
    lower: float | None = None
    upper: float | None = None
    open_lower: bool = False
    open_upper: bool = False
    integer: bool = False

    def range_text(self):
        """The range in words: "an integer in [1, 1048576]", "a finite number in (0, 100]".

        Example:
        >>> Declared(NUMBER, lower=0, upper=100, open_lower=True).range_text()
        'a finite number in (0, 100]'
        """
        noun = "an integer" if self.integer else "a finite number"
        lower = "-inf" if self.lower is None else _number(self.lower)
        upper = "inf" if self.upper is None else _number(self.upper)
        return (f"{noun} in {'(' if self.open_lower or self.lower is None else '['}{lower}, "
                f"{upper}{')' if self.open_upper or self.upper is None else ']'}")

    def accepts(self, value):
        """Whether `value` (a parsed number) lies in the range (and is finite)."""
        if value is None:
            return True
        if not math.isfinite(value):
            return False
        if self.lower is not None and (value < self.lower or (self.open_lower and value == self.lower)):
            return False
        return not (self.upper is not None and (value > self.upper or (self.open_upper and value == self.upper)))


_DECLARED = {}


def declared(name):
    """The `Declared` of flag `name` in this process, or None (a switch or choice is declared by its type).

    Example:
    >>> declared("no_such_flag") is None
    True
    """
    if name in _DECLARED:
        return _DECLARED[name]
    if name in flags.FLAGS:
        parser = flags.FLAGS[name].parser
        if isinstance(parser, flags.BooleanParser):
            return _DECLARED.setdefault(name, Declared(SWITCH))
        if isinstance(parser, (flags.EnumParser, flags.EnumClassParser)):
            return _DECLARED.setdefault(name, Declared(CHOICE))
    return None


def neutral(*names):
    """Marks switches and choices already defined as not changing what a training run computes (--do_eval,
    --export_precision, ...)."""
    for name in names:
        _DECLARED[name] = dataclasses.replace(declared(name), affects_result=False)


def define_path(name, default, help, kind, *, affects_result=None, **kwargs):  # pylint: disable=redefined-builtin
    """Defines a string flag that names a path of `kind` (one of PATH_KINDS).

    Args:
        name, default, help: as absl's DEFINE_string.
        kind: INPUT_FILE, INPUT_FILES, INPUT_DIRECTORY, MODEL, OUTPUT_FILE, OUTPUT_FILES, OUTPUT_DIRECTORY or
            RUN_DIRECTORY.
        affects_result: default: True for inputs (by their content, not their path), False for outputs.
    """
    if kind not in PATH_KINDS:
        raise ValueError(f"--{name}: unknown path kind {kind!r}")
    _DECLARED[name] = Declared(kind, kind in INPUTS if affects_result is None else affects_result)
    flags.DEFINE_string(name, default, help, **kwargs)


def define_text(name, default, help, *, affects_result=True, **kwargs):  # pylint: disable=redefined-builtin
    """Defines a string flag that is no path (a column, a label list, a task name)."""
    _DECLARED[name] = Declared(TEXT, affects_result)
    flags.DEFINE_string(name, default, help, **kwargs)


def define_text_list(name, default, help, *, affects_result=True, multi=False):  # pylint: disable=redefined-builtin
    """Defines a comma-separated list of strings (absl's DEFINE_list), or with `multi` a repeatable string flag."""
    _DECLARED[name] = Declared(TEXT, affects_result)
    (flags.DEFINE_multi_string if multi else flags.DEFINE_list)(name, default, help)


def define_integer(name, default, help, lower, upper, *, affects_result=True):  # pylint: disable=redefined-builtin
    """Defines an integer flag whose values lie in [lower, upper] (None: unbounded on that side); the default may
    be None (the tool then chooses)."""
    _define_number(flags.DEFINE_integer, name, default, help, Declared(NUMBER, affects_result, lower, upper,
                                                                       integer=True))


def define_real(name, default, help, lower, upper, *,  # pylint: disable=redefined-builtin
                open_lower=False, open_upper=False, affects_result=True):
    """Defines a float flag whose values are finite and lie between lower and upper (each excluded when open)."""
    _define_number(flags.DEFINE_float, name, default, help,
                   Declared(NUMBER, affects_result, lower, upper, open_lower, open_upper))


def define_numbers(name, default, help, lower, upper, *,  # pylint: disable=redefined-builtin
                   integers=False, open_lower=False, affects_result=True):
    """Defines a string flag of comma-separated numbers (a sweep's learning rates, batch sizes, seeds), each
    checked as `integer` or `real` checks one."""
    declared_ = Declared(NUMBERS, affects_result, lower, upper, open_lower, integer=integers)
    _DECLARED[name] = declared_
    flags.DEFINE_string(name, default, help)

    def valid(value):
        if value is None:
            return True
        for part in value.split(","):
            try:
                number = int(part) if integers else float(part)
            except ValueError:
                return False
            if not declared_.accepts(number):
                return False
        return True

    flags.register_validator(name, valid, message=f"expected comma-separated numbers, each "
                             f"{declared_.range_text().removeprefix('a ').removeprefix('an ')}")


def _define_number(define, name, default, help, declared_):  # pylint: disable=redefined-builtin
    _DECLARED[name] = declared_
    define(name, default, help)
    flags.register_validator(name, declared_.accepts, message=f"expected {declared_.range_text()}")


def _number(value):
    return f"{value:,}".replace(",", "") if isinstance(value, int) else f"{value:g}"
