"""In-graph tokenization: the same ids as the Python tokenizer for every input, offsets, SavedModels.

`BertTokenizer` is tested here with its default, core-ops WordPiece; test_text_core_wordpiece.py compares it with
the tensorflow-text one."""

import functools
import os
import shutil
import unicodedata

import keras
import pytest
import tensorflow as tf
import tensorflow_text as tf_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from official_bert.tokenization import BasicTokenizer, FullTokenizer, VocabError
from official_bert.text import BertPreprocessor, BertTokenizer
from tests.pretraining_data_corpus import real_vocab_file
from tests.tokenization_helpers import english_lines, hostile_text, mixed_sentences, write_vocab

BOTH_CASES = pytest.mark.parametrize("do_lower_case", [True, False])
PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Pair:
    """The Python tokenizer and a traced in-graph one (with offsets) on the same vocabulary."""

    def __init__(self, vocab_file, do_lower_case, offsets_unit="BYTE"):
        self.python = FullTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.layer = BertTokenizer(vocab_file, do_lower_case=do_lower_case, tokenize_with_offsets=True,
                                   offsets_unit=offsets_unit)
        self.plain = BertTokenizer(vocab_file, do_lower_case=do_lower_case)
        spec = [tf.TensorSpec([None], tf.string)]
        self.tokenize = tf.function(lambda text: self.plain(text), input_signature=spec, autograph=False)
        self.tokenize_with_offsets = tf.function(lambda text: self.layer(text), input_signature=spec, autograph=False)

    def python_ids(self, text):
        return self.python.convert_tokens_to_ids(self.python.tokenize(text))

    def graph_ids(self, texts):
        return self.tokenize(tf.constant(texts, tf.string)).merge_dims(1, 2).to_list()

    def graph_ids_and_offsets(self, texts):
        ids, starts, ends = self.tokenize_with_offsets(tf.constant(texts, tf.string))
        return [t.merge_dims(1, 2).to_list() for t in (ids, starts, ends)]


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def real(request):
    return Pair(real_vocab_file(), request.param)


@pytest.fixture(scope="module")
def real_chars():
    return Pair(real_vocab_file(), True, offsets_unit="UTF8_CHAR")


def _encode(texts):
    return [t.encode("utf-8") for t in texts]


@pytest.mark.slow
@PROPERTY
@given(texts=st.lists(hostile_text, min_size=1, max_size=8))
def test_same_ids_as_python_on_hostile_unicode(real, texts):
    assert real.graph_ids(_encode(texts)) == [real.python_ids(t) for t in texts]


@pytest.mark.slow
@PROPERTY
@given(texts=st.lists(hostile_text, min_size=1, max_size=8))
def test_offsets_path_gives_the_same_ids_and_ordered_spans(real, texts):
    ids, starts, ends = real.graph_ids_and_offsets(_encode(texts))
    assert ids == [real.python_ids(t) for t in texts]
    for text, row_starts, row_ends in zip(texts, starts, ends):
        size = len(text.encode("utf-8"))
        assert all(0 <= s < e <= size for s, e in zip(row_starts, row_ends))
        assert row_starts == sorted(row_starts)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(hostile_text, min_size=1, max_size=6))
def test_character_offsets_agree_with_byte_offsets(real, real_chars, texts):
    if not real.python.basic_tokenizer.do_lower_case:
        return  # real_chars is uncased; one case is enough for the unit conversion
    _, byte_starts, byte_ends = real.graph_ids_and_offsets(_encode(texts))
    _, char_starts, char_ends = real_chars.graph_ids_and_offsets(_encode(texts))
    for text, bs, be, cs, ce in zip(texts, byte_starts, byte_ends, char_starts, char_ends):
        assert bs == [len(text[:c].encode("utf-8")) for c in cs]
        assert be == [len(text[:c].encode("utf-8")) for c in ce]


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.binary(max_size=12), min_size=1, max_size=6))
def test_undecodable_bytes_are_dropped_as_in_python(real, data):
    assert real.graph_ids(data) == [real.python_ids(d) for d in data]


def test_same_ids_on_english_and_generated_mixes(real):
    texts = english_lines(2000) + mixed_sentences(500, seed=11)
    assert real.graph_ids(_encode(texts)) == [real.python_ids(t) for t in texts]


def test_same_ids_where_tensorflow_text_normalizers_differ(real):
    # Measured: tensorflow-text's own normalization drops ´ and ¨, turns … into "...", and makes U+FFFD [UNK].
    texts = ["a´b ¨c", "wait… what", "x\ufffdy \ufffd", "ΟΔΟΣ Σ", "İstanbul ﬁne"]
    assert real.graph_ids(_encode(texts)) == [real.python_ids(t) for t in texts]


