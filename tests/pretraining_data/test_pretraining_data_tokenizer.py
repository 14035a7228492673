"""LineTokenizer gives exactly the original FullTokenizer's ids, on plain English and on hostile Unicode."""

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from official_bert.pretraining_data import LineTokenizer
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file

# Characters where the fast path could go wrong: every kind of whitespace (some of which the original
# deletes rather than splits on), controls, CJK, accents and combining marks, a Greek capital sigma
# (whose lowercase depends on its neighbours), punctuation, "##", emoji, U+FFFD and NUL.
TRICKY = list("aAbZ09 ,.!?'#[]-_") + ["\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0",
                                       "\u2000", "\u2028", "\u2029", "\u3000", "\u200b", "\u00ad", "\x00",
                                       "\ufffd", "\x7f", "中", "文", "한", "カ", "é", "É", "e\u0301", "Σ",
                                       "σ", "ß", "İ", "ﬁ", "😀", "½", "™", "…", "Å", "\u0345"]


@functools.lru_cache(maxsize=None)
def tokenizer(do_lower_case):
    return FullTokenizer(real_vocab_file(), do_lower_case=do_lower_case)


def original_ids(line, do_lower_case):
    tok = tokenizer(do_lower_case)
    return tok.convert_tokens_to_ids(tok.tokenize(line))


@pytest.mark.parametrize("do_lower_case", [True, False])
@pytest.mark.parametrize("line", [
    "The quick brown fox jumped over the lazy dog's back (twice), didn't it?",
    "ΑΣ中Β ΟΔΟΣ.", "a\x0bb c\x85d e\u2028f", "Crème brûlée à la française — 1½ cups™",
    "x" * 250 + " ok", "##ing [SEP] [MASK]", "control\x00char\x07s and\ufffdreplacement", "",
])
def test_same_ids_as_the_original(line, do_lower_case):
    assert LineTokenizer(tokenizer(do_lower_case)).ids(line) == original_ids(line, do_lower_case)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), max_size=40).map("".join), st.booleans())
def test_same_ids_as_the_original_on_generated_text(line, do_lower_case):
    fast = LineTokenizer(tokenizer(do_lower_case), cache_size=8)  # a tiny cache is also emptied along the way
    assert fast.ids(line) == original_ids(line, do_lower_case)
    assert fast.ids(line) == original_ids(line, do_lower_case)  # now from the cache


def test_other_tokenizers_are_called_directly():
    class Upper:
        vocab = {"A": 0, "B": 1, " ": 2}

        def tokenize(self, text):
            return list(text.upper())

        def convert_tokens_to_ids(self, tokens):
            return [self.vocab[t] for t in tokens]

    assert LineTokenizer(Upper()).ids("ab ba") == [0, 1, 2, 1, 0]  # whole line: spaces reach the tokenizer
