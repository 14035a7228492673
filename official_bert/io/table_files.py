"""Users' data files as rows of named columns, streamed: CSV and TSV with a header row (read exactly as Python's
`csv` module reads them: RFC 4180 quoting, TSV being `delimiter="\\t"`), JSON Lines (one object per line; `.json`
too) and plain text (one input per line, the column "text"). A UTF-8 byte-order mark and CRLF line ends are
accepted; `gs://` and other `scheme://` paths go through tf.io.gfile (TensorFlow is imported for those alone).

Rows come one at a time, `(row_number, {column: value})`, so memory holds one row, whatever the file's size. A row's
number is its place among the data rows of a CSV/TSV file (the header is row 0), and its line number in a JSON Lines
or text file; blank lines are skipped without renumbering what follows. Anything unusable is a `TableFileError`, one
line naming the file and the row: a line that is not a JSON object, a CSV row with more or fewer fields than the
header, bytes that are not UTF-8 (with their byte offset), an empty file, a directory given for a file (with the flag
that named it: `check_table_file`), the header row again as a data row (two files joined into one: in a CSV/TSV file
of two or more columns it would be read as a row whose label is the label column's name), a missing column (with
the columns that exist, `describe_columns`; a header read as one column that holds tabs, commas or semicolons is
shown as it is, with the --input_format that would split it). A cell may be as long as a file allows: reading a
CSV/TSV file lifts the `csv` module's process-wide field limit (131,072 characters by default) to 2**31 - 1.

Column names are read as written, spaces included, as Python's `csv`, pandas and Hugging Face datasets read them:
the header `id,text,label ` has a column 'label ' and none 'label'. A message shows such a name quoted and says what
surrounds it (`describe_columns`), so that the header can be fixed; stripping it silently would make a file mean
something else here than in every other tool that reads it.

Example:
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "tickets.csv")
>>> _ = open(path, "w", encoding="utf-8", newline="").write('id,body\\r\\n7,"Hi, it ""broke"" "\\r\\n')
>>> list(read_rows(path, columns=["body"]))
[(1, {'id': '7', 'body': 'Hi, it "broke" '})]
"""

import csv
import json
import os

from official_bert.errors import Error
from official_bert.io.files import check_input_file, open_file
from official_bert.io.invisible import invisible_difference, shown, strip_invisible

FORMATS = ("csv", "tsv", "jsonl", "text")
TEXT_COLUMN = "text"  # the one column of a plain-text file
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
               ".txt": "text", ".text": "text"}
_BOM = b"\xef\xbb\xbf"
# The largest csv.field_size_limit every platform takes (a C long); a document in one cell is not an error.
_FIELD_LIMIT = 2**31 - 1
# What separates the columns of a file read as each delimited format, and the other separators a user's file may use.
_SEPARATORS = {"csv": ",", "tsv": "\t"}
_SEPARATOR_NAMES = {",": "comma", "\t": "tab", ";": "';'"}
_EXPECTED = "a CSV, TSV, JSON Lines or text file"


class TableFileError(Error):
    """A data file that cannot be read as rows of named columns; the message names the file and the row."""


def table_format(path, input_format=None, flag=None, format_flag="--input_format"):
    """The format of `path`: `input_format` when given, else the one its extension names.

    Args:
        path: the file.
        input_format: one of FORMATS, or None to take the extension's.
        flag: the flag that named the file (e.g. "--unlabeled_file"), for the message, or None.
        format_flag: the flag that gives the file's format, which the message advises.

    Example:
    >>> table_format("gs://b/train.jsonl"), table_format("dev.json"), table_format("x.data", "tsv")
    ('jsonl', 'jsonl', 'tsv')
    >>> table_format("more", flag="--unlabeled_file", format_flag="--unlabeled_format")
    Traceback (most recent call last):
    ...
    official_bert.io.table_files.TableFileError: --unlabeled_file=more: cannot tell its format from the extension \
'(none)'; name it .csv, .tsv, .jsonl or .txt, or give --unlabeled_format=csv|tsv|jsonl|text
    """
    if input_format:
        if input_format not in FORMATS:
            raise TableFileError(f"{format_flag}={input_format}: expected one of {', '.join(FORMATS)}")
        return input_format
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in _EXTENSIONS:
        raise TableFileError(f"{f'{flag}={path}' if flag else path}: cannot tell its format from the extension "
                             f"{extension or '(none)'!r}; name it .csv, .tsv, .jsonl or .txt, or give "
                             f"{format_flag}={'|'.join(FORMATS)}")
    return _EXTENSIONS[extension]


