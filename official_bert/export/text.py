"""Raw text → the encoder's inputs in the graph, packed exactly as the Python features are."""

import tensorflow as tf

from official_bert.text import BertPackInputs, BertTokenizer, SentencepieceTokenizer


def tokenizer_layer(vocab_file=None, spm_model_file=None, do_lower_case=True):
    """The in-graph tokenizer giving the ids `tokenization.create_tokenizer` gives for the same arguments.

    Args:
        vocab_file: a WordPiece vocabulary ...
        spm_model_file: ... or a SentencePiece model (exactly one of them).
        do_lower_case: the casing flag.

    Example:
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
    >>> tokenizer_layer(vocab)(tf.constant(["Hi"])).to_list()
    [[[4]]]
    """
    if bool(vocab_file) == bool(spm_model_file):
        raise ValueError("pass exactly one of vocab_file and spm_model_file")
    if spm_model_file:
        return SentencepieceTokenizer(spm_model_file, do_lower_case=do_lower_case)
    return BertTokenizer(vocab_file, do_lower_case=do_lower_case)


class TextPacker:
    """Packs raw text as `classification.convert_single_example` does: [CLS] A [SEP] (B [SEP]), zero-padded.

    As there, a row is a pair only where text_b tokenizes to something; otherwise it is packed as a single
    sentence (keeping seq_length - 2 tokens of A, not seq_length - 3).

    Args:
        tokenizer: a tokenizer layer (see `tokenizer_layer`).
        seq_length: T.

    Example:
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\na\\nb\\n")
    >>> packed = TextPacker(tokenizer_layer(vocab), 6).pack(tf.constant(["a a a a", "a a a a"]), tf.constant(["b", ""]))
    >>> packed["input_word_ids"].numpy().tolist(), packed["input_type_ids"].numpy().tolist()
    ([[2, 4, 4, 3, 5, 3], [2, 4, 4, 4, 4, 3]], [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]])
    """

    def __init__(self, tokenizer, seq_length):
        self.tokenizer = tokenizer
        self._pack = BertPackInputs(seq_length, special_tokens_dict=tokenizer.get_special_tokens_dict())

    def pack(self, text_a, text_b=None):
        """Strings [batch] (and [batch]) → {"input_word_ids", "input_mask", "input_type_ids"}, int32 [batch, T]."""
        tokens_a = self.tokenizer(text_a)
        single = self._pack(tokens_a)
        if text_b is None:
            return single
        tokens_b = self.tokenizer(text_b)
        pair = self._pack([tokens_a, tokens_b])
        has_b = (tokens_b.merge_dims(1, -1).row_lengths() > 0)[:, None]
        return {name: tf.where(has_b, pair[name], single[name]) for name in pair}

    def pack_choices(self, context, endings):
        """A context [batch] with its endings [batch, C] → the C (context, ending) pairs, int32 [batch, C, T]."""
        num_choices = tf.shape(endings)[1]
        packed = self.pack(tf.repeat(context, num_choices), tf.reshape(endings, [-1]))
        return {name: tf.reshape(ids, [-1, num_choices, ids.shape[-1]]) for name, ids in packed.items()}
