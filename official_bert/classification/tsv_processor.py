"""A processor driven by a table of where each split's text and label columns are (GLUE, XNLI, user tasks)."""

import dataclasses
import os

import tensorflow as tf
from absl import logging

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import InputExample
from official_bert.classification.processor import DataProcessor
from official_bert.classification.tsv import read_tsv

FIRST_LINES = (None, "header", "data")


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where one split's fields are in its tab-separated file (0-based columns; -1 is the last one).

    Args:
        file: the file name in data_dir; "{language}" is replaced by the XNLI language.
        columns: the file's columns, for error messages.
        text_a: the first sentence's column.
        text_b: the second sentence's column, or None.
        label: the label's column, or None for unlabelled (test) files.
        header: whether the first line is a header.
        guid: the column holding the example's id, or None to use the line's 0-based index (as the original).
        language: the column holding the language, for files that mix them (XNLI dev/test), or None.
        exact: every row has exactly the `columns` named: more means a tab inside a sentence, which would
            shift the fields (the single-sentence layouts, whose text is free).

    Example:
    >>> Layout("dev.tsv", "index sentence1 sentence2 label", text_a=1, text_b=2, label=-1).min_columns
    4
    """

    file: str
    columns: str
    text_a: int
    text_b: int | None = None
    label: int | None = None
    header: bool = True
    guid: int | None = None
    language: int | None = None
    exact: bool = False

    @property
    def min_columns(self):
        """The fewest columns a row needs; a label in the last column (-1) must follow the texts."""
        used = [c for c in (self.text_a, self.text_b, self.label, self.guid, self.language) if c is not None]
        needed = max(used) + 1
        return needed + 1 if self.label == -1 else needed


@dataclasses.dataclass(frozen=True)
class TsvTask:
    """A task read from tab-separated files.

    Args:
        name: the --task_name.
        labels: the label strings in id order (the original's get_labels()), or None for regression.
        layouts: split name → Layout.
        leaderboard_files: split name → GLUE submission file name.
        skip_short_rows: splits whose rows with too few columns are skipped (counted, with a warning)
            rather than rejected: QQP's train and dev files have such rows in the original release.
        label_aliases: label spellings in the files → the label list's (XNLI's "contradictory").

    Example:
    >>> TsvTask("rte", ("entailment", "not_entailment"), {}).labels[1]
    'not_entailment'
    """

    name: str
    labels: tuple | None
    layouts: dict
    leaderboard_files: dict = dataclasses.field(default_factory=dict)
    skip_short_rows: tuple = ()
    label_aliases: dict = dataclasses.field(default_factory=dict)


class TsvProcessor(DataProcessor):
    """Reads a TsvTask's splits from data_dir into InputExamples.

    Args:
        task: the TsvTask.
        data_dir: the directory holding the task's files.
        label_list: overrides task.labels (the user tasks "single" and "pair").
        language: the XNLI language; selects the files and rows of that language.
        first_line: what the first line of a file whose layout has a header is (--tsv_first_line): "header"
            (skipped, as the original), "data" (read as an example: a file without the header) or None: skipped,
            but refused when its label column holds one of the labels (or, for regression, a number), the sign of a
            file without a header, which would silently lose its first example.

    Example:
    >>> import os, tempfile
    >>> data_dir = tempfile.mkdtemp()
    >>> _ = open(os.path.join(data_dir, "dev.tsv"), "w").write("sentence\\tlabel\\nGreat film .\\tpos\\n")
    >>> layout = Layout("dev.tsv", "sentence label", text_a=0, label=1)
    >>> processor = TsvProcessor(TsvTask("reviews", ("neg", "pos"), {"dev": layout}), data_dir)
    >>> processor.get_examples("dev")
    [InputExample(guid='dev-1', text_a='Great film .', text_b=None, label='pos')]
    """

    def __init__(self, task, data_dir, label_list=None, language=None, first_line=None):
        super().__init__(task.name, task.layouts, label_list or task.labels, leaderboard_files=task.leaderboard_files)
        if first_line not in FIRST_LINES:
            raise ClassificationDataError(f"--tsv_first_line={first_line}: expected header or data")
        self.task = task
        self.data_dir = data_dir
        self.language = language
        self.first_line = first_line

    def data_files(self, split):
        self.check_split(split)
        if tf.io.gfile.exists(self.data_dir) and not tf.io.gfile.isdir(self.data_dir):
            raise ClassificationDataError(f"--data_dir={self.data_dir}: is a file; expected the directory holding "
                                          f"the task's files ({self.task.layouts[split].file}, ...)")
        return [os.path.join(self.data_dir, self.task.layouts[split].file.format(language=self.language))]

    def cache_settings(self):
        return {**super().cache_settings(), "language": self.language,
                **({"first_line": self.first_line} if self.first_line else {})}

    def _read(self, split):
        layout = self.task.layouts[split]
        [path] = self.data_files(split)
        examples, short_lines, languages = [], [], set()
        rows = read_tsv(path)
        if layout.header and self.first_line != "data":
            first = next(rows, None)
            if first is not None and self.first_line is None:
                self._check_header(path, layout, *first)
        for line_number, row in rows:
            if len(row) < layout.min_columns:
                if split not in self.task.skip_short_rows:
                    raise ClassificationDataError(
                        f"{path}:{line_number}: expected at least {layout.min_columns} tab-separated columns "
                        f"({layout.columns}), found {len(row)}")
                short_lines.append(line_number)
                continue
            if layout.exact and len(row) != len(layout.columns.split()):
                raise ClassificationDataError(
                    f"{path}:{line_number}: expected {len(layout.columns.split())} tab-separated columns "
                    f"({layout.columns}), found {len(row)}: a tab inside the sentence?")
            if layout.language is not None:
                languages.add(row[layout.language])
                if row[layout.language] != self.language:
                    continue
            examples.append(self._example(split, layout, row, f"{path}:{line_number}", line_number - 1))
        if short_lines:
            self.skipped_rows[split] = len(short_lines)
            logging.warning("%s: skipped %d malformed rows with fewer than %d columns (lines %s%s)", path,
                            len(short_lines), layout.min_columns, ", ".join(map(str, short_lines[:5])),
                            ", ..." if len(short_lines) > 5 else "")
        if layout.language is not None and not examples and languages:
            raise ClassificationDataError(f"{path}: no rows in language {self.language!r}; the file has "
                                          f"{', '.join(sorted(languages))}")
        return examples

    def _check_header(self, path, layout, line_number, row):
        """Refuses a first line that reads as an example: a file without the header the layout has."""
        if layout.label is None or len(row) < layout.min_columns:
            return
        raw = row[layout.label]
        if self.is_regression:
            try:
                float(raw)
            except ValueError:
                return
            found = f"the number {raw!r}"
        elif self.task.label_aliases.get(raw, raw) in self.label_list:
            # A task without labels of its own takes them from --label_list (single, pair).
            found = f"{raw!r}, one of {'--label_list' if self.task.labels is None else 'the task'}'s labels"
        else:
            return
        raise ClassificationDataError(
            f"{path}:{line_number}: the first line is skipped as the header ({layout.columns}), as the original does, "
            f"but its label column holds {found}: without a header this example would be lost; pass "
            "--tsv_first_line=data to read it as an example, or --tsv_first_line=header to skip it")

    def _example(self, split, layout, row, where, index):
        guid = f"{split}-{row[layout.guid] if layout.guid is not None else index}"
        text_b = row[layout.text_b] if layout.text_b is not None else None
        if layout.label is None:
            label = self.placeholder_label
        elif self.is_regression:
            try:
                label = float(row[layout.label])
            except ValueError:
                raise ClassificationDataError(f"{where}: expected a number as the score ({layout.columns}), "
                                              f"found {row[layout.label]!r}") from None
        else:
            raw = row[layout.label]
            label = self.check_label(self.task.label_aliases.get(raw, raw), where)
        return InputExample(guid, row[layout.text_a], text_b, label)
