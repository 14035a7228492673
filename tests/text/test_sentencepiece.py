"""SentencePiece: training, FullTokenizer's interface in Python, the same ids in the graph."""

import os
import shutil

import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from official_bert.text import sentencepiece_tokenizer as spt
from official_bert import tokenization
from official_bert.text import BertPreprocessor, GraphSentencePieceTokenizer
from tests.tokenization_helpers import english_lines, hostile_text


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    lines = english_lines(3000)
    # Documents of 20 sentences, separated by blank lines, as create_pretraining_data reads them.
    path.write_text("\n".join(line + ("\n" if i % 20 == 19 else "") for i, line in enumerate(lines)) + "\n",
                    encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def model(request, corpus, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("spm") / "sp.model")
    spt.train([corpus], path, vocab_size=400, do_lower_case=request.param)
    return path, request.param


def test_special_tokens_have_the_first_ids_and_never_come_from_text(model):
    tokenizer = spt.SentencePieceTokenizer(model[0])
    assert tokenizer.convert_tokens_to_ids(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]) == [0, 1, 2, 3, 4]
    assert tokenizer.convert_ids_to_tokens([0, 1, 2, 3, 4]) == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("[CLS] x [SEP] [MASK]"))
    assert not set(ids) & {0, 2, 3, 4}


def test_interface_matches_full_tokenizer(model):
    tokenizer = spt.SentencePieceTokenizer(model[0])
    pieces = tokenizer.tokenize("The statement is executed.")
    assert tokenizer.convert_tokens_to_ids(pieces) == tokenizer.sp_model.encode("The statement is executed.")
    assert tokenizer.convert_ids_to_tokens(tokenizer.convert_tokens_to_ids(pieces)) == pieces
    assert len(tokenizer.vocab) == len(tokenizer.inv_vocab) == tokenizer.sp_model.get_piece_size() <= 400
    assert all(tokenizer.inv_vocab[i] == token for token, i in tokenizer.vocab.items())
    assert tokenizer.tokenize(b"The \xffstatement") == tokenizer.tokenize("The statement")
    # An unknown character keeps its text as the piece; its id is [UNK].
    assert tokenizer.convert_tokens_to_ids(tokenizer.tokenize("\U0001d11e")) [-1] == 1


def test_casing_is_the_models(model):
    path, do_lower_case = model
    tokenizer = spt.SentencePieceTokenizer(path, do_lower_case=do_lower_case)
    assert tokenizer.do_lower_case == do_lower_case
    assert (tokenizer.tokenize("STATEMENT") == tokenizer.tokenize("statement")) == do_lower_case
    with pytest.raises(spt.SentencePieceError, match=f"{path}: the model .* but do_lower_case={not do_lower_case}"):
        spt.SentencePieceTokenizer(path, do_lower_case=not do_lower_case)


def test_create_tokenizer_picks_sentencepiece(model):
    path, do_lower_case = model
    tokenizer = tokenization.create_tokenizer(spm_model_file=path, do_lower_case=do_lower_case)
    assert isinstance(tokenizer, spt.SentencePieceTokenizer)


def test_bad_model_files_are_named(tmp_path):
    with pytest.raises(tokenization.VocabError, match="nope.model: SentencePiece model file not found"):
        spt.SentencePieceTokenizer(str(tmp_path / "nope.model"))
    text = tmp_path / "vocab.txt"
    text.write_text("[PAD]\n[UNK]\n")
    with pytest.raises(spt.SentencePieceError, match=f"{text}: not a SentencePiece model"):
        spt.SentencePieceTokenizer(str(text))


def test_training_errors_are_named_and_write_nothing(tmp_path):
    out = tmp_path / "sp.model"
    with pytest.raises(spt.SentencePieceError, match="missing.txt: input file not found"):
        spt.train([str(tmp_path / "missing.txt")], str(out), vocab_size=50)
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n  \n")
    with pytest.raises(spt.SentencePieceError, match=f"{blank}: no text to train on"):
        spt.train([str(blank)], str(out), vocab_size=50)
    assert os.listdir(tmp_path) == ["blank.txt"]


@pytest.fixture(scope="module")
def graph_pair(model):
    path, do_lower_case = model
    layer = GraphSentencePieceTokenizer(path, do_lower_case=do_lower_case, tokenize_with_offsets=True)
    tokenize = tf.function(lambda text: layer(text), input_signature=[tf.TensorSpec([None], tf.string)],
                           autograph=False)
    return spt.SentencePieceTokenizer(path), tokenize


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(hostile_text, st.binary(max_size=10)), min_size=1, max_size=6))
def test_graph_gives_the_python_ids(graph_pair, texts):
    python, tokenize = graph_pair
    data = [t.encode("utf-8") if isinstance(t, str) else t for t in texts]
    ids, starts, ends = tokenize(tf.constant(data, tf.string))
    assert ids.to_list() == [python.convert_tokens_to_ids(python.tokenize(t)) for t in data]
    for d, row_starts, row_ends in zip(data, starts.to_list(), ends.to_list()):
        assert all(0 <= s <= e <= len(d) for s, e in zip(row_starts, row_ends))


def test_character_offsets(model):
    layer = GraphSentencePieceTokenizer(model[0], tokenize_with_offsets=True, offsets_unit="UTF8_CHAR")
    _, starts, ends = layer(tf.constant(["é statement"]))
    assert starts.to_list()[0][0] == 0 and ends.to_list()[0][-1] == len("é statement")
    byte_layer = GraphSentencePieceTokenizer(model[0], tokenize_with_offsets=True)
    _, byte_starts, _ = byte_layer(tf.constant(["é statement"]))
    text = "é statement"
    assert byte_starts.to_list()[0] == [len(text[:c].encode()) for c in starts.to_list()[0]]


@pytest.mark.slow
def test_saved_preprocessor_with_sentencepiece_can_be_moved(model, tmp_path):
    path, do_lower_case = model
    shutil.copy(path, tmp_path / "sp.model")
    layer = GraphSentencePieceTokenizer(str(tmp_path / "sp.model"), do_lower_case=do_lower_case)
    tf.saved_model.save(BertPreprocessor(layer, seq_length=6), str(tmp_path / "saved"))
    os.remove(tmp_path / "sp.model")
    shutil.move(tmp_path / "saved", tmp_path / "moved")
    loaded = tf.saved_model.load(str(tmp_path / "moved"))
    python = spt.SentencePieceTokenizer(path)
    ids = python.convert_tokens_to_ids(python.tokenize("a statement"))
    assert loaded.tokenize(tf.constant(["a statement"])).to_list() == [ids]
    assert loaded(tf.constant(["a statement"]))["input_word_ids"].numpy().tolist() == [
        ([2] + ids[:4] + [3] + [0] * 6)[:6]]
    assert loaded.tokenizer.model_file.asset_path.numpy().decode().startswith(str(tmp_path / "moved"))