def check_table_file(path, flag=None, input_format=None, format_flag="--input_format"):
    """The format of the user's file `path` (`table_format`), once it is known not to be a directory; each message
    names `flag` and, for a format it cannot tell, `format_flag`.

    Args:
        path: the file.
        flag: the flag that named it (e.g. "--train_file"), or None.
        input_format: one of FORMATS, or None to take the extension's.
        format_flag: the flag that gives its format.

    Raises:
        TableFileError: `path` is a directory, or its format is unknown.

    Example:
    >>> import tempfile
    >>> check_table_file(tempfile.mkdtemp(), "--train_file", "csv")
    Traceback (most recent call last):
    ...
    official_bert.io.table_files.TableFileError: --train_file=...: is a directory; expected a CSV, TSV, JSON Lines \
or text file (it is empty)
    """
    check_input_file(path, _EXPECTED, flag, TableFileError)
    return table_format(path, input_format, flag, format_flag)


def read_rows(path, input_format=None, columns=()):
    """Yields `(row_number, row)` for each data row of `path`, lazily; `row` maps column names to values (strings in
    CSV, TSV and text files; any JSON value in JSON Lines).

    Args:
        path: a local or `scheme://` path.
        input_format: one of FORMATS; None takes it from the extension (`table_format`).
        columns: the columns every row must have; a missing one is an error listing those that exist.

    Raises:
        TableFileError: the file is empty, not UTF-8, a row is ragged or not a JSON object, or a column is missing.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "dev.jsonl")
    >>> _ = open(path, "w").write('{"text": "great", "labels": ["pos"]}\\n\\n{"text": "dull", "labels": []}\\n')
    >>> list(read_rows(path, columns=["text", "labels"]))
    [(1, {'text': 'great', 'labels': ['pos']}), (3, {'text': 'dull', 'labels': []})]
    >>> list(read_rows(path, columns=["label"]))
    Traceback (most recent call last):
    ...
    official_bert.io.table_files.TableFileError: ...dev.jsonl, row 1: no column 'label' (its columns: text, labels)
    """
    input_format = table_format(path, input_format)
    reader = {"csv": _csv_rows, "tsv": _csv_rows, "jsonl": _json_rows, "text": _text_rows}[input_format]
    empty = True
    for row_number, row in reader(path, input_format, list(columns)):
        empty = False
        yield row_number, row
    if empty:
        raise TableFileError(f"{path}: the file is empty (it has no data rows)")


def read_columns(path, input_format=None):
    """The column names of `path`: a CSV/TSV file's header, a JSON Lines file's first object's keys, or ["text"].

    Args:
        path: a local or `scheme://` path.
        input_format: one of FORMATS; None takes it from the extension.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.tsv")
    >>> _ = open(path, "w").write("sentence\\tlabel\\nfine\\t1\\n")
    >>> read_columns(path), read_columns(path, "text")
    (['sentence', 'label'], ['text'])
    """
    input_format = table_format(path, input_format)
    if input_format == "text":
        return [TEXT_COLUMN]
    if input_format == "jsonl":
        for _, row in read_rows(path, input_format):
            return list(row)
    lines = _lines(path)
    header = next(_csv_reader((text for _, text in lines), input_format), None)
    lines.close()
    if not header:
        raise TableFileError(f"{path}: the file is empty (it has no header row)")
    return header


def describe_columns(columns, wanted=None):
    """"its columns: ..." for a message about a missing column: each name as written, quoted when spaces or invisible
    characters surround it; and when one of them is `wanted` but for those, what to fix.

    Args:
        columns: the names the file has.
        wanted: the column that was not found, or None.

    Example:
    >>> describe_columns(["id", "text", "label"])
    'its columns: id, text, label'
    >>> describe_columns(["id", "text", "label "], "label")
    "its columns: id, text, 'label '; the header's 'label ' has a space at its end: remove it from the file"
    """
    described = f"its columns: {', '.join(shown(str(name)) for name in columns)}"
    for name in columns:
        if wanted is not None and name != wanted and strip_invisible(str(name)) == wanted:
            described += (f"; the header's {name!r} has {invisible_difference(str(name))}: remove it from the "
                          "file")
            break
    return described


def check_utf8(path):
    """Reads `path` through and raises a `TableFileError` naming the line and byte offset of the first byte that is
    not UTF-8 (a leading byte-order mark is allowed).

    Args:
        path: a local or `scheme://` path.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = open(path, "wb").write("one\\ncafé\\n".encode("latin-1"))
    >>> check_utf8(path)
    Traceback (most recent call last):
    ...
    official_bert.io.table_files.TableFileError: ...corpus.txt, line 2: byte 0xe9 at byte offset 7 is not UTF-8 ...
    """
    for _ in _lines(path):
        pass


def _csv_reader(texts, input_format):
    csv.field_size_limit(_FIELD_LIMIT)
    return csv.reader(texts, delimiter=_SEPARATORS[input_format])


