"""RoBERTa's byte-level BPE (GPT-2's), in Python: `vocab.json` + `merges.txt` → the ids transformers' RobertaTokenizer
gives, without the `tokenizers` library.

1. Pre-tokenization, GPT-2's regular expression
   `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+`, written out as the runs of
   character classes it matches (`pretokenize`), so that the in-graph tokenizer (`bpe_layer`) can compute the same
   split with core TensorFlow ops: a contraction; a run of letters, of numbers or of other characters, each with one
   space before it; a run of whitespace, less its last character when that precedes non-whitespace.
2. Each piece's UTF-8 bytes, each byte a printable character (`byte_characters`).
3. BPE: the adjacent pair of lowest rank in merges.txt is merged, every occurrence left to right, until no pair has
   a rank; each symbol's id from vocab.json (a symbol the vocabulary lacks is dropped, as transformers' RoBERTa BPE,
   which has no unknown token, drops it).

The character classes are this Python's `unicodedata` categories (L*, N*) plus the letters and numbers Unicode
assigned after it (`NEWER_CLASSES`, as the `tokenizers` library's regular expressions know them), and Unicode's
White_Space property for `\\s`. No special token is read out of the text: a literal "<mask>" is characters, as
BERT's original tokenizer treats "[MASK]" (transformers matches it; see docs/differences.md).
"""

import collections
import functools
import json
import unicodedata

import numpy as np

from official_bert.text import packing
from official_bert.text.tokenization import VocabError

LETTER, NUMBER, SPACE, OTHER = 0, 1, 2, 3
# Unicode's White_Space property: what the regular expression's \s matches.
WHITE_SPACE = frozenset(map(chr, [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028,
                                  0x2029, 0x202F, 0x205F, 0x3000]))
# Letters (L) and numbers (N) assigned in Unicode 15 and 16, which Python 3.11's unicodedata (14.0) lists as
# unassigned and the tokenizers library (0.22) classifies: (first, last, class).
NEWER_CLASSES = (
    (7305, 7306, LETTER), (42955, 42957, LETTER), (42970, 42972, LETTER), (67008, 67059, LETTER),
    (68928, 68937, NUMBER), (68938, 68965, LETTER), (68975, 68997, LETTER), (69314, 69316, LETTER),
    (70207, 70208, LETTER), (70528, 70537, LETTER), (70539, 70539, LETTER), (70542, 70542, LETTER),
    (70544, 70581, LETTER), (70583, 70583, LETTER), (70609, 70609, LETTER), (70611, 70611, LETTER),
    (71376, 71395, NUMBER), (72640, 72672, LETTER), (72688, 72697, NUMBER), (73474, 73474, LETTER),
    (73476, 73488, LETTER), (73490, 73523, LETTER), (73552, 73561, NUMBER), (78895, 78895, LETTER),
    (78913, 78918, LETTER), (78944, 82938, LETTER), (90368, 90397, LETTER), (90416, 90425, NUMBER),
    (93504, 93548, LETTER), (93552, 93561, NUMBER), (101631, 101631, LETTER), (110898, 110898, LETTER),
    (110933, 110933, LETTER), (118000, 118009, NUMBER), (119488, 119507, NUMBER), (122661, 122666, LETTER),
    (122928, 122989, LETTER), (124112, 124139, LETTER), (124144, 124153, NUMBER), (124368, 124397, LETTER),
    (124400, 124400, LETTER), (124401, 124410, NUMBER), (177977, 177977, LETTER), (191472, 192093, LETTER),
    (201552, 205743, LETTER),
)
CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")
_CACHE_SIZE = 100_000  # pieces whose BPE is remembered


def character_class(char):
    """LETTER, NUMBER, SPACE or OTHER: the class of a character in GPT-2's pre-tokenization.

    Example:
    >>> [character_class(c) for c in "a1 ,\\u00a0é"]
    [0, 1, 2, 3, 2, 0]
    """
    if char in WHITE_SPACE:
        return SPACE
    category = unicodedata.category(char)
    if category[0] in "LN":
        return LETTER if category[0] == "L" else NUMBER
    if category == "Cn":
        cp = ord(char)
        for first, last, cls in NEWER_CLASSES:
            if first <= cp <= last:
                return cls
    return OTHER


@functools.lru_cache(maxsize=None)
def class_table():
    """The class of every code point, uint8 [0x110000] (surrogates OTHER), for the in-graph pre-tokenizer."""
    table = np.full(0x110000, OTHER, np.uint8)
    for cp in range(0x110000):
        if not 0xD800 <= cp <= 0xDFFF:
            table[cp] = character_class(chr(cp))
    return table


