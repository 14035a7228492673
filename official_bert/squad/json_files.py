"""Reading SQuAD's JSON files with clear errors, and writing JSON outputs atomically."""

import json

import tensorflow as tf

from official_bert.io import write_text
from official_bert.io.files import check_input_file
from official_bert.squad.errors import SquadError


def read_json(path, expected):
    """Returns the parsed JSON in `path`; raises SquadError naming the file and `expected` when it can't.

    Args:
        path: a file, local or on any tf.io.gfile filesystem.
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
    check_input_file(path, expected, error=SquadError)
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            return json.loads(f.read().decode("utf-8-sig"))  # a leading BOM dropped, which json refuses
    except tf.errors.NotFoundError:
        raise SquadError(f"{path}: file not found; expected {expected}") from None
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
    write_text(path, json.dumps(value, indent=indent) + "\n")
