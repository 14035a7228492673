"""NER served from raw text: text → entities (type, text, character offsets) and per-word tags, in the graph.

The graph does what run_ner.py does in Python, so that a SavedModel tags as the trained model does there: the
text is split into words and WordPieces by the in-graph `BertTokenizer` (a word is what BasicTokenizer makes:
whitespace- and punctuation-separated, each CJK character alone), the pieces are cut into windows
`[CLS] pieces [SEP]`, `doc_stride` pieces apart, the model scores every window, and each word takes the label of
its first piece in the window where that piece has the most context (SQuAD's rule, `export.squad`). Entities
are the chunks of the words' IOB2 labels by conlleval's rules (`ner.tags`): a chunk starts at B-X, or at I-X
after O or after another type, and runs over the I-X words after it.

A whole input is one stream, as a document is with run_ner's --document_context: its sentences give each
other context. Offsets count characters (code points, Python `str` indices) of the input: `text[start:end]` is
the entity's text.
"""

import collections

import tensorflow as tf

from official_bert.export.saved_model import ServingSpec, export_saved_model
from official_bert.export.squad import _max_context_window
from official_bert.ner.features import check_window

NerWindows = collections.namedtuple("NerWindows", [
    "inputs", "word_example", "word_window", "word_position", "word_starts", "word_ends"])
NerWindows.__doc__ = """The windows of a batch of texts, and where each word is predicted.

Fields (W windows, N words in all, T = seq_length):
    inputs: {"input_word_ids", "input_mask", "input_type_ids"}, int32 [W, T].
    word_example: int64 [N], the text each word is in.
    word_window: int64 [N], the window the word is predicted in ...
    word_position: int64 [N], ... and the position of its first piece there.
    word_starts, word_ends: int64 [N], the word's character span in its text.
"""


