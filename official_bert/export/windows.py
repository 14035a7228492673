"""Long documents served from raw text: text_a cut into windows in the graph, each window classified, and each
document's windows pooled, as run_classifier --doc_stride does in Python (`classification.convert_example_windows`,
`classification.windows`)."""

import collections

import tensorflow as tf

from official_bert.text.pack_inputs import truncated_lengths
from official_bert.text.packing import packing_of

DocumentWindows = collections.namedtuple("DocumentWindows", ["inputs", "example", "num_windows"])
DocumentWindows.__doc__ = """The windows of a batch of documents, in document order.

Fields (W windows of B documents):
    inputs: {"input_word_ids", "input_mask", "input_type_ids"}, int32 [W, T].
    example: int64 [W], the document each window belongs to.
    num_windows: int64 [B].
"""


def document_windows(packer, seq_length, doc_stride, text_a, text_b=None):
    """Tokenizes and windows a batch of texts (or pairs) as `classification.convert_example_windows` does.

    Windows of text_a start every doc_stride tokens (at most the window's room) until one reaches the end; a text
    that fits is one window. In a pair, text_b keeps what the original's truncation keeps of it and is repeated
    in every window; a row whose text_b tokenizes to nothing is a single text.

    Args:
        packer: the `TextPacker` of the export (its tokenizer, and its padding: to T or to the longest window).
        seq_length: T, the packer's.
        doc_stride: tokens between window starts, at least 1.
        text_a: string [B].
        text_b: string [B], or None.

    Returns `DocumentWindows`.

    Example:
    >>> import os, tempfile
    >>> from official_bert.export.text import TextPacker
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "q"]))
    >>> packer = TextPacker(TokenizerSpec(vocab).layer(), 6)
    >>> windows = document_windows(packer, 6, 2, tf.constant(["a b c d e", "a"]), tf.constant(["q", ""]))
    >>> windows.inputs["input_word_ids"].numpy().tolist(), windows.example.numpy().tolist()
    ([[2, 4, 5, 3, 9, 3], [2, 6, 7, 3, 9, 3], [2, 8, 3, 9, 3, 0], [2, 4, 3, 0, 0, 0]], [0, 0, 0, 1])
    """
    tokens_a = packer.tokenizer(text_a).merge_dims(1, -1)
    length_a = tokens_a.row_lengths()
    room = tf.fill(tf.shape(length_a), tf.constant(seq_length - 2, tf.int64))
    if text_b is not None:
        pair_budget = seq_length - packing_of(packer.tokenizer).special_count(pair=True)  # RoBERTa's pairs take 4
        tokens_b = packer.tokenizer(text_b).merge_dims(1, -1)
        keep_b = truncated_lengths([length_a, tokens_b.row_lengths()], pair_budget)[1]
        room = tf.where(tokens_b.row_lengths() > 0, pair_budget - keep_b, room)
        tokens_b = tf.ragged.boolean_mask(tokens_b, tf.ragged.range(tokens_b.row_lengths()) < keep_b[:, None])
    # As squad.features.make_doc_spans: a stride past the room would skip tokens, so windows then touch.
    stride = tf.maximum(tf.minimum(tf.cast(doc_stride, tf.int64), room), 1)
    more = tf.maximum(tf.constant(0, tf.int64), (length_a - room + stride - 1) // stride)
    num_windows = 1 + tf.where(room > 0, more, 0)  # an empty text, or one without room, is one window
    example = tf.repeat(tf.range(tf.size(num_windows, out_type=tf.int64)), num_windows)
    start = tf.ragged.range(num_windows).flat_values * tf.gather(stride, example)
    length = tf.maximum(tf.minimum(tf.gather(length_a, example) - start, tf.gather(room, example)), 0)
    first = tf.gather(tokens_a.row_starts(), example) + start
    windows_a = tf.gather(tokens_a.values, tf.ragged.range(first, first + length))
    inputs = packer.pack_tokens(windows_a, None if text_b is None else tf.gather(tokens_b, example))
    return DocumentWindows(inputs, example, num_windows)


def pool_documents(outputs, example, pooling="mean"):
    """The windows' outputs [W, ...] pooled per document [B, ...] (mean or max), as `classification.windows.pool_windows`.

    Args:
        outputs: the model's outputs of the windows.
        example: int64 [W], sorted, every document 0..B-1 present.
        pooling: "mean" or "max".

    Example:
    >>> pool_documents(tf.constant([[1.0, 0.0], [3.0, -2.0], [0.5, 0.5]]), tf.constant([0, 0, 1])).numpy().tolist()
    [[2.0, -1.0], [0.5, 0.5]]
    """
    segment = tf.math.segment_max if pooling == "max" else tf.math.segment_mean
    return segment(outputs, example)
