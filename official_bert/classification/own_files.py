"""Your own data: CSV, TSV or JSON Lines files with named columns, as single-label, multi-label or regression tasks.

A file's rows become InputExamples (`OwnFilesProcessor`); the label list is the sorted set of the training file's
labels unless given, and is saved as labels.json in the output directory (`write_label_file`), so that evaluation,
prediction and the export of that run, or of a later one started from it, use the same order. Class weights
(`class_weights`) come from the training file's label counts.

A label is its cell without the whitespace and invisible characters around it ("pos ", "pos\u200b" and "pos" are one
class: `validation.label_name`), as --label_list is read. Two spellings of one label in a training file, "Pos" beside
"pos", "1.0" beside "1", NFD beside NFC or a zero-width space inside one, are refused in one line naming both: one
class or two is the user's to say, by writing them alike or by listing both in --label_list.
"""

import collections
import dataclasses
import json
import math
import os

import tensorflow as tf

from official_bert.classification import validation
from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import InputExample
from official_bert.classification.processor import DataProcessor
from official_bert.io import write_text
from official_bert.io.table_files import check_table_file, read_rows
from official_bert.io.invisible import strip_invisible

SINGLE_LABEL, MULTI_LABEL, REGRESSION = "single_label", "multi_label", "regression"
LABEL_FILE = "labels.json"
OWN_TASK = "own"  # the task name of own files: in the cache's file names and the log


@dataclasses.dataclass(frozen=True)
class Columns:
    """The columns a task reads from its files.

    Args:
        text_a: the text (the first of a pair).
        text_b: the second text of a pair task, or None.
        label: the label (a class, a list of classes, or a number).
        id: the column that identifies a row in predictions, or None for the row number.

    Example:
    >>> Columns(text_a="body", id="ticket").required("test")
    ['body', 'ticket']
    """

    text_a: str = "text"
    text_b: str | None = None
    label: str = "label"
    id: str | None = None

    def required(self, split):
        """The columns `split`'s file must have (a test file needs no label)."""
        names = [self.text_a, self.text_b, None if split == "test" else self.label, self.id]
        return [name for name in names if name]


