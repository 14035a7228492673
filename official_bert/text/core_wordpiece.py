"""WordPiece in core TensorFlow ops: the original's greedy longest-match-first over every word of a batch at once.

A SavedModel built from it holds only ops that every TensorFlow build registers (string, lookup-table, ragged and
control-flow ops), so stock TF Serving, Triton's TF backend or any Python with TensorFlow alone serves it.

How: a word found whole in the vocabulary (most words) is one hash-table lookup. For the other words, every
substring that could be a token (up to the longest one) is looked up in one batch — in a table of the tokens for
a word's first piece, and in one of the "##" tokens, "##" removed, for the pieces after it — each character keeps
its longest match, and a short loop walks from each word's start, jumping by the match it stands on, as the
original's `while start < len(chars)` does.
"""

import tensorflow as tf

from official_bert.text.basic_tokenizer import utf8_length


class CoreWordpiece(tf.Module):
    """The original `WordpieceTokenizer` on the words of `GraphBasicTokenizer`, in core TensorFlow ops.

    Works on characters (code points), as the original does: a word of more than `max_chars_per_word`
    characters, or one that the vocabulary cannot cover, is one [UNK].

    Args:
        vocab: token → id, as `tokenization.load_vocab` returns it; must hold [UNK].
        max_chars_per_word: the original's max_input_chars_per_word.

    Example:
    >>> from official_bert.text.basic_tokenizer import GraphBasicTokenizer
    >>> vocab = {token: i for i, token in enumerate(["[UNK]", "un", "##aff", "##able", "##a"])}
    >>> words = GraphBasicTokenizer().tokenize(tf.constant(["unaffable unaaffx"]))
    >>> ids, first, last = CoreWordpiece(vocab).tokenize(words)
    >>> ids.to_list(), first.numpy().tolist(), last.numpy().tolist()
    ([[1, 2, 3], [0]], [0, 2, 5, 9], [1, 4, 8, 15])
    """

    def __init__(self, vocab, max_chars_per_word=200):
        super().__init__()
        self.max_chars_per_word = max_chars_per_word
        self._unk_id = vocab["[UNK]"]
        # id + match length * _base: the largest is the longest match, and holds its id.
        self._base = max(vocab.values()) + 1
        continuations = {token[2:]: index for token, index in vocab.items() if token.startswith("##") and token[2:]}
        # Longer keys cannot match: a longer word is [UNK] before any lookup.
        self._first_length = min(max(map(len, vocab)), max_chars_per_word)
        self._continuation_length = min(max(map(len, continuations), default=0), max_chars_per_word)
        self._first = _table(vocab)
        # A table cannot be empty; no key is empty.
        self._continuation = _table(continuations or {"": -1})

    def tokenize(self, words):
        """`Words` → (int32 RaggedTensor ids [num_words, (pieces)], and int64 [pieces] the index in
        `words.chars.flat_values` of each piece's first and last character)."""
        chars = words.chars
        length = chars.row_lengths()
        word_start = chars.row_starts()
        too_long = length > self.max_chars_per_word
        whole_id = self._first.lookup(words.words.flat_values)
        unk = tf.constant(self._unk_id, tf.int64)
        one_piece = tf.stack([tf.where(too_long | (whole_id < 0), unk, whole_id), word_start, word_start + length - 1],
                             axis=1)
        split = tf.where(~too_long & (whole_id < 0))[:, 0]
        row_splits = tf.range(tf.size(length, out_type=tf.int64) + 1)
        pieces, row_splits = tf.cond(tf.size(split) > 0, lambda: self._split(words, split, one_piece),
                                     lambda: (one_piece, row_splits))
        ids = tf.RaggedTensor.from_row_splits(tf.cast(pieces[:, 0], tf.int32), row_splits, validate=False)
        return ids, pieces[:, 1], pieces[:, 2]

    def _split(self, words, split, one_piece):
        """The pieces of every word ([id, first char, last char], int64 [pieces, 3]) and their row splits, where
        the words `split` are not in the vocabulary whole and the others are `one_piece`."""
        start = tf.gather(words.chars.row_starts(), split)
        length = tf.gather(words.chars.row_lengths(), split)
        # The characters of those words, word after word ("positions").
        positions = tf.ragged.range(start, start + length)
        char = positions.flat_values
        word = row_ids(positions.row_splits)
        word_begin = positions.row_starts()
        rest = tf.gather(positions.row_limits(), word) - tf.range(tf.size(word, out_type=tf.int64))
        char_at = tf.concat([[0], tf.cumsum(utf8_length(tf.gather(words.chars.flat_values, char)))], 0)
        text = tf.strings.reduce_join(tf.gather(words.words.flat_values, split))

        def matches(table, at, longest):
            """Looks up the 1, 2, ... `longest` characters from each position `at`: (match length * _base + id,
            or -1; the position)."""
            keys = tf.ragged.range(longest)
            at = tf.gather(at, row_ids(keys.row_splits))
            size = keys.flat_values + 1
            begin = tf.gather(char_at, at)
            found = table.lookup(tf.strings.substr(text, begin, tf.gather(char_at, at + size) - begin))
            return tf.where(found >= 0, size * self._base + found, -1), at

        # At a word's start, keys shorter than the word (the whole word is not in the vocabulary) ...
        first, first_at = matches(self._first, word_begin, tf.minimum(length - 1, self._first_length))
        # ... and after it, continuations.
        is_first = tf.equal(tf.gather(word_begin, word), tf.range(tf.size(word, out_type=tf.int64)))
        later, later_at = matches(self._continuation, tf.range(tf.size(word, out_type=tf.int64)),
                                  tf.where(is_first, tf.constant(0, tf.int64),
                                           tf.minimum(rest, self._continuation_length)))
        best = tf.math.unsorted_segment_max(tf.concat([first, later], 0), tf.concat([first_at, later_at], 0),
                                            tf.size(char, out_type=tf.int64))
        match_length = tf.where(best >= 0, best // self._base, 0)

        at, failed = _walk(match_length, word_begin, positions.row_limits())
        at = tf.boolean_mask(at, ~tf.gather(failed, tf.gather(word, at)))
        piece_word = tf.gather(word, at)
        pieces = tf.stack([best % self._base, char, char + match_length - 1], axis=1)
        count = tf.math.unsorted_segment_sum(tf.ones_like(at), piece_word, tf.size(split, out_type=tf.int64))
        counts = tf.tensor_scatter_nd_add(tf.ones_like(one_piece[:, 0]), split[:, None],
                                          tf.where(failed, tf.zeros_like(count), count - 1))
        row_splits = tf.concat([[0], tf.cumsum(counts)], 0)
        rank = tf.range(tf.size(at, out_type=tf.int64)) - tf.gather(tf.cumsum(count, exclusive=True), piece_word)
        # The pieces of split words overwrite the one piece their row would have.
        slot = tf.gather(row_splits, tf.gather(split, piece_word)) + rank
        stitched = tf.dynamic_stitch([tf.cast(row_splits[:-1], tf.int32), tf.cast(slot, tf.int32)],
                                     [one_piece, tf.gather(pieces, at)])
        return stitched, row_splits


def _table(vocab):
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(vocab), tf.string), tf.constant(list(vocab.values()), tf.int64)), -1)


