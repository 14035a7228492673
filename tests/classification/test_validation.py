"""The shared text and label checks: what each accepts, what it returns, and the one line it refuses with."""

import numpy as np
import pytest

from official_bert.classification.validation import ValidationError, class_id, label_name, label_row, score, text
from official_bert.errors import Error


def test_the_error_is_the_package_error_and_a_value_error():
    assert issubclass(ValidationError, Error) and issubclass(ValidationError, ValueError)


@pytest.mark.parametrize("value, expected", [("a film", "a film"), (np.str_("np"), "np"), ("", ""),
                                             ("café".encode("utf-8"), "café"), (np.bytes_(b"b"), "b")])
def test_text_accepts_strings_and_utf8_bytes(value, expected):
    assert text(value, "texts[0]") == expected and type(text(value, "texts[0]")) is str


@pytest.mark.parametrize("value, message", [
    (None, "texts[3] is None, not a text"),
    (7, "texts[3] is a number (7), not a text"),
    (np.int64(7), "texts[3] is a number (7), not a text"),
    (2.5, "texts[3] is a number (2.5), not a text"),
    (float("nan"), "texts[3] is nan (a missing value?), not a text"),
    (np.float32("nan"), "texts[3] is nan (a missing value?), not a text"),
    (True, "texts[3] is a bool (True), not a text"),
    (["a", "b"], "texts[3] is a list ['a', 'b'], not a text: expected one string per example"),
    (np.array(["a"]), "texts[3] is a list ['a'], not a text: expected one string per example"),
    (b"caf\xe9", "texts[3]: byte 0xe9 at offset 3 is not UTF-8"),
    ({"a": 1}, "texts[3] is a dict ({'a': 1}), not a text"),
])
def test_text_refuses_in_one_line_naming_where(value, message):
    with pytest.raises(ValidationError) as error:
        text(value, "texts[3]")
    assert str(error.value) == message


def test_label_name_strips_so_pos_and_pos_space_are_one_class():
    assert {label_name(value, "y") for value in ("pos", "pos ", " pos\t", b"pos")} == {"pos"}


@pytest.mark.parametrize("value, message", [("  ", "y[1]: the label is empty"),
                                            ("", "y[1]: the label is empty"),
                                            (3, "y[1]: label 3 is not a class name (a string)"),
                                            (None, "y[1]: label None is not a class name (a string)")])
def test_label_name_refuses_empty_and_non_strings(value, message):
    with pytest.raises(ValidationError) as error:
        label_name(value, "y[1]")
    assert str(error.value) == message


@pytest.mark.parametrize("value, expected", [(0, 0), (1.0, 1), (np.int32(2), 2), (np.float64(2.0), 2)])
def test_class_id_accepts_integral_ids_in_range(value, expected):
    assert class_id(value, 3, "y[0]") == expected and type(class_id(value, 3, "y[0]")) is int


@pytest.mark.parametrize("value, message", [
    (0.5, "y[4]: label 0.5 is a number, not a class id (an integer in [0, 3)); for float labels use regression "
          "(num_classes=1)"),
    (np.float32(1.7), "y[4]: label 1.7000000476837158 is a number, not a class id (an integer in [0, 3)); for "
                      "float labels use regression (num_classes=1)"),
    (float("nan"), "y[4]: label nan is a number, not a class id (an integer in [0, 3)); for float labels use "
                   "regression (num_classes=1)"),
    (3, "y[4]: label 3 is out of range: a class id is an integer in [0, 3)"),
    (-1, "y[4]: label -1 is out of range: a class id is an integer in [0, 3)"),
    (True, "y[4]: label True is not a class id (an integer in [0, 3))"),
    ("1", "y[4]: label '1' is not a class id (an integer in [0, 3))"),
])
def test_class_id_refuses_fractions_nan_bools_and_out_of_range(value, message):
    with pytest.raises(ValidationError) as error:
        class_id(value, 3, "y[4]")
    assert str(error.value) == message


def test_score_takes_finite_numbers_only():
    assert score(np.float32(0.25), "y[0]") == 0.25 and score(-3, "y[0]") == -3.0
    for value, message in [(float("nan"), "y[0]: target nan is not a finite number"),
                           (float("-inf"), "y[0]: target -inf is not a finite number"),
                           ("3.5", "y[0]: target '3.5' is not a number (regression expects numbers)"),
                           (False, "y[0]: target False is not a number (regression expects numbers)")]:
        with pytest.raises(ValidationError) as error:
            score(value, "y[0]")
        assert str(error.value) == message


def test_label_row_takes_num_classes_zeros_and_ones():
    assert label_row(np.array([1.0, 0.0, 1.0]), 3, "y[0]") == [1, 0, 1]
    for value, message in [
            ([1, 0], "y[2]: 2 values [1, 0], expected num_classes=3 values of 0 or 1 (one per label)"),
            ([1, 0, 2], "y[2]: [1, 0, 2] holds 2; expected num_classes=3 values of 0 or 1 (one per label)"),
            ([1, 0, 0.5], "y[2]: [1, 0, 0.5] holds 0.5; expected num_classes=3 values of 0 or 1 (one per label)"),
            ([1, 0, "1"], "y[2]: [1, 0, '1'] holds '1'; expected num_classes=3 values of 0 or 1 (one per label)"),
            (1, "y[2]: 1 is not a row of labels; expected num_classes=3 values of 0 or 1 (one per label)"),
            ("101", "y[2]: '101' is not a row of labels; expected num_classes=3 values of 0 or 1 (one per label)")]:
        with pytest.raises(ValidationError) as error:
            label_row(value, 3, "y[2]")
        assert str(error.value) == message
