"""A Model-Garden-style preprocessing model: `tokenize` and `bert_pack_inputs`, savable as a SavedModel."""

import tensorflow as tf

from official_bert.text.pack_inputs import BertPackInputs


class BertPreprocessor(tf.Module):
    """Raw text → encoder inputs, with the two steps exposed as Model Garden's preprocessing SavedModels do.

    `tokenize(strings [batch])` gives ragged ids; `bert_pack_inputs(segments, seq_length)` packs a list of
    one or two tokenized segments (`seq_length` a Python int or an int32 scalar); calling the module on a
    batch of strings does both with the default `seq_length`. Save it with `tf.saved_model.save`: the
    vocabulary or SentencePiece model travels as an asset.

    Args:
        tokenizer: a `BertTokenizer` or `GraphSentencePieceTokenizer` layer without offsets.
        seq_length: the default packed length.

    Example:
    >>> import os, tempfile
    >>> from official_bert.text import BertTokenizer
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hi", "there"]))
    >>> preprocessor = BertPreprocessor(BertTokenizer(path), seq_length=6)
    >>> preprocessor(tf.constant(["Hi there"]))["input_word_ids"].numpy().tolist()
    [[2, 5, 6, 3, 0, 0]]
    >>> a, b = preprocessor.tokenize(tf.constant(["hi hi hi"])), preprocessor.tokenize(tf.constant(["there"]))
    >>> preprocessor.bert_pack_inputs([a, b], seq_length=5)["input_word_ids"].numpy().tolist()
    [[2, 5, 3, 6, 3]]
    """

    def __init__(self, tokenizer, seq_length=128):
        super().__init__()
        if tokenizer.tokenize_with_offsets:
            raise ValueError("BertPreprocessor needs a tokenizer layer built with tokenize_with_offsets=False")
        self.tokenizer = tokenizer
        self.seq_length = seq_length
        self._pack = BertPackInputs(seq_length, special_tokens_dict=tokenizer.get_special_tokens_dict())
        # Traced ahead so that a saved model carries them: one and two segments, any seq_length.
        tokens = tf.type_spec_from_value(self.tokenize.get_concrete_function().structured_outputs)
        for num_segments in (1, 2):
            self.bert_pack_inputs.get_concrete_function([tokens] * num_segments, tf.TensorSpec([], tf.int32))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def __call__(self, text):
        return self._pack(self.tokenizer(text))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def tokenize(self, text):
        return self.tokenizer(text)

    @tf.function(autograph=False)
    def bert_pack_inputs(self, inputs, seq_length):
        return self._pack.bert_pack_inputs(inputs, seq_length, self._pack.start_of_sequence_id,
                                           self._pack.end_of_segment_id, self._pack.padding_id)