def _walk(match_length, start, limit):
    """Greedy longest-match-first: from each word's `start` position, jumps by the match it stands on, until the
    word's `limit`, or a position without a match (the word fails).

    Returns the positions stood on (ascending) and, per word, whether it failed.
    """
    last = tf.size(match_length, out_type=tf.int64) - 1

    def step(position, failed, stood):
        active = (position < limit) & ~failed
        jump = tf.where(active, tf.gather(match_length, tf.minimum(position, last)), 0)
        stood = stood.write(stood.size(), tf.where(active & (jump > 0), position, -1))
        return position + jump, failed | (active & tf.equal(jump, 0)), stood

    def more(position, failed, stood):
        return tf.reduce_any((position < limit) & ~failed)

    stood = tf.TensorArray(tf.int64, size=0, dynamic_size=True, element_shape=start.shape)
    _, failed, stood = tf.while_loop(more, step, (start, tf.zeros_like(start, tf.bool), stood))
    stood = tf.reshape(stood.stack(), [-1])
    stood = tf.boolean_mask(stood, stood >= 0)
    marked = tf.scatter_nd(stood[:, None], tf.ones_like(stood), (last + 1)[None])
    return tf.where(marked > 0)[:, 0], failed


def row_ids(splits):
    """The row of every value of a ragged tensor with these row splits, int64: `value_rowids()` without the
    [rows, longest row] mask it builds.

    Example:
    >>> row_ids(tf.constant([0, 2, 2, 3], tf.int64)).numpy().tolist()
    [0, 0, 2]
    """
    size = splits[-1]
    # How many rows start at each value (several empty ones can).
    starts = tf.scatter_nd(splits[1:-1, None], tf.ones_like(splits[1:-1]), size[None] + 1)
    return tf.cumsum(starts[:-1])
