"""The original's vocabulary loading (duplicate lines) and bert-tensorflow 1.0.4's `preserve_unused_tokens`.

References, transcribed: google-research/bert's load_vocab gives each token the index of its line, so a token
listed twice ends with its last line's id (and the OrderedDict keeps its first place); bert-tensorflow 1.0.4
keeps a whitespace token matching ^\\[unused\\d+\\]$ that is in the vocabulary whole, in BasicTokenizer (no
lowercasing, no punctuation split) and in FullTokenizer (no WordPiece).
"""

import collections
import logging
import re

import pytest

from official_bert.pretraining_data import LineTokenizer
from official_bert.tokenization import BasicTokenizer, FullTokenizer, load_vocab
from tests.pretraining_data_corpus import real_vocab_file


def original_load_vocab(path):
    vocab, index = collections.OrderedDict(), 0
    with open(path, encoding="utf-8") as reader:
        for line in reader:
            vocab[line.strip()] = index
            index += 1
    return vocab


def test_duplicate_lines_load_with_the_originals_ids_and_a_warning(tmp_path, caplog):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\ncity\nthe\n##s\ncity\nthe\n")
    with caplog.at_level(logging.WARNING):
        vocab = load_vocab(str(path))
    assert list(vocab.items()) == list(original_load_vocab(path).items())
    assert vocab["the"] == 9 and vocab["city"] == 8 and list(vocab)[4:6] == ["the", "city"]
    assert "lists 2 tokens more than once ('the' on lines 5, 7, 10; 'city' on lines 6, 9)" in caplog.text
    tokenizer = FullTokenizer(str(path))
    assert tokenizer.convert_tokens_to_ids(tokenizer.tokenize("The citys")) == [9, 8, 7]
    assert tokenizer.convert_ids_to_tokens([9, 8]) == ["the", "city"]


def test_no_warning_without_duplicates(tmp_path, caplog):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\nthe\n")
    with caplog.at_level(logging.WARNING):
        load_vocab(str(path))
    assert "more than once" not in caplog.text


_UNUSED = re.compile(r"^\[unused\d+\]$")


def original_preserving_tokenize(tokenizer, text):
    """bert-tensorflow 1.0.4's FullTokenizer.tokenize with FLAGS.preserve_unused_tokens, built on our parts."""
    vocab = tokenizer.vocab
    basic = BasicTokenizer(do_lower_case=tokenizer.do_lower_case)
    out = []
    for token in basic._clean_text(basic._tokenize_chinese_chars(text)).split():
        if token in vocab and _UNUSED.search(token):
            out.append(token)
        else:
            out.extend(tokenizer.wordpiece_tokenizer.tokenize(" ".join(basic.tokenize(token))))
    return out


TEXTS = ["[unused0] The City [unused1]!", "a [unused99999] b", "x[unused3] [UNUSED3] [unused3].",
         "\u00e9t\u00e9 [unused5]\u200b \u4e2d[unused6]", "[unused 4] [unused04]"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("do_lower_case", [True, False])
def test_preserve_unused_tokens_as_bert_tensorflow(text, do_lower_case):
    tokenizer = FullTokenizer(real_vocab_file(), do_lower_case=do_lower_case, preserve_unused_tokens=True)
    expected = original_preserving_tokenize(tokenizer, text)
    assert tokenizer.tokenize(text) == expected
    ids = tokenizer.convert_tokens_to_ids(expected)
    assert LineTokenizer(tokenizer).ids(text) == ids  # the pretraining data's fast path agrees


def test_without_the_option_unused_tokens_are_split_as_the_original():
    tokenizer = FullTokenizer(real_vocab_file())
    assert tokenizer.tokenize("[unused0] a") == ["[", "unused", "##0", "]", "a"]
    preserving = FullTokenizer(real_vocab_file(), preserve_unused_tokens=True)
    assert preserving.tokenize("[unused0] a") == ["[unused0]", "a"]
    assert BasicTokenizer(preserve_unused_tokens=True).tokenize("[unused0]") == ["[", "unused0", "]"]  # no vocab
