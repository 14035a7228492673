"""The original extract_features.py's input: one text per line, `text_a` or `text_a ||| text_b`, read streamed
and turned into `[CLS] A [SEP] (B [SEP])` token sequences exactly as its `convert_examples_to_features`."""

import dataclasses
import re

import tensorflow as tf

from official_bert.classification.features import truncate_seq_pair
from official_bert.features.errors import FeatureError
from official_bert.io.files import check_input_file
from official_bert.text.packing import packing_of

# The original's pattern: greedy, so a line with several " ||| " splits at the last.
_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")


@dataclasses.dataclass(frozen=True)
class TextInput:
    """One line of the input file.

    Args:
        unique_id: its 0-based line number (the original's `linex_index`).
        text_a: the text, or the first of a pair.
        text_b: the second text of a pair, or None.
    """

    unique_id: int
    text_a: str
    text_b: str | None = None


@dataclasses.dataclass(frozen=True)
class TokenizedInput:
    """A text as the model reads it, unpadded.

    Args:
        unique_id: as `TextInput.unique_id`.
        tokens: the WordPiece tokens, [CLS] and [SEP]s included.
        input_ids: their ids.
        input_type_ids: 0 for [CLS] A [SEP], 1 for B [SEP].
    """

    unique_id: int
    tokens: tuple
    input_ids: tuple
    input_type_ids: tuple


def parse_line(unique_id, line):
    """A `TextInput` from one line, as the original reads it: stripped, then split at " ||| " into a pair.

    Args:
        unique_id: the line's 0-based number.
        line: the line's text.

    Example:
    >>> parse_line(0, "  Who was Jim Henson ? ||| Jim Henson was a puppeteer\\n")
    TextInput(unique_id=0, text_a='Who was Jim Henson ?', text_b='Jim Henson was a puppeteer')
    >>> parse_line(1, "a|||b")
    TextInput(unique_id=1, text_a='a|||b', text_b=None)
    """
    line = line.strip()
    match = _PAIR.match(line)
    if match is None:
        return TextInput(unique_id, line)
    return TextInput(unique_id, match.group(1), match.group(2))


def read_inputs(path):
    """An iterator of a `TextInput` for every line of a UTF-8 file (local or any tf.io.gfile filesystem),
    streamed; the file is checked when this is called, before the first line is read.

    Blank lines are inputs too (`[CLS] [SEP]`), as in the original, so `unique_id` is the line number.

    Args:
        path: the --input_file.

    Raises:
        FeatureError: the file is missing, a directory or empty, or a line is not UTF-8.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "input.txt")
    >>> _ = open(path, "w").write("the cat\\n\\nthe dog ||| a cat\\n")
    >>> [(i.unique_id, i.text_a, i.text_b) for i in read_inputs(path)]
    [(0, 'the cat', None), (1, '', None), (2, 'the dog', 'a cat')]
    """
    if not tf.io.gfile.exists(path):
        raise FeatureError(f"--input_file={path}: file not found")
    check_input_file(path, "a text file, one input per line", "--input_file", FeatureError)
    if tf.io.gfile.stat(path).length == 0:
        raise FeatureError(f"--input_file={path}: the file is empty; expected one text per line")
    return _read_lines(path)


def _read_lines(path):
    with tf.io.gfile.GFile(path, "rb") as f:
        for number, raw in enumerate(f):
            try:
                line = raw.decode("utf-8-sig" if number == 0 else "utf-8")  # a leading BOM dropped
            except UnicodeDecodeError as e:
                raise FeatureError(f"{path}:{number + 1}: expected UTF-8 text ({e.reason} at byte {e.start} of "
                                   "the line)") from None
            yield parse_line(number, line)


def tokenize_input(text_input, tokenizer, seq_length):
    """The original's `convert_examples_to_features` for one input, without the padding.

    A pair is a pair only when text_b tokenizes to something; it is truncated one token at a time from the
    longer text to seq_length - 3 tokens (RoBERTa's layout: - 4), a single text to its first seq_length - 2.

    Args:
        text_input: a `TextInput`.
        tokenizer: a `tokenization.FullTokenizer` (or SentencePiece tokenizer).
        seq_length: the --max_seq_length, at least 3.

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat"]))
    >>> tokenized = tokenize_input(TextInput(0, "The cat sat", "the cat"), FullTokenizer(vocab), 6)
    >>> tokenized.tokens, tokenized.input_ids, tokenized.input_type_ids
    (('[CLS]', 'the', 'cat', '[SEP]', 'the', '[SEP]'), (2, 4, 5, 3, 4, 3), (0, 0, 0, 0, 1, 1))
    """
    layout = packing_of(tokenizer)  # RoBERTa's and XLM-R's: <s> A </s></s> B </s>
    tokens_a = tokenizer.tokenize(text_input.text_a)
    tokens_b = tokenizer.tokenize(text_input.text_b) if text_input.text_b else []
    if tokens_b:
        truncate_seq_pair(tokens_a, tokens_b, max(seq_length - layout.special_count(pair=True), 0))
    else:
        tokens_a = tokens_a[:seq_length - 2]
    tokens, type_ids = layout.pack(tokens_a, tokens_b)
    return TokenizedInput(text_input.unique_id, tuple(tokens), tuple(tokenizer.convert_tokens_to_ids(tokens)),
                          tuple(type_ids))
