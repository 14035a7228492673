"""Feature conversion against hand-built ids: the original convert_single_example's packing, truncation, padding."""

import pytest
from hypothesis import given, strategies as st

from official_bert.classification import (ClassificationDataError, InputExample, MultipleChoiceExample,
                                          convert_examples_to_features, convert_single_example, padding_features,
                                          truncate_seq_pair)
from official_bert.tokenization import FullTokenizer
from tests.tokenization_helpers import write_vocab

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "dog", "ran", "a", "##s",
         ".", "un", "##happy"]
PAD, UNK, CLS, SEP = 0, 1, 2, 3
THE, CAT, SAT, ON, MAT, DOG, RAN, A, S, DOT, UN, HAPPY = range(5, 17)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return FullTokenizer(write_vocab(tmp_path_factory.mktemp("vocab"), VOCAB), do_lower_case=True)


def convert(tokenizer, text_a, text_b=None, label="1", max_seq_length=10, label_list=("0", "1")):
    f = convert_single_example(InputExample("dev-0", text_a, text_b, label), label_list, max_seq_length, tokenizer)
    return f.input_ids, f.input_mask, f.segment_ids, f.label_id


def test_single_sentence(tokenizer):
    assert convert(tokenizer, "The cats sat.", max_seq_length=9) == (
        [CLS, THE, CAT, S, SAT, DOT, SEP, PAD, PAD], [1, 1, 1, 1, 1, 1, 1, 0, 0], [0] * 9, 1)


def test_pair_segments(tokenizer):
    assert convert(tokenizer, "the cat", "A dog ran.", label="0") == (
        [CLS, THE, CAT, SEP, A, DOG, RAN, DOT, SEP, PAD], [1] * 9 + [0], [0, 0, 0, 0, 1, 1, 1, 1, 1, 0], 0)


def test_unknown_words_and_word_pieces(tokenizer):
    assert convert(tokenizer, "Unhappy zebra", max_seq_length=6)[0] == [CLS, UN, HAPPY, UNK, SEP, PAD]


def test_single_sentence_keeps_its_first_t_minus_2_tokens(tokenizer):
    assert convert(tokenizer, "the cat sat on the mat", max_seq_length=5)[:3] == (
        [CLS, THE, CAT, SAT, SEP], [1] * 5, [0] * 5)


def test_pair_truncation_removes_from_the_longer_then_from_b_on_ties(tokenizer):
    # 6 + 2 tokens into 7 - 3 = 4: "the cat sat on the mat" loses 4 and ties with "a dog".
    assert convert(tokenizer, "the cat sat on the mat", "a dog", max_seq_length=7)[0] == [
        CLS, THE, CAT, SEP, A, DOG, SEP]
    # 3 + 3 into 5: the tie costs b a token, so a keeps the odd one.
    assert convert(tokenizer, "the cat sat", "a dog ran", max_seq_length=8)[0] == [
        CLS, THE, CAT, SAT, SEP, A, DOG, SEP]


def test_an_empty_second_text_makes_a_single_sentence(tokenizer):
    # The original tests text_b and then its tokens: "" and "  " both give [CLS] A [SEP] with no second [SEP].
    # It keeps max_seq_length - 2 tokens of A, not the pair budget of max_seq_length - 3.
    for text_b in ("", "   ", "\u200b"):
        assert convert(tokenizer, "the cat sat on the mat", text_b, max_seq_length=6)[:3] == (
            [CLS, THE, CAT, SAT, ON, SEP], [1] * 6, [0] * 6)


def test_regression_label_is_the_score(tokenizer):
    assert convert(tokenizer, "a cat", "a dog", label=3.8, label_list=None)[3] == 3.8


def test_label_ids_follow_the_label_list(tokenizer):
    labels = ("contradiction", "entailment", "neutral")
    assert [convert(tokenizer, "a", "b", label=label, label_list=labels)[3] for label in labels[::-1]] == [2, 1, 0]
    with pytest.raises(ClassificationDataError, match=r"example dev-0: label 'maybe' is not one of contradiction, "
                                                      r"entailment, neutral"):
        convert(tokenizer, "a", "b", label="maybe", label_list=labels)


def test_multiple_choice_gives_one_row_per_ending(tokenizer):
    example = MultipleChoiceExample("dev-0", "the cat sat", ("the cat ran", "a dog"), "1")
    [f] = convert_examples_to_features([example], ("0", "1"), 7, tokenizer)
    # Each (context, ending) pair is truncated on its own: 3 + 3 and 3 + 2 tokens into 4.
    assert f.input_ids == [[CLS, THE, CAT, SEP, THE, CAT, SEP], [CLS, THE, CAT, SEP, A, DOG, SEP]]
    assert f.segment_ids == [[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1]]
    assert f.input_mask == [[1] * 7, [1] * 7]
    assert f.label_id == 1 and f.is_real_example


def test_padding_features():
    [f] = padding_features(1, 2, num_choices=3, is_regression=True)
    assert (f.input_ids, f.input_mask, f.segment_ids, f.label_id, f.is_real_example) == (
        [[0, 0]] * 3, [[0, 0]] * 3, [[0, 0]] * 3, 0.0, False)


def test_max_seq_length_below_three_is_rejected(tokenizer):
    with pytest.raises(ClassificationDataError, match=r"--max_seq_length=2: expected at least 3"):
        convert(tokenizer, "a", "b", max_seq_length=2)


class WhitespaceTokenizer:
    """Only the FullTokenizer interface (what a SentencePiece tokenizer also has)."""

    vocab = {"[CLS]": 5, "[SEP]": 6, "▁hello": 7, "▁world": 8}

    def tokenize(self, text):
        return ["▁" + word for word in text.split()]

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[t] for t in tokens]


def test_any_tokenizer_with_the_interface():
    f = convert_single_example(InputExample("x", "hello", "world", "0"), ["0"], 6, WhitespaceTokenizer())
    assert f.input_ids == [5, 7, 6, 8, 6, 0]


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 60))
def test_truncation_matches_the_closed_form(len_a, len_b, max_length):
    a, b = list(range(len_a)), list(range(100, 100 + len_b))
    truncate_seq_pair(a, b, max_length)
    if len_a + len_b <= max_length:
        expected_a, expected_b = len_a, len_b
    else:  # the longer side shrinks until the two are level, then b first: a keeps ceil(M / 2)
        expected_a = min(len_a, max(-(-max_length // 2), max_length - len_b))
        expected_b = min(len_b, max(max_length // 2, max_length - len_a))
    assert (a, b) == (list(range(expected_a)), list(range(100, 100 + expected_b)))
