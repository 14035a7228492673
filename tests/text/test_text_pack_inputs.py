"""BertPackInputs: [CLS] A [SEP] B [SEP], padding, and the original's _truncate_seq_pair."""

import keras
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from official_bert.text import BertPackInputs

CLS, SEP, PAD = 101, 102, 0


def pack(segments, seq_length):
    layer = BertPackInputs(seq_length, start_of_sequence_id=CLS, end_of_segment_id=SEP, padding_id=PAD)
    out = layer([tf.ragged.constant(s, dtype=tf.int32) for s in segments])
    return {k: v.numpy().tolist() for k, v in out.items()}


def original_truncate_seq_pair(tokens_a, tokens_b, max_length):
    """google-research/bert's run_classifier._truncate_seq_pair, verbatim."""
    while True:
        total_length = len(tokens_a) + len(tokens_b)
        if total_length <= max_length:
            break
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def test_single_segment_is_wrapped_and_padded():
    out = pack([[[1, 2, 3], []]], seq_length=6)
    assert out["input_word_ids"] == [[CLS, 1, 2, 3, SEP, PAD], [CLS, SEP, PAD, PAD, PAD, PAD]]
    assert out["input_mask"] == [[1, 1, 1, 1, 1, 0], [1, 1, 0, 0, 0, 0]]
    assert out["input_type_ids"] == [[0] * 6, [0] * 6]


def test_single_segment_is_truncated_at_the_end():
    assert pack([[[1, 2, 3, 4, 5]]], seq_length=4)["input_word_ids"] == [[CLS, 1, 2, SEP]]


def test_pair_gets_segment_ids_and_fills_exactly():
    out = pack([[[1, 2]], [[3, 4, 5]]], seq_length=8)
    assert out["input_word_ids"] == [[CLS, 1, 2, SEP, 3, 4, 5, SEP]]
    assert out["input_type_ids"] == [[0, 0, 0, 0, 1, 1, 1, 1]]
    assert out["input_mask"] == [[1] * 8]


def test_pair_truncation_pops_from_the_longer_and_from_b_on_a_tie():
    # Budget 5: A (6 tokens) is popped down to 3; B (2) is kept.
    assert pack([[[1, 2, 3, 4, 5, 6]], [[7, 8]]], seq_length=8)["input_word_ids"] == [
        [CLS, 1, 2, 3, SEP, 7, 8, SEP]]
    # Budget 4, equal lengths 3/3: B is popped first, then A: 2/2.
    assert pack([[[1, 2, 3]], [[4, 5, 6]]], seq_length=7)["input_word_ids"] == [[CLS, 1, 2, SEP, 4, 5, SEP]]
    # Budget 3, equal lengths: A keeps the odd token.
    assert pack([[[1, 2, 3]], [[4, 5, 6]]], seq_length=6)["input_word_ids"] == [[CLS, 1, 2, SEP, 4, SEP]]


def test_word_level_ragged_input_is_flattened():
    words = tf.ragged.constant([[[1, 2], [3]], [[4]]], dtype=tf.int32)
    out = BertPackInputs(5, start_of_sequence_id=CLS, end_of_segment_id=SEP, padding_id=PAD)(words)
    assert out["input_word_ids"].numpy().tolist() == [[CLS, 1, 2, 3, SEP], [CLS, 4, SEP, PAD, PAD]]


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.integers(1, 99), max_size=12), b=st.lists(st.integers(1, 99), max_size=12),
       seq_length=st.integers(3, 16))
@pytest.mark.slow
def test_truncation_matches_the_original(a, b, seq_length):
    expected_a, expected_b = list(a), list(b)
    original_truncate_seq_pair(expected_a, expected_b, seq_length - 3)
    tokens = [CLS] + expected_a + [SEP] + expected_b + [SEP]
    types = [0] * (len(expected_a) + 2) + [1] * (len(expected_b) + 1)
    padding = seq_length - len(tokens)
    out = pack([[a], [b]], seq_length)
    assert out == {"input_word_ids": [tokens + [PAD] * padding], "input_mask": [[1] * len(tokens) + [0] * padding],
                   "input_type_ids": [types + [0] * padding]}


def test_special_ids_from_a_dict_and_config_round_trip():
    layer = BertPackInputs(4, special_tokens_dict={"start_of_sequence_id": 2, "end_of_segment_id": 3,
                                                   "padding_id": 0, "vocab_size": 9})
    restored = BertPackInputs.from_config(layer.get_config())
    assert restored(tf.ragged.constant([[5]]))["input_word_ids"].numpy().tolist() == [[2, 5, 3, 0]]
    assert keras.saving.get_registered_object("official_bert>BertPackInputs") is BertPackInputs


def test_bad_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="needs end_of_segment_id, padding_id"):
        BertPackInputs(8, start_of_sequence_id=CLS)
    with pytest.raises(ValueError, match="seq_length must be an int >= 3, got 2"):
        BertPackInputs(2, start_of_sequence_id=CLS, end_of_segment_id=SEP, padding_id=PAD)
    layer = BertPackInputs(8, start_of_sequence_id=CLS, end_of_segment_id=SEP, padding_id=PAD)
    with pytest.raises(ValueError, match="one or two segments, got 3"):
        layer([tf.ragged.constant([[1]])] * 3)