class OwnFilesProcessor(DataProcessor):
    """The splits "train", "dev" and "test" of your own files, labelled as `kind` says.

    The kind is regression with `regression`, multi-label with `multi_label` or a `label_separator` (or when the
    training file's first label is a JSON list), else single-label; without a training file, that of the label file
    `saved` (see `read_label_file`). The label list is `label_list`, else the training file's labels sorted (as
    numbers when they all are integers), else the saved one.

    Args:
        files: split name ("train", "dev", "test") → path; splits without a file are left out.
        columns: the `Columns`.
        input_format: one of io.table_files.FORMATS, or None to take each file's from its extension.
        label_list: the labels in id order (a sequence or comma-separated), or None.
        multi_label: the task is multi-label.
        label_separator: a multi-label cell that is a string is split at this (e.g. "|").
        regression: the labels are numbers: one output, mean squared error.
        saved: the label file's contents of the run this one continues, or None.
        kind_source: (kind, clause): the kind something other than the flags expects, and the clause that says
            so (e.g. (REGRESSION, "--teacher=run is a regression model (labels.json)")); a label of another kind
            in a task of that kind is refused naming it, with advice that fits it, instead of the flag that would
            change the kind.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.csv")
    >>> _ = open(path, "w").write("id,body,tags\\n7,login fails,bug|ui\\n8,thanks,\\n9,crash,bug\\n")
    >>> processor = OwnFilesProcessor({"train": path}, Columns("body", label="tags", id="id"), label_separator="|")
    >>> processor.kind, processor.label_list, processor.get_examples("train")[0]
    ('multi_label', ('bug', 'ui'), InputExample(guid='train-1', text_a='login fails', text_b=None, label=('bug', 'ui')))
    """

    def __init__(self, files, columns=Columns(), *, input_format=None, label_list=None, multi_label=False,
                 label_separator=None, regression=False, saved=None, kind_source=None):
        self.files = {split: path for split, path in files.items() if path}
        unknown = set(self.files) - {"train", "dev", "test"}
        if unknown:
            raise ValueError(f"unknown splits {sorted(unknown)}")
        if not self.files:
            raise ClassificationDataError("no data files: give --train_file, --dev_file or --test_file")
        self.columns = columns
        self.input_format = input_format
        self.kind_source = kind_source
        self.formats = {split: check_table_file(path, f"--{split}_file", input_format)
                        for split, path in self.files.items()}
        self.label_separator = label_separator or (saved or {}).get("label_separator")
        if multi_label and regression:
            raise ClassificationDataError("--multi_label and --regression: a task is one or the other")
        if isinstance(label_list, str):
            label_list = [strip_invisible(label) for label in label_list.split(",")]
        self.explicit_labels = bool(label_list)
        self.kind = (REGRESSION if regression else MULTI_LABEL if multi_label or label_separator else
                     (saved or {}).get("kind") if "train" not in self.files else None)
        self.label_counts = collections.Counter()
        self.num_train_rows = 0
        if "train" in self.files:
            self._scan_training_labels()
        if self.kind is None:
            self.kind = SINGLE_LABEL
        if self.kind == REGRESSION:
            labels = None
            if label_list:
                raise ClassificationDataError("--label_list is for classes; a --regression task has none")
        elif label_list:
            labels = tuple(label_list)
            if not all(labels) or len(set(labels)) != len(labels):
                raise ClassificationDataError(f"--label_list={','.join(labels)}: expected distinct, non-empty labels")
            unseen = sorted(set(self.label_counts) - set(labels))
            if unseen:
                raise ClassificationDataError(f"{self.files['train']}: label {unseen[0]!r} is not in --label_list "
                                              f"({', '.join(labels)}){validation.other_spelling(unseen[0], labels)}")
        elif "train" in self.files:
            labels = sorted_labels(self.label_counts)
        elif saved and saved.get("labels"):
            labels = tuple(saved["labels"])
        else:
            raise ClassificationDataError("the labels are unknown: without --train_file, give --label_list or an "
                                          f"--init_checkpoint (or --output_dir) holding the {LABEL_FILE} of a "
                                          "training run")
        if labels is not None and self.kind == MULTI_LABEL and not labels:
            raise ClassificationDataError(f"{self.files['train']}: no row has a label (every label list is empty); "
                                          "a multi-label task needs at least one")
        if labels is not None and self.kind == SINGLE_LABEL and len(labels) < 2:
            raise ClassificationDataError(f"{self.files.get('train', '--label_list')}: a single-label task needs at "
                                          f"least two labels; found {', '.join(labels) or 'none'}")
        super().__init__(OWN_TASK, tuple(s for s in ("train", "dev", "test") if s in self.files), labels)

    @property
    def multi_label(self):
        return self.kind == MULTI_LABEL

    @property
    def placeholder_label(self):
        return () if self.multi_label else super().placeholder_label

    def data_files(self, split):
        self.check_split(split)
        return [self.files[split]]

    def cache_settings(self):
        # --input_format, not every split's format: a split's key (its file and this) stays the same whichever other
        # files a run is given (a sweep's runs are given no test file).
        return {**super().cache_settings(), "kind": self.kind, "columns": dataclasses.asdict(self.columns),
                "input_format": self.input_format, "label_separator": self.label_separator}

    def label_file(self):
        """What `write_label_file` saves: the kind, the labels in id order and the label separator."""
        return {"kind": self.kind, "labels": list(self.label_list) if self.label_list else None,
                "label_separator": self.label_separator, "columns": dataclasses.asdict(self.columns)}

    def ids(self, split):
        """Yields the id of each row of `split`'s file, in order: its id column's value, or its row number."""
        for row_number, row in self._rows(split):
            yield row[self.columns.id] if self.columns.id else row_number

    def _rows(self, split):
        path = self.files[split]
        if not tf.io.gfile.exists(path):
            raise ClassificationDataError(f"{path}: file not found")
        return read_rows(path, self.formats[split], self.columns.required(split))

    def _scan_training_labels(self):
        path = self.files["train"]
        spellings = {}  # a label's validation.spelling key → (the label, the row it was first seen on)
        for row_number, row in self._rows("train"):
            cell = row[self.columns.label]
            if self.kind is None:
                self.kind = MULTI_LABEL if isinstance(cell, list) else SINGLE_LABEL
            label = self._parse_label(cell, path, row_number)
            self.num_train_rows += 1
            names = label if self.kind == MULTI_LABEL else () if self.kind == REGRESSION else (label,)
            if not self.explicit_labels:  # a --label_list that names both spellings makes them two classes
                for name in names:
                    first, first_row = spellings.setdefault(validation.spelling(name), (name, row_number))
                    if first != name:
                        raise ClassificationDataError(
                            f"{path}, row {row_number}: label {name!r} and label {first!r} (row {first_row}) "
                            f"{validation.how_alike(name, first)}: one class or two? Write them alike, or give "
                            "--label_list naming both to keep two classes")
            self.label_counts.update(names)

    def _read(self, split):
        path = self.files[split]
        examples = []
        for row_number, row in self._rows(split):
            where = f"{path}, row {row_number}"
            text_a = self._text(row, self.columns.text_a, where)
            text_b = self._text(row, self.columns.text_b, where) if self.columns.text_b else None
            if split == "test" and self.columns.label not in row:
                label = self.placeholder_label
            else:
                label = self._parse_label(row[self.columns.label], path, row_number)
                if self.label_list is not None:
                    for name in label if self.multi_label else (label,):
                        if name not in self.label_list:
                            raise ClassificationDataError(
                                f"{where}: label {name!r} is not one of the labels {', '.join(self.label_list)}"
                                + (" (those of the training file)" if not self.explicit_labels else "")
                                + validation.other_spelling(name, self.label_list))
            examples.append(InputExample(f"{split}-{row_number}", text_a, text_b, label))
        return examples

    @staticmethod
    def _text(row, column, where):
        text = validation.text(row[column], f"{where}, column {column!r}")
        if not text.strip():
            raise ClassificationDataError(f"{where}: column {column!r} is an empty text")
        return text

    def _parse_label(self, cell, path, row_number):
        where = f"{path}, row {row_number}"
        column = self.columns.label
        if self.kind == REGRESSION:
            number = validation.number(cell)
            if number is None or not math.isfinite(number):
                raise self._kind_error(f"{where}: label {cell!r} in column {column!r} is not a number",
                                       "(--regression expects float labels)",
                                       "so the labels must be numbers: distil a teacher fine-tuned on these classes "
                                       "instead")
            return number
        if self.kind == MULTI_LABEL:
            if isinstance(cell, str):
                if self.label_separator:
                    cell = cell.split(self.label_separator)
                elif cell.strip().startswith("["):
                    try:
                        cell = json.loads(cell)
                    except json.JSONDecodeError:
                        pass
            if not isinstance(cell, list):
                raise self._kind_error(
                    f"{where}: label {cell!r} in column {column!r} is not a list of labels",
                    "; give a JSON list, or --label_separator to split a string (e.g. --label_separator='|')",
                    "so each label must be a list: give JSON lists or --label_separator, or distil a teacher "
                    "fine-tuned on single labels")
            # Empty names (an empty list, "bug|" split) are no label: a row may have none.
            names = [_class_name(name, where, column) for name in cell]
            return tuple(dict.fromkeys(validation.label_name(name, f"{where}, column {column!r}") for name in names
                                       if strip_invisible(name)))
        if isinstance(cell, list):
            raise self._kind_error(f"{where}: label {cell!r} in column {column!r} is a list",
                                   ": a multi-label task? Pass --multi_label",
                                   "distil a teacher fine-tuned on these label lists (--multi_label)")
        number = validation.number(cell)
        if number is not None and math.isfinite(number) and not number.is_integer() and (
                not self.explicit_labels or isinstance(cell, float)):  # a JSON float is never a class name
            raise self._kind_error(f"{where}: label {cell!r} in column {column!r} is a number, not a class",
                                   "; pass --regression for float labels" + (
                                       "" if isinstance(cell, float) else " (or --label_list to name the classes)"),
                                   "distil a teacher fine-tuned with --regression on these numbers")
        return validation.label_name(_class_name(cell, where, column), f"{where}, column {column!r}")

    def _kind_error(self, problem, flag_advice, source_advice):
        """A label of another kind than the task's: with the flag that changes the kind, or, when something else
        set the kind (`kind_source`), naming it with the advice that fits it."""
        if self.kind_source and self.kind_source[0] == self.kind:
            return ClassificationDataError(f"{problem}, but {self.kind_source[1]}: {source_advice}")
        return ClassificationDataError(problem + (" " if flag_advice.startswith("(") else "") + flag_advice)


