"""NER data as JSON Lines, the layout of most published NER sets: one sentence per line, a list of tokens and a list
of string tags (`{"tokens": ["EU", "rejects"], "ner_tags": ["B-ORG", "O"]}`), read into the same `Sentence`s as
CoNLL files; and the split files of a --data_dir in either format (`find_split_file`, `read_sentences`).
"""

import tensorflow as tf

from official_bert.io.table_files import TableFileError, read_rows
from official_bert.ner.conll import SPLIT_FILES, Sentence, read_conll, split_path
from official_bert.ner.errors import NerError
from official_bert.ner.tags import split_tag

# A split's JSON Lines names, tried after CoNLL's (Hugging Face's exports call the dev set "validation").
JSONL_SPLIT_FILES = {"train": ("train.jsonl",), "dev": ("validation.jsonl", "dev.jsonl", "valid.jsonl"),
                     "test": ("test.jsonl",)}


def read_jsonl(path, tokens_column="tokens", tags_column="ner_tags"):
    """The sentences of a JSON Lines file, one per non-blank line, in order (each line its own sentence of one
    document, so --document_context packs the lines around it).

    Args:
        path: the file (any path tf.io.gfile reads).
        tokens_column: the key of the list of tokens.
        tags_column: the key of the list of tags, one string per token, in any scheme CoNLL files may use.

    Raises:
        NerError: naming the file and row: not a JSON object, a missing key, tokens and tags of different lengths, a
            token that is empty or holds whitespace (the predictions file is whitespace-separated), a tag that is
            not a string tag (class ids: write the tag names), or a file without a sentence.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.jsonl")
    >>> _ = open(path, "w").write('{"tokens": ["EU", "rejects"], "ner_tags": ["B-ORG", "O"]}\\n')
    >>> [(s.words, s.tags, s.lines) for s in read_jsonl(path)]
    [(['EU', 'rejects'], ['B-ORG', 'O'], [1, 1])]
    """
    if not tf.io.gfile.exists(path):
        raise NerError(f"{path}: no such file")
    sentences = []
    try:
        for row_number, row in read_rows(path, "jsonl", [tokens_column, tags_column]):
            tokens, tags = row[tokens_column], row[tags_column]
            where = f"{path}, row {row_number}"
            if not isinstance(tokens, list) or not isinstance(tags, list):
                raise NerError(f"{where}: expected lists in {tokens_column!r} and {tags_column!r}")
            if len(tokens) != len(tags):
                raise NerError(f"{where}: {len(tokens)} tokens but {len(tags)} tags")
            for token, tag in zip(tokens, tags):
                if not isinstance(token, str) or not token or token != "".join(token.split()):
                    raise NerError(f"{where}: token {token!r} is not a word without spaces")
                if not isinstance(tag, str):
                    raise NerError(f"{where}: tag {tag!r} is not a string; write the tag names (e.g. B-PER), not "
                                   "class ids")
                try:
                    split_tag(tag)
                except ValueError as e:
                    raise NerError(f"{where}: {e}") from None
            if tokens:
                sentences.append(Sentence([[token, tag] for token, tag in zip(tokens, tags)],
                                          [row_number] * len(tokens), 0))
    except TableFileError as e:
        raise NerError(str(e)) from None
    if not sentences:
        raise NerError(f"{path}: no sentence in it (expected a JSON object with {tokens_column!r} and {tags_column!r} "
                       "lists per line)")
    return sentences


def find_split_file(data_dir, split):
    """The file of a split in --data_dir: CoNLL's (train.txt, valid.txt or dev.txt, test.txt), else JSON Lines
    (train.jsonl, validation.jsonl / dev.jsonl / valid.jsonl, test.jsonl).

    Example:
    >>> import os, tempfile
    >>> data_dir = tempfile.mkdtemp()
    >>> _ = open(os.path.join(data_dir, "validation.jsonl"), "w").write("{}")
    >>> os.path.basename(find_split_file(data_dir, "dev"))
    'validation.jsonl'
    >>> find_split_file(data_dir, "test")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.ner.errors.NerError: --data_dir=...: no test.txt or test.jsonl in it (the test split)
    """
    for name in JSONL_SPLIT_FILES[split]:
        path = f"{data_dir.rstrip('/')}/{name}"
        if tf.io.gfile.exists(path):
            conll = [f"{data_dir.rstrip('/')}/{n}" for n in SPLIT_FILES[split]]
            if any(tf.io.gfile.exists(other) for other in conll):
                break  # both formats: CoNLL's, as before JSON Lines were read
            return path
    try:
        return split_path(data_dir, split)
    except NerError:
        names = SPLIT_FILES[split] + JSONL_SPLIT_FILES[split]
        raise NerError(f"--data_dir={data_dir}: no {' or '.join(names)} in it (the {split} split)") from None


def read_sentences(path, tokens_column="tokens", tags_column="ner_tags"):
    """The sentences of a CoNLL file, or of a JSON Lines one (.jsonl, .json: `read_jsonl`).

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "dev.txt")
    >>> _ = open(path, "w").write("Peter B-PER\\n")
    >>> read_sentences(path)[0].tags
    ['B-PER']
    """
    if path.endswith((".jsonl", ".json")):
        return read_jsonl(path, tokens_column, tags_column)
    return read_conll(path)
