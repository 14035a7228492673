"""Examples → padded id sequences, exactly as the original's convert_single_example."""

import dataclasses

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import MultipleChoiceExample


@dataclasses.dataclass
class InputFeatures:
    """One example's model inputs (each [T], or [num_choices, T] for multiple choice) and label.

    Args:
        input_ids: token ids, zero-padded.
        input_mask: 1 for real tokens, 0 for padding.
        segment_ids: 0 for [CLS] A [SEP], 1 for B [SEP], 0 for padding.
        label_id: the label's index in the label list, or the score for regression.
        is_real_example: False for the padding examples that fill a fixed-size final batch.

    Example:
    >>> InputFeatures([2, 7, 3, 0], [1, 1, 1, 0], [0, 0, 0, 0], 1).is_real_example
    True
    """

    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: int | float
    is_real_example: bool = True


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


def padding_features(count, max_seq_length, num_choices=None, is_regression=False):
    """`count` all-zero examples with is_real_example=False (the original's PaddingInputExample), which fill
    the last batch to a fixed size; metrics and predictions leave them out.

    Args:
        count: how many.
        max_seq_length: T.
        num_choices: C for multiple choice ([C, T] inputs), else None.
        is_regression: give a 0.0 label instead of 0.

    Example:
    >>> padding_features(1, 3)
    [InputFeatures(input_ids=[0, 0, 0], input_mask=[0, 0, 0], segment_ids=[0, 0, 0], label_id=0, is_real_example=False)]
    """
    def zeros():
        return [0] * max_seq_length if num_choices is None else [[0] * max_seq_length for _ in range(num_choices)]

    return [InputFeatures(zeros(), zeros(), zeros(), 0.0 if is_regression else 0, is_real_example=False)
            for _ in range(count)]


def _label_id(example, label_list):
    if label_list is None:
        return float(example.label)
    try:
        return list(label_list).index(example.label)
    except ValueError:
        raise ClassificationDataError(f"example {example.guid}: label {example.label!r} is not one of "
                                      f"{', '.join(label_list)}") from None


def _pack(text_a, text_b, max_seq_length, tokenizer):
    tokens_a = tokenizer.tokenize(text_a)
    tokens_b = tokenizer.tokenize(text_b) if text_b else None
    if tokens_b:
        truncate_seq_pair(tokens_a, tokens_b, max_seq_length - 3)
    else:
        tokens_a = tokens_a[:max_seq_length - 2]
        tokens_b = []
    tokens = ["[CLS]", *tokens_a, "[SEP]"]
    segment_ids = [0] * len(tokens)
    if tokens_b:
        tokens += [*tokens_b, "[SEP]"]
        segment_ids += [1] * (len(tokens_b) + 1)
    input_ids = tokenizer.convert_tokens_to_ids(tokens)
    padding = [0] * (max_seq_length - len(input_ids))
    return input_ids + padding, [1] * len(input_ids) + padding, segment_ids + padding
