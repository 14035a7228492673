"""Keras layer: one or two tokenized segments → the encoder's fixed-length inputs."""

import keras
import tensorflow as tf

from official_bert.text.packing import BERT, packing_of


@keras.saving.register_keras_serializable(package="official_bert")
class BertPackInputs(keras.layers.Layer):
    """Packs `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]` into `input_word_ids`, `input_mask`, `input_type_ids`.

    Segments are int RaggedTensors [batch, (tokens)] or [batch, (words), (pieces)]. Too long inputs are
    truncated at the end as the original's `_truncate_seq_pair` does: one token at a time from the longer
    segment (from B on a tie). Outputs are int32 [batch, seq_length]; type ids are 0 for `[CLS] A [SEP]`
    and 1 for `B [SEP]`; padding has id `padding_id`, mask 0 and type 0. RoBERTa's layout
    (`pair_separators=2, second_segment_type=0`) is `<s> A </s></s> B </s>`, every type id 0.

    Args:
        seq_length: the output length, at least 3.
        start_of_sequence_id (int | None): the id of [CLS] (or give special_tokens_dict).
        end_of_segment_id (int | None): the id of [SEP].
        padding_id (int | None): the id of [PAD].
        special_tokens_dict (dict | None): instead of the three ids, a dict holding them, as
            `BertTokenizer.get_special_tokens_dict()` returns.
        pair_separators (int): end-of-segment tokens between the two segments of a pair (RoBERTa: 2).
        second_segment_type (int): the type id of B and what follows it (RoBERTa: 0).
        **kwargs: passed to keras.layers.Layer.

    Example:
    >>> import tensorflow as tf
    >>> from official_bert.text import BertPackInputs
    >>> pack = BertPackInputs(8, start_of_sequence_id=101, end_of_segment_id=102, padding_id=0)
    >>> out = pack([tf.ragged.constant([[1, 2, 3, 4]]), tf.ragged.constant([[5, 6, 7]])])
    >>> out["input_word_ids"].numpy().tolist(), out["input_type_ids"].numpy().tolist()
    ([[101, 1, 2, 3, 102, 5, 6, 102]], [[0, 0, 0, 0, 0, 1, 1, 1]])
    """

    def __init__(self, seq_length, start_of_sequence_id=None, end_of_segment_id=None, padding_id=None,
                 special_tokens_dict=None, pair_separators=1, second_segment_type=1, **kwargs):
        super().__init__(**kwargs)
        special = dict(special_tokens_dict or {})
        given = {"start_of_sequence_id": start_of_sequence_id, "end_of_segment_id": end_of_segment_id,
                 "padding_id": padding_id}
        special.update({k: v for k, v in given.items() if v is not None})
        missing = [k for k in given if k not in special]
        if missing:
            raise ValueError(f"BertPackInputs needs {', '.join(missing)} (the vocabulary lacks the token, or "
                             "it was not passed)")
        if second_segment_type not in (0, 1) or pair_separators not in (1, 2):
            raise ValueError(f"BertPackInputs: pair_separators must be 1 or 2 and second_segment_type 0 or 1, got "
                             f"{pair_separators} and {second_segment_type}")
        if not isinstance(seq_length, int) or seq_length < 3:
            raise ValueError(f"seq_length must be an int >= 3, got {seq_length!r}")
        self.seq_length = seq_length
        self.start_of_sequence_id = int(special["start_of_sequence_id"])
        self.end_of_segment_id = int(special["end_of_segment_id"])
        self.padding_id = int(special["padding_id"])
        self.pair_separators = pair_separators
        self.second_segment_type = second_segment_type

    @classmethod
    def for_tokenizer(cls, seq_length, tokenizer):
        """The packer of an in-graph tokenizer layer: its special tokens' ids and its `packing`'s layout.

        Args:
            seq_length: the output length.
            tokenizer: a tokenizer layer (`TokenizerSpec.layer()`).
        """
        layout = packing_of(tokenizer)
        return cls(seq_length, special_tokens_dict=tokenizer.get_special_tokens_dict(),
                   pair_separators=layout.pair_separators, second_segment_type=layout.second_segment_type)

    def call(self, inputs):
        return self.bert_pack_inputs(inputs, self.seq_length, self.start_of_sequence_id, self.end_of_segment_id,
                                     self.padding_id, self.pair_separators, self.second_segment_type)

    @staticmethod
    def bert_pack_inputs(inputs, seq_length, start_of_sequence_id, end_of_segment_id, padding_id, pair_separators=1,
                         second_segment_type=1):
        """The packing itself; `seq_length` may be a scalar tensor (Model Garden's exported signature)."""
        segments = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(segments) not in (1, 2):
            raise ValueError(f"BertPackInputs packs one or two segments, got {len(segments)}")
        segments = [s.merge_dims(1, -1) if s.ragged_rank > 1 else s for s in segments]
        segments = [tf.cast(s, tf.int32) for s in segments]
        pair = len(segments) == 2
        budget = tf.cast(seq_length, tf.int64) - 2 - (pair_separators if pair else 0)
        keep = truncated_lengths([s.row_lengths() for s in segments], budget)
        segments = [tf.ragged.boolean_mask(s, tf.ragged.range(s.row_lengths()) < k[:, None])
                    for s, k in zip(segments, keep)]
        batch = segments[0].nrows()
        end = tf.fill([batch, 1], tf.constant(end_of_segment_id, tf.int32))
        parts = [tf.fill([batch, 1], tf.constant(start_of_sequence_id, tf.int32)), segments[0], end]
        if pair:
            parts += [end] * (pair_separators - 1) + [segments[1], end]
        word_ids = tf.concat(parts, axis=1)
        # Type 0 up to the first [SEP], then 1 (RoBERTa's one type: 0 throughout).
        type_ids = tf.concat([tf.zeros_like(part) if i <= 2 or not second_segment_type else tf.ones_like(part)
                              for i, part in enumerate(parts)], axis=1)
        shape = tf.stack([tf.constant(-1, tf.int64), tf.cast(seq_length, tf.int64)])
        return {"input_word_ids": word_ids.to_tensor(padding_id, shape=shape),
                "input_mask": tf.ones_like(word_ids).to_tensor(0, shape=shape),
                "input_type_ids": type_ids.to_tensor(0, shape=shape)}

    def get_config(self):
        config = {**super().get_config(), "seq_length": self.seq_length,
                  "start_of_sequence_id": self.start_of_sequence_id, "end_of_segment_id": self.end_of_segment_id,
                  "padding_id": self.padding_id}
        if (self.pair_separators, self.second_segment_type) != (1, 1):  # RoBERTa's layout; BERT's config as it was
            config.update(pair_separators=self.pair_separators, second_segment_type=self.second_segment_type)
        return config


def special_tokens_dict(vocab, packing=BERT):
    """Returns vocab_size and the ids of [CLS], [SEP], [PAD] and [MASK] (those `vocab`, token → id, has), or of
    another `packing`'s special tokens (RoBERTa's <s>, </s>, <pad>, <mask>)."""
    return packing.special_ids(vocab)


def truncated_lengths(lengths, budget):
    """Segment lengths after the original's truncation to `budget` tokens in total.

    Popping from the longer of two segments (B on a tie) until they fit leaves A with
    min(len_a, max(budget - len_b, ceil(budget / 2))) and B with min(len_b, max(budget - len_a, floor(budget / 2))).
    """
    if len(lengths) == 1:
        return [tf.minimum(lengths[0], budget)]
    a, b = lengths
    return [tf.minimum(a, tf.maximum(budget - b, (budget + 1) // 2)),
            tf.minimum(b, tf.maximum(budget - a, budget // 2))]
