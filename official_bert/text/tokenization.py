"""WordPiece tokenization exactly as google-research/bert's `tokenization.py` does it.

The public API is the original module's, so code written for the original ports by changing one import:
`FullTokenizer`, `BasicTokenizer`, `WordpieceTokenizer`, `load_vocab`, `convert_to_unicode`,
`printable_text`, `convert_by_vocab`, `convert_tokens_to_ids`, `convert_ids_to_tokens`,
`whitespace_tokenize`, `validate_case_matches_checkpoint` (`tokenizers.create_tokenizer` picks WordPiece or
SentencePiece for the CLIs' `--vocab_file` / `--spm_model_file` flags).
"""

import collections
import itertools
import re
import unicodedata

from absl import logging

from official_bert.errors import Error
from official_bert.io.files import check_input_file


_UNUSED_TOKEN = re.compile(r"^\[unused\d+\]$")  # what preserve_unused_tokens keeps whole
NORMALIZATIONS = (None, "nfc")

# Characters seen decomposed (NFD) by cased tokenizers whose vocabulary has them only composed, over the run (this
# process): composed character → occurrences. `decomposed_text_warning` reports them once, at the run's end.
_decomposed = collections.Counter()


class VocabError(Error):
    """A vocabulary file that cannot be used; the message names the file and line."""


def is_unused_token(token):
    """True for a `[unused<n>]` token, which `preserve_unused_tokens` keeps whole.

    Example:
    >>> is_unused_token("[unused12]"), is_unused_token("[UNUSED12]"), is_unused_token("[unused]")
    (True, False, False)
    """
    return bool(_UNUSED_TOKEN.match(token))


def decomposed_text_warning(counts=None):
    """The end-of-run warning about decomposed text a cased vocabulary has only composed (see `FullTokenizer`'s
    `normalize_unicode`), or None when there was none.

    Args:
        counts: composed character → occurrences seen decomposed; None: those the run's tokenizers counted.

    Example:
    >>> print(decomposed_text_warning(collections.Counter({"é": 3})))  # doctest: +ELLIPSIS
    3 characters were written decomposed (NFD) that the vocabulary has only composed ('é' 3): their words got ...
    >>> decomposed_text_warning(collections.Counter()) is None
    True
    """
    counts = _decomposed if counts is None else counts
    if not counts:
        return None
    shown = ", ".join(f"{char!r} {count:,}" for char, count in counts.most_common(5))
    return (f"{sum(counts.values()):,} characters were written decomposed (NFD) that the vocabulary has only "
            f"composed ({shown}{', ...' if len(counts) > 5 else ''}): their words got other ids than the composed "
            "text's, as with the original; --normalize_unicode=nfc composes the text first")


def validate_case_matches_checkpoint(do_lower_case, init_checkpoint):
    """Raises ValueError when `do_lower_case` contradicts a released Google checkpoint's name.

    The rule is the original's: the checkpoint path's directory names the model
    (e.g. `uncased_L-12_H-768_A-12/bert_model.ckpt`).
    """
    if not init_checkpoint:
        return
    m = re.match(r"^.*?([A-Za-z0-9_-]+)/bert_model.ckpt", init_checkpoint)
    if m is None:
        return
    model_name = m.group(1)
    lower_models = ["uncased_L-24_H-1024_A-16", "uncased_L-12_H-768_A-12",
                    "multilingual_L-12_H-768_A-12", "chinese_L-12_H-768_A-12"]
    cased_models = ["cased_L-12_H-768_A-12", "cased_L-24_H-1024_A-16", "multi_cased_L-12_H-768_A-12"]
    if model_name in lower_models and not do_lower_case:
        actual_flag, case_name, opposite_flag = "False", "lowercased", "True"
    elif model_name in cased_models and do_lower_case:
        actual_flag, case_name, opposite_flag = "True", "cased", "False"
    else:
        return
    raise ValueError(
        f"You passed in `--do_lower_case={actual_flag}` with `--init_checkpoint={init_checkpoint}`. "
        f"However, `{model_name}` seems to be a {case_name} model, so you should pass in "
        f"`--do_lower_case={opposite_flag}` so that the fine-tuning matches how the model was pre-trained.")


def convert_to_unicode(text):
    """Returns `text` as str, decoding bytes as UTF-8 and dropping undecodable bytes (as the original)."""
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode("utf-8", "ignore")
    raise ValueError(f"Unsupported string type: {type(text)}")


