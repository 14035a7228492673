"""Streams documents from text files, and groups them into blocks of work for the tokenizing workers.

Input format (the original's): UTF-8 text, one sentence per line, a blank line between documents. Unlike
the original, the end of a file also ends a document, so files can be concatenated in any order. Bytes that
are not UTF-8 are dropped, as the original's `convert_to_unicode` does, and counted (`Utf8Decoder`), so that the
run can say how many and where the first one was.
"""

import dataclasses

from official_bert.io import files
from official_bert.io.utf8 import Utf8Decoder
from official_bert.pretraining_data.errors import PretrainingDataError

MAX_DOCUMENT_BYTES = 8 << 20


@dataclasses.dataclass
class Document:
    """Consecutive non-blank lines of one file: `lines[i]` is line `line_number + i` of `path`.

    Args:
        path: the file.
        line_number: 1-based number of the first line.
        lines: the stripped lines (sentences).
        num_bytes: their size in the file, for block sizes.

    Example:
    >>> Document("a.txt", 3, ["First.", "Second."], 16).lines[1]
    'Second.'
    """

    path: str
    line_number: int
    lines: list
    num_bytes: int = 0


@dataclasses.dataclass
class Block:
    """Consecutive documents, tokenized together by one worker.

    Args:
        index: 0 for the first block of the input, 1 for the next, ...
        documents: a list of `Document`.

    Example:
    >>> len(Block(0, [Document("a.txt", 1, ["x"])]).documents)
    1
    """

    index: int
    documents: list


def expand_input_files(input_file, flag="--input_file"):
    """Returns the files named by a comma-separated list of paths and glob patterns, in order; a path that
    exists is that file, even when its name has glob characters (`files.glob`). `flag` names the list in errors.

    >>> expand_input_files("/no/such/file.txt")
    Traceback (most recent call last):
    ...
    official_bert.pretraining_data.errors.PretrainingDataError: --input_file: no file matches '/no/such/file.txt'
    """
    paths = []
    for pattern in filter(None, (p.strip() for p in (input_file or "").split(","))):
        matches = files.glob(pattern)
        if not matches:
            raise PretrainingDataError(f"{flag}: no file matches {pattern!r}")
        for path in matches:
            files.check_input_file(path, "a text file (one sentence per line)", flag, PretrainingDataError)
        paths.extend(matches)
    if not paths:
        raise PretrainingDataError(f"{flag}: no input file given")
    return paths


def read_documents(paths, max_document_bytes=MAX_DOCUMENT_BYTES, decoder=None):
    """Yields the `Document`s of `paths` one at a time; bytes that are not UTF-8 are dropped and counted by
    `decoder` (a `Utf8Decoder`)."""
    decoder = decoder or Utf8Decoder()
    for path in paths:
        lines, first, size = [], 0, 0
        try:
            reader = files.open_file(path)
        except OSError as e:
            raise PretrainingDataError(f"--input_file: cannot read {path}: {e.strerror}") from None
        with reader:
            for line_number, raw in enumerate(reader, start=1):
                line = decoder.decode(raw, path, line_number).strip()
                if line:
                    if not lines:
                        first = line_number
                    lines.append(line)
                    size += len(raw)
                    if size > max_document_bytes:
                        raise PretrainingDataError(
                            f"{path}:{first}: the document starting here runs past {max_document_bytes} bytes "
                            "without a blank line; documents must be separated by blank lines, one sentence "
                            "per line")
                elif lines:
                    yield Document(path, first, lines, size)
                    lines, size = [], 0
        if lines:
            yield Document(path, first, lines, size)


def iter_blocks(documents, max_documents=500, max_bytes=1 << 20):
    """Groups `documents` into `Block`s of at most `max_documents` documents or about `max_bytes` of text.

    Example:
    >>> docs = [Document("a.txt", 3 * i + 1, ["x", "y"], 4) for i in range(9)]
    >>> [len(b.documents) for b in iter_blocks(docs, max_documents=4)]
    [4, 4, 1]
    """
    current, size, index = [], 0, 0
    for document in documents:
        current.append(document)
        size += document.num_bytes
        if len(current) >= max_documents or size >= max_bytes:
            yield Block(index, current)
            current, size, index = [], 0, index + 1
    if current:
        yield Block(index, current)