def pretokenize(text):
    """GPT-2's pre-tokenization of `text`: [(piece, start, end)], character offsets.

    Example:
    >>> [p for p, _, _ in pretokenize("He's  here,  2024!\\n")]
    ['He', "'s", ' ', ' here', ',', ' ', ' 2024', '!', '\\n']
    """
    classes = [character_class(c) for c in text]
    pieces, i, n = [], 0, len(text)

    def run(start, cls):
        end = start + 1
        while end < n and classes[end] == cls:
            end += 1
        return end

    while i < n:
        if text[i] == "'":
            size = next((len(c) for c in CONTRACTIONS if text.startswith(c, i + 1)), 0)
            if size:
                pieces.append((text[i:i + 1 + size], i, i + 1 + size))
                i += 1 + size
                continue
        if classes[i] != SPACE:
            end = run(i, classes[i])
        elif text[i] == " " and i + 1 < n and classes[i + 1] != SPACE:
            end = run(i + 1, classes[i + 1])
        else:
            end = run(i, SPACE)
            if end < n and end - i > 1:
                end -= 1  # the last whitespace character goes with what follows, or alone
        pieces.append((text[i:end], i, end))
        i = end
    return pieces


@functools.lru_cache(maxsize=None)
def byte_characters():
    """GPT-2's `bytes_to_unicode`: byte → the printable character that stands for it in vocab.json (printable bytes
    themselves, the others from U+0100 on).

    Example:
    >>> byte_characters()[ord(" ")], byte_characters()[ord("a")]
    ('Ġ', 'a')
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in printable]
    chars = {b: chr(b) for b in printable}
    chars.update({b: chr(256 + i) for i, b in enumerate(others)})
    return tuple(chars[b] for b in range(256))


def read_vocabulary(vocab_file, merges_file):
    """vocab.json (token → id) and merges.txt (the merge rules in rank order, a "#version" first line skipped),
    checked: each merge's two symbols and their merge are in the vocabulary, as the tokenizers library requires.

    Raises:
        VocabError: naming the file (and line) that cannot be used.
    """
    from official_bert.io.files import exists, isdir, open_file  # TensorFlow only for a scheme:// path

    for path, what in ((vocab_file, "vocabulary file (vocab.json)"), (merges_file, "merges file (merges.txt)")):
        if not exists(path) or isdir(path):
            raise VocabError(f"{path}: BPE {what} not found")
    try:
        with open_file(vocab_file) as f:
            vocab = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise VocabError(f"{vocab_file}: not a BPE vocabulary: expected a JSON object of token → id ({e})") from None
    if not isinstance(vocab, dict) or not vocab or not all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in vocab.values()):
        raise VocabError(f"{vocab_file}: not a BPE vocabulary: expected a JSON object of token → non-negative id")
    try:
        with open_file(merges_file) as f:
            lines = f.read().decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise VocabError(f"{merges_file}: merges are not UTF-8 ({e.reason} at byte {e.start})") from None
    merges = []
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line or (number == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise VocabError(f"{merges_file}:{number}: expected two symbols separated by one space, got {line!r}")
        missing = [s for s in (*parts, "".join(parts)) if s not in vocab]
        if missing:
            raise VocabError(f"{merges_file}:{number}: merge {line!r} uses {missing[0]!r}, which {vocab_file} lacks "
                             "(the merges and the vocabulary are not of one tokenizer)")
        merges.append(tuple(parts))
    return vocab, merges


class ByteLevelBPETokenizer:
    """RoBERTa's byte-level BPE with FullTokenizer's interface: the ids of transformers' `RobertaTokenizer` (the
    tokenizers library), `<s> A </s></s> B </s>` packing.

    Args:
        vocab_file: vocab.json.
        merges_file: merges.txt.
        do_lower_case: must be False: byte-level BPE tokenizes text as written.

    Example:
    >>> import json, os, tempfile
    >>> from official_bert.text.byte_level_bpe import ByteLevelBPETokenizer, byte_characters
    >>> d = tempfile.mkdtemp()
    >>> chars = byte_characters()
    >>> vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", *chars, "Ġl", "ow", "Ġlow"])}
    >>> _ = open(os.path.join(d, "vocab.json"), "w").write(json.dumps(vocab))
    >>> _ = open(os.path.join(d, "merges.txt"), "w").write("#version: 0.2\\nĠ l\\no w\\nĠl ow\\n")
    >>> tokenizer = ByteLevelBPETokenizer(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
    >>> tokenizer.tokenize("low lower")
    ['l', 'ow', 'Ġlow', 'e', 'r']
    >>> tokenizer.tokenize_with_offsets(" low")
    (['Ġlow'], [(1, 4)])
    """

    packing = packing.ROBERTA

    def __init__(self, vocab_file, merges_file, do_lower_case=False):
        self.vocab_file, self.merges_file = vocab_file, merges_file
        vocab, merges = read_vocabulary(vocab_file, merges_file)
        if do_lower_case:
            upper = [t for t in vocab if t != t.lower() and not (t.startswith("<") and t.endswith(">"))]
            cased = f" (it is cased: {len(upper)} tokens with uppercase letters, e.g. {upper[:3]})" if upper else ""
            raise VocabError(f"do_lower_case=True, but {vocab_file} is a byte-level BPE vocabulary, which tokenizes "
                             f"text as written{cased}; pass do_lower_case=False")
        self.do_lower_case = False
        for token in (self.packing.cls_token, self.packing.sep_token, self.packing.pad_token):
            if token not in vocab:
                raise VocabError(f"{vocab_file}: no {token} in it: not a RoBERTa BPE vocabulary")
        self.vocab = collections.OrderedDict(sorted(vocab.items(), key=lambda item: item[1]))
        self.inv_vocab = {i: t for t, i in self.vocab.items()}
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self._chars = byte_characters()
        self._bpe = functools.lru_cache(maxsize=_CACHE_SIZE)(self._merge)

    def tokenize(self, text):
        return self.tokenize_with_offsets(text)[0]

    def tokenize_with_offsets(self, text):
        """(tokens, [(start, end)]): each token's span of `text`, in characters, less the spaces it starts with
        ("Ġword" spans "word", as transformers' `trim_offsets`; a token that holds part of a character's bytes spans
        the whole character)."""
        from official_bert.text.tokenization import convert_to_unicode

        text = convert_to_unicode(text)
        tokens, spans = [], []
        for piece, start, _ in pretokenize(text):
            data = piece.encode("utf-8")
            # The character each byte belongs to, as an offset into `text`.
            owner = [start + i for i, char in enumerate(piece) for _ in range(len(char.encode("utf-8")))]
            at = 0
            for symbol in self._bpe("".join(self._chars[b] for b in data)):
                size = len(symbol)  # each symbol character stands for one byte
                if symbol in self.vocab:
                    end = owner[at + size - 1] + 1
                    spaces = len(symbol) - len(symbol.lstrip(self._chars[ord(" ")]))
                    tokens.append(symbol)
                    spans.append((min(owner[at] + spaces, end), end))
                at += size
        return tokens, spans

    def tokenize_words(self, words, prefix_space=False):
        """The tokens of each word of `words` as the words joined by single spaces tokenize (so with a space before
        every word but the first, or every word with `prefix_space`: transformers' `is_split_into_words` with
        `add_prefix_space=True`), grouped by word through their offsets.

        Example:
        >>> import json, os, tempfile
        >>> from official_bert.text.byte_level_bpe import ByteLevelBPETokenizer, byte_characters
        >>> d = tempfile.mkdtemp()
        >>> vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", *byte_characters(), "Ġa"])}
        >>> _ = open(os.path.join(d, "vocab.json"), "w").write(json.dumps(vocab))
        >>> _ = open(os.path.join(d, "merges.txt"), "w").write("Ġ a\\n")
        >>> tokenizer = ByteLevelBPETokenizer(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
        >>> tokenizer.tokenize_words(["a", "ab"]), tokenizer.tokenize_words(["a"], prefix_space=True)
        ([['a'], ['Ġa', 'b']], [['Ġa']])
        """
        return group_by_word(self, words, prefix_space)

    def detokenize(self, tokens):
        """The text of `tokens` (their bytes decoded, an incomplete character replaced)."""
        byte_of = {c: b for b, c in enumerate(self._chars)}
        return bytes(byte_of[c] for token in tokens for c in token if c in byte_of).decode("utf-8", "replace")

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[token] for token in tokens]

    def convert_ids_to_tokens(self, ids):
        return [self.inv_vocab[i] for i in ids]

    def cache_options(self):
        """What besides vocab.json changes the ids, for the feature caches' keys: merges.txt's content."""
        from official_bert.io.paths import hash_file

        return {"merges": hash_file(self.merges_file)[0].hexdigest()}

    def _merge(self, word):
        """BPE on one piece's byte characters: the merged symbols."""
        symbols = list(word)
        while len(symbols) > 1:
            ranked = [(self.ranks[pair], i) for i, pair in enumerate(zip(symbols, symbols[1:])) if pair in self.ranks]
            if not ranked:
                break
            first = min(ranked)[1]
            pair = (symbols[first], symbols[first + 1])
            merged, i = symbols[:first], first
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        return tuple(symbols)


def group_by_word(tokenizer, words, prefix_space=False, with_spans=False):
    """`tokenize_words` of a tokenizer with `tokenize_with_offsets`: the words joined by single spaces (a space before
    the first too with `prefix_space`), tokenized, each token given to the word its span starts in (or, for a token
    of the spaces alone, the word after it). With `with_spans`, each token comes with its span of the words joined
    by single spaces (" ".join(words), whatever `prefix_space`), as (token, start, end).

    Example:
    >>> class Characters:
    ...     def tokenize_with_offsets(self, text):
    ...         return list(text), [(i, i + 1) for i in range(len(text))]
    >>> group_by_word(Characters(), ["ab", "c"])
    [['a', 'b'], [' ', 'c']]
    """
    text = (" " if prefix_space else "") + " ".join(words)
    word_of = []  # the word of each character of `text`: a space belongs to the word after it
    for i, word in enumerate(words):
        if i or prefix_space:
            word_of.append(i)
        word_of += [i] * len(word)
    grouped = [[] for _ in words]
    tokens, spans = tokenizer.tokenize_with_offsets(text)
    shift = 1 if prefix_space else 0
    for token, (start, end) in zip(tokens, spans):
        word = word_of[min(start, len(word_of) - 1)]
        grouped[word].append((token, max(start - shift, 0), max(end - shift, 0)) if with_spans else token)
    return grouped