def printable_text(text):
    """Returns text encoded in a way suitable for print (in Python 3: str)."""
    return convert_to_unicode(text)


def load_vocab(vocab_file):
    """Loads a vocabulary file (one token per line) into an OrderedDict token → id, as the original does.

    The id of a token is its line number (from 0); a token listed twice keeps the place of its first line but
    the id of its last one, as in the original, with a warning naming the lines. Raises VocabError naming the
    file (and line) when the file is missing, empty or not UTF-8. The file may be on any tf.io.gfile
    filesystem (gs://, ...); TensorFlow is imported only for such a path.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("[PAD]\\n[UNK]\\nthe\\n[UNK]\\n")
    >>> dict(load_vocab(path))
    {'[PAD]': 0, '[UNK]': 3, 'the': 2}
    """
    if "://" in vocab_file:
        import tensorflow as tf

        opener, not_found = tf.io.gfile.GFile, tf.errors.NotFoundError
    else:
        opener, not_found = open, FileNotFoundError
    check_input_file(vocab_file, "a vocabulary file (vocab.txt: one token per line)", error=VocabError)
    vocab = collections.OrderedDict()
    duplicates = collections.defaultdict(list)  # token → its line numbers (1-based), for the warning
    try:
        with opener(vocab_file, "rb") as reader:
            for line_number, raw in enumerate(reader, start=1):
                try:
                    # A leading BOM dropped: else the first token ([PAD]) is not found.
                    token = raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
                except UnicodeDecodeError as e:
                    raise VocabError(f"{vocab_file}:{line_number}: vocabulary is not UTF-8 ({e.reason} at "
                                     f"byte {e.start})") from None
                token = token.strip()
                if token in vocab:
                    duplicates[token] = duplicates[token] or [vocab[token] + 1]
                    duplicates[token].append(line_number)
                vocab[token] = line_number - 1
    except not_found:
        raise VocabError(f"{vocab_file}: vocabulary file not found") from None
    if not vocab:
        raise VocabError(f"{vocab_file}: vocabulary file is empty")
    if duplicates:
        listed = "; ".join(f"{token!r} on lines {', '.join(map(str, lines))}"
                           for token, lines in itertools.islice(duplicates.items(), 5))
        more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
        logging.warning("%s lists %d tokens more than once (%s%s): each takes the id of its last line, as in "
                        "the original; the ids of the earlier lines are never produced", vocab_file,
                        len(duplicates), listed, more)
    return vocab


def check_special_tokens(vocab, vocab_file, tokens=("[UNK]", "[CLS]", "[SEP]")):
    """Raises VocabError naming `vocab_file` unless `vocab` holds each of `tokens` (every BERT input needs them).

    Example:
    >>> check_special_tokens({"[UNK]": 0, "[SEP]": 1, "the": 2}, "vocab.txt")
    Traceback (most recent call last):
    ...
    official_bert.text.tokenization.VocabError: vocab.txt: no [CLS] in it: not a BERT vocabulary
    """
    for token in tokens:
        if token not in vocab:
            raise VocabError(f"{vocab_file}: no {token} in it: not a BERT vocabulary")


def convert_by_vocab(vocab, items):
    """Converts a sequence of tokens or ids using the vocab."""
    return [vocab[item] for item in items]


def convert_tokens_to_ids(vocab, tokens):
    return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
    return convert_by_vocab(inv_vocab, ids)


def whitespace_tokenize(text):
    """Strips and splits on whitespace (Python's definition, as the original)."""
    text = text.strip()
    if not text:
        return []
    return text.split()


