"""Reading SQuAD's JSON files with clear errors, and writing JSON outputs atomically."""

import json

from official_bert.checkpoints.files import atomic_path
from official_bert.squad.errors import SquadError


def read_json(path, expected):
    """Returns the parsed JSON in `path`; raises SquadError naming the file and `expected` when it can't.

    Args:
        path: a local file.
        expected: what the file should be, for the message (e.g. "a SQuAD data file").

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.json")
    >>> _ = open(path, "w").write('{"data": [')
    >>> read_json(path, "a SQuAD data file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.squad.errors.SquadError: .../bad.json: not valid JSON (line 1 column 11: ...); expected a SQuAD ...
    """
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise SquadError(f"{path}: file not found; expected {expected}") from None
    except IsADirectoryError:
        raise SquadError(f"{path}: is a directory; expected {expected}") from None
    except UnicodeDecodeError as e:
        raise SquadError(f"{path}: not UTF-8 ({e.reason} at byte {e.start}); expected {expected}") from None
    except json.JSONDecodeError as e:
        raise SquadError(f"{path}: not valid JSON (line {e.lineno} column {e.colno}: {e.msg}); "
                         f"expected {expected}") from None


def write_json(path, value, indent=4):
    """Writes `value` as JSON plus a newline (the original's layout), under a temporary name first.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "predictions.json")
    >>> write_json(path, {"q1": "Paris"})
    >>> open(path).read()
    '{\\n    "q1": "Paris"\\n}\\n'
    """
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(value, indent=indent) + "\n")