def test_naive_tensorflow_text_configuration_fails_on_the_test_data(real):
    # Guards the test data: the obvious tensorflow-text setup must disagree with the original on it.
    naive = tf_text.BertTokenizer(real_vocab_file(), lower_case=real.python.basic_tokenizer.do_lower_case,
                                  token_out_type=tf.int64)
    texts = mixed_sentences(300, seed=11)
    naive_ids = naive.tokenize(tf.constant(_encode(texts))).merge_dims(1, 2).to_list()
    differing = sum(ids != real.python_ids(t) for t, ids in zip(texts, naive_ids))
    assert differing > 0.1 * len(texts)


# Offsets, hand-checked.
@pytest.fixture(scope="module")
def small_vocab(tmp_path_factory):
    return write_vocab(tmp_path_factory.mktemp("vocab"), [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "wor", "##ld", "a", "##a", "b", "中", "文",
        "\u1112", "##\u1161", "##\u11ab", ","])


@functools.lru_cache(maxsize=None)
def _offsets_function(vocab, unit):
    layer = BertTokenizer(vocab, tokenize_with_offsets=True, offsets_unit=unit)
    return tf.function(lambda text: layer(text), input_signature=[tf.TensorSpec([None], tf.string)],
                       autograph=False)


def _offsets(vocab, text, unit="BYTE"):
    ids, starts, ends = (t.merge_dims(1, 2)[0].numpy().tolist()
                         for t in _offsets_function(vocab, unit)(tf.constant([text])))
    return ids, list(zip(starts, ends))


def test_offsets_cover_the_source_of_normalized_characters(small_vocab):
    # "é" is two bytes; lowercasing and accent stripping keep the span of the original characters.
    assert _offsets(small_vocab, "Héllo, WÖRld") == ([5, 16, 6, 7], [(0, 6), (6, 7), (8, 12), (12, 14)])
    assert _offsets(small_vocab, "Héllo, WÖRld", unit="UTF8_CHAR")[1] == [(0, 5), (5, 6), (7, 10), (10, 12)]


def test_offsets_span_deleted_characters_inside_a_word(small_vocab):
    assert _offsets(small_vocab, " a\x00\u200bb") == ([1], [(1, 7)])
    ids, spans = _offsets(small_vocab, "hel\x00lo 中文")
    assert ids == [5, 11, 12]
    assert spans == [(0, 6), (7, 10), (10, 13)]


def test_pieces_of_one_character_share_its_span(small_vocab):
    # Lowercasing decomposes 한 (3 bytes) into three jamo, each a piece.
    assert _offsets(small_vocab, "x 한") == ([1, 13, 14, 15], [(0, 1), (2, 5), (2, 5), (2, 5)])


def test_long_word_unk_spans_the_whole_word(small_vocab):
    assert _offsets(small_vocab, "a" * 201 + " b") == ([1, 10], [(0, 201), (202, 203)])
    ids, spans = _offsets(small_vocab, "a" * 200)
    assert ids == [8] + [9] * 199 and spans[:2] == [(0, 1), (1, 2)] and spans[-1] == (199, 200)


def test_uncoverable_word_unk_spans_the_whole_word(small_vocab):
    assert _offsets(small_vocab, "hello xyz!") == ([5, 1, 1], [(0, 5), (6, 9), (9, 10)])


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("aAbB éÉ\u0301,.中\x00\t") + ["\u3000", "ß", "İ"]), max_size=40))
def test_each_piece_is_its_source_text_normalized(small_vocab, text):
    ids, spans = _offsets(small_vocab, text)
    vocab = FullTokenizer(small_vocab).inv_vocab
    for token_id, (start, end) in zip(ids, spans):
        source = text.encode("utf-8")[start:end].decode("utf-8")
        if token_id == 1:
            assert len(BasicTokenizer().tokenize(source)) == 1
        else:
            normalized = unicodedata.normalize("NFD", "".join(c for c in source if c.isprintable()).lower())
            assert "".join(c for c in normalized if unicodedata.category(c) != "Mn") == vocab[token_id].lstrip("#")


