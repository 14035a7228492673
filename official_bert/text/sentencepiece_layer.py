"""Keras layer: strings → SentencePiece ids in the graph (tensorflow-text), as `SentencePieceTokenizer` gives them."""

import keras
import tensorflow as tf

from official_bert.text import sentencepiece_tokenizer
from official_bert.text.basic_tokenizer import text_batch
from official_bert.text.pack_inputs import special_tokens_dict
from official_bert.text.packing import packing_of
from official_bert.text.tf_text_import import import_tf_text


@keras.saving.register_keras_serializable(package="official_bert")
class GraphSentencePieceTokenizer(keras.layers.Layer):
    """Tokenizes a batch of strings into SentencePiece ids [batch, (pieces)], int32.

    Undecodable bytes are dropped first, as the Python tokenizer drops them. The model
    is compiled into the graph and also attached as the SavedModel asset `model_file`. It runs tensorflow-text's
    SentencepieceOp, which whoever serves the model needs as well (stock TF Serving images may lack it); without
    tensorflow-text it raises `TensorflowTextError`.

    Args:
        model_file: a SentencePiece `.model` file.
        do_lower_case: what the caller expects; must match the model's normalization (None: don't check).
        tokenize_with_offsets: also return each token's start and end offsets.
        fairseq_ids: XLM-R's ids (fairseq's: <s> 0, <pad> 1, </s> 2, <unk> 3, a piece its id + 1) and
            RoBERTa's packing.
        offsets_unit: "BYTE" (into the UTF-8 input) or "UTF8_CHAR" (code points).
        **kwargs: passed to keras.layers.Layer.

    Example:
    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> from official_bert.text import GraphSentencePieceTokenizer, sentencepiece_tokenizer
    >>> d = tempfile.mkdtemp()
    >>> corpus = os.path.join(d, "corpus.txt")
    >>> _ = open(corpus, "w").write("The cat sat on the mat.\\nThe dog sat too.\\n\\nA new document here.\\n" * 20)
    >>> sentencepiece_tokenizer.train([corpus], os.path.join(d, "sp.model"), vocab_size=40)
    >>> python_tokenizer = sentencepiece_tokenizer.SentencePieceTokenizer(os.path.join(d, "sp.model"))
    >>> layer = GraphSentencePieceTokenizer(os.path.join(d, "sp.model"))
    >>> layer(tf.constant(["The CAT sat"]))[0].numpy().tolist() == python_tokenizer.convert_tokens_to_ids(
    ...     python_tokenizer.tokenize("The CAT sat"))
    True
    """

    def __init__(self, model_file, do_lower_case=None, tokenize_with_offsets=False, offsets_unit="BYTE",
                 fairseq_ids=False, **kwargs):
        super().__init__(**kwargs)
        tf_text = import_tf_text("SentencePiece in the graph")
        if offsets_unit not in ("BYTE", "UTF8_CHAR"):
            raise ValueError(f"offsets_unit must be 'BYTE' or 'UTF8_CHAR', got {offsets_unit!r}")
        serialized = sentencepiece_tokenizer.read_model(model_file)
        sentencepiece_tokenizer.check_case(model_file, serialized, do_lower_case)
        self._model_path = model_file
        self.do_lower_case = do_lower_case
        self.tokenize_with_offsets = tokenize_with_offsets
        self.offsets_unit = offsets_unit
        self.model_file = tf.saved_model.Asset(model_file)
        self.fairseq_ids = fairseq_ids
        python = sentencepiece_tokenizer.SentencePieceTokenizer(model_file, fairseq_ids=fairseq_ids)
        self.packing = packing_of(python)
        self._special_tokens = special_tokens_dict(python.vocab, self.packing)
        self._tokenizer = tf_text.SentencepieceTokenizer(serialized, out_type=tf.int32)

    def call(self, inputs):
        text = tf.strings.unicode_transcode(text_batch(inputs, "GraphSentencePieceTokenizer"), "UTF-8", "UTF-8",
                                            errors="ignore")
        if not self.tokenize_with_offsets:
            return self._ids(self._tokenizer.tokenize(text))
        ids, starts, ends = self._tokenizer.tokenize_with_offsets(text)
        ids = self._ids(ids)
        if self.offsets_unit == "UTF8_CHAR":
            # A token's character offset is the length, in characters, of the text before it.
            row_text = tf.gather(text, ids.value_rowids())
            starts, ends = (ids.with_flat_values(tf.strings.length(tf.strings.substr(
                row_text, tf.zeros_like(offsets.flat_values), offsets.flat_values), unit="UTF8_CHAR"))
                for offsets in (starts, ends))
        return ids, tf.cast(starts, tf.int64), tf.cast(ends, tf.int64)

    def _ids(self, ids):
        """The model's ids, or fairseq's: its <unk> (0) → 3, every other id + 1 (`fairseq_ids`)."""
        if not self.fairseq_ids:
            return ids
        return ids.with_flat_values(tf.where(tf.equal(ids.flat_values, 0), 3, ids.flat_values + 1))

    def get_special_tokens_dict(self):
        """vocab_size and the ids of [CLS], [SEP], [PAD] and [MASK], as `BertTokenizer` returns them."""
        return dict(self._special_tokens)

    def get_config(self):
        return {**super().get_config(), "model_file": self._model_path, "do_lower_case": self.do_lower_case,
                "tokenize_with_offsets": self.tokenize_with_offsets, "offsets_unit": self.offsets_unit,
                "fairseq_ids": self.fairseq_ids}
