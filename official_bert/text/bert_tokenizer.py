"""Keras layer: strings → WordPiece ids in the graph, the same ids as `tokenization.FullTokenizer`."""

import keras
import tensorflow as tf

from official_bert.text import tokenization
from official_bert.text.basic_tokenizer import GraphBasicTokenizer, text_batch
from official_bert.text.core_wordpiece import CoreWordpiece
from official_bert.text.pack_inputs import special_tokens_dict

# Words of more characters become one [UNK] (WordpieceTokenizer.max_input_chars_per_word).
MAX_INPUT_CHARS_PER_WORD = 200
# The WordPiece implementations: core TensorFlow ops (served by any TensorFlow), or tensorflow-text's custom op.
WORDPIECE = ("core", "tf_text")


@keras.saving.register_keras_serializable(package="official_bert")
class BertTokenizer(keras.layers.Layer):
    """Tokenizes a batch of strings into WordPiece ids, exactly as the original FullTokenizer.

    Called on a string tensor [batch], returns int32 RaggedTensor ids [batch, (words), (pieces)] (the
    word level is what whole-word masking needs; `BertPackInputs` flattens it). With
    `tokenize_with_offsets=True` it returns `(ids, starts, ends)`, each token's span of the input text
    (the whole source character when lowercasing splits one character into several tokens, e.g. Hangul).

    The vocabulary is compiled into the graph and the vocabulary file is attached as the SavedModel asset
    `vocab_file`, so a saved model can be moved and still tokenizes. With `wordpiece="core"` (the default)
    the graph holds only core TensorFlow ops, which every TensorFlow runtime (TF Serving included) has;
    `"tf_text"` uses tensorflow-text's FastWordpieceTokenizer, a custom op, for the same ids and offsets.

    Args:
        vocab_file: vocabulary, one token per line; must contain [UNK].
        do_lower_case: lowercase and strip accents, as the checkpoint was trained.
        tokenize_with_offsets: also return the start and end offsets of every token.
        offsets_unit: "BYTE" (into the UTF-8 input) or "UTF8_CHAR" (code points, i.e. Python str indices).
        wordpiece: "core" or "tf_text" (needs tensorflow-text).
        preserve_unused_tokens: keep a whitespace-separated `[unused<n>]` of the vocabulary as one token, as
            `FullTokenizer(preserve_unused_tokens=True)` does.
        normalize_unicode: None, or "nfc": compose the text (Unicode NFC) first, as
            `FullTokenizer(normalize_unicode="nfc")` does, in core TensorFlow ops (TensorFlow has no normalization
            op of its own; tensorflow-text's uses ICU's Unicode version, this Python's tables are used instead).
        max_chars_per_word: a longer word is one [UNK] (`FullTokenizer`'s max_input_chars_per_word: the original's
            200, Hugging Face's 100).
        **kwargs: passed to keras.layers.Layer.

    Example:
    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> from official_bert.text import BertTokenizer
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", ","]))
    >>> tokenizer = BertTokenizer(path, do_lower_case=True, tokenize_with_offsets=True)
    >>> ids, starts, ends = tokenizer(tf.constant(["UNAffable, x"]))
    >>> ids.to_list(), starts.to_list(), ends.to_list()
    ([[[4, 5, 6], [7], [1]]], [[[0, 2, 5], [9], [11]]], [[[2, 5, 9], [10], [12]]])
    """

    def __init__(self, vocab_file, do_lower_case=True, tokenize_with_offsets=False, offsets_unit="BYTE",
                 wordpiece="core", preserve_unused_tokens=False, normalize_unicode=None,
                 max_chars_per_word=MAX_INPUT_CHARS_PER_WORD, **kwargs):
        super().__init__(**kwargs)
        if wordpiece not in WORDPIECE:
            raise ValueError(f"wordpiece must be one of {', '.join(map(repr, WORDPIECE))}, got {wordpiece!r}")
        self._vocab_path = vocab_file
        self.do_lower_case = do_lower_case
        self.tokenize_with_offsets = tokenize_with_offsets
        self.offsets_unit = offsets_unit
        self.wordpiece = wordpiece
        self.preserve_unused_tokens = preserve_unused_tokens
        self.normalize_unicode = normalize_unicode
        self.max_chars_per_word = max_chars_per_word
        vocab = tokenization.load_vocab(vocab_file)
        if "[UNK]" not in vocab:
            raise tokenization.VocabError(f"{vocab_file}: vocabulary has no [UNK] token")
        self._special_tokens = special_tokens_dict(vocab)
        self.vocab_file = tf.saved_model.Asset(vocab_file)
        self._basic = GraphBasicTokenizer(do_lower_case, offsets_unit, preserved_tokens=sorted(
            filter(tokenization.is_unused_token, vocab)) if preserve_unused_tokens else (),
            normalize_unicode=normalize_unicode)
        if wordpiece == "core":
            self._wordpiece = CoreWordpiece(vocab, max_chars_per_word)
        else:
            from official_bert.text.tf_text_wordpiece import TfTextWordpiece
            self._wordpiece = TfTextWordpiece(vocab, max_chars_per_word, vocab_file)

    def call(self, inputs):
        return self._tokenize(inputs, self.tokenize_with_offsets)

    def call_with_offsets(self, inputs):
        """`(ids, starts, ends)` (offsets in `offsets_unit`), as a layer built with `tokenize_with_offsets=True`
        returns them, whatever this one was built with: `BertPreprocessor` offers both from one layer, so that its
        SavedModel holds one copy of the vocabulary's tables.

        Args:
            inputs: string tensor [batch].

        Example:
        >>> import os, tempfile
        >>> import tensorflow as tf
        >>> from official_bert.text import BertTokenizer
        >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
        >>> _ = open(path, "w").write("\\n".join(["[UNK]", "h", "##é", "##llo"]))
        >>> ids, starts, ends = BertTokenizer(path, do_lower_case=False).call_with_offsets(tf.constant(["héllo"]))
        >>> ids.to_list(), starts.to_list(), ends.to_list()
        ([[[1, 2, 3]]], [[[0, 1, 3]]], [[[1, 3, 6]]])
        """
        return self._tokenize(inputs, True)

    def _tokenize(self, inputs, with_offsets):
        words = self._basic.tokenize(text_batch(inputs, "BertTokenizer"), with_offsets=with_offsets)
        ids, first, last = self._wordpiece.tokenize(words)
        ids = words.words.with_flat_values(ids)
        if not with_offsets:
            return ids
        return ids, ids.with_flat_values(tf.gather(words.char_starts, first)), ids.with_flat_values(
            tf.gather(words.char_ends, last))

    def get_special_tokens_dict(self):
        """The ids `BertPackInputs` needs, as Model Garden's layer of the same name returns them."""
        return dict(self._special_tokens)

    def get_config(self):
        return {**super().get_config(), "vocab_file": self._vocab_path, "do_lower_case": self.do_lower_case,
                "tokenize_with_offsets": self.tokenize_with_offsets, "offsets_unit": self.offsets_unit,
                "wordpiece": self.wordpiece, "preserve_unused_tokens": self.preserve_unused_tokens,
                "normalize_unicode": self.normalize_unicode, "max_chars_per_word": self.max_chars_per_word}
