"""Raw text → the encoder's inputs in the graph, packed exactly as the Python features are."""

import tensorflow as tf

from official_bert.batch_padding import trim_to_longest
from official_bert.text import BertPackInputs


class TextPacker:
    """Packs raw text as `classification.convert_single_example` does: [CLS] A [SEP] (B [SEP]), zero-padded (in the
    tokenizer's own layout: RoBERTa's <s> A </s></s> B </s>).

    As there, a row is a pair only where text_b tokenizes to something; otherwise it is packed as a single
    sentence (keeping seq_length - 2 tokens of A, not seq_length - 3).

    With `pad_to_longest`, the batch is padded only to its longest row (truncation still follows seq_length):
    a one-sentence request then costs its own length, not seq_length positions. Padding is masked, so the
    model's outputs are those of the fixed-length inputs (to float rounding).

    Args:
        tokenizer: an in-graph tokenizer layer (`TokenizerSpec.layer()`).
        seq_length: T, the longest packed row.
        pad_to_longest: pad to the batch's longest row instead of to T.

    Example:
    >>> import os, tempfile
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\na\\nb\\n")
    >>> tokenizer = TokenizerSpec(vocab).layer()
    >>> packed = TextPacker(tokenizer, 6).pack(tf.constant(["a a a a", "a a a a"]), tf.constant(["b", ""]))
    >>> packed["input_word_ids"].numpy().tolist(), packed["input_type_ids"].numpy().tolist()
    ([[2, 4, 4, 3, 5, 3], [2, 4, 4, 4, 4, 3]], [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]])
    >>> TextPacker(tokenizer, 6, pad_to_longest=True).pack(tf.constant(["a", "a a"]))["input_mask"]
    ... # doctest: +ELLIPSIS
    <tf.Tensor: shape=(2, 4), dtype=int32, numpy=
    array([[1, 1, 1, 0],
           [1, 1, 1, 1]]...)>
    """

    def __init__(self, tokenizer, seq_length, pad_to_longest=False):
        self.tokenizer = tokenizer
        self.pad_to_longest = pad_to_longest
        self._pack = BertPackInputs.for_tokenizer(seq_length, tokenizer)

    def pack(self, text_a, text_b=None):
        """Strings [batch] (and [batch]) → {"input_word_ids", "input_mask", "input_type_ids"}, int32 [batch, T]."""
        return self.pack_tokens(self.tokenizer(text_a), None if text_b is None else self.tokenizer(text_b))

    def pack_tokens(self, tokens_a, tokens_b=None):
        """`pack` of tokenized text: int RaggedTensors [batch, (tokens)] or [batch, (words), (pieces)]."""
        single = self._pack(tokens_a)
        if tokens_b is None:
            return self._trim(single)
        pair = self._pack([tokens_a, tokens_b])
        has_b = (tokens_b.merge_dims(1, -1).row_lengths() > 0)[:, None]
        return self._trim({name: tf.where(has_b, pair[name], single[name]) for name in pair})

    def _trim(self, packed):
        # Packed to T first and cut after, so that truncation is T's.
        return trim_to_longest(packed, 1 if self.pad_to_longest else None)

    def pack_choices(self, context, endings):
        """A context [batch] with its endings [batch, C] → the C (context, ending) pairs, int32 [batch, C, T]."""
        num_choices = tf.shape(endings)[1]
        packed = self.pack(tf.repeat(context, num_choices), tf.reshape(endings, [-1]))
        return {name: tf.reshape(ids, [-1, num_choices, tf.shape(ids)[-1]]) for name, ids in packed.items()}