def _separator_hint(header, input_format):
    """For a header read as one column that holds another separator than `input_format`'s: the header as it is, and
    the format that would split it; else ""."""
    if len(header) != 1:
        return ""
    for separator, name in _SEPARATOR_NAMES.items():
        if separator != _SEPARATORS[input_format] and separator in header[0]:
            fix = next((f"give --input_format={f}" for f, s in _SEPARATORS.items() if s == separator),
                       "save it with commas or tabs (--input_format=csv or tsv)")
            return f"header is {header[0]!r}: a {name}-separated file? {fix}"
    return ""


def _lines(path):
    """Yields (line_number, text) with the line end kept, as a file opened with newline="" gives them to `csv`:
    "\\n", "\\r\\n" and a lone "\\r" each end a line. Splitting the bytes is safe: no UTF-8 sequence holds those
    bytes; decoding line by line finds the offset of a byte that is not UTF-8."""
    check_input_file(path, _EXPECTED, error=TableFileError)
    offset = 0
    number = 0
    with open_file(path, "rb") as f:
        for chunk in f:
            if number == 0 and chunk.startswith(_BOM):
                chunk = chunk[len(_BOM):]
                offset = len(_BOM)
            for piece in chunk.splitlines(keepends=True) if b"\r" in chunk else (chunk,):
                number += 1
                try:
                    text = piece.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise TableFileError(
                        f"{path}, line {number}: byte 0x{piece[e.start]:02x} at byte offset {offset + e.start} is "
                        f"not UTF-8 (save the file as UTF-8)") from None
                offset += len(piece)
                yield number, text


def _missing(path, where, row, columns, hint=""):
    for column in columns:
        if column not in row:
            listed = hint or describe_columns(row, column)
            return TableFileError(f"{path}{where}: no column {column!r} ({listed})")
    return None


def _csv_rows(path, input_format, columns):
    lines = _lines(path)
    line_number = 0

    def texts():
        nonlocal line_number
        for line_number, text in lines:
            yield text

    reader = _csv_reader(texts(), input_format)
    try:
        header = next(reader, None)
        if header is None:
            return
        if len(set(header)) < len(header):
            twice = sorted({name for name in header if header.count(name) > 1})
            raise TableFileError(f"{path}, header: the column {twice[0]!r} appears more than once")
        hint = _separator_hint(header, input_format)
        error = _missing(path, "", header, columns, hint)
        if error:
            raise error
        row_number = 0
        while True:
            first_line = line_number + 1
            try:
                fields = next(reader, None)
            except csv.Error as e:
                raise TableFileError(f"{path}, row {row_number + 1} (line {first_line}): {e}") from None
            if fields is None:
                return
            if not fields:  # a blank line, which csv.DictReader skips too
                continue
            row_number += 1
            if len(fields) != len(header):
                lines_of = f"line {line_number}" if line_number == first_line else f"lines {first_line}-{line_number}"
                raise TableFileError(
                    f"{path}, row {row_number} ({lines_of}): {len(fields)} fields where the header has "
                    f"{len(header)}" + (f" ({hint})" if hint else " (a quote left open?)" if line_number > first_line
                                        else ""))
            if fields == header and len(header) > 1:
                raise TableFileError(f"{path}, row {row_number} (line {first_line}): the header row again "
                                     f"({_SEPARATORS[input_format].join(header)!r}): two files joined into one? "
                                     "Remove that line (it would be read as data)")
            yield row_number, dict(zip(header, fields))
    finally:
        lines.close()


def _json_rows(path, input_format, columns):
    lines = _lines(path)
    try:
        for line_number, text in lines:
            if not text.strip():
                continue
            try:
                row = json.loads(text.rstrip("\r\n"))
            except json.JSONDecodeError as e:
                hint = " (a JSON array? write one object per line: JSON Lines)" if text.lstrip()[:1] == "[" else ""
                raise TableFileError(f"{path}, row {line_number}: not a JSON object: {e.msg} at column "
                                     f"{e.colno}{hint}") from None
            if not isinstance(row, dict):
                raise TableFileError(f"{path}, row {line_number}: expected a JSON object, got "
                                     f"{type(row).__name__} {text.strip()[:40]!r}")
            error = _missing(path, f", row {line_number}", row, columns)
            if error:
                raise error
            yield line_number, row
    finally:
        lines.close()


def _text_rows(path, input_format, columns):
    for column in columns:
        if column != TEXT_COLUMN:
            raise TableFileError(f"{path}: no column {column!r} (a plain-text file has one column, {TEXT_COLUMN!r})")
    lines = _lines(path)
    try:
        for line_number, text in lines:
            text = text.rstrip("\r\n")
            if text.strip():
                yield line_number, {TEXT_COLUMN: text}
    finally:
        lines.close()