# The vocabulary travels with a SavedModel.
@pytest.mark.slow
def test_saved_preprocessor_can_be_moved(tmp_path):
    vocab = tmp_path / "vocab.txt"
    shutil.copy(real_vocab_file(), vocab)
    tf.saved_model.save(BertPreprocessor(BertTokenizer(str(vocab)), seq_length=8), str(tmp_path / "saved"))
    os.remove(vocab)
    shutil.move(tmp_path / "saved", tmp_path / "moved")

    loaded = tf.saved_model.load(str(tmp_path / "moved"))
    python = FullTokenizer(real_vocab_file())
    texts = ["Hello, Wörld! 中文 ΟΔΟΣ", "unaffable [MASK]", ""]
    ids = loaded.tokenize(tf.constant(texts)).merge_dims(1, 2).to_list()
    assert ids == [python.convert_tokens_to_ids(python.tokenize(t)) for t in texts]
    asset = loaded.tokenizer.vocab_file.asset_path.numpy().decode()
    assert asset.startswith(str(tmp_path / "moved" / "assets"))
    with open(asset, encoding="utf-8") as f, open(real_vocab_file(), encoding="utf-8") as g:
        assert f.read() == g.read()

    cls, sep = python.vocab["[CLS]"], python.vocab["[SEP]"]
    out = loaded(tf.constant(["unaffable", ""]))
    assert out["input_word_ids"].numpy().tolist() == [[cls] + ids[1][:3] + [sep, 0, 0, 0], [cls, sep] + [0] * 6]
    assert out["input_mask"].numpy().tolist() == [[1] * 5 + [0] * 3, [1, 1] + [0] * 6]
    assert out["input_type_ids"].numpy().tolist() == [[0] * 8] * 2
    a, b = loaded.tokenize(tf.constant(["unaffable"])), loaded.tokenize(tf.constant(["hello world"]))
    packed = loaded.bert_pack_inputs([a, b], seq_length=tf.constant(6))
    hello, world = python.convert_tokens_to_ids(["hello", "world"])
    assert packed["input_word_ids"].numpy().tolist() == [[cls] + ids[1][:2] + [sep, hello, sep]]
    assert packed["input_type_ids"].numpy().tolist() == [[0, 0, 0, 0, 1, 1]]
    assert world not in packed["input_word_ids"].numpy()


# Keras integration and errors.
def test_keras_config_round_trip(small_vocab):
    layer = BertTokenizer(small_vocab, do_lower_case=False, tokenize_with_offsets=True, offsets_unit="UTF8_CHAR",
                          wordpiece="tf_text")
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert isinstance(restored, BertTokenizer) and restored.get_config() == layer.get_config()
    assert keras.saving.get_registered_object("official_bert>BertTokenizer") is BertTokenizer


def test_special_tokens_dict(small_vocab):
    assert BertTokenizer(small_vocab).get_special_tokens_dict() == {
        "vocab_size": 17, "start_of_sequence_id": 2, "end_of_segment_id": 3, "padding_id": 0, "mask_id": 4}


def test_bad_vocab_errors_name_the_file(tmp_path):
    with pytest.raises(VocabError, match="nope.txt: vocabulary file not found"):
        BertTokenizer(str(tmp_path / "nope.txt"))
    no_unk = write_vocab(tmp_path, ["[PAD]", "a"])
    with pytest.raises(VocabError, match=f"{no_unk}: vocabulary has no \\[UNK\\] token"):
        BertTokenizer(no_unk)
    duplicate = write_vocab(tmp_path, ["[UNK]", "a", "b", "a"], name="dup.txt")  # the original: a is 3
    for wordpiece in ("core", "tf_text"):
        assert BertTokenizer(duplicate, wordpiece=wordpiece)(tf.constant(["a b"])).to_list() == [[[3], [2]]]
    huge = write_vocab(tmp_path, ["[UNK]", "##" + "한" * 86], name="huge.txt")
    with pytest.raises(VocabError, match=f"{huge}:2: token of 258 UTF-8 bytes; tensorflow-text's WordPiece takes"):
        BertTokenizer(huge, wordpiece="tf_text")
    assert BertTokenizer(huge)(tf.constant(["x" + "한" * 86])).to_list() == [[[0]]]  # the core ops have no limit


def test_bad_inputs_get_clear_errors(small_vocab):
    with pytest.raises(ValueError, match="offsets_unit must be 'BYTE' or 'UTF8_CHAR'"):
        BertTokenizer(small_vocab, offsets_unit="WORD")
    with pytest.raises(ValueError, match="wordpiece must be one of 'core', 'tf_text', got 'icu'"):
        BertTokenizer(small_vocab, wordpiece="icu")
    with pytest.raises(ValueError, match="BertPreprocessor needs a tokenizer layer built with tokenize_with_offsets"):
        BertPreprocessor(BertTokenizer(small_vocab, tokenize_with_offsets=True))
    layer = BertTokenizer(small_vocab)
    with pytest.raises(TypeError, match="BertTokenizer expects a string tensor of shape \\[batch\\], got int32"):
        layer(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="BertTokenizer expects a string tensor of shape \\[batch\\], got shape"):
        layer(tf.constant([["a"]]))