class FullTokenizer:
    """End-to-end tokenization: BasicTokenizer, then WordPiece.

    Args:
        vocab_file: path of a vocabulary file, one token per line (line number = id).
        do_lower_case: lowercase and strip accents (must match the checkpoint).
        preserve_unused_tokens: keep a whitespace-separated `[unused<n>]` of the vocabulary as one token, as
            bert-tensorflow 1.0.4's flag of that name (see `BasicTokenizer`).
        normalize_unicode: None (the original's ids) or "nfc": compose the text (Unicode NFC) before tokenizing, so
            that decomposed (NFD) text finds a cased vocabulary's composed tokens. Without it a cased tokenizer
            counts the characters it sees decomposed that the vocabulary has only composed, and warns once.
        max_input_chars_per_word: a longer word is one [UNK] (the original's 200; Hugging Face's tokenizers, with
            which DistilBERT's and ELECTRA's checkpoints were made, use 100).

    Example:
    >>> import tempfile, os
    >>> from official_bert.tokenization import FullTokenizer
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", ","]))
    >>> tok = FullTokenizer(path, do_lower_case=True)
    >>> tok.tokenize("UNAffable, x")
    ['un', '##aff', '##able', ',', '[UNK]']
    >>> tok.convert_tokens_to_ids(["un", "##aff"])
    [4, 5]
    """

    def __init__(self, vocab_file, do_lower_case=True, preserve_unused_tokens=False, normalize_unicode=None,
                 max_input_chars_per_word=200):
        self.vocab = load_vocab(vocab_file)
        if "[UNK]" not in self.vocab:
            raise VocabError(f"{vocab_file}: vocabulary has no [UNK] token")
        self.inv_vocab = {v: k for k, v in self.vocab.items()}
        self.do_lower_case = do_lower_case
        self.normalize_unicode = normalize_unicode
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case,
                                              preserve_unused_tokens=preserve_unused_tokens, vocab=self.vocab,
                                              normalize_unicode=normalize_unicode)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab,
                                                      max_input_chars_per_word=max_input_chars_per_word)
        self._vocab_chars = None

    def tokenize(self, text):
        if not self.do_lower_case and self.normalize_unicode is None:
            self._count_decomposed(convert_to_unicode(text))
        split_tokens = []
        for token in self.basic_tokenizer.tokenize(text):
            if self.basic_tokenizer.is_preserved(token):
                split_tokens.append(token)
            else:
                split_tokens.extend(self.wordpiece_tokenizer.tokenize(token))
        return split_tokens

    def convert_tokens_to_ids(self, tokens):
        return convert_by_vocab(self.vocab, tokens)

    def convert_ids_to_tokens(self, ids):
        return convert_by_vocab(self.inv_vocab, ids)

    def _count_decomposed(self, text):
        """Counts the characters of `text` written decomposed whose composed form the vocabulary has while it lacks
        a part of the decomposition (the original's ids then hold [UNK] or other pieces); warns at the first."""
        if unicodedata.is_normalized("NFC", text):
            return
        if self._vocab_chars is None:
            self._vocab_chars = {char for token in self.vocab for char in token.removeprefix("##")}
        for word in text.split():
            composed = unicodedata.normalize("NFC", word)
            if composed == word or all(char in self._vocab_chars for char in word):
                continue
            for char in composed:
                if char not in word and char in self._vocab_chars:
                    if not _decomposed:
                        logging.warning(
                            "decomposed (NFD) text: %r (in %r) is written as %s, which the vocabulary has only "
                            "composed; such words get other ids ([UNK] or other pieces), as with the original. Pass "
                            "--normalize_unicode=nfc to compose the text first (the count follows at the end)", char,
                            word, " + ".join(f"U+{ord(c):04X}" for c in unicodedata.normalize("NFD", char)))
                    _decomposed[char] += 1


