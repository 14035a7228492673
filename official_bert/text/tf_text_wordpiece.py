"""WordPiece by tensorflow-text's FastWordpieceTokenizer (a custom op): `CoreWordpiece`'s ids, offsets and interface.

The path before `CoreWordpiece`, kept behind `BertTokenizer(wordpiece="tf_text")`; a SavedModel using it can only
be served where tensorflow-text's ops are registered.
"""

import tensorflow as tf

from official_bert.text import tokenization
from official_bert.text.basic_tokenizer import utf8_length
from official_bert.text.tf_text_import import import_tf_text

_MAX_UTF8_BYTES_PER_CHAR = 4
_MAX_TOKEN_BYTES = 256  # FastWordpieceTokenizer's limit, "##" excluded


class TfTextWordpiece(tf.Module):
    """The original `WordpieceTokenizer` on the words of `GraphBasicTokenizer`, by tensorflow-text.

    Args:
        vocab: token → id, as `tokenization.load_vocab` returns it; must hold [UNK].
        max_chars_per_word: the original's max_input_chars_per_word.
        vocab_file: the file `vocab` came from, named in errors.

    Example:
    >>> from official_bert.text.basic_tokenizer import GraphBasicTokenizer
    >>> vocab = {token: i for i, token in enumerate(["[UNK]", "un", "##aff", "##able", "##a"])}
    >>> words = GraphBasicTokenizer().tokenize(tf.constant(["unaffable unaaffx"]))
    >>> ids, first, last = TfTextWordpiece(vocab).tokenize(words)
    >>> ids.to_list(), first.numpy().tolist(), last.numpy().tolist()
    ([[1, 2, 3], [0]], [0, 2, 5, 9], [1, 4, 8, 15])
    """

    def __init__(self, vocab, max_chars_per_word=200, vocab_file="vocabulary"):
        super().__init__()
        tf_text = import_tf_text('BertTokenizer(wordpiece="tf_text")')
        for token, index in vocab.items():
            size = len(token.removeprefix("##").encode("utf-8"))
            if size > _MAX_TOKEN_BYTES:
                raise tokenization.VocabError(
                    f"{vocab_file}:{index + 1}: token of {size} UTF-8 bytes; tensorflow-text's WordPiece takes at "
                    f"most {_MAX_TOKEN_BYTES} (the core-ops WordPiece has no limit)")
        self.max_chars_per_word = max_chars_per_word
        # Its ids are list positions: a line whose token is listed again later (and takes that id) gets a stand-in
        # that no word can equal, brackets being split off as punctuation.
        tokens = [f"[line {i + 1}]" for i in range(max(vocab.values()) + 1)]
        for token, index in vocab.items():
            tokens[index] = token
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            tokens, token_out_type=tf.int32, unknown_token="[UNK]", no_pretokenization=True,
            max_bytes_per_word=max_chars_per_word * _MAX_UTF8_BYTES_PER_CHAR)

    def tokenize(self, words):
        """`Words` → (int32 RaggedTensor ids [num_words, (pieces)], and int64 [pieces] the index in
        `words.chars.flat_values` of each piece's first and last character)."""
        chars = words.chars
        too_long = chars.row_lengths() > self.max_chars_per_word
        # Stands in for a long word: it is in the vocabulary, and no real word can equal it because
        # brackets are split off as punctuation.
        ids, starts, ends = self._wordpiece.tokenize_with_offsets(
            tf.where(too_long, "[UNK]", words.words.flat_values))
        piece_word = ids.value_rowids()
        # Byte position of every character (and of the end) if all words were laid end to end.
        char_at = tf.concat([[0], tf.cumsum(utf8_length(chars.flat_values))], 0)
        word_at = tf.gather(tf.gather(char_at, chars.row_starts()), piece_word)
        first = tf.searchsorted(char_at, word_at + starts.flat_values, out_type=tf.int64)
        last = tf.searchsorted(char_at, word_at + ends.flat_values, out_type=tf.int64) - 1
        long_word = tf.gather(too_long, piece_word)
        first = tf.where(long_word, tf.gather(chars.row_starts(), piece_word), first)
        last = tf.where(long_word, tf.gather(chars.row_limits(), piece_word) - 1, last)
        return ids, first, last
