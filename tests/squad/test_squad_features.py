"""convert_examples_to_features against the original run_squad.py's rules, checked by hand with the real vocab."""

import os

import pytest

from official_bert.squad import SquadError, check_lengths, convert_examples_to_features, read_squad_examples
from official_bert.squad.features import DocSpan, is_max_context, make_doc_spans
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "squad", "train-v2.0.json")
P1_TOKENS = ["cafe", "zoe", "’", "s", "bakery", "(", "1895", "-", "1943", ")", "opened", "in", "montreal", ".",
             "its", "founder", ",", "zoe", "dupont", ",", "was", "japanese", "."]
NUMBERS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
           "seventeen eighteen nineteen twenty").split()


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(real_vocab_file(), do_lower_case=True)


@pytest.fixture(scope="module")
def train_examples():
    return {e.qas_id: e for e in read_squad_examples(FIXTURE, is_training=True, version_2_with_negative=True)}


def _features(examples, tokenizer, max_seq_length=64, doc_stride=16, max_query_length=16, is_training=True):
    return list(convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                                             is_training))


def test_one_window_layout_ids_and_word_map(tokenizer, train_examples):
    [feature] = _features([train_examples["p1-year"]], tokenizer)
    query = ["when", "did", "the", "bakery", "open", "?"]
    assert feature.tokens == ["[CLS]", *query, "[SEP]", *P1_TOKENS, "[SEP]"]
    assert feature.unique_id == 1000000000 and feature.example_index == 0 and feature.doc_span_index == 0
    n = len(feature.tokens)  # 32
    assert feature.input_ids[:n] == tokenizer.convert_tokens_to_ids(feature.tokens)
    assert feature.input_ids[n:] == [0] * (64 - n)
    assert feature.input_mask == [1] * n + [0] * (64 - n)
    assert feature.segment_ids == [0] * 8 + [1] * (n - 8) + [0] * (64 - n)
    # Document token at position 8 + i → its whitespace word (see P1_WORDS in test_squad_examples).
    words_of_tokens = [0, 1, 1, 1, 2, 3, 3, 3, 3, 3, 4, 5, 5, 5, 6, 7, 7, 8, 9, 9, 10, 11, 11]
    assert feature.token_to_orig_map == {8 + i: word for i, word in enumerate(words_of_tokens)}
    assert feature.token_is_max_context == {8 + i: True for i in range(len(P1_TOKENS))}
    # "1895" is the middle of the word "(1895-1943)": the span is narrowed to its own WordPiece.
    assert (feature.start_position, feature.end_position) == (14, 14)


@pytest.mark.parametrize("qas_id, answer_tokens", [
    ("p1-city", ["montreal"]),  # narrowed from the word "in Montréal." (U+00A0 inside)
    ("p1-name", ["zoe", "’", "s", "bakery"]),  # across U+202F
    ("p1-founder", ["zoe", "dupont"]),  # the "," of "Dupont," dropped
    ("p1-nationality", ["japanese", "."]),  # "Japan" is part of the WordPiece "japanese": the whole word stays
])
def test_answer_span_is_improved_to_the_tokenized_answer(tokenizer, train_examples, qas_id, answer_tokens):
    [feature] = _features([train_examples[qas_id]], tokenizer)
    assert feature.tokens[feature.start_position:feature.end_position + 1] == answer_tokens


def test_sliding_windows_max_context_and_positions(tokenizer, train_examples):
    # 20 one-token words, a 5-token query, max_seq_length 16: 8 tokens per window, windows 3 apart.
    features = _features([train_examples["p2-after-six"]], tokenizer, max_seq_length=16, doc_stride=3,
                         max_query_length=8)
    query = ["[CLS]", "which", "numbers", "follow", "six", "?", "[SEP]"]
    starts = [0, 3, 6, 9, 12]
    assert [f.tokens for f in features] == [query + NUMBERS[s:s + 8] + ["[SEP]"] for s in starts]
    assert [f.unique_id for f in features] == list(range(1000000000, 1000000005))
    assert [f.doc_span_index for f in features] == [0, 1, 2, 3, 4]
    assert all(f.input_mask == [1] * 16 for f in features)
    # By hand, min(left, right) context: window 0 keeps words 0-5 (word 5: 2 vs 2, the earlier window wins),
    # window 1 words 6-8, window 2 words 9-11, window 3 words 12-14, window 4 words 15-19.
    owners = [0] * 6 + [1] * 3 + [2] * 3 + [3] * 3 + [4] * 5
    for window, (feature, start) in enumerate(zip(features, starts)):
        assert feature.token_to_orig_map == {7 + i: start + i for i in range(8)}
        assert feature.token_is_max_context == {7 + i: owners[start + i] == window for i in range(8)}
    # The answer "seven eight nine" (words 6-8) lies whole in windows 1 and 2 only; elsewhere it points at [CLS].
    assert [(f.start_position, f.end_position) for f in features] == [(0, 0), (10, 12), (7, 9), (0, 0), (0, 0)]
    assert features[1].tokens[10:13] == ["seven", "eight", "nine"]


