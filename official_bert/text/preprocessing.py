"""A TF Hub preprocessing model (the API of `bert_en_uncased_preprocess/3`), savable as a SavedModel.

Code written for TF Hub's BERT preprocessors runs unchanged on it, loaded with `tf.saved_model.load` or
`hub.load`, and wrapped in `hub.KerasLayer`:

    preprocess(strings)                                  # → input_word_ids, input_mask, input_type_ids
    preprocess.tokenize(strings)                         # → int32 RaggedTensor [batch, (words), (pieces)]
    preprocess.tokenize.get_special_tokens_dict()        # → {"vocab_size", "padding_id", "mask_id", ...}
    preprocess.tokenize_with_offsets(strings)            # → tokens, start_offsets, limit_offsets
    preprocess.bert_pack_inputs([tokens_a, tokens_b], seq_length=64)   # seq_length optional
"""

import tensorflow as tf

from official_bert.text.pack_inputs import BertPackInputs

_STRINGS = tf.TensorSpec([None], tf.string)


class BertPreprocessor(tf.Module):
    """Raw text → encoder inputs, with the steps exposed as TF Hub's BERT preprocessing SavedModels expose them.

    - `__call__(strings [batch])`: tokenizes and packs single segments to the default `seq_length`.
    - `tokenize`: strings → int32 RaggedTensor ids [batch, (words), (pieces)] (or
      [batch, (pieces)] for SentencePiece); `tokenize.get_special_tokens_dict()` gives `vocab_size` and the
      ids of [CLS], [SEP], [PAD] and [MASK] (`start_of_sequence_id`, `end_of_segment_id`, `padding_id`,
      `mask_id`; those the vocabulary has) as int32 scalars.
    - `tokenize_with_offsets`: `(tokens, start_offsets, limit_offsets)`, each token's span of the input (int64,
      in the tokenizer's `offsets_unit`: bytes by default, as tensorflow-text's `BertTokenizer` gives them).
      Only where the tokenizer has `call_with_offsets` (`BertTokenizer`); `GraphSentencePieceTokenizer` has not,
      and then the attribute is absent, as in TF Hub's preprocessors without offsets.
    - `bert_pack_inputs`: `(segments, seq_length=None)`, a list of one or two int32
      RaggedTensors of rank 2 ([batch, (tokens)]) or 3 ([batch, (words), (pieces)]) → the three inputs;
      `seq_length` (a Python int or int32 scalar) defaults to this model's.

    Save it with `tf.saved_model.save`: the vocabulary or SentencePiece model travels as an asset.

    Args:
        tokenizer: a `BertTokenizer` or `GraphSentencePieceTokenizer` layer without offsets.
        seq_length: the default packed length.

    Example:
    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> from official_bert.text import BertPreprocessor, BertTokenizer
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hi", "there"]))
    >>> preprocessor = BertPreprocessor(BertTokenizer(path), seq_length=6)
    >>> preprocessor(tf.constant(["Hi there"]))["input_word_ids"].numpy().tolist()
    [[2, 5, 6, 3, 0, 0]]
    >>> a, b = preprocessor.tokenize(tf.constant(["hi hi hi"])), preprocessor.tokenize(tf.constant(["there"]))
    >>> preprocessor.bert_pack_inputs([a, b], seq_length=5)["input_word_ids"].numpy().tolist()
    [[2, 5, 3, 6, 3]]
    >>> preprocessor.bert_pack_inputs([tf.ragged.constant([[6, 6]])])["input_word_ids"].numpy().tolist()
    [[2, 6, 6, 3, 0, 0]]
    >>> int(preprocessor.tokenize.get_special_tokens_dict()["mask_id"])
    4
    >>> [t.to_list() for t in preprocessor.tokenize_with_offsets(tf.constant(["hi  there"]))]
    [[[[5], [6]]], [[[0], [4]]], [[[2], [9]]]]
    """

    def __init__(self, tokenizer, seq_length=128):
        super().__init__()
        if tokenizer.tokenize_with_offsets:
            raise ValueError("BertPreprocessor needs a tokenizer layer built with tokenize_with_offsets=False")
        self.tokenizer = tokenizer
        self.seq_length = seq_length
        special = tokenizer.get_special_tokens_dict()
        self._pack = BertPackInputs.for_tokenizer(seq_length, tokenizer)
        self.tokenize = TokenizeModule(tokenizer, special)
        if hasattr(tokenizer, "call_with_offsets"):
            self.tokenize_with_offsets = TokenizeModule(tokenizer, special, with_offsets=True)
        self.bert_pack_inputs = PackInputsModule(self._pack)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, text):
        # tokenize's traced function, called: the tokenizer's graph is traced (and saved) once less.
        return self._pack(self.tokenize(text))


