"""CoNLL column files: CoNLL-2003's `train.txt`/`valid.txt`/`test.txt`, and plain two-column token/tag files.

One word per line, its columns separated by whitespace: the word first, the entity tag last, any columns between
(CoNLL-2003's part-of-speech and chunk tags) kept but not used. A blank line ends a sentence; a line whose first
column is `-DOCSTART-` starts a new document. Every line of a file has the number of columns its first line has,
as conlleval requires; so a line whose tag is missing is caught, as well as a tag that is not a tag.
"""

import dataclasses

import tensorflow as tf
from absl import logging

from official_bert.io.files import check_input_file
from official_bert.ner.errors import NerError
from official_bert.ner.tags import scheme_evidence, split_tag

DOCSTART = "-DOCSTART-"
# The files CoNLL-2003 ships, and the other usual name of the dev set.
SPLIT_FILES = {"train": ("train.txt",), "dev": ("valid.txt", "dev.txt"), "test": ("test.txt",)}


@dataclasses.dataclass
class Sentence:
    """One sentence of a CoNLL file.

    Args:
        columns: each word's columns, the word first and the tag last.
        lines: each word's line number in the file (1-based), for messages.
        document: the index of its document in the file (0 before the first -DOCSTART-).
        docstart: the columns of the -DOCSTART- line just before it, if there is one.

    Example:
    >>> sentence = Sentence([["EU", "NNP", "I-ORG"], ["rejects", "VBZ", "O"]], [3, 4], 0)
    >>> sentence.words, sentence.tags
    (['EU', 'rejects'], ['I-ORG', 'O'])
    """

    columns: list
    lines: list
    document: int
    docstart: list = None

    @property
    def words(self):
        return [columns[0] for columns in self.columns]

    @property
    def tags(self):
        return [columns[-1] for columns in self.columns]


def read_conll(path):
    """The sentences of a CoNLL file, in order.

    Args:
        path: the file (any path tf.io.gfile reads).

    Raises:
        NerError: naming the file and line: a line with another number of columns than the first, a tag that is
            neither O nor B-/I-/E-/S-/L-/U-TYPE, undecodable UTF-8, or a file without a sentence.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.txt")
    >>> _ = open(path, "w").write("-DOCSTART- O\\n\\nEU I-ORG\\nrejects O\\n\\nPeter B-PER\\n")
    >>> [(s.words, s.tags, s.document, s.docstart) for s in read_conll(path)]
    [(['EU', 'rejects'], ['I-ORG', 'O'], 1, ['-DOCSTART-', 'O']), (['Peter'], ['B-PER'], 1, None)]
    >>> _ = open(path, "w").write("EU NNP I-ORG\\nrejects VBZ\\n")
    >>> read_conll(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.ner.errors.NerError: .../train.txt:2: expected 3 columns (word ... tag), as line 1 has; got 2: ...
    """
    if not tf.io.gfile.exists(path):
        raise NerError(f"{path}: no such file")
    check_input_file(path, "a CoNLL file (one word and its tag per line)", error=NerError)
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            text = f.read().decode("utf-8-sig")  # a leading BOM dropped: else "-DOCSTART-" becomes a word
    except UnicodeDecodeError as e:
        raise NerError(f"{path}: not UTF-8 text ({e})") from None
    sentences = []
    num_columns = first_line = None
    document = 0
    docstart = None
    columns, lines = [], []

    def end_sentence():
        nonlocal docstart
        if columns:
            sentences.append(Sentence(list(columns), list(lines), document, docstart))
            docstart = None
            columns.clear()
            lines.clear()

    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            end_sentence()
            continue
        if num_columns is None:
            num_columns, first_line = len(fields), number
            if num_columns < 2:
                raise NerError(f"{path}:{number}: expected a word and its tag (two or more columns); got "
                               f"{line.strip()!r}")
        elif len(fields) != num_columns:
            raise NerError(f"{path}:{number}: expected {num_columns} columns (word ... tag), as line {first_line} has; "
                           f"got {len(fields)}: {line.strip()!r}")
        if fields[0] == DOCSTART:
            end_sentence()
            document += 1
            docstart = fields
            continue
        try:
            split_tag(fields[-1])
        except ValueError as e:
            raise NerError(f"{path}:{number}: {e}") from None
        columns.append(fields)
        lines.append(number)
    end_sentence()
    if not sentences:
        raise NerError(f"{path}: no sentence in it (expected one word and its tag per line, a blank line after "
                       "each sentence)")
    return sentences


def split_path(data_dir, split):
    """The file of a split in --data_dir: train.txt, valid.txt (or dev.txt), test.txt.

    Example:
    >>> import tempfile
    >>> split_path(tempfile.mkdtemp(), "dev")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.ner.errors.NerError: --data_dir=...: no valid.txt or dev.txt in it (the dev split)
    """
    names = SPLIT_FILES[split]
    for name in names:
        path = f"{data_dir.rstrip('/')}/{name}"
        if tf.io.gfile.exists(path):
            return path
    raise NerError(f"--data_dir={data_dir}: no {' or '.join(names)} in it (the {split} split)")


def detect_file_scheme(sentences, path):
    """The tag scheme of a CoNLL file (`tags.detect_scheme`), logged with the line that decided it; a file that
    mixes schemes (IOB1's I- starts with an E-/S- tag, ...) is warned about, naming the first line of each.

    Args:
        sentences: the file's `Sentence`s (`read_conll`).
        path: the file, for messages.

    Returns:
        the scheme, one of `tags.SCHEMES`.

    Example:
    >>> sentences = [Sentence([["EU", "I-ORG"]], [1], 0), Sentence([["Peter", "E-PER"]], [3], 0)]
    >>> detect_file_scheme(sentences, "train.txt")
    'iobes'
    """
    found = scheme_evidence([sentence.tags for sentence in sentences])

    def where(scheme):
        evidence = found.evidence[scheme]
        return f"{path}:{sentences[evidence.sentence].lines[evidence.word]}: {evidence.reason}"

    logging.info("%s: %s tags (%s)", path, found.scheme.upper(),
                 where(found.scheme) if found.decided_by else "no tag implies another scheme")
    if found.mixed:
        logging.warning("%s mixes tag schemes: %s; it is read as %s (chunks by conlleval's rules) and predictions "
                        "are written in %s: check its tags", path,
                        "; ".join(f"{scheme.upper()} ({where(scheme)})" for scheme in found.mixed),
                        found.scheme.upper(), found.scheme.upper())
    return found.scheme