def test_impossible_questions_point_at_cls_in_every_window(tokenizer, train_examples):
    features = _features([train_examples["p2-impossible"]], tokenizer, max_seq_length=16, doc_stride=3,
                         max_query_length=8)
    assert len(features) == 5
    assert all((f.start_position, f.end_position, f.is_impossible) == (0, 0, True) for f in features)


def test_query_is_truncated_and_the_window_grows(tokenizer, train_examples):
    features = _features([train_examples["p2-after-six"]], tokenizer, max_seq_length=16, doc_stride=3,
                         max_query_length=4)
    # 4 query tokens leave 16 - 4 - 3 = 9 per window: windows at 0, 3, 6, 9 and the last, 12-19, of 8.
    assert features[0].tokens == ["[CLS]", "which", "numbers", "follow", "six", "[SEP]", *NUMBERS[:9], "[SEP]"]
    assert [len(f.tokens) for f in features] == [16, 16, 16, 16, 15]
    assert features[4].input_mask == [1] * 15 + [0]


def test_prediction_features_have_no_positions_and_ids_continue_across_examples(tokenizer, train_examples):
    examples = [train_examples["p1-year"], train_examples["p2-after-six"]]
    features = _features(examples, tokenizer, max_seq_length=16, doc_stride=3, max_query_length=8,
                         is_training=False)
    # 6 query tokens leave 7 per window: the 23 paragraph tokens take windows at 0, 3, ..., 15 and 18-22.
    assert [f.example_index for f in features] == [0] * 7 + [1] * 5
    assert [f.unique_id for f in features] == list(range(1000000000, 1000000012))
    assert all(f.start_position is None and f.end_position is None for f in features)


def test_make_doc_spans_and_tie_breaks():
    assert make_doc_spans(3, max_tokens_for_doc=8, doc_stride=3) == [DocSpan(0, 3)]
    assert make_doc_spans(0, max_tokens_for_doc=8, doc_stride=3) == []
    # The last window is shorter: 0-7, 3-10, 6-13, 9-16, 12-17.
    assert make_doc_spans(18, 8, 3)[-2:] == [DocSpan(9, 8), DocSpan(12, 6)]
    # Equal min(left, right) context: the longer window wins (+0.01 per token), even when it comes later.
    spans = [DocSpan(2, 4), DocSpan(0, 5)]  # position 3: min(1, 2) = 1 in both
    assert [is_max_context(spans, i, 3) for i in range(2)] == [False, True]


@pytest.mark.parametrize("lengths, message", [
    ((20, 3, 17), r"--max_seq_length=20 must be greater than --max_query_length=17 \+ 3"),
    ((20, 3, 20), r"--max_seq_length=20 must be greater than --max_query_length=20 \+ 3"),
    ((20, 0, 4), r"--doc_stride=0: expected a positive integer"),
])
def test_impossible_lengths_are_clear_errors(lengths, message):
    with pytest.raises(SquadError, match=message):
        check_lengths(*lengths)


def test_lengths_are_checked_before_any_feature(tokenizer, train_examples):
    with pytest.raises(SquadError, match="--max_seq_length"):
        convert_examples_to_features([train_examples["p1-year"]], tokenizer, 16, 8, 16, is_training=True)


def test_a_stride_longer_than_the_window_gives_the_originals_touching_windows():
    # The original: start_offset += min(length, doc_stride), so windows of 4 with stride 6 start 0, 4, 8.
    assert [(span.start, span.length) for span in make_doc_spans(10, max_tokens_for_doc=4, doc_stride=6)] == [
        (0, 4), (4, 4), (8, 2)]
    check_lengths(128, 128, 64)  # the original accepts 128/128/64


def test_vocabulary_without_cls_is_a_clear_error(tmp_path, train_examples):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[SEP]\n")
    with pytest.raises(SquadError, match=r"the vocabulary has no \[CLS\] token"):
        convert_examples_to_features([train_examples["p1-year"]], FullTokenizer(str(vocab)), 64, 16, 16, True)
