"""Per-code-point tables that let the graph reproduce `official_bert.tokenization.BasicTokenizer`.

The in-graph tokenizer must agree with the Python one for every input, so it cannot rely on ICU or RE2,
whose Unicode versions differ from Python's `unicodedata`. Instead the properties the original rules
read (category, whitespace, lowercase mapping, NFD, combining class) are taken from the running
Python's `unicodedata` and stored in the graph as sorted run-length tables.
"""

import functools
import unicodedata

import numpy as np

from official_bert.text import tokenization

MAX_CODE_POINT = 0x10FFFF
CAPITAL_SIGMA = 0x3A3
SMALL_FINAL_SIGMA = 0x3C2

# Bits of `code_point_flags`.
REMOVE = 1  # deleted by BasicTokenizer._clean_text (NUL, U+FFFD, Cc/Cf except \t \n \r)
SEPARATOR = 2  # str.split() splits on it: the original's whitespace plus U+2028/U+2029
CJK = 4  # spaced off on both sides (BasicTokenizer._is_chinese_char)
PUNCTUATION = 8  # split off as its own token (tokenization._is_punctuation)
NONSPACING_MARK = 16  # category Mn: dropped after NFD when lowercasing
KEPT_NONSTARTER = 32  # canonical combining class > 0 but not Mn: NFD reordering can move it
MAPPED = 64  # NFD(c.lower()) != c
# Bits of `final_sigma_context`, what str.lower() reads around a capital sigma.
CASED = 1
CASE_IGNORABLE = 2


@functools.lru_cache(maxsize=None)
def code_point_flags():
    """Returns the property bits of every code point, uint8 [0x110000]."""
    flags = np.zeros(MAX_CODE_POINT + 1, np.uint8)
    for cp in range(MAX_CODE_POINT + 1):
        char = chr(cp)
        category = unicodedata.category(char)
        bits = CJK if tokenization.BasicTokenizer._is_chinese_char(cp) else 0
        if category in ("Cn", "Co", "Cs"):
            flags[cp] = bits  # unassigned, private-use or surrogate: no other property applies
            continue
        if cp == 0 or cp == 0xFFFD or tokenization._is_control(char):
            bits |= REMOVE
        if char.isspace():
            bits |= SEPARATOR
        if tokenization._is_punctuation(char):
            bits |= PUNCTUATION
        if category == "Mn":
            bits |= NONSPACING_MARK
        elif unicodedata.combining(char):
            bits |= KEPT_NONSTARTER
        flags[cp] = bits
    flags[lowercase_mapping()[0]] |= MAPPED
    _check_assumptions(flags)
    return flags


@functools.lru_cache(maxsize=None)
def final_sigma_context():
    """Returns `(starts, bits)`: code points `starts[i]..starts[i+1]-1` all have CASED/CASE_IGNORABLE `bits[i]`.

    CPython does not expose its Cased and Case_Ignorable tables, so they are read off str.lower() itself:
    "AxΣ" lowers to a final sigma iff x is cased or case-ignorable, "xΣ" iff x is cased and not ignorable.
    (Whether a case-ignorable character is also cased never matters to the Final_Sigma rule.)
    """
    bits = np.zeros(MAX_CODE_POINT + 1, np.int32)
    for cp in range(MAX_CODE_POINT + 1):
        char = chr(cp)
        if unicodedata.category(char) in ("Cn", "Co", "Cs"):
            continue
        if (char + "Σ").lower()[-1] == "ς":
            bits[cp] = CASED
        elif ("A" + char + "Σ").lower()[-1] == "ς":
            bits[cp] = CASE_IGNORABLE
    return run_length(bits)