def ner_windows(tokenizer, text, seq_length, doc_stride):
    """Tokenizes and windows a batch of texts as `ner.convert_sentences_to_features` does a long sentence.

    Args:
        tokenizer: a `BertTokenizer` with `tokenize_with_offsets=True` (see `ner_tokenizer_layer`).
        text: string [B].
        seq_length: --max_seq_length.
        doc_stride: --doc_stride.

    Returns `NerWindows`.

    Example (windows of 3 pieces, 2 apart, over 5 one-piece words: "c" has most context in the first window,
    "d" in the second):
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e"]))
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> windows = ner_windows(ner_tokenizer_layer(TokenizerSpec(vocab)), tf.constant(["a b c d e"]), 5, 2)
    >>> windows.inputs["input_word_ids"].numpy().tolist()
    [[2, 4, 5, 6, 3], [2, 6, 7, 8, 3]]
    >>> windows.word_window.numpy().tolist(), windows.word_position.numpy().tolist()
    ([0, 0, 0, 1, 1], [1, 2, 3, 2, 3])
    """
    special = tokenizer.get_special_tokens_dict()
    ids, starts, ends = tokenizer(text)
    pieces = ids.merge_dims(1, 2)
    num_tokens = pieces.row_lengths()
    num_texts = tf.size(num_tokens, out_type=tf.int64)
    room = tf.fill([num_texts], tf.constant(seq_length - 2, tf.int64))
    # Windows start every doc_stride pieces until one reaches the end (an empty text still gets one).
    num_windows = 1 + tf.maximum(tf.constant(0, tf.int64), (num_tokens - room + doc_stride - 1) // doc_stride)
    example = tf.repeat(tf.range(num_texts), num_windows)
    start = tf.ragged.range(num_windows).flat_values * doc_stride
    length = tf.minimum(tf.gather(num_tokens, example) - start, tf.gather(room, example))
    first = tf.gather(pieces.row_starts(), example) + start
    window_pieces = tf.gather(pieces.values, tf.ragged.range(first, first + length))

    def column(token):
        return tf.fill([tf.size(example), 1], tf.constant(token, tf.int32))

    word_ids = tf.concat([column(special["start_of_sequence_id"]), window_pieces,
                          column(special["end_of_segment_id"])], axis=1)
    position = tf.range(seq_length, dtype=tf.int64)[None, :]
    inputs = {"input_word_ids": word_ids.to_tensor(0, shape=[None, seq_length]),
              "input_mask": tf.cast(position < (length + 2)[:, None], tf.int32),
              "input_type_ids": tf.zeros_like(word_ids.to_tensor(0, shape=[None, seq_length]))}

    # Each word's first piece, its max-context window (an index among its text's windows) and position there.
    words = ids.values  # [N, (pieces)]
    word_example = ids.value_rowids()
    first_piece = words.row_starts()
    stride = tf.fill([num_texts], tf.constant(doc_stride, tf.int64))
    best = tf.gather(_max_context_window(pieces, num_tokens, room, num_windows, stride), first_piece)
    piece_in_text = first_piece - tf.gather(pieces.row_starts(), word_example)
    window_offset = tf.cumsum(num_windows, exclusive=True)
    return NerWindows(inputs, word_example, tf.gather(window_offset, word_example) + best,
                      piece_in_text - best * doc_stride + 1, tf.gather(starts.flat_values, first_piece),
                      tf.gather(ends.flat_values, words.row_limits() - 1))


def tag_words(windows, text, logits, labels):
    """Each word's tag and the entities, from the windows' logits.

    Args:
        windows: the `NerWindows` of the batch.
        text: string [B], the texts.
        logits: float [W, T, num_labels], the model's logits for the windows.
        labels: the model's labels (`ner.LabelMap.labels`: O, then B- and I- of each type).

    Returns, padded per text ("" for strings, -1 for offsets): "word", "tag", "word_start", "word_end" [B, words]
    and "entity_type", "entity_text", "entity_start", "entity_end" [B, entities].

    Example (three one-piece words; logits favouring B-PER, I-PER, B-PER):
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "zoe", "dupont", "max"]))
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> text = tf.constant(["Zoë Dupont, Max"])
    >>> windows = ner_windows(ner_tokenizer_layer(TokenizerSpec(vocab)), text, 8, 2)
    >>> logits = tf.one_hot([[0, 1, 2, 0, 1, 0, 0, 0]], 3)
    >>> outputs = tag_words(windows, text, logits, ["O", "B-PER", "I-PER"])
    >>> outputs["tag"].numpy().tolist()
    [[b'B-PER', b'I-PER', b'O', b'B-PER']]
    >>> outputs["entity_text"].numpy().tolist(), outputs["entity_start"].numpy().tolist()
    ([[b'Zo\\xc3\\xab Dupont', b'Max']], [[0, 12]])
    """
    label_id = tf.argmax(tf.gather_nd(logits, tf.stack([windows.word_window, windows.word_position], axis=1)),
                         axis=-1)
    example = windows.word_example
    num_texts = tf.size(text, out_type=tf.int64)
    word_text = tf.strings.substr(tf.gather(text, example), windows.word_starts,
                                  windows.word_ends - windows.word_starts, unit="UTF8_CHAR")

    # IOB2 ids: 0 is O, 2k + 1 is B- and 2k + 2 is I- of type k.
    entity_type = tf.where(label_id > 0, (label_id - 1) // 2, -1)
    is_begin = (label_id > 0) & ((label_id - 1) % 2 == 0)
    first_word = tf.concat([[True], example[1:] != example[:-1]], 0)[:tf.size(example)]
    previous_type = tf.where(first_word, tf.constant(-1, tf.int64), tf.roll(entity_type, 1, 0))
    starts = (label_id > 0) & (is_begin | (previous_type != entity_type))
    entity = tf.cumsum(tf.cast(starts, tf.int64)) - 1
    num_entities = tf.reduce_sum(tf.cast(starts, tf.int64))
    inside = label_id > 0
    entity_end = tf.math.unsorted_segment_max(tf.boolean_mask(windows.word_ends, inside),
                                              tf.boolean_mask(entity, inside), num_entities)
    entity_start = tf.boolean_mask(windows.word_starts, starts)
    entity_example = tf.boolean_mask(example, starts)
    entity_text = tf.strings.substr(tf.gather(text, entity_example), entity_start, entity_end - entity_start,
                                    unit="UTF8_CHAR")
    types = tf.constant([label[2:] for label in labels[1::2]])

    def per_text(values, rows, pad):
        return tf.RaggedTensor.from_value_rowids(values, rows, nrows=num_texts).to_tensor(pad)

    return {"word": per_text(word_text, example, ""),
            "tag": per_text(tf.gather(tf.constant(list(labels)), label_id), example, ""),
            "word_start": per_text(windows.word_starts, example, -1),
            "word_end": per_text(windows.word_ends, example, -1),
            "entity_type": per_text(tf.gather(types, tf.boolean_mask(entity_type, starts)), entity_example, ""),
            "entity_text": per_text(entity_text, entity_example, ""),
            "entity_start": per_text(entity_start, entity_example, -1),
            "entity_end": per_text(entity_end, entity_example, -1)}


def ner_serving_spec(tokenizer, seq_length, labels, doc_stride=64):
    """The `ServingSpec` of a `BertTokenClassifier`: serving_default takes `text` strings [batch] and returns
    `tag_words`' outputs; the tensor signatures return each position's `logits` and `label`.

    Args:
        tokenizer: the model's `TokenizerSpec` (a WordPiece vocabulary).
        seq_length: --max_seq_length.
        labels: the model's labels, in id order (`ner.LabelMap.labels`).
        doc_stride: --doc_stride, between windows of a long text.

    Example:
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n")
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> list(ner_serving_spec(TokenizerSpec(vocab), 128, ["O", "B-PER", "I-PER"]).text_inputs)
    ['text']
    """
    check_window(seq_length, doc_stride)
    tokenizer = ner_tokenizer_layer(tokenizer)
    label_strings = tf.constant(list(labels))

    def serve_text(call_model, text):
        windows = ner_windows(tokenizer, text, seq_length, doc_stride)
        return tag_words(windows, text, call_model(windows.inputs), labels)

    def postprocess(logits):
        return {"logits": logits, "label": tf.gather(label_strings, tf.argmax(logits, axis=-1))}

    return ServingSpec({"text": tf.TensorSpec([None], tf.string)}, serve_text, postprocess, (seq_length,),
                       (tokenizer,))


def ner_tokenizer_layer(tokenizer):
    """The in-graph tokenizer NER serving needs from the `TokenizerSpec`: its ids, with character offsets into
    the text."""
    return tokenizer.layer(with_offsets=True, offsets_unit="UTF8_CHAR")


def export_ner(export_dir, model, tokenizer, seq_length, labels, doc_stride=64):
    """Exports a trained `BertTokenClassifier` as the next version in export_dir; returns its path.

    Args:
        export_dir: the directory of versions (TF Serving's --model_base_path).
        model: the model.
        tokenizer: the model's `TokenizerSpec` (a WordPiece vocabulary).
        seq_length: --max_seq_length.
        labels: the model's tags, in id order.
        doc_stride: --doc_stride, between windows of a long text.
    """
    return export_saved_model(export_dir, model, ner_serving_spec(tokenizer, seq_length, labels, doc_stride))
