"""Shared by the tokenization tests: hostile text strategies and tiny vocabularies."""

import os

from hypothesis import strategies as st

# str.isspace() characters: the original deletes some (Cc), maps some to spaces, and splits on U+2028/9.
WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680",
              "\u2000", "\u2007", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]
# Cc and Cf (deleted), zero-width characters, U+FFFD and NUL.
CONTROL = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x9f", "\u200b", "\u200c", "\u200d", "\u200e", "\u2060",
           "\ufeff", "\u00ad", "\u061c", "\U000e0001", "\ufffd"]
# Every punctuation class (Pc Pd Ps Pe Pi Pf Po), the ASCII symbols the original also splits off, and
# symbols it does not split (some of which become punctuation once NFD-decomposed: U+1FEF, U+2260).
PUNCTUATION = list("_\u203f-\u2010\u2014([{\u300c)]}\u300d\u00ab\u2018\u201c\u00bb\u2019\u201d"
                   "!?.,;:'\"#%&*/@\\\u00bf\u00a1\u3002\u3001\u30fb\u2026\u203b$+<=>^`|~"
                   "\u20ac\u00a9\u00b0\u00b1\u00d7\u2260\u221a\u2122\u1fef\u00b4\u00a8")
# Combining marks, Mn and the Mc non-starters that NFD reorders.
COMBINING = ["\u0300", "\u0301", "\u0308", "\u0327", "\u0345", "\u0670", "\u093c", "\u094d", "\u0e31", "\u302a",
             "\u302e", "\U0001d165", "\U0001d16d", "\U00016ff0", "\u1715"]
# CJK ideographs of each range the original spaces off (assigned or not), and neighbours it does not.
CJK = ["中", "文", "字", "\u3400", "\u9fff", "\uf900", "\ufa6e", "\U00020000", "\U0002a6df", "\U0002ceaf",
       "\U0002f800", "\U0002fa1f", "ひ", "カ", "한", "ㄱ", "\u3007"]
SCRIPTS = list("éÉèàçñÅøßİıǅﬁẞ½²ΟΔΟΣσςΣΆάΐ") + ["한국어", "ひらがな", "Привет", "العربية", "हिन्दी", "ภาษาไทย",
                                                  "\u0130stanbul", "ΑΣ", "ΑΣ.", "Α\u0301Σ"]
EMOJI = ["😀", "👍🏽", "👨\u200d👩\u200d👧", "🇺🇸", "1\ufe0f\u20e3", "\u2764\ufe0f", "\U0001f3fb"]
WORDS = ["the", "The", "UNAFFABLE", "running", "don't", "[UNK]", "[CLS]", "[MASK]", "##ing", "e-mail",
         "U.S.A.", "naïve", "Café", "hello", "world", "unbelievable"]


def _long_word(char, count):
    return char * count


fragment = st.one_of(
    st.characters(codec="utf-8"),  # any code point UTF-8 can carry (no surrogates)
    st.sampled_from(WHITESPACE + CONTROL + PUNCTUATION + COMBINING + CJK + SCRIPTS + EMOJI + WORDS),
    st.builds(_long_word, st.sampled_from(["a", "é", "한", "x", "İ", "e\u0301"]), st.integers(95, 205)),
)
# Random Unicode mixing all of the above, the empty string included.
hostile_text = st.lists(fragment, max_size=25).map("".join)


def write_vocab(directory, tokens, name="vocab.txt"):
    """Writes `tokens` one per line and returns the path."""
    path = os.path.join(str(directory), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(token + "\n" for token in tokens))
    return path


def english_lines(limit):
    """Up to `limit` non-blank lines of English from Python's pydoc topics (offline, real prose)."""
    import pydoc_data.topics

    lines = (line.strip() for text in pydoc_data.topics.topics.values() for line in text.splitlines())
    return [line for line in lines if line][:limit]


def mixed_sentences(count, seed, long_words=True, special_literals=True):
    """English words mixed with accents, CJK, Hangul, kana, emoji, controls, odd whitespace and punctuation.

    Only characters of Unicode 14 (this Python's), and no Greek capital sigma, so that libraries on
    other Unicode versions and without CPython's Final_Sigma rule can be compared on them.
    """
    import random

    rng = random.Random(seed)
    pieces = (WORDS * 4 + list("éÉèàçñÅøßİ½") + ["中文", "字", "한국어", "ひらがな", "カタカナ", "Привет", "हिन्दी",
                                                  "😀", "👍🏽", "🇺🇸", "café", "naïve", "e\u0301", "\u200b", "\x00",
                                                  "\ufffd", "\u00ad"]
              + PUNCTUATION + WHITESPACE)
    if not special_literals:
        pieces = [p for p in pieces if p not in ("[UNK]", "[CLS]", "[MASK]")]
    sentences = []
    for _ in range(count):
        parts = [rng.choice(pieces) for _ in range(rng.randrange(1, 20))]
        if long_words and rng.random() < 0.1:
            parts.append(" " + rng.choice("abcé") * rng.randrange(90, 230) + " ")
        sentences.append(" ".join(parts) if rng.random() < 0.5 else "".join(parts))
    return sentences
