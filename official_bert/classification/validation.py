"""One check of each text and label a user gives, shared by the command-line readers and the Keras text models:
each function returns the value in the form the pipeline takes, or raises `ValidationError` in one line that
begins with `where` (a file and row, or an argument and index such as "texts[3]") and says what was expected.

A class label given by name is the name without the whitespace and invisible format characters around it ("pos ",
"pos\u200b" and "\ufeffpos" are the class "pos"): they print alike, so they are one class. Names that still differ
only in case, in Unicode form (NFC "café" and NFD "cafe\u0301") or by an invisible character inside are two spellings
of one label (`spelling`): a reader refuses them side by side, and a message about a label that is not known names
the known one it is another spelling of, both forms shown (`other_spelling`).

TensorFlow-free: the data tools import it.
"""

import math
import numbers
import unicodedata

import numpy as np

from official_bert.classification.errors import ClassificationDataError
from official_bert.io.utf8 import not_utf8
from official_bert.io.invisible import strip_invisible, without_format_characters


class ValidationError(ClassificationDataError):
    """A text or label that cannot be used. An `official_bert.errors.Error`, so also a ValueError (what Keras's
    `fit` callers catch).

    Example:
    >>> from official_bert.classification.validation import ValidationError
    >>> issubclass(ValidationError, ValueError)
    True
    """


