"""Training rows for sentence embeddings from a user's CSV, TSV or JSON Lines file with named columns
(`io.table_files`): pairs or triplets — an anchor, its positive and any number of hard negatives — for the ranking
losses, or scored pairs (two texts and a number) for CoSENT and cosine similarity.

Every text must hold more than spaces and every score be a finite number; anything else stops the run with one
line naming the file, the row and the column, before anything is written.
"""

import dataclasses
import re

import numpy as np

from official_bert.classification import validation
from official_bert.io import is_file
from official_bert.io.table_files import read_columns, read_rows
from official_bert.retrieval.errors import RetrievalDataError

PAIRS = "pairs"  # anchor, positive, negatives...
SCORED = "scored"  # text_a, text_b, score
_NEGATIVE = re.compile(r"negative(_\d+)?$")


@dataclasses.dataclass(frozen=True)
class RowColumns:
    """The columns of a training file.

    Args:
        anchor, positive: pairs' columns (--anchor_column, --positive_column).
        negatives: the hard negatives' columns (--negative_columns), each required; None takes every column
            named "negative" or "negative_<n>", in the file's order.
        text_a, text_b, score: scored pairs' columns (--text_a_column, --text_b_column, --score_column).

    Example:
    >>> RowColumns().text_columns(PAIRS, ["anchor", "positive", "negative_1", "negative_2", "id"])
    ['anchor', 'positive', 'negative_1', 'negative_2']
    """

    anchor: str = "anchor"
    positive: str = "positive"
    negatives: tuple = None
    text_a: str = "text_a"
    text_b: str = "text_b"
    score: str = "score"

    def text_columns(self, kind, header):
        """The text columns of a file of `kind` whose columns are `header`, in the order the losses take them."""
        if kind == SCORED:
            return [self.text_a, self.text_b]
        negatives = self.negatives
        if negatives is None:
            negatives = [name for name in header if _NEGATIVE.match(str(name))
                         and name not in (self.anchor, self.positive)]
        return [self.anchor, self.positive, *negatives]


@dataclasses.dataclass(frozen=True)
class TrainingRows:
    """The rows of a training file.

    Args:
        path: the file.
        columns: the text columns read, in order (anchor, positive, negatives...; or text_a, text_b).
        texts: one list of texts a column.
        scores: scored pairs' scores (float32 [N]); None for pairs.
        text_ids: [N, C] int64, equal for equal texts (whichever columns they are in).
    """

    path: str
    columns: list
    texts: list
    scores: object
    text_ids: object

    def __len__(self):
        return len(self.texts[0])


def read_training_rows(path, kind=PAIRS, columns=RowColumns(), input_format=None, flag="--train_file"):
    """Reads and checks a training file's rows.

    Args:
        path: a CSV or TSV file with a header row, or JSON Lines (`io.table_files`).
        kind: `PAIRS` or `SCORED`.
        columns: the `RowColumns`.
        input_format: "csv", "tsv" or "jsonl"; None from the extension.
        flag: the flag that named the file, for messages.

    Returns:
        a `TrainingRows`.

    Raises:
        RetrievalDataError (or `io.table_files.TableFileError`): no such file, a missing column, an empty text, a
            score that is not a finite number.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.jsonl")
    >>> _ = open(path, "w").write('{"anchor": "a cat", "positive": "cats purr", "negative": "dogs bark"}\\n'
    ...                           '{"anchor": "a dog", "positive": "dogs bark", "negative": "cats purr"}\\n')
    >>> rows = read_training_rows(path)
    >>> rows.columns, rows.text_ids.tolist()
    (['anchor', 'positive', 'negative'], [[0, 1, 2], [3, 2, 1]])
    >>> _ = open(path, "a").write('{"anchor": "a bird", "positive": " ", "negative": "x"}\\n')
    >>> read_training_rows(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.retrieval.errors.RetrievalDataError: ...train.jsonl, row 3, column 'positive': an empty text
    """
    if kind not in (PAIRS, SCORED):
        raise ValueError(f"kind={kind!r}: expected {PAIRS!r} or {SCORED!r}")
    if not is_file(path):
        raise RetrievalDataError(f"{flag}={path}: no such file")
    names = columns.text_columns(kind, read_columns(path, input_format))
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise RetrievalDataError(f"{flag}={path}: the column {repeated[0]!r} is named for two texts of a row")
    required = names + ([columns.score] if kind == SCORED else [])
    texts, scores, index = [[] for _ in names], [], {}
    for row_number, row in read_rows(path, input_format, required):
        where = f"{path}, row {row_number}"
        for column, name in zip(texts, names):
            text = validation.text(row[name], f"{where}, column {name!r}")
            if not text.strip():
                raise RetrievalDataError(f"{where}, column {name!r}: an empty text")
            column.append(text)
        if kind == SCORED:
            scores.append(_score(row[columns.score], f"{where}, column {columns.score!r}"))
    text_ids = np.array([[index.setdefault(text, len(index)) for text in row] for row in zip(*texts)], np.int64)
    return TrainingRows(path, names, texts, np.array(scores, np.float32) if kind == SCORED else None, text_ids)


def _score(cell, where):
    """A score cell as a float: a JSON number, or a CSV/TSV cell that reads as one; finite."""
    if isinstance(cell, str):
        try:
            cell = float(cell)
        except ValueError:
            raise RetrievalDataError(f"{where}: score {cell[:40]!r} is not a number") from None
    return validation.score(cell, where)
