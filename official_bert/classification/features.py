"""Examples → padded id sequences, exactly as the original's convert_single_example; or, for long documents,
one padded sequence per window of text_a (`convert_example_windows`)."""

import dataclasses

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import MultipleChoiceExample
from official_bert.squad.features import DocSpan, make_doc_spans
from official_bert.text.packing import packing_of


@dataclasses.dataclass
class InputFeatures:
    """One example's model inputs (each [T], or [num_choices, T] for multiple choice) and label.

    Args:
        input_ids: token ids, zero-padded.
        input_mask: 1 for real tokens, 0 for padding.
        segment_ids: 0 for [CLS] A [SEP], 1 for B [SEP], 0 for padding.
        label_id: the label's index in the label list, the score for regression, or for multi-label a list of
            0.0 / 1.0, one per label (multi-hot).
        is_real_example: False for the padding examples that fill a fixed-size final batch.
        example_index: the example's index in its split (the windows of one document share it), or None.

    Example:
    >>> InputFeatures([2, 7, 3, 0], [1, 1, 1, 0], [0, 0, 0, 0], 1).is_real_example
    True
    """

    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: int | float
    is_real_example: bool = True
    example_index: int | None = None


def truncate_seq_pair(tokens_a, tokens_b, max_length):
    """Truncates a pair in place to at most `max_length` tokens, one token at a time from the longer one.

    As the original: on a tie the second sequence loses a token, so the first keeps the extra one.

    Args:
        tokens_a: list of tokens, shortened in place.
        tokens_b: list of tokens, shortened in place.
        max_length: the total to fit.

    Example:
    >>> a, b = list("abcde"), list("xy")
    >>> truncate_seq_pair(a, b, 4)
    >>> a, b
    (['a', 'b'], ['x', 'y'])
    """
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def convert_single_example(example, label_list, max_seq_length, tokenizer):
    """Tokenizes, truncates and packs one example: [CLS] A [SEP] (B [SEP]), zero-padded to max_seq_length.

    As the original: the example is a pair only when text_b is non-empty and tokenizes to something; a single
    sentence keeps its first max_seq_length - 2 tokens, a pair is truncated by `truncate_seq_pair` to
    max_seq_length - 3. A MultipleChoiceExample packs (context, ending) for each ending: [num_choices, T].

    Args:
        example: an InputExample or MultipleChoiceExample.
        label_list: the task's labels in id order, or None for regression (label_id = the float score).
        max_seq_length: T, at least 3.
        tokenizer: anything with the FullTokenizer interface (`tokenize`, `convert_tokens_to_ids`).

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.classification.examples import InputExample
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "!"]))
    >>> f = convert_single_example(InputExample("dev-0", "Hello world", "world!", "1"), ["0", "1"], 9,
    ...                            FullTokenizer(vocab))
    >>> f.input_ids, f.input_mask, f.segment_ids, f.label_id
    ([2, 4, 5, 3, 5, 6, 3, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 0, 0], 1)
    """
    if max_seq_length < 3:
        raise ClassificationDataError(f"--max_seq_length={max_seq_length}: expected at least 3 ([CLS] and two [SEP])")
    label_id = _label_id(example, label_list)
    if isinstance(example, MultipleChoiceExample):
        choices = [_pack(example.context, ending, max_seq_length, tokenizer) for ending in example.endings]
        return InputFeatures(*(list(column) for column in zip(*choices)), label_id=label_id)
    return InputFeatures(*_pack(example.text_a, example.text_b, max_seq_length, tokenizer), label_id=label_id)


