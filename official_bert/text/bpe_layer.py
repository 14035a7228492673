"""Keras layer: strings → RoBERTa's byte-level BPE ids in the graph, with core TensorFlow ops only, the same ids as
`byte_level_bpe.ByteLevelBPETokenizer` (and so as transformers' RobertaTokenizer).

A SavedModel built from it holds only ops every TensorFlow build registers (string, lookup-table, ragged, segment and
control-flow ops), so stock TF Serving serves a RoBERTa export that takes raw text, as it serves BERT's WordPiece one.

How: the text is decoded to code points (undecodable bytes dropped, as in Python); GPT-2's pre-tokenization is a
set of piece starts computed at once from each character's class and its neighbours' (`pretoken_starts`); every
piece's bytes become their vocab.json symbols, and a loop merges, in every piece at once, the adjacent pairs of the
piece's lowest merge rank (every other one of a run of overlapping equal pairs, as GPT-2 merges them left to right),
until no piece has a pair in merges.txt. Pairs are looked up as one int64 key (left id × unit + right id) in a hash
table of merge ranks and one of merged ids.
"""

import keras
import tensorflow as tf

from official_bert.text import byte_level_bpe as bpe
from official_bert.text import packing as packing_lib
from official_bert.text import unicode_tables
from official_bert.text.basic_tokenizer import CodePointTable, decode_utf8, row_starts, text_batch, utf8_length

_BMP = 0x10000
_NO_RANK = tf.int64.max
_APOSTROPHE, _SPACE = ord("'"), ord(" ")


