"""Keras layer: strings → WordPiece ids in the graph, the same ids as `tokenization.FullTokenizer`."""

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from official_bert import tokenization
from official_bert.text.basic_tokenizer import GraphBasicTokenizer, text_batch, utf8_length
from official_bert.text.pack_inputs import special_tokens_dict

# Words of more characters become one [UNK] (WordpieceTokenizer.max_input_chars_per_word).
MAX_INPUT_CHARS_PER_WORD = 200
_MAX_UTF8_BYTES_PER_CHAR = 4
_MAX_TOKEN_BYTES = 256  # FastWordpieceTokenizer's limit, "##" excluded


@keras.saving.register_keras_serializable(package="official_bert")
class BertTokenizer(keras.layers.Layer):
    """Tokenizes a batch of strings into WordPiece ids, exactly as the original FullTokenizer.

    Called on a string tensor [batch], returns int32 RaggedTensor ids [batch, (words), (pieces)] (the
    word level is what whole-word masking needs; `BertPackInputs` flattens it). With
    `tokenize_with_offsets=True` it returns `(ids, starts, ends)`, each token's span of the input text
    (the whole source character when lowercasing splits one character into several tokens, e.g. Hangul).

    The WordPiece model is compiled into the graph and the vocabulary file is attached as the
    SavedModel asset `vocab_file`, so a saved model can be moved and still tokenizes.

    Args:
        vocab_file: vocabulary, one token per line; must contain [UNK].
        do_lower_case: lowercase and strip accents, as the checkpoint was trained.
        tokenize_with_offsets: also return the start and end offsets of every token.
        offsets_unit: "BYTE" (into the UTF-8 input) or "UTF8_CHAR" (code points, i.e. Python str indices).
        **kwargs: passed to keras.layers.Layer.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", ","]))
    >>> tokenizer = BertTokenizer(path, do_lower_case=True, tokenize_with_offsets=True)
    >>> ids, starts, ends = tokenizer(tf.constant(["UNAffable, x"]))
    >>> ids.to_list(), starts.to_list(), ends.to_list()
    ([[[4, 5, 6], [7], [1]]], [[[0, 2, 5], [9], [11]]], [[[2, 5, 9], [10], [12]]])
    """

    def __init__(self, vocab_file, do_lower_case=True, tokenize_with_offsets=False, offsets_unit="BYTE",
                 **kwargs):
        super().__init__(**kwargs)
        self._vocab_path = vocab_file
        self.do_lower_case = do_lower_case
        self.tokenize_with_offsets = tokenize_with_offsets
        self.offsets_unit = offsets_unit
        vocab = tokenization.load_vocab(vocab_file)
        if "[UNK]" not in vocab:
            raise tokenization.VocabError(f"{vocab_file}: vocabulary has no [UNK] token")
        for token, index in vocab.items():
            size = len(token.removeprefix("##").encode("utf-8"))
            if size > _MAX_TOKEN_BYTES:
                raise tokenization.VocabError(
                    f"{vocab_file}:{index + 1}: token of {size} UTF-8 bytes; the in-graph WordPiece "
                    f"(tensorflow-text) takes at most {_MAX_TOKEN_BYTES}")
        self._special_tokens = special_tokens_dict(vocab)
        self.vocab_file = tf.saved_model.Asset(vocab_file)
        self._basic = GraphBasicTokenizer(do_lower_case, offsets_unit)
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            list(vocab), token_out_type=tf.int32, unknown_token="[UNK]", no_pretokenization=True,
            max_bytes_per_word=MAX_INPUT_CHARS_PER_WORD * _MAX_UTF8_BYTES_PER_CHAR)

    def call(self, inputs):
        words = self._basic.tokenize(text_batch(inputs, "BertTokenizer"), with_offsets=self.tokenize_with_offsets)
        too_long = words.chars.row_lengths() > MAX_INPUT_CHARS_PER_WORD
        # Stands in for a long word: it is in the vocabulary, and no real word can equal it because
        # brackets are split off as punctuation.
        flat_words = tf.where(too_long, "[UNK]", words.words.flat_values)
        if not self.tokenize_with_offsets:
            return words.words.with_flat_values(self._wordpiece.tokenize(flat_words))
        ids, starts, ends = self._wordpiece.tokenize_with_offsets(flat_words)
        starts, ends = _piece_spans(words, ids.value_rowids(), starts.flat_values, ends.flat_values, too_long)
        return tuple(words.words.with_flat_values(ids.with_flat_values(t)) for t in (ids.flat_values, starts, ends))

    def get_special_tokens_dict(self):
        """The ids `BertPackInputs` needs, as Model Garden's layer of the same name returns them."""
        return dict(self._special_tokens)

    def get_config(self):
        return {**super().get_config(), "vocab_file": self._vocab_path, "do_lower_case": self.do_lower_case,
                "tokenize_with_offsets": self.tokenize_with_offsets, "offsets_unit": self.offsets_unit}


def _piece_spans(words, piece_word, piece_starts, piece_ends, too_long):
    """Maps each piece's byte range inside its word to the span of input text its characters came from."""
    chars = words.chars
    # Byte position of every character (and of the end) if all words were laid end to end.
    char_at = tf.concat([[0], tf.cumsum(utf8_length(chars.flat_values))], 0)
    word_at = tf.gather(char_at, chars.row_starts())
    first = tf.searchsorted(char_at, tf.gather(word_at, piece_word) + piece_starts, out_type=tf.int64)
    last = tf.searchsorted(char_at, tf.gather(word_at, piece_word) + piece_ends, out_type=tf.int64) - 1
    long_word = tf.gather(too_long, piece_word)
    first = tf.where(long_word, tf.gather(chars.row_starts(), piece_word), first)
    last = tf.where(long_word, tf.gather(chars.row_limits(), piece_word) - 1, last)
    return tf.gather(words.char_starts, first), tf.gather(words.char_ends, last)