def convert_example_windows(example, label_list, max_seq_length, tokenizer, doc_stride, example_index=None):
    """An example as one InputFeatures per window of its text_a, for documents longer than max_seq_length.

    The windows are SQuAD's (`squad.features.make_doc_spans`): `room` tokens of text_a each, starting every
    doc_stride tokens (at most `room`) until one reaches the end. A single text has room = max_seq_length - 2.
    In a pair, text_b (a question or hypothesis) is kept in every window, truncated as `truncate_seq_pair`
    would truncate it against the whole text_a, and text_a gets the rest: room = max_seq_length - 3 - its
    length. So a text that fits is one window equal to `convert_single_example`'s features, and a document's
    first window is always what truncation keeps; later windows hold the rest of text_a. Every window carries
    the example's label and `example_index`. doc_stride=0 gives `convert_single_example`'s one feature.

    Args:
        example: an InputExample (multiple-choice examples are not windowed).
        label_list: the task's labels in id order, or None for regression.
        max_seq_length: T.
        tokenizer: anything with the FullTokenizer interface.
        doc_stride: tokens between window starts; 0 for no windows (truncation).
        example_index: set on every window (see InputFeatures).

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.classification.examples import InputExample
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "q"]))
    >>> windows = convert_example_windows(InputExample("dev-0", "a b c d e", None, "1"), ["0", "1"], 5,
    ...                                   FullTokenizer(vocab), doc_stride=2, example_index=7)
    >>> [(w.input_ids, w.example_index) for w in windows]
    [([2, 4, 5, 6, 3], 7), ([2, 6, 7, 8, 3], 7)]
    >>> [w.input_ids for w in convert_example_windows(InputExample("dev-1", "a b c d e", "q", "0"), ["0", "1"], 6,
    ...                                                 FullTokenizer(vocab), doc_stride=2)]
    [[2, 4, 5, 3, 9, 3], [2, 6, 7, 3, 9, 3], [2, 8, 3, 9, 3, 0]]
    """
    if not doc_stride:
        features = convert_single_example(example, label_list, max_seq_length, tokenizer)
        features.example_index = example_index
        return [features]
    if isinstance(example, MultipleChoiceExample):
        raise ClassificationDataError(f"--doc_stride={doc_stride}: multiple-choice examples ({example.guid}) are "
                                      "not split into windows; leave --doc_stride unset")
    if max_seq_length < 3:
        raise ClassificationDataError(f"--max_seq_length={max_seq_length}: expected at least 3 ([CLS] and two [SEP])")
    label_id = _label_id(example, label_list)
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else []
    if tokens_b:
        budget = max_seq_length - packing_of(tokenizer).special_count(pair=True)
        tokens_b = tokens_b[:min(len(tokens_b), max(budget - len(tokens_a), budget // 2))]
        room = budget - len(tokens_b)
    else:
        room = max_seq_length - 2
    # An empty text (or no room at all) is still one window.
    spans = (make_doc_spans(len(tokens_a), room, doc_stride) if room > 0 else []) or [DocSpan(0, 0)]
    return [InputFeatures(*_pack_tokens(tokens_a[span.start:span.start + span.length], tokens_b, max_seq_length,
                                        tokenizer), label_id=label_id, example_index=example_index)
            for span in spans]


def convert_examples_to_features(examples, label_list, max_seq_length, tokenizer):
    """`convert_single_example` over a list of examples.

    Args:
        examples: InputExamples or MultipleChoiceExamples.
        label_list: the task's labels in id order, or None for regression.
        max_seq_length: T.
        tokenizer: anything with the FullTokenizer interface.

    Example:
    >>> convert_examples_to_features([], ["0", "1"], 8, tokenizer=None)
    []
    """
    return [convert_single_example(example, label_list, max_seq_length, tokenizer) for example in examples]


def padding_features(count, max_seq_length, num_choices=None, is_regression=False, multi_hot=0):
    """`count` all-zero examples with is_real_example=False (the original's PaddingInputExample), which fill
    the last batch to a fixed size; metrics and predictions leave them out.

    Args:
        count: how many.
        max_seq_length: T.
        num_choices: C for multiple choice ([C, T] inputs), else None.
        is_regression: give a 0.0 label instead of 0.
        multi_hot: give a multi-hot label of this many zeros (multi-label), if not 0.

    Example:
    >>> padding_features(1, 3)  # doctest: +NORMALIZE_WHITESPACE
    [InputFeatures(input_ids=[0, 0, 0], input_mask=[0, 0, 0], segment_ids=[0, 0, 0], label_id=0,
                   is_real_example=False, example_index=None)]
    """
    def zeros():
        return [0] * max_seq_length if num_choices is None else [[0] * max_seq_length for _ in range(num_choices)]

    def label():
        return [0.0] * multi_hot if multi_hot else 0.0 if is_regression else 0

    return [InputFeatures(zeros(), zeros(), zeros(), label(), is_real_example=False) for _ in range(count)]


def _label_id(example, label_list):
    if label_list is None:
        return float(example.label)
    if isinstance(example.label, tuple):  # multi-label: the set of labels as a multi-hot vector
        unknown = [label for label in example.label if label not in label_list]
        if unknown:
            raise ClassificationDataError(f"example {example.guid}: label {unknown[0]!r} is not one of "
                                          f"{', '.join(label_list)}")
        return [float(label in example.label) for label in label_list]
    try:
        return list(label_list).index(example.label)
    except ValueError:
        raise ClassificationDataError(f"example {example.guid}: label {example.label!r} is not one of "
                                      f"{', '.join(label_list)}") from None


def _pack(text_a, text_b, max_seq_length, tokenizer):
    tokens_a = tokenizer.tokenize(text_a)
    tokens_b = tokenizer.tokenize(text_b) if text_b else None
    if tokens_b:
        specials = packing_of(tokenizer).special_count(pair=True)
        if max_seq_length < specials:
            raise ClassificationDataError(f"--max_seq_length={max_seq_length}: a pair takes at least {specials} "
                                          "special tokens in this tokenizer's layout")
        truncate_seq_pair(tokens_a, tokens_b, max_seq_length - specials)
    else:
        tokens_a = tokens_a[:max_seq_length - 2]
        tokens_b = []
    return _pack_tokens(tokens_a, tokens_b, max_seq_length, tokenizer)


def _pack_tokens(tokens_a, tokens_b, max_seq_length, tokenizer):
    """[CLS] A [SEP] (B [SEP]) of tokens that fit (in the tokenizer's layout: RoBERTa's <s> A </s></s> B </s>), as
    ids, mask and segment ids, zero-padded."""
    tokens, segment_ids = packing_of(tokenizer).pack(tokens_a, tokens_b)
    input_ids = tokenizer.convert_tokens_to_ids(tokens)
    padding = [0] * (max_seq_length - len(input_ids))
    return input_ids + padding, [1] * len(input_ids) + padding, segment_ids + padding