@keras.saving.register_keras_serializable(package="official_bert")
class GraphByteLevelBPETokenizer(keras.layers.Layer):
    """Tokenizes a batch of strings into byte-level BPE ids: int32 RaggedTensor [batch, (pieces), (tokens)], a piece
    being a unit of GPT-2's pre-tokenization (a word with the space before it, a run of digits or punctuation, ...).

    With `tokenize_with_offsets=True` it returns `(ids, starts, ends)`, each token's span of the input less the
    spaces it starts with ("Ġword" spans "word", as transformers' `trim_offsets`; a token that holds part of a
    character's bytes spans that whole character, in bytes as in characters). The vocabulary and merges are compiled
    into the graph and attached as the SavedModel assets `vocab_file` and `merges_file`.

    Args:
        vocab_file: vocab.json.
        merges_file: merges.txt.
        tokenize_with_offsets: also return the start and end offsets of every token.
        offsets_unit: "BYTE" (into the UTF-8 input) or "UTF8_CHAR" (code points, i.e. Python str indices).
        **kwargs: passed to keras.layers.Layer.

    Example:
    >>> import json, os, tempfile
    >>> import tensorflow as tf
    >>> from official_bert.text.byte_level_bpe import byte_characters
    >>> from official_bert.text.bpe_layer import GraphByteLevelBPETokenizer
    >>> d = tempfile.mkdtemp()
    >>> chars = byte_characters()
    >>> vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>", *chars, "Ġl", "ow", "Ġlow"])}
    >>> _ = open(os.path.join(d, "vocab.json"), "w").write(json.dumps(vocab))
    >>> _ = open(os.path.join(d, "merges.txt"), "w").write("#version: 0.2\\nĠ l\\no w\\nĠl ow\\n")
    >>> layer = GraphByteLevelBPETokenizer(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
    >>> tokens = {i: t for t, i in vocab.items()}
    >>> [[[tokens[i] for i in piece] for piece in row] for row in layer(tf.constant(["low lower"])).to_list()]
    [[['l', 'ow'], ['Ġlow', 'e', 'r']]]
    """

    packing = packing_lib.ROBERTA

    def __init__(self, vocab_file, merges_file, tokenize_with_offsets=False, offsets_unit="BYTE", **kwargs):
        super().__init__(**kwargs)
        if offsets_unit not in ("BYTE", "UTF8_CHAR"):
            raise ValueError(f"offsets_unit must be 'BYTE' or 'UTF8_CHAR', got {offsets_unit!r}")
        # The Python tokenizer checks the files (special tokens, merges against the vocabulary) as it reads them.
        python = bpe.ByteLevelBPETokenizer(vocab_file, merges_file)
        vocab = python.vocab
        self._vocab_path, self._merges_path = vocab_file, merges_file
        self.tokenize_with_offsets = tokenize_with_offsets
        self.offsets_unit = offsets_unit
        self.vocab_file = tf.saved_model.Asset(vocab_file)
        self.merges_file = tf.saved_model.Asset(merges_file)
        self._special_tokens = self.packing.special_ids(vocab)
        classes = bpe.class_table()
        self._classes = CodePointTable(classes[:_BMP], *unicode_tables.run_length(classes))
        # Symbols are vocabulary ids; a byte whose character the vocabulary lacks gets one past them all, and is
        # dropped at the end, as transformers' RoBERTa BPE (no unknown token) drops it.
        self._in_vocabulary = max(vocab.values()) + 1
        self._unit = self._in_vocabulary + 256
        chars = bpe.byte_characters()
        self._byte_ids = tf.constant([vocab.get(chars[b], self._in_vocabulary + b) for b in range(256)], tf.int64)
        keys = [vocab[a] * self._unit + vocab[b] for a, b in python.ranks]
        self._ranks = _table(keys, list(python.ranks.values()))
        self._merged = _table(keys, [vocab[a + b] for a, b in python.ranks])

    def call(self, inputs):
        ids, starts, ends = self.call_with_offsets(inputs)
        return (ids, starts, ends) if self.tokenize_with_offsets else ids

    def call_with_offsets(self, inputs):
        """`(ids, starts, ends)` (offsets in `offsets_unit`), whatever the layer was built with.

        Args:
            inputs: string tensor [batch].
        """
        text = text_batch(inputs, "GraphByteLevelBPETokenizer")
        cp, row, byte_start, nrows = decode_utf8(text)
        starts = pretoken_starts(cp, tf.cast(self._classes.lookup(cp), tf.int32), row)
        piece = tf.cumsum(tf.cast(starts, tf.int64)) - 1
        num_pieces = tf.reduce_sum(tf.cast(starts, tf.int64))
        # Every byte of every character, from the input (the dropped bytes are no character's).
        size = utf8_length(cp)
        char_of_byte = tf.repeat(tf.range(tf.size(cp, out_type=tf.int64)), size)
        within = tf.range(tf.reduce_sum(size)) - tf.gather(tf.cumsum(size, exclusive=True), char_of_byte)
        in_row = tf.gather(byte_start, char_of_byte) + within
        row_offset = tf.cumsum(tf.cast(tf.strings.length(text), tf.int64), exclusive=True)
        data = tf.cast(tf.io.decode_raw(tf.strings.reduce_join(text), tf.uint8), tf.int64)
        byte = tf.gather(data, tf.gather(row_offset, tf.gather(row, char_of_byte)) + in_row)
        # Each byte spans its whole character, so that a token of part of a character's bytes spans the character.
        if self.offsets_unit == "BYTE":
            start = tf.gather(byte_start, char_of_byte)
            end = start + tf.gather(size, char_of_byte)
        else:
            char_index = tf.range(tf.size(cp, out_type=tf.int64))
            first_of_row = tf.math.unsorted_segment_min(char_index, row, nrows)
            start = tf.gather(char_index - tf.gather(first_of_row, row), char_of_byte)
            end = start + 1
        is_space = tf.cast(tf.equal(byte, _SPACE), tf.int64)
        symbols, symbol_piece, first, last, spaces, _ = self._merge(
            tf.gather(self._byte_ids, byte), tf.gather(piece, char_of_byte), start, end, is_space, is_space, num_pieces)
        first = tf.minimum(first + spaces, last)  # each space one byte, one character
        known = symbols < self._in_vocabulary
        piece_row = tf.boolean_mask(row, starts)

        def nest(values):
            pieces = tf.RaggedTensor.from_value_rowids(tf.boolean_mask(values, known),
                                                       tf.boolean_mask(symbol_piece, known), nrows=num_pieces)
            return tf.RaggedTensor.from_value_rowids(pieces, piece_row, nrows=nrows)

        return nest(tf.cast(symbols, tf.int32)), nest(first), nest(last)

    def _merge(self, symbols, piece, first, last, spaces, only_spaces, num_pieces):
        """BPE over every piece at once: (symbols, their pieces, their first and last offsets, the spaces they start
        with, whether they are spaces only) once no adjacent pair of a piece is in merges.txt."""

        def step(symbols, piece, first, last, spaces, only_spaces, _):
            key = symbols[:-1] * self._unit + symbols[1:]
            rank = tf.where(tf.equal(piece[:-1], piece[1:]), self._ranks.lookup(key), -1)
            rank = tf.where(rank >= 0, rank, _NO_RANK)
            lowest = tf.math.unsorted_segment_min(rank, piece[:-1], num_pieces)
            candidate = (rank < _NO_RANK) & tf.equal(rank, tf.gather(lowest, piece[:-1]))
            at = tf.where(candidate)[:, 0]
            # A run of overlapping candidates (an equal pair repeated: "a a a") merges every other one, from its first.
            run_start = candidate & ~tf.concat([[False], candidate[:-1]], 0)
            run = tf.gather(tf.cumsum(tf.cast(run_start, tf.int64)) - 1, at)
            first_of_run = tf.math.unsorted_segment_min(at, run, tf.reduce_sum(tf.cast(run_start, tf.int64)))
            at = tf.boolean_mask(at, tf.equal((at - tf.gather(first_of_run, run)) % 2, 0))
            symbols = tf.tensor_scatter_nd_update(symbols, at[:, None], self._merged.lookup(tf.gather(key, at)))
            last = tf.tensor_scatter_nd_update(last, at[:, None], tf.gather(last, at + 1))
            # A merged symbol starts with the left's spaces, and the right's too if the left is spaces only.
            spaces = tf.tensor_scatter_nd_update(spaces, at[:, None], tf.gather(spaces, at) + tf.gather(
                only_spaces, at) * tf.gather(spaces, at + 1))
            only_spaces = tf.tensor_scatter_nd_update(only_spaces, at[:, None],
                                                      tf.gather(only_spaces, at) * tf.gather(only_spaces, at + 1))
            dropped = tf.scatter_nd(at[:, None] + 1, tf.ones_like(at), tf.shape(symbols, out_type=tf.int64)[:1])
            keep = tf.equal(dropped, 0)
            return tuple(tf.boolean_mask(t, keep) for t in (symbols, piece, first, last, spaces, only_spaces)) + (
                tf.size(at) > 0,)

        state = (symbols, piece, first, last, spaces, only_spaces, tf.constant(True))
        loop = tf.while_loop(lambda *state: state[-1], step, state,
                             shape_invariants=(tf.TensorShape([None]),) * 6 + (tf.TensorShape([]),))
        return loop[:6]

    def get_special_tokens_dict(self):
        """vocab_size and the ids of <s>, </s>, <pad> and <mask>, under TF Hub's names (start_of_sequence_id, ...)."""
        return dict(self._special_tokens)

    def get_config(self):
        return {**super().get_config(), "vocab_file": self._vocab_path, "merges_file": self._merges_path,
                "tokenize_with_offsets": self.tokenize_with_offsets, "offsets_unit": self.offsets_unit}