def _class_name(value, where, column):
    """A class label as a string: JSON integers (and floats that are integers) as their digits."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return str(int(value))
    if isinstance(value, float):  # a multi-label list's
        raise ClassificationDataError(f"{where}: label {value!r} in column {column!r} is a number, not a class; "
                                      "pass --regression for float labels")
    raise ClassificationDataError(f"{where}: label {json.dumps(value)[:40]} in column {column!r} is not a class name")


def sorted_labels(labels):
    """Labels in id order: sorted as integers when they all are, else as strings.

    Args:
        labels: the label strings (any iterable).

    Example:
    >>> sorted_labels(["10", "2", "0"]), sorted_labels({"pos", "neg"})
    (('0', '2', '10'), ('neg', 'pos'))
    """
    labels = set(labels)
    try:
        return tuple(sorted(labels, key=int))
    except ValueError:
        return tuple(sorted(labels))


def class_weights(spec, processor):
    """The loss weights of `spec`: for single-label, one weight per class; for multi-label, (positive, negative)
    weights per label. "balanced" gives class c the weight n / (n_classes × count_c), as scikit-learn's
    "balanced" (multi-label: each label as a binary task, positives n / (2 × count), negatives
    n / (2 × (n − count))); a comma-separated list gives them in label order (multi-label: the positive weights).

    Args:
        spec: "balanced", a list of numbers ("1,5"), or None / "" for none.
        processor: an `OwnFilesProcessor` with a training file (for "balanced").

    Returns a list of floats, a pair of lists (multi-label), or None.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.jsonl")
    >>> _ = open(path, "w").write("".join('{"text": "t", "label": "%s"}\\n' % c for c in "aaab"))
    >>> class_weights("balanced", OwnFilesProcessor({"train": path}))  # 4 / (2 * 3), 4 / (2 * 1)
    [0.6666666666666666, 2.0]
    >>> class_weights("1, 4.5", OwnFilesProcessor({"train": path}))
    [1.0, 4.5]
    """
    if not spec:
        return None
    if processor.kind == REGRESSION:
        raise ClassificationDataError(f"--class_weights={spec}: a --regression task has no classes to weigh")
    labels = processor.label_list
    if spec == "balanced":
        if "train" not in processor.files:
            raise ClassificationDataError("--class_weights=balanced counts the --train_file's labels; give it")
        n = processor.num_train_rows
        for label in labels:
            if not processor.label_counts[label] or (processor.multi_label and processor.label_counts[label] == n):
                raise ClassificationDataError(
                    f"--class_weights=balanced: label {label!r} is on {processor.label_counts[label]} of the "
                    f"{n} training rows; it cannot be balanced (give the weights as a list)")
        if processor.multi_label:
            return ([n / (2 * processor.label_counts[c]) for c in labels],
                    [n / (2 * (n - processor.label_counts[c])) for c in labels])
        return [n / (len(labels) * processor.label_counts[c]) for c in labels]
    try:
        weights = [float(w) for w in spec.split(",")]
    except ValueError:
        weights = []
    if len(weights) != len(labels) or not all(w > 0 and math.isfinite(w) for w in weights):
        raise ClassificationDataError(f"--class_weights={spec}: expected 'balanced' or {len(labels)} positive numbers, "
                                      f"one per label in order ({', '.join(labels)})")
    return (weights, [1.0] * len(weights)) if processor.multi_label else weights


def write_label_file(directory, processor):
    """Writes `processor.label_file()` as directory/labels.json; returns its path.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.jsonl")
    >>> _ = open(path, "w").write('{"text": "a", "label": "pos"}\\n{"text": "b", "label": "neg"}\\n')
    >>> directory = os.path.dirname(path)
    >>> _ = write_label_file(directory, OwnFilesProcessor({"train": path}))
    >>> read_label_file(directory)["labels"]
    ['neg', 'pos']
    """
    return write_text(os.path.join(directory, LABEL_FILE), json.dumps(processor.label_file(), indent=2) + "\n")


def read_label_file(*directories):
    """The contents of the first directory's labels.json that exists, or None; a directory may be None, or a
    checkpoint path whose directory is then searched.

    Args:
        *directories: directories (or checkpoint prefixes) to search, in order.

    Example:
    >>> read_label_file(None, "/nonexistent/run/ckpt-9") is None
    True
    """
    for directory in directories:
        if not directory:
            continue
        for candidate in dict.fromkeys(c for c in (directory, os.path.dirname(directory)) if c):
            path = os.path.join(candidate, LABEL_FILE)
            if tf.io.gfile.exists(path):
                with tf.io.gfile.GFile(path, "rb") as f:
                    try:
                        return json.loads(f.read().decode("utf-8"))
                    except (ValueError, UnicodeDecodeError) as e:
                        raise ClassificationDataError(f"{path}: not a label file ({e})") from None
    return None
