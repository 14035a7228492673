"""The core-ops WordPiece against the original's WordpieceTokenizer and tensorflow-text's FastWordpieceTokenizer:
the same ids, and the same offsets (bytes and characters), cased and uncased, on hostile Unicode, real text,
words around the 200-character limit and vocabularies of long tokens."""

import functools

import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from official_bert.text import BertTokenizer
from official_bert.text.basic_tokenizer import GraphBasicTokenizer
from official_bert.text.core_wordpiece import CoreWordpiece
from official_bert.text.tf_text_wordpiece import TfTextWordpiece
from official_bert.tokenization import FullTokenizer, WordpieceTokenizer
from tests.pretraining_data_corpus import real_vocab_file
from tests.tokenization_helpers import english_lines, hostile_text, mixed_sentences, write_vocab

PROPERTY = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@functools.lru_cache(maxsize=None)
def layers(vocab_file, do_lower_case, offsets_unit="BYTE"):
    """Traced tokenize-with-offsets functions of both WordPiece implementations, and the Python tokenizer."""
    def traced(wordpiece):
        layer = BertTokenizer(vocab_file, do_lower_case=do_lower_case, tokenize_with_offsets=True,
                              offsets_unit=offsets_unit, wordpiece=wordpiece)
        return tf.function(lambda text: [t.merge_dims(1, 2) for t in layer(text)],
                           input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)

    return traced("core"), traced("tf_text"), FullTokenizer(vocab_file, do_lower_case=do_lower_case)


def tokenize(function, texts):
    """(ids, starts, ends) of every text, as lists."""
    return tuple(t.to_list() for t in function(tf.constant([t.encode("utf-8") for t in texts], tf.string)))


def python_ids(python, texts):
    return [python.convert_tokens_to_ids(python.tokenize(t)) for t in texts]


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def do_lower_case(request):
    return request.param


def check_same(vocab_file, do_lower_case, texts, offsets_unit="BYTE"):
    core, tf_text, python = layers(vocab_file, do_lower_case, offsets_unit)
    got = tokenize(core, texts)
    assert got[0] == python_ids(python, texts)
    assert got == tokenize(tf_text, texts)
    return got


@pytest.mark.slow
@PROPERTY
@given(texts=st.lists(hostile_text, min_size=1, max_size=8))
def test_hostile_unicode(do_lower_case, texts):
    check_same(real_vocab_file(), do_lower_case, texts)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(hostile_text, min_size=1, max_size=8))
def test_hostile_unicode_character_offsets(texts):
    check_same(real_vocab_file(), True, texts, offsets_unit="UTF8_CHAR")


def test_english_and_generated_mixes(do_lower_case):
    check_same(real_vocab_file(), do_lower_case, english_lines(1500) + mixed_sentences(300, seed=5))


@pytest.fixture(scope="module")
def long_word_vocab(tmp_path_factory):
    return write_vocab(tmp_path_factory.mktemp("long"), [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##a", "e", "##e", "한", "##한", "\u1112", "##\u1161", "##\u11ab",
        "##\u1112", "é", "##é"])


@pytest.mark.slow
@pytest.mark.parametrize("count, pieces", [(199, 199), (200, 200), (201, None)])
def test_words_of_199_200_and_201_characters(long_word_vocab, do_lower_case, count, pieces):
    text = "x " + "a" * count + " a"
    ids, starts, ends = check_same(long_word_vocab, do_lower_case, [text])
    if pieces is None:  # one [UNK] spanning the whole word
        assert (ids, starts, ends) == ([[1, 1, 4]], [[0, 2, 3 + count]], [[1, 2 + count, 4 + count]])
    else:
        assert ids == [[1, 4] + [5] * (pieces - 1) + [4]]
        assert starts[0][1:-1] == list(range(2, 2 + count)) and ends[0][1:-1] == list(range(3, 3 + count))


@pytest.mark.parametrize("text", ["한" * 66, "한" * 67, "e\u0301" * 150, "é" * 201, "é" * 200])
def test_the_limit_counts_characters_after_normalization(long_word_vocab, do_lower_case, text):
    # Uncased, 한 decomposes into 3 jamo (67 of them are 201 characters) and e + U+0301 loses its accent; cased,
    # 한 is one character and e + U+0301 two.
    ids, starts, ends = check_same(long_word_vocab, do_lower_case, [text])
    python = FullTokenizer(long_word_vocab, do_lower_case=do_lower_case)
    characters = len(python.basic_tokenizer.tokenize(text)[0])
    assert (ids[0] == [1]) == (characters > 200)
    assert starts[0][0] == 0


def test_vocabularies_of_long_tokens(tmp_path, do_lower_case):
    long_first, long_continuation = "ab" * 50, "ba" * 40  # within tensorflow-text's 256 bytes
    vocab = write_vocab(tmp_path, ["[PAD]", "[UNK]", "a", "b", "##a", "##b", long_first, "##" + long_continuation,
                                   "##" + "b" * 30, "a" * 200])
    texts = [long_first, long_first + long_continuation, "a" + long_continuation + "b", long_first + "b" * 31,
             "a" * 200, "a" * 199 + "b", "A" * 200 + " " + "a" * 201]
    ids, _, _ = check_same(vocab, do_lower_case, texts)
    assert ids[:4] == [[6], [6, 7], [2, 7, 5], [6, 8, 5]]
    assert ids[4] == [9] and ids[-1][-1] == 1


# The WordPiece step alone, on random vocabularies: the original's loop is the reference.
piece = st.text(alphabet="abé한", min_size=1, max_size=5)
long_piece = st.builds(lambda c, n: c * n, st.sampled_from("ab"), st.integers(150, 210))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=st.lists(st.tuples(st.booleans(), st.one_of(piece, piece, piece, long_piece)), min_size=1,
                       max_size=40, unique=True),
       words=st.lists(st.lists(st.one_of(piece, long_piece), min_size=1, max_size=6).map("".join), min_size=1,
                      max_size=10))
@pytest.mark.slow
def test_random_vocabularies_and_words(tokens, words):
    vocab = {"[UNK]": 0}
    for continuation, text in tokens:
        vocab.setdefault("##" + text if continuation else text, len(vocab))
    python = WordpieceTokenizer(vocab)
    expected = [[vocab[t] for t in python.tokenize(word)] for word in words]
    basic = GraphBasicTokenizer(do_lower_case=False).tokenize(tf.constant([" ".join(words)]))
    ids, first, last = CoreWordpiece(vocab).tokenize(basic)
    assert ids.to_list() == expected
    tf_ids, tf_first, tf_last = TfTextWordpiece(vocab).tokenize(basic)
    assert tf_ids.to_list() == expected
    assert first.numpy().tolist() == tf_first.numpy().tolist() and last.numpy().tolist() == tf_last.numpy().tolist()


def test_empty_batch_and_empty_strings():
    core, _, _ = layers(real_vocab_file(), True)
    assert tokenize(core, []) == ([], [], [])
    assert tokenize(core, ["", " \t"]) == ([[], []], [[], []], [[], []])