def pretoken_starts(cp, classes, row):
    """Where GPT-2's pre-tokenization starts a piece (`byte_level_bpe.pretokenize`), for the characters of a batch:
    code points `cp`, their `byte_level_bpe` classes and batch rows; bool, one per character.

    Example:
    >>> text = "He's  here,\\t2"
    >>> classes = [bpe.character_class(c) for c in text]
    >>> starts = pretoken_starts(tf.constant([ord(c) for c in text]), tf.constant(classes), tf.zeros([len(text)],
    ...                                                                                             tf.int64))
    >>> [i for i, start in enumerate(starts.numpy()) if start], [start for _, start, _ in bpe.pretokenize(text)]
    ([0, 2, 4, 5, 10, 11, 12], [0, 2, 4, 5, 10, 11, 12])
    """
    first = row_starts(row)
    has_previous = ~first
    has_next = ~tf.concat([first[1:], [True]], 0)
    space = tf.equal(classes, bpe.SPACE)
    previous_space = has_previous & tf.concat([[False], space[:-1]], 0)
    next_space = tf.concat([space[1:], [False]], 0)
    class_change = has_previous & ~space & ~previous_space & tf.not_equal(classes, tf.concat([[-1], classes[:-1]], 0))
    space_run = space & ~previous_space
    # After whitespace, a piece starts unless the last whitespace character is a space (it starts the piece then);
    # a run of two or more before a non-space leaves its last character to what follows.
    after_space = ~space & previous_space & tf.not_equal(tf.concat([[-1], cp[:-1]], 0), _SPACE)
    before_text = space & previous_space & has_next & ~next_space
    starts = first | class_change | space_run | after_space | before_text
    return _contractions(cp, row, starts)


def _contractions(cp, row, starts):
    """`starts` with GPT-2's contractions ('s 't 're 've 'm 'll 'd) split off where a piece starts with one."""
    n = tf.size(cp)
    padded = tf.concat([cp, [-1, -1]], 0)
    padded_row = tf.concat([row, [-1, -1]], 0)
    one, two = padded[1:n + 1], padded[2:n + 2]
    one = tf.where(tf.equal(padded_row[1:n + 1], row), one, -1)
    two = tf.where(tf.equal(padded_row[2:n + 2], row), two, -1)

    def char(c):
        return tf.constant(ord(c), cp.dtype)

    single = tf.equal(one, char("s")) | tf.equal(one, char("t")) | tf.equal(one, char("m")) | tf.equal(one, char("d"))
    double = ((tf.equal(one, char("r")) | tf.equal(one, char("v"))) & tf.equal(two, char("e"))) | (
        tf.equal(one, char("l")) & tf.equal(two, char("l")))
    size = tf.where(starts & tf.equal(cp, _APOSTROPHE), tf.where(single, 1, tf.where(double, 2, 0)), 0)
    at = tf.where(size > 0)[:, 0]
    if_any = tf.size(at) > 0

    def split():
        length = tf.cast(tf.gather(size, at), tf.int64)
        inside = tf.concat([at + 1, tf.boolean_mask(at + 2, length == 2)], 0)
        after = at + 1 + length
        after = tf.boolean_mask(after, (after < tf.cast(n, tf.int64)) & tf.equal(
            tf.gather(tf.concat([row, [-1]], 0), tf.minimum(after, tf.cast(n, tf.int64))), tf.gather(row, at)))
        marks = tf.scatter_nd(inside[:, None], -tf.ones_like(inside), tf.cast(n, tf.int64)[None]) + tf.scatter_nd(
            after[:, None], tf.ones_like(after), tf.cast(n, tf.int64)[None])
        return (starts & (marks >= 0)) | (marks > 0)

    return tf.cond(if_any, split, lambda: starts)


def _table(keys, values):
    if not keys:  # a table cannot be empty; no pair's key is negative
        keys, values = [-1], [-1]
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(keys, tf.int64), tf.constant(values, tf.int64)), -1)
