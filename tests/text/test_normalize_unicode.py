"""Decomposed (NFD) text and a cased vocabulary (#39): the original's ids by default, with a warning and a count of
the characters the vocabulary has only composed; normalize_unicode="nfc" composes the text first, in Python and in
the graph (and so in an export) alike — checked against Python's unicodedata."""

import unicodedata

import numpy as np
import pytest
import tensorflow as tf

from official_bert.text import tokenization
from official_bert.text.basic_tokenizer import GraphBasicTokenizer
from official_bert.text.bert_tokenizer import BertTokenizer
from official_bert.text.tokenization import FullTokenizer, decomposed_text_warning
from official_bert.text.tokenizers import create_tokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "café", "naïve", "über", "한국", "e", "u", "x", "##s", "."]
COMPOSED = ["café naïve über 한국", "cafés ."]
DECOMPOSED = [unicodedata.normalize("NFD", text) for text in COMPOSED]


@pytest.fixture
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(autouse=True)
def fresh_count(monkeypatch):
    monkeypatch.setattr(tokenization, "_decomposed", tokenization.collections.Counter())


def ids(tokenizer, text):
    return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))


def test_decomposed_text_keeps_the_original_ids_and_warns_once_with_a_count(vocab_file, caplog):
    tokenizer = FullTokenizer(vocab_file, do_lower_case=False)
    assert DECOMPOSED[0] != COMPOSED[0]
    with caplog.at_level("WARNING"):
        got = [ids(tokenizer, text) for text in DECOMPOSED]
    assert got[0] == [1, 1, 1, 1]  # [UNK] for every accented word, as the original
    assert [r.getMessage() for r in caplog.records if "decomposed (NFD)" in r.getMessage()] == [
        "decomposed (NFD) text: 'é' (in 'cafe\u0301') is written as U+0065 + U+0301, which the vocabulary has only "
        "composed; such words get other ids ([UNK] or other pieces), as with the original. Pass "
        "--normalize_unicode=nfc to compose the text first (the count follows at the end)"]
    # é twice, ï, ü, and the two Hangul syllables written as jamo.
    assert decomposed_text_warning() == (
        "6 characters were written decomposed (NFD) that the vocabulary has only composed ('é' 2, 'ï' 1, 'ü' 1, '한' 1, "
        "'국' 1): their words got other ids than the composed text's, as with the original; --normalize_unicode=nfc "
        "composes the text first")


def test_composed_text_and_uncased_models_are_not_counted(vocab_file):
    [ids(FullTokenizer(vocab_file, do_lower_case=False), text) for text in COMPOSED]
    [ids(FullTokenizer(vocab_file, do_lower_case=True), text) for text in DECOMPOSED]
    assert decomposed_text_warning() is None


def test_nfc_gives_the_composed_texts_ids_in_python(vocab_file):
    nfc = create_tokenizer(vocab_file, do_lower_case=False, normalize_unicode="nfc")
    plain = FullTokenizer(vocab_file, do_lower_case=False)
    assert [ids(nfc, text) for text in DECOMPOSED] == [ids(plain, text) for text in COMPOSED] == [
        [4, 5, 6, 7], [4, 11, 12]]
    assert decomposed_text_warning() is None


@pytest.mark.slow  # the layer's Unicode tables and a SavedModel: about 10 s on 2 cores
def test_nfc_gives_the_same_ids_in_the_graph_and_in_a_saved_model(vocab_file, tmp_path):
    layer = BertTokenizer(vocab_file, do_lower_case=False, normalize_unicode="nfc")
    assert BertTokenizer.from_config(layer.get_config()).normalize_unicode == "nfc"
    expected = [ids(FullTokenizer(vocab_file, do_lower_case=False), text) for text in COMPOSED]

    module = tf.Module()
    module.layer = layer
    module.serve = tf.function(lambda text: layer(text).merge_dims(1, 2).to_tensor(),
                               input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path / "export"))
    served = tf.saved_model.load(str(tmp_path / "export")).serve(tf.constant(DECOMPOSED)).numpy()
    assert [[i for i in row if i] for row in served.tolist()] == expected
    # Without the option the graph keeps the original's ids, as Python does.
    plain = BertTokenizer(vocab_file, do_lower_case=False)(tf.constant(DECOMPOSED)).merge_dims(1, 2).to_list()
    assert plain == [ids(FullTokenizer(vocab_file, do_lower_case=False), text) for text in DECOMPOSED]


def test_a_composed_character_spans_its_decomposed_source():
    words = GraphBasicTokenizer(do_lower_case=False, offsets_unit="UTF8_CHAR", normalize_unicode="nfc").tokenize(
        tf.constant(["cafe\u0301 \u1112\u1161\u11ab!"]), with_offsets=True)
    assert [w.decode() for w in words.words[0].numpy()] == ["café", "한", "!"]
    assert words.char_starts.numpy().tolist() == [0, 1, 2, 3, 6, 9]
    assert words.char_ends.numpy().tolist() == [1, 2, 3, 5, 9, 10]


@pytest.mark.slow  # every decomposable character of the BMP: about 20 s on 2 cores
def test_graph_nfc_agrees_with_unicodedata_on_every_bmp_character():
    texts = []
    for cp in range(0x80, 0x10000):
        if not 0xD800 <= cp <= 0xDFFF and unicodedata.normalize("NFD", chr(cp)) != chr(cp):
            texts.append(unicodedata.normalize("NFD", chr(cp)) + "x")
    rng = np.random.default_rng(0)
    marks = [chr(c) for c in range(0x300, 0x370)]
    bases = list("aeiouAEIOUcnszgk") + ["\u1100", "\u1161", "\u11a8", "\u0dd9", "\u0dcf", "\u0dca"]
    for _ in range(2000):  # bases, jamo and two-part vowels with marks in any order
        texts.append("".join(rng.choice(bases) + "".join(rng.choice(marks, rng.integers(0, 4))) for _ in range(5)))
    tokenizer = GraphBasicTokenizer(do_lower_case=False, normalize_unicode="nfc")
    wrong = []
    for start in range(0, len(texts), 1000):
        batch = texts[start:start + 1000]
        for text, words in zip(batch, tokenizer.tokenize(tf.constant(batch)).words.to_list()):
            if b"".join(words).decode() != "".join(unicodedata.normalize("NFC", text).split()):
                wrong.append(text)
    assert wrong == []
