"""A UTF-8 byte order mark at the start of a file (Windows editors write one) is dropped by every text reader, as the
TSV reader does (#39): a BOM-prefixed file reads exactly as the same file without it."""

import json
import os
import subprocess
import sys

import pytest

from official_bert import BertConfig
from official_bert.features.inputs import read_inputs
from official_bert.io.utf8 import Utf8Decoder
from official_bert.ner.conll import read_conll
from official_bert.pretraining_data.documents import read_documents
from official_bert.squad.examples import read_squad_examples
from official_bert.tokenization import load_vocab

BOM = "\ufeff"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def both(tmp_path, name, text):
    """The paths of `text` written without and with a leading BOM."""
    plain, marked = tmp_path / name, tmp_path / f"bom_{name}"
    plain.write_text(text, encoding="utf-8")
    marked.write_text(BOM + text, encoding="utf-8")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    return str(plain), str(marked)


def test_conll_docstart_after_a_bom_is_the_marker_not_a_word(tmp_path):
    plain, marked = both(tmp_path, "train.txt", "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n"
                                                "Peter NNP B-NP B-PER\n")
    sentences = read_conll(marked)
    assert sentences == read_conll(plain)
    assert [s.words for s in sentences] == [["EU", "rejects"], ["Peter"]]


def test_squad_json_with_a_bom_reads(tmp_path):
    data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "The cat sat.", "qas": [
        {"id": "q1", "question": "Who sat?", "answers": [{"text": "cat", "answer_start": 4}]}]}]}]}
    plain, marked = both(tmp_path, "train.json", json.dumps(data))
    examples = [read_squad_examples(path, is_training=True) for path in (plain, marked)]
    assert [(e.qas_id, e.doc_tokens, e.orig_answer_text) for e in examples[1]] == \
        [(e.qas_id, e.doc_tokens, e.orig_answer_text) for e in examples[0]] == [("q1", ["The", "cat", "sat."], "cat")]


def test_bert_config_with_a_bom_reads(tmp_path):
    text = BertConfig.from_preset("tiny", vocab_size=30).to_json_string()
    plain, marked = both(tmp_path, "bert_config.json", text)
    assert BertConfig.from_json_file(marked) == BertConfig.from_json_file(plain)


@pytest.mark.parametrize("read", [
    lambda path: [(t.text_a, t.text_b) for t in read_inputs(path)],
    lambda path: [d.lines for d in read_documents([path])],
], ids=["extract_features", "pretraining_corpus"])
def test_line_readers_drop_a_leading_bom(tmp_path, read):
    plain, marked = both(tmp_path, "input.txt", "Hello [MASK] world\nSecond line\n")
    assert read(marked) == read(plain)
    assert BOM not in repr(read(marked))


def test_the_decoder_drops_a_bom_on_the_first_line_only():
    decoder = Utf8Decoder()
    assert decoder.decode(b"\xef\xbb\xbfone", "f.txt", 1) == "one"
    assert decoder.decode(b"\xef\xbb\xbftwo", "f.txt", 2) == "\ufefftwo"  # inside a file: text, kept as the original
    assert decoder.warning() is None


@pytest.mark.slow  # its own process (the tools' absl flags cannot share one): about 10 s on 2 cores
def test_fill_mask_input_drops_a_leading_bom(tmp_path):
    plain, marked = both(tmp_path, "input.txt", "Hello [MASK] world\n")
    done = subprocess.run([sys.executable, "-c", "import sys; from official_bert.tools.fill_mask import _read_texts; "
                           "print([[text for _, text in _read_texts(path, [])] for path in sys.argv[1:]])", plain,
                           marked], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.stdout.strip() == "[['Hello [MASK] world'], ['Hello [MASK] world']]", done.stderr[-2000:]


def test_a_vocabulary_with_a_bom_has_its_first_token(tmp_path):
    plain, marked = both(tmp_path, "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n")
    assert load_vocab(marked) == load_vocab(plain)
    assert load_vocab(marked)["[PAD]"] == 0