def _shown(value):
    """`value` for a message: its repr, cut short."""
    shown = repr(value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _is_number(value):
    return isinstance(value, (numbers.Number, np.number, np.bool_))


def text(value, where):
    """A text as a str: a str as it is, bytes decoded as UTF-8.

    Args:
        value: the text.
        where: what names it in an error, e.g. "texts[3]" or "train.csv, row 7".

    Returns:
        the str (possibly empty: whether an empty text may be used is the caller's decision).

    Raises:
        ValidationError: None, a number or a bool (NaN included: a missing cell), a list or array, bytes that are
            not UTF-8, or anything else that is not text.

    Example:
    >>> text("a film", "texts[0]"), text("café".encode("utf-8"), "texts[1]")
    ('a film', 'café')
    >>> text(float("nan"), "texts[2]")
    Traceback (most recent call last):
    ...
    official_bert.classification.validation.ValidationError: texts[2] is nan (a missing value?), not a text
    """
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        problem = not_utf8(value)
        if problem:
            raise ValidationError(f"{where}: {problem}")
        return value.decode("utf-8")
    if value is None:
        raise ValidationError(f"{where} is None, not a text")
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        raise ValidationError(f"{where} is nan (a missing value?), not a text")
    if isinstance(value, (list, tuple, np.ndarray)):
        raise ValidationError(f"{where} is a list {_shown(value)}, not a text: expected one string per example")
    kind = "a bool" if isinstance(value, (bool, np.bool_)) else "a number" if _is_number(value) else \
        f"a {type(value).__name__}"
    raise ValidationError(f"{where} is {kind} ({_shown(value)}), not a text")


def label_name(value, where):
    """A class label given by name, as the class it names: the whitespace and invisible format characters around it
    stripped ("pos ", "pos\u200b" and "pos" are one class), bytes decoded as UTF-8.

    Args:
        value: the label.
        where: what names it in an error, e.g. "y[3]" or "train.csv, row 7".

    Returns:
        the stripped name.

    Raises:
        ValidationError: an empty (or all-space) name, or anything that is not a string.

    Example:
    >>> label_name(" pos\u200b", "y[0]")
    'pos'
    >>> label_name("  ", "y[1]")
    Traceback (most recent call last):
    ...
    official_bert.classification.validation.ValidationError: y[1]: the label is empty
    """
    if not isinstance(value, (str, bytes)):
        raise ValidationError(f"{where}: label {_shown(value)} is not a class name (a string)")
    name = strip_invisible(text(value, where))
    if not name:
        raise ValidationError(f"{where}: the label is empty")
    return name


def class_id(value, num_classes, where):
    """A class label given by number, as the class id: an integer (1.0 counts as 1) in [0, num_classes).

    Args:
        value: the label.
        num_classes: how many classes there are.
        where: what names it in an error, e.g. "y[3]".

    Returns:
        the id, an int.

    Raises:
        ValidationError: a fraction (0.5 is not class 0), NaN, a bool, a non-number, or an id out of range.

    Example:
    >>> class_id(1, 2, "y[0]"), class_id(1.0, 2, "y[1]")
    (1, 1)
    >>> class_id(1.7, 2, "y[2]")
    Traceback (most recent call last):
    ...
    official_bert.classification.validation.ValidationError: y[2]: label 1.7 is a number, not a class id (an \
integer in [0, 2)); for float labels use regression (num_classes=1)
    """
    expected = f"an integer in [0, {num_classes})"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise ValidationError(f"{where}: label {_shown(value)} is not a class id ({expected})")
    if not float(value).is_integer():
        raise ValidationError(f"{where}: label {_shown(value)} is a number, not a class id ({expected}); for float "
                              "labels use regression (num_classes=1)")
    if not 0 <= value < num_classes:
        raise ValidationError(f"{where}: label {int(value)} is out of range: a class id is {expected}")
    return int(value)


def score(value, where):
    """A regression target as a float: a finite number.

    Args:
        value: the target.
        where: what names it in an error, e.g. "y[3]".

    Returns:
        the float.

    Raises:
        ValidationError: NaN, an infinity, a bool, or anything that is not a number (a string included).

    Example:
    >>> score(3, "y[0]")
    3.0
    >>> score(float("inf"), "y[1]")
    Traceback (most recent call last):
    ...
    official_bert.classification.validation.ValidationError: y[1]: target inf is not a finite number
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise ValidationError(f"{where}: target {_shown(value)} is not a number (regression expects numbers)")
    if not math.isfinite(value):
        raise ValidationError(f"{where}: target {_shown(value)} is not a finite number")
    return float(value)


def label_row(value, num_classes, where):
    """A multi-label target as a list of 0/1 ints: one per class, 1 where the label is on.

    Args:
        value: a sequence of num_classes 0/1 values (bools and 0.0 / 1.0 too).
        num_classes: how many labels there are.
        where: what names it in an error, e.g. "y[3]".

    Returns:
        the list of ints.

    Raises:
        ValidationError: not a sequence, of another width, or holding anything but 0 and 1.

    Example:
    >>> label_row([1, 0.0, True], 3, "y[0]")
    [1, 0, 1]
    >>> label_row([1, 0], 3, "y[1]")
    Traceback (most recent call last):
    ...
    official_bert.classification.validation.ValidationError: y[1]: 2 values [1, 0], expected num_classes=3 values \
of 0 or 1 (one per label)
    """
    expected = f"num_classes={num_classes} values of 0 or 1 (one per label)"
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise ValidationError(f"{where}: {_shown(value)} is not a row of labels; expected {expected}")
    row = list(value.tolist() if isinstance(value, np.ndarray) else value)
    if len(row) != num_classes:
        raise ValidationError(f"{where}: {len(row)} values {_shown(value)}, expected {expected}")
    for item in row:
        if not _is_number(item) or item not in (0, 1):
            raise ValidationError(f"{where}: {_shown(value)} holds {_shown(item)}; expected {expected}")
    return [int(item) for item in row]


def number(value):
    """`value` as a float when it is a number or a string of one ("1.0", "1e0"), else None (bools are not numbers).

    Example:
    >>> number("1e0"), number(2), number("pos"), number(True)
    (1.0, 2.0, None, None)
    """
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def spelling(label):
    """What the spellings of one label share: its number (1, "1.0", "1e0"), else its text in NFC form, case-folded,
    without format characters.

    Example:
    >>> spelling("1.0") == spelling("1"), spelling("Café") == spelling("cafe\u0301"), spelling("po\u200bs")
    (True, True, 'pos')
    """
    value = number(label)
    if value is not None and math.isfinite(value):
        return value
    return unicodedata.normalize("NFC", without_format_characters(label)).casefold()


def how_alike(label, other):
    """How two spellings of one label (`spelling`) differ, in words, both shown as escapes where they print alike.

    Example:
    >>> how_alike("Pos", "pos"), how_alike("1.0", "1")
    ('differ only in case', 'are the same number')
    >>> print(how_alike("po\\u200bs", "pos"))
    differ only in an invisible character ('po\\u200bs' beside 'pos')
    """
    if isinstance(spelling(label), float):
        return "are the same number"
    if label.casefold() == other.casefold():
        return "differ only in case"
    if without_format_characters(label) == without_format_characters(other):
        return f"differ only in an invisible character ({ascii(label)} beside {ascii(other)})"
    return f"differ only in case or Unicode form ({ascii(label)} beside {ascii(other)})"  # they may look the same


def other_spelling(label, labels):
    """A message's note on the label of `labels` that `label` is another spelling of, or "".

    Example:
    >>> other_spelling("Pos", ["neg", "pos"]), other_spelling("neutral", ["neg", "pos"])
    ("; 'Pos' and 'pos' differ only in case", '')
    """
    for other in labels:
        if spelling(other) == spelling(label):
            return f"; {label!r} and {other!r} {how_alike(label, other)}"
    return ""
