"""Reads task files line by line as the original does, with errors that name the file and line."""

import tensorflow as tf

from official_bert.classification.errors import ClassificationDataError
from official_bert.io.files import check_input_file


def open_task_file(path, mode="rb"):
    """Opens a data file (local or any tf.io.gfile filesystem), raising a clear error when it is not there.

    Args:
        path: the file.
        mode: "rb" or "r".

    Example:
    >>> open_task_file("/nonexistent/train.tsv")
    Traceback (most recent call last):
    ...
    official_bert.classification.errors.ClassificationDataError: /nonexistent/train.tsv: file not found
    """
    if not tf.io.gfile.exists(path):
        raise ClassificationDataError(f"{path}: file not found")
    check_input_file(path, "a tab-separated file", error=ClassificationDataError)
    return tf.io.gfile.GFile(path, mode)


def read_tsv(path):
    """Yields (line_number, fields) for each non-blank line of a UTF-8 tab-separated file.

    Fields are split on tabs with no quote handling: the original's `csv.reader(f, delimiter="\\t",
    quotechar=None)` means `csv.QUOTE_NONE`, and GLUE text has literal quote characters. A byte-order mark
    (MRPC's files start with one) is dropped.

    Args:
        path: the file.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "dev.tsv")
    >>> _ = open(path, "w").write('\\ufeffQuality\\t#1 String\\n1\\t"Yes," he said.\\n\\n')
    >>> list(read_tsv(path))
    [(1, ['Quality', '#1 String']), (2, ['1', '"Yes," he said.'])]
    """
    with open_task_file(path) as f:
        for line_number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ClassificationDataError(f"{path}:{line_number}: expected UTF-8 text ({e.reason} at byte "
                                              f"{e.start} of the line)") from None
            if line_number == 1:
                line = line.removeprefix("\ufeff")
            line = line.rstrip("\r\n")
            if line:
                yield line_number, line.split("\t")
