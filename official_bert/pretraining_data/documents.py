"""Streams documents from text files and groups them into blocks that bound memory.

Input format (the original's): UTF-8 text, one sentence per line, a blank line between documents. Unlike
the original, the end of a file also ends a document, so files can be concatenated in any order.

A block is the unit of work of one worker and the pool that random "next" segments are drawn from. It
closes after `PoolConfig.documents` documents or `PoolConfig.text_bytes` bytes of text (and at least two
documents), so memory depends on the block size, never on the corpus. A small remainder at the end of the
corpus joins the last block, so that no pool is much smaller than the others.
"""

import dataclasses
import glob
import os

import tensorflow as tf

from official_bert.pretraining_data.errors import PretrainingDataError


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
    """Documents processed together, with their position in the input stream (which seeds their randomness).

    Args:
        index: 0 for the first block of the input, 1 for the next, ...
        documents: a list of `Document`, the pool of random next segments.

    Example:
    >>> len(Block(0, [Document("a.txt", 1, ["x"])]).documents)
    1
    """

    index: int
    documents: list


@dataclasses.dataclass(frozen=True)
class PoolConfig:
    """Sizes of a block (= random-next pool) and of the largest document accepted.

    Args:
        documents: documents per block.
        text_bytes: a block also closes once its text reaches this many bytes.
        max_document_bytes: a longer document is an error (it usually means missing blank lines).

    Example:
    >>> PoolConfig().documents
    500
    """

    documents: int = 500
    text_bytes: int = 1 << 20
    max_document_bytes: int = 8 << 20

    def __post_init__(self):
        if self.documents < 2:
            raise ValueError(f"PoolConfig.documents={self.documents}: random next segments need at least 2")


def expand_input_files(input_file):
    """Returns the files named by a comma-separated list of paths and glob patterns, in order.

    >>> expand_input_files("/no/such/file.txt")
    Traceback (most recent call last):
    ...
    official_bert.pretraining_data.errors.PretrainingDataError: --input_file: no file matches '/no/such/file.txt'
    """
    paths = []
    for pattern in filter(None, (p.strip() for p in input_file.split(","))):
        matches = sorted(tf.io.gfile.glob(pattern) if "://" in pattern else glob.glob(pattern))
        if not matches:
            raise PretrainingDataError(f"--input_file: no file matches {pattern!r}")
        for path in matches:
            if "://" not in path and os.path.isdir(path):
                raise PretrainingDataError(f"--input_file: {path} is a directory, expected a text file")
        paths.extend(matches)
    if not paths:
        raise PretrainingDataError("--input_file: no input file given")
    return paths


def read_documents(paths, max_document_bytes=PoolConfig.max_document_bytes):
    """Yields the `Document`s of `paths` one at a time; raises PretrainingDataError at a non-UTF-8 line."""
    for path in paths:
        lines, first, size = [], 0, 0
        with _open(path) as reader:
            for line_number, raw in enumerate(reader, start=1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError as e:
                    raise PretrainingDataError(
                        f"{path}:{line_number}: not UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} of "
                        "the line); convert the file to UTF-8, e.g. with iconv") from None
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


def iter_blocks(documents, config=PoolConfig(), require_two_documents=True):
    """Groups `documents` into `Block`s; raises PretrainingDataError for a corpus without text.

    Args:
        documents: iterable of `Document`.
        config: block sizes.
        require_two_documents: fail on a one-document corpus (random next segments need another document).

    Example:
    >>> docs = [Document("a.txt", 3 * i + 1, ["x", "y"], 4) for i in range(9)]
    >>> [len(b.documents) for b in iter_blocks(docs, PoolConfig(documents=4))]
    [4, 5]
    """
    held, current, size, count, index = None, [], 0, 0, 0
    for document in documents:
        current.append(document)
        size += document.num_bytes
        count += 1
        if len(current) >= config.documents or (size >= config.text_bytes and len(current) >= 2):
            if held is not None:
                yield Block(index, held)
                index += 1
            held, current, size = current, [], 0
    if count == 0:
        raise PretrainingDataError("--input_file: the input files hold no text (every line is blank)")
    if count == 1 and require_two_documents:
        doc = current[0]
        raise PretrainingDataError(
            f"{doc.path}: the whole corpus is one document (no blank line between documents); random next "
            "segments must come from another document: separate documents with a blank line, or pass --no_nsp")
    if held is not None and current and len(current) < config.documents // 2 and size < config.text_bytes // 2:
        held, current = held + current, []
    for documents_ in (held, current):
        if documents_:
            yield Block(index, documents_)
            index += 1


def _open(path):
    return tf.io.gfile.GFile(path, "rb") if "://" in path else open(path, "rb")