class TokenizeModule(tf.Module):
    """`preprocess.tokenize` (or `tokenize_with_offsets`): a callable object with `get_special_tokens_dict()`,
    which is what TF Hub's preprocessors restore there (MLM and custom-packing code reads the ids from it).

    Args:
        tokenizer: a tokenizer layer (`call_with_offsets` is needed for offsets).
        special_tokens: the dict `tokenizer.get_special_tokens_dict()` returns (Python ints).
        with_offsets: return `(tokens, start_offsets, limit_offsets)` instead of the tokens.

    Example:
    >>> import os, tempfile
    >>> from official_bert.text import BertTokenizer
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(["hi", "[UNK]", "[SEP]", "[CLS]"]))
    >>> layer = BertTokenizer(path)
    >>> tokenize = TokenizeModule(layer, layer.get_special_tokens_dict())
    >>> tokenize(tf.constant(["hi yo"])).to_list()
    [[[0], [1]]]
    >>> {k: int(v) for k, v in sorted(tokenize.get_special_tokens_dict().items())}
    {'end_of_segment_id': 2, 'start_of_sequence_id': 3, 'vocab_size': 4}
    """

    def __init__(self, tokenizer, special_tokens, with_offsets=False):
        super().__init__()
        self.tokenizer = tokenizer
        self.with_offsets = with_offsets
        self._special_tokens = dict(special_tokens)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, text):
        if self.with_offsets:
            return self.tokenizer.call_with_offsets(text)
        return self.tokenizer(text)

    @tf.function(input_signature=[], autograph=False)
    def get_special_tokens_dict(self):
        """vocab_size and the special tokens' ids, int32 scalars (the keys `BertTokenizer`'s dict has)."""
        return {key: tf.constant(value, tf.int32) for key, value in self._special_tokens.items()}


class PackInputsModule(tf.Module):
    """`preprocess.bert_pack_inputs(segments, seq_length=None)`, callable as TF Hub's after loading.

    A SavedModel keeps only traced signatures, so one is traced for every input TF Hub's packer accepts: one or
    two int32 RaggedTensor segments, each [batch, (tokens)] or [batch, (words), (pieces)] (merged into
    [batch, (tokens)]; the two may differ), with `seq_length` an int32 scalar or left out (then the packer's own).

    Args:
        pack: a `BertPackInputs` layer: the default seq_length and the ids of [CLS], [SEP] and [PAD].

    Example:
    >>> module = PackInputsModule(BertPackInputs(6, start_of_sequence_id=1, end_of_segment_id=2, padding_id=0))
    >>> a, b = tf.ragged.constant([[7, 8, 9]]), tf.ragged.constant([[[5], [4, 4]]])
    >>> module([a, b])["input_word_ids"].numpy().tolist(), module([a], 4)["input_word_ids"].numpy().tolist()
    ([[1, 7, 8, 2, 5, 2]], [[1, 7, 8, 2]])
    """

    def __init__(self, pack):
        super().__init__()
        self.seq_length = pack.seq_length
        self._ids = (pack.start_of_sequence_id, pack.end_of_segment_id, pack.padding_id, pack.pair_separators,
                     pack.second_segment_type)
        ranks = [tf.RaggedTensorSpec([None] * (rank + 1), tf.int32, ragged_rank=rank) for rank in (1, 2)]
        for segments in [[a] for a in ranks] + [[a, b] for a in ranks for b in ranks]:
            for seq_length in (None, tf.TensorSpec([], tf.int32)):
                self.__call__.get_concrete_function(segments, seq_length)

    @tf.function(autograph=False)
    def __call__(self, inputs, seq_length=None):
        # Each traced signature only flattens its segments and calls _pack, traced once per number of segments:
        # the SavedModel then holds (and its export traces) the packing twice, not twelve times. None is traced
        # too, so that the restored function packs to the default when called without a seq_length.
        segments = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(segments) not in (1, 2):
            raise ValueError(f"bert_pack_inputs packs one or two segments, got {len(segments)}")
        segments = [tf.cast(s.merge_dims(1, -1) if s.ragged_rank > 1 else s, tf.int32) for s in segments]
        fixed = self.seq_length if seq_length is None else seq_length
        packed = self._pack(segments, tf.cast(fixed, tf.int32))
        if isinstance(fixed, int):
            for ids in packed.values():
                ids.set_shape([None, fixed])
        return packed

    @tf.function(autograph=False)
    def _pack(self, segments, seq_length):
        return BertPackInputs.bert_pack_inputs(segments, seq_length, *self._ids)
