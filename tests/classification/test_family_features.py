"""Classification features in RoBERTa's layout (<s> A </s></s> B </s>, one token type, a pair truncated to
max_seq_length - 4), in Python and in the export's graph alike, windows of long documents included."""

import os

import numpy as np
import pytest
import tensorflow as tf

from official_bert.classification.examples import InputExample
from official_bert.classification.features import convert_example_windows, convert_single_example
from official_bert.configs import BertConfig
from official_bert.export.text import TextPacker
from official_bert.export.windows import document_windows
from official_bert.text import tokenizer_spec

ROBERTA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "families", "roberta")
TEXTS = [("The Union is strong, and the Nation prospers.", "Is the Union strong?"),
         ("Fellow citizens of the Senate and House of Representatives: the year closes well.", ""),
         ("Short.", "A much longer second text that will have to be truncated before the first one is.")]


@pytest.fixture(scope="module")
def spec():
    return tokenizer_spec.for_checkpoint(ROBERTA, BertConfig.from_json_file(os.path.join(ROBERTA, "config.json")))


def test_pairs_are_packed_as_roberta_in_python_and_in_the_graph(spec):
    tokenizer = spec.python_tokenizer()
    features = [convert_single_example(InputExample(f"x-{i}", a, b or None, "0"), ["0", "1"], 16, tokenizer)
                for i, (a, b) in enumerate(TEXTS)]
    packed = TextPacker(spec.layer(), 16).pack(tf.constant([a for a, _ in TEXTS]), tf.constant([b for _, b in TEXTS]))
    assert packed["input_word_ids"].numpy().tolist() == [
        [i if m else 1 for i, m in zip(f.input_ids, f.input_mask)] for f in features]  # the graph pads with <pad>
    assert packed["input_mask"].numpy().tolist() == [f.input_mask for f in features]
    assert not packed["input_type_ids"].numpy().any() and not any(any(f.segment_ids) for f in features)
    s, pad = tokenizer.vocab["</s>"], tokenizer.vocab["<pad>"]
    first = features[0].input_ids
    assert first[0] == tokenizer.vocab["<s>"] and first.count(s) == 3 and first[first.index(s) + 1] == s
    # 16 positions hold at most 12 tokens of a pair: 4 are special.
    assert all(sum(f.input_mask) <= 16 for f in features) and sum(features[2].input_mask) == 16
    assert pad not in first


def test_document_windows_are_the_python_windows(spec):
    tokenizer = spec.python_tokenizer()
    long_text = " ".join(["The Congress shall make no law respecting an establishment of religion."] * 3)
    python = [w for i, (a, b) in enumerate([(long_text, "Is it a law?"), (long_text, "")])
              for w in convert_example_windows(InputExample(f"x-{i}", a, b or None, "0"), ["0", "1"], 24, tokenizer,
                                               doc_stride=8, example_index=i)]
    windows = document_windows(TextPacker(spec.layer(), 24), 24, 8, tf.constant([long_text, long_text]),
                               tf.constant(["Is it a law?", ""]))
    assert windows.example.numpy().tolist() == [w.example_index for w in python] and len(python) > 4
    got = windows.inputs["input_word_ids"].numpy()
    mask = windows.inputs["input_mask"].numpy()
    assert [row[m == 1].tolist() for row, m in zip(got, mask)] == [
        [i for i, m in zip(w.input_ids, w.input_mask) if m] for w in python]
    assert np.array_equal(mask, np.array([w.input_mask for w in python]))