class BasicTokenizer:
    """Cleans text, splits CJK ideographs and punctuation, optionally lowercases and strips accents.

    Args:
        do_lower_case: lowercase, NFD-normalize and drop combining marks (Mn).
        preserve_unused_tokens: bert-tensorflow 1.0.4's option: a whitespace-separated token that matches
            `[unused<n>]` and is in `vocab` is kept as it is (not lowercased, not split at its brackets).
        vocab: the tokens that `preserve_unused_tokens` may keep.
        normalize_unicode: None, or "nfc": compose the cleaned text (Unicode NFC) first.

    Example:
    >>> from official_bert.tokenization import BasicTokenizer
    >>> BasicTokenizer(do_lower_case=True).tokenize(" \\tHeLLo!How  \\n Are yoU?  ")
    ['hello', '!', 'how', 'are', 'you', '?']
    >>> BasicTokenizer(preserve_unused_tokens=True, vocab={"[unused0]": 1}).tokenize("a [unused0] [unused1]")
    ['a', '[unused0]', '[', 'unused1', ']']
    >>> [len(word) for word in BasicTokenizer(False, normalize_unicode="nfc").tokenize("cafe\u0301")]
    [4]
    """

    def __init__(self, do_lower_case=True, preserve_unused_tokens=False, vocab=(), normalize_unicode=None):
        if normalize_unicode not in NORMALIZATIONS:
            raise ValueError(f"normalize_unicode must be None or 'nfc', got {normalize_unicode!r}")
        self.do_lower_case = do_lower_case
        self.preserve_unused_tokens = preserve_unused_tokens
        self.vocab = vocab
        self.normalize_unicode = normalize_unicode

    def is_preserved(self, token):
        """True when `preserve_unused_tokens` keeps this whitespace-separated token whole."""
        return self.preserve_unused_tokens and token in self.vocab and is_unused_token(token)

    def tokenize(self, text):
        text = convert_to_unicode(text)
        text = self._clean_text(text)
        if self.normalize_unicode:
            # After cleaning, as in the graph: a mark after a removed control character composes with what precedes.
            text = unicodedata.normalize("NFC", text)
        # Applied to cased and uncased models alike: the multilingual and Chinese models were trained
        # with it, and English text has no CJK characters anyway.
        text = self._tokenize_chinese_chars(text)
        split_tokens = []
        for token in whitespace_tokenize(text):
            if self.is_preserved(token):
                split_tokens.append(token)
                continue
            if self.do_lower_case:
                token = token.lower()
                token = self._run_strip_accents(token)
            split_tokens.extend(self._run_split_on_punc(token))
        return whitespace_tokenize(" ".join(split_tokens))

    @staticmethod
    def _run_strip_accents(text):
        text = unicodedata.normalize("NFD", text)
        return "".join(char for char in text if unicodedata.category(char) != "Mn")

    @staticmethod
    def _run_split_on_punc(text):
        output = []
        start_new_word = True
        for char in text:
            if _is_punctuation(char):
                output.append([char])
                start_new_word = True
            else:
                if start_new_word:
                    output.append([])
                start_new_word = False
                output[-1].append(char)
        return ["".join(x) for x in output]

    def _tokenize_chinese_chars(self, text):
        output = []
        for char in text:
            if self._is_chinese_char(ord(char)):
                output.extend((" ", char, " "))
            else:
                output.append(char)
        return "".join(output)

    @staticmethod
    def _is_chinese_char(cp):
        """True for code points in the CJK Unified Ideographs blocks (not Hangul, Hiragana or Katakana)."""
        return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF) or (0x20000 <= cp <= 0x2A6DF)
                or (0x2A700 <= cp <= 0x2B73F) or (0x2B740 <= cp <= 0x2B81F) or (0x2B820 <= cp <= 0x2CEAF)
                or (0xF900 <= cp <= 0xFAFF) or (0x2F800 <= cp <= 0x2FA1F))

    @staticmethod
    def _clean_text(text):
        output = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or _is_control(char):
                continue
            output.append(" " if _is_whitespace(char) else char)
        return "".join(output)


class WordpieceTokenizer:
    """Greedy longest-match-first WordPiece.

    Args:
        vocab: mapping token → id.
        unk_token: emitted for a word that cannot be covered or is too long.
        max_input_chars_per_word: longer words become a single `unk_token` (the original: 200).

    Example:
    >>> from official_bert.tokenization import WordpieceTokenizer
    >>> WordpieceTokenizer({"un": 0, "##aff": 1, "##able": 2}).tokenize("unaffable")
    ['un', '##aff', '##able']
    """

    def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=200):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text):
        output_tokens = []
        for token in whitespace_tokenize(convert_to_unicode(text)):
            if len(token) > self.max_input_chars_per_word:
                output_tokens.append(self.unk_token)
                continue
            sub_tokens = []
            start = 0
            while start < len(token):
                end = len(token)
                cur_substr = None
                while start < end:
                    substr = token[start:end]
                    if start > 0:
                        substr = "##" + substr
                    if substr in self.vocab:
                        cur_substr = substr
                        break
                    end -= 1
                if cur_substr is None:
                    sub_tokens = None
                    break
                sub_tokens.append(cur_substr)
                start = end
            if sub_tokens is None:
                output_tokens.append(self.unk_token)
            else:
                output_tokens.extend(sub_tokens)
        return output_tokens


def _is_whitespace(char):
    """Space, tab, newline, carriage return and Unicode Zs."""
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def _is_control(char):
    """Unicode Cc and Cf, except tab/newline/return which count as whitespace."""
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char):
    """Unicode P* plus every non-alphanumeric printable ASCII character (e.g. ^ $ `)."""
    cp = ord(char)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(char).startswith("P")