def _check_assumptions(flags):
    """Fails loudly if a future Unicode version breaks a shortcut the graph takes."""
    # The graph lowercases whole strings instead of each whitespace token: equivalent only because
    # separators and CJK characters (around which the original inserts spaces) end a Final_Sigma context.
    starts, context = final_sigma_context()
    breakers = np.flatnonzero(flags & (SEPARATOR | CJK))
    ok = not np.any(context[np.searchsorted(starts, breakers, side="right") - 1])
    # The graph splits around CJK characters after lowercasing: equivalent only because lowercasing
    # maps each of them to one CJK character and creates no CJK character from anything else.
    keys, splits, values = lowercase_mapping()
    for key, first, last in zip(keys, splits[:-1], splits[1:]):
        mapped_cjk = flags[values[first:last]] & CJK
        ok = ok and (mapped_cjk.all() and last - first == 1 if flags[key] & CJK else not mapped_cjk.any())
    if not ok:
        raise AssertionError("this Python's Unicode data breaks an assumption of the in-graph tokenizer")


def run_length(values):
    """Returns `(starts, run_values)`: `values[starts[i]:starts[i+1]]` all equal `run_values[i]`."""
    change = np.flatnonzero(np.diff(values)) + 1
    starts = np.concatenate([[0], change]).astype(np.int32)
    return starts, values[starts]


@functools.lru_cache(maxsize=None)
def lowercase_mapping():
    """Returns `(keys, splits, values)`: code point `keys[i]` becomes `values[splits[i]:splits[i+1]]`.

    The mapping is NFD(c.lower()) for every code point it changes (capital sigma maps to the non-final
    form; the graph applies the Final_Sigma context). Combining marks are kept: canonical reordering needs
    them before they are dropped.
    """
    keys, splits, values = [], [0], []
    for cp in range(MAX_CODE_POINT + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        mapped = unicodedata.normalize("NFD", chr(cp).lower())
        if mapped != chr(cp):
            keys.append(cp)
            values.extend(ord(c) for c in mapped)
            splits.append(len(values))
    return np.array(keys, np.int32), np.array(splits, np.int32), np.array(values, np.int32)


def canonical_decomposition():
    """Returns `(keys, splits, values)`: code point `keys[i]` becomes `values[splits[i]:splits[i+1]]`, its NFD, for
    every code point NFD changes (Hangul syllables included)."""
    keys, splits, values = [], [0], []
    for cp in range(MAX_CODE_POINT + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        mapped = unicodedata.normalize("NFD", chr(cp))
        if mapped != chr(cp):
            keys.append(cp)
            values.extend(ord(c) for c in mapped)
            splits.append(len(values))
    return np.array(keys, np.int32), np.array(splits, np.int32), np.array(values, np.int32)


PAIR_UNIT = 1 << 21  # a pair of code points (a, b) is the key a * PAIR_UNIT + b


def canonical_compositions():
    """Returns `(pairs, composites)`, sorted by pair: NFC composes the code points (a, b) of the key
    a * PAIR_UNIT + b into the composite: every primary composite (a canonical decomposition into two code points,
    no composition exclusion) and the Hangul syllables (L + V, LV + T)."""
    table = {}
    for cp in range(MAX_CODE_POINT + 1):
        decomposition = unicodedata.decomposition(chr(cp)) if not 0xD800 <= cp <= 0xDFFF else ""
        parts = decomposition.split()
        if len(parts) == 2 and not decomposition.startswith("<"):
            a, b = (int(part, 16) for part in parts)
            if unicodedata.normalize("NFC", chr(a) + chr(b)) == chr(cp):
                table[a * PAIR_UNIT + b] = cp
    for syllable in range(0xAC00, 0xD7A4):  # Hangul: composed arithmetically, so unicodedata lists no decomposition
        index = syllable - 0xAC00
        if index % 28:
            table[(syllable - index % 28) * PAIR_UNIT + 0x11A7 + index % 28] = syllable
        else:
            table[(0x1100 + index // 588) * PAIR_UNIT + 0x1161 + index % 588 // 28] = syllable
    pairs = np.array(sorted(table), np.int64)
    return pairs, np.array([table[p] for p in pairs], np.int64)


@functools.lru_cache(maxsize=None)
def combining_classes():
    """Returns `(starts, classes)`, the run-length canonical combining class of every code point."""
    classes = np.array([unicodedata.combining(chr(cp)) for cp in range(MAX_CODE_POINT + 1)], np.int32)
    return run_length(classes)
