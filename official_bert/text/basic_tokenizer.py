"""BasicTokenizer in the graph: text → words, exactly as `official_bert.tokenization.BasicTokenizer`.

Works on code points with TensorFlow ops only, from tables built out of this Python's `unicodedata`
(see `unicode_tables`): ICU and RE2, which tensorflow-text's own normalizers use, carry other Unicode
versions and other rules. Every character of every word can keep the span of input text it came from.
"""

import collections

import tensorflow as tf

from official_bert.text import unicode_tables as tables

_BMP = 0x10000
_SIZE_UNIT = 1 << 21  # above every code point
_BAD_UNIT = 1 << 24


class Words(collections.namedtuple("Words", ["words", "chars", "char_starts", "char_ends"])):
    """Output of `GraphBasicTokenizer.tokenize`.

    Args:
        words: string RaggedTensor [batch, (words)].
        chars: int32 RaggedTensor [num_words, (chars)], the code points of every word.
        char_starts: int64 [total chars], aligned with `chars.flat_values`: where in the input text
            (bytes or code points) each character's source starts (None unless offsets were asked for) ...
        char_ends: ... and ends (exclusive).

    Example:
    >>> words = GraphBasicTokenizer().tokenize(tf.constant(["Ab c"]), with_offsets=True)
    >>> words.char_starts.numpy().tolist(), words.char_ends.numpy().tolist()
    ([0, 1, 3], [1, 2, 4])
    """


class GraphBasicTokenizer:
    """Splits strings into words the way the original BasicTokenizer does, with TensorFlow ops.

    Args:
        do_lower_case: lowercase, NFD-normalize and drop Mn characters.
        offsets_unit: "BYTE" (offsets into the UTF-8 input) or "UTF8_CHAR" (code point offsets).
        preserved_tokens: `[unused<n>]` tokens kept whole where they stand alone between whitespace (as the
            Python BasicTokenizer's `preserve_unused_tokens` keeps the vocabulary's ones).
        normalize_unicode: None, or "nfc": compose the cleaned text (Unicode NFC, from this Python's tables) first;
            a composed character's span is that of the characters it was composed of.

    Example:
    >>> words = GraphBasicTokenizer(do_lower_case=True).tokenize(tf.constant(["HeLLo,  Wörld!"])).words
    >>> [w.decode() for w in words[0].numpy()]
    ['hello', ',', 'world', '!']
    >>> words = GraphBasicTokenizer(preserved_tokens=["[unused0]"]).tokenize(tf.constant(["a [unused0] [unused1]"]))
    >>> [w.decode() for w in words.words[0].numpy()]
    ['a', '[unused0]', '[', 'unused1', ']']
    >>> nfc = GraphBasicTokenizer(do_lower_case=False, normalize_unicode="nfc")
    >>> nfc.tokenize(tf.constant(["cafe\u0301"])).words[0].numpy()[0].decode() == "caf\u00e9"
    True
    """

    def __init__(self, do_lower_case=True, offsets_unit="BYTE", preserved_tokens=(), normalize_unicode=None):
        if offsets_unit not in ("BYTE", "UTF8_CHAR"):
            raise ValueError(f"offsets_unit must be 'BYTE' or 'UTF8_CHAR', got {offsets_unit!r}")
        if normalize_unicode not in (None, "nfc"):
            raise ValueError(f"normalize_unicode must be None or 'nfc', got {normalize_unicode!r}")
        self.do_lower_case = do_lower_case
        self.offsets_unit = offsets_unit
        self.preserved_tokens = tuple(preserved_tokens)
        self.normalize_unicode = normalize_unicode
        flags = tables.code_point_flags()
        self._flags = CodePointTable(flags[:_BMP], *tables.run_length(flags))
        if do_lower_case or normalize_unicode:
            self._combining = CodePointTable(None, *tables.combining_classes())
        if do_lower_case:
            self._sigma_context = CodePointTable(None, *tables.final_sigma_context())
            self._lowercase = tables.lowercase_mapping()
        if normalize_unicode:
            self._decomposition = tables.canonical_decomposition()
            self._compositions = tables.canonical_compositions()

    def tokenize(self, text, with_offsets=False):
        """Tokenizes a string tensor [batch] into `Words`."""
        text = text_batch(text, "GraphBasicTokenizer")
        cp, row, byte_start, nrows = decode_utf8(text)
        if not with_offsets:
            start = end = None
        elif self.offsets_unit == "BYTE":
            start, end = byte_start, byte_start + utf8_length(cp)
        else:
            first_of_row = tf.cumsum(tf.math.unsorted_segment_sum(tf.ones_like(row), row, nrows), exclusive=True)
            start = tf.range(tf.size(row, out_type=tf.int64)) - tf.gather(first_of_row, row)
            end = start + 1
        chars = _Chars(cp, self._flags.lookup(cp), row, start, end, None)
        chars = chars.drop(_has(chars.flags, tables.REMOVE))
        if self.normalize_unicode:
            chars = self._nfc(chars)
        if self.preserved_tokens:
            # Decided on the text as written, before lowercasing: "[UNUSED0]" is not kept, as in Python.
            chars = chars._replace(keep=self._preserved(chars))
        if self.do_lower_case:
            chars = self._lowercase_nfd(chars)
            chars = self._reorder_nonstarters(chars)
            chars = chars.drop(_has(chars.flags, tables.NONSPACING_MARK))
        return _split_words(chars, nrows)

    def _preserved(self, chars):
        """True for the characters of a preserved token standing alone between whitespace (the Python
        tokenizer's whitespace tokens, CJK characters counting as spaced out)."""
        separator = _has(chars.flags, tables.SEPARATOR)
        cjk = _has(chars.flags, tables.CJK)
        alone = separator | cjk
        starts = row_starts(chars.row) | alone | tf.concat([[False], alone[:-1]], 0)
        token = tf.cumsum(tf.cast(starts, tf.int64)) - 1
        strings = tf.strings.unicode_encode(tf.RaggedTensor.from_value_rowids(chars.cp, token), "UTF-8")
        candidate = tf.strings.regex_full_match(strings, r"\[unused[0-9]+\]")

        def lookup():
            at = tf.where(candidate)[:, 0]
            found = tf.reduce_any(tf.equal(tf.gather(strings, at)[:, None], tf.constant(self.preserved_tokens)), 1)
            return tf.scatter_nd(at[:, None], found, tf.shape(candidate, out_type=tf.int64))

        kept = tf.cond(tf.reduce_any(candidate), lookup, lambda: candidate)
        return tf.gather(kept, token)

    def _lowercase_nfd(self, chars):
        """Replaces every character by NFD(lower(character)), with CPython's Final_Sigma rule."""
        final_sigma = self._final_sigma(chars)
        cp = tf.where(final_sigma, tables.SMALL_FINAL_SIGMA, chars.cp)
        at = tf.where(_has(chars.flags, tables.MAPPED) & ~final_sigma)[:, 0]
        keys, splits, values = (tf.constant(a) for a in self._lowercase)
        index = _lower_bound(keys, tf.gather(cp, at))
        chars = _replace_by_sequences(chars, cp, at, index, splits, values)
        return chars._replace(flags=self._flags.lookup(chars.cp))

    def _nfc(self, chars):
        """Unicode NFC: every character replaced by its canonical decomposition, the combining marks put in
        canonical order, then composed as NFC composes them (a mark not blocked from the run's starter; a starter
        with the lone starter before it: Hangul, two-part vowels)."""
        keys, splits, values = (tf.constant(a) for a in self._decomposition)
        index = tf.minimum(_lower_bound(keys, chars.cp), tf.size(keys) - 1)
        at = tf.where(tf.equal(tf.gather(keys, index), chars.cp))[:, 0]
        chars = _replace_by_sequences(chars, chars.cp, at, tf.gather(index, at), splits, values)
        ccc = tf.cast(self._combining.lookup(chars.cp), tf.int64)
        run = tf.cumsum(tf.cast(tf.equal(ccc, 0) | row_starts(chars.row), tf.int64)) - 1
        order = tf.argsort(run * 256 + ccc, stable=True)
        chars, ccc = chars.gather(order), tf.gather(ccc, order)
        pairs, composites = (tf.constant(a) for a in self._compositions)

        def compose(first, second):
            key = first * tables.PAIR_UNIT + second
            found = tf.minimum(_lower_bound(pairs, key), tf.size(pairs) - 1)
            return tf.where(tf.equal(tf.gather(pairs, found), key), tf.gather(composites, found), -1)

        # First a starter whose run has no marks takes the starter after it (a two-part vowel's halves, Hangul L +
        # V), before that starter's marks are tried on it, as NFC's left-to-right pass does.
        chars, ccc = self._compose_first_starters(chars, ccc, compose)
        run = tf.cumsum(tf.cast(tf.equal(ccc, 0) | row_starts(chars.row), tf.int64)) - 1
        n = tf.size(chars.cp, out_type=tf.int64)
        cp = tf.cast(chars.cp, tf.int64)
        nruns = tf.reduce_max(tf.concat([run + 1, [0]], 0))
        run_first = tf.math.unsorted_segment_min(tf.range(n), run, nruns)
        run_length = tf.math.unsorted_segment_sum(tf.ones_like(run), run, nruns)
        starter = tf.gather(cp, run_first)
        has_starter = tf.equal(tf.gather(ccc, run_first), 0)

        def mark(k, starter, last, removed):
            # The k-th character of each run, a mark: composed with the run's starter unless an uncomposed mark of
            # its class (or higher: canonical order) stands between them.
            present = run_length > k
            at = tf.where(present, run_first + k, 0)
            composite = compose(starter, tf.gather(cp, at))
            done = present & has_starter & (last < tf.gather(ccc, at)) & (composite >= 0)
            removed = tf.tensor_scatter_nd_update(removed, tf.boolean_mask(at, done)[:, None],
                                                  tf.ones_like(tf.boolean_mask(at, done), tf.bool))
            return k + 1, tf.where(done, composite, starter), tf.where(present & ~done, tf.gather(ccc, at), last), \
                removed

        _, starter, last, removed = tf.while_loop(
            lambda k, *_: k < tf.reduce_max(tf.concat([run_length, [0]], 0)), mark,
            (tf.constant(1, tf.int64), starter, tf.fill([nruns], tf.constant(-1, tf.int64)), tf.zeros([n], tf.bool)))
        # A lone starter composed into the lone starter before it (L + V, LV + T), pair by pair from the left.
        alone = tf.equal(run_length, 1) & has_starter
        bare = tf.equal(last, -1) & has_starter
        row = tf.gather(chars.row, run_first)
        into = tf.range(nruns)  # the run each run's characters end up in

        def candidates(alive, starter):
            live = tf.where(alive)[:, 0]
            s, r = tf.gather(starter, live), tf.gather(row, live)
            composite = compose(s[:-1], s[1:])
            return live, composite, tf.gather(bare, live[:-1]) & tf.gather(alone, live[1:]) & tf.equal(
                r[:-1], r[1:]) & (composite >= 0)

        def starters(alive, starter, into, removed):
            live, composite, candidate = candidates(alive, starter)
            # A run absorbing its right neighbour stays: its left neighbour waits for the next round.
            done = candidate & ~tf.concat([[False], candidate], 0)[:tf.size(candidate)]
            taken, taker = tf.boolean_mask(live[1:], done), tf.boolean_mask(live[:-1], done)
            starter = tf.tensor_scatter_nd_update(starter, taker[:, None], tf.boolean_mask(composite, done))
            alive = tf.tensor_scatter_nd_update(alive, taken[:, None], tf.zeros_like(taken, tf.bool))
            into = tf.tensor_scatter_nd_update(into, taken[:, None], taker)
            removed = tf.tensor_scatter_nd_update(removed, tf.gather(run_first, taken)[:, None],
                                                  tf.ones_like(taken, tf.bool))
            return alive, starter, into, removed

        _, starter, into, removed = tf.while_loop(lambda alive, starter, *_: tf.reduce_any(candidates(alive, starter)[2]),
                                                  starters, (tf.ones([nruns], tf.bool), starter, into, removed))
        composed = tf.tensor_scatter_nd_update(cp, run_first[:, None], starter)
        out = chars._replace(cp=tf.cast(composed, chars.cp.dtype))
        if chars.start is not None:
            # A composed character spans what it was composed of (a taken run was taken by a run that stayed).
            target = tf.where(removed, tf.gather(run_first, tf.gather(into, run)), tf.range(n))
            out = out._replace(start=tf.math.unsorted_segment_min(chars.start, target, n),
                               end=tf.math.unsorted_segment_max(chars.end, target, n))
        out = out.drop(removed)
        return out._replace(flags=self._flags.lookup(out.cp))

    @staticmethod
    def _compose_first_starters(chars, ccc, compose):
        """One round of: a lone starter (no marks after it) and the starter right after it composed into one."""
        starts = tf.equal(ccc, 0)
        nxt = tf.concat([tf.range(1, tf.size(ccc, out_type=tf.int64)), [0]], 0)[:tf.size(ccc)]
        follows = tf.concat([starts[1:], [False]], 0) & tf.equal(tf.gather(chars.row, nxt), chars.row)
        composite = compose(tf.cast(chars.cp, tf.int64), tf.cast(tf.gather(chars.cp, nxt), tf.int64))
        candidate = starts & follows & (composite >= 0)
        previous = tf.concat([[False], candidate[:-1]], 0)[:tf.size(candidate)]
        done = candidate & ~previous  # a starter taken by the one before it takes none itself this round

        def merge():
            taken = tf.concat([[False], done[:-1]], 0)
            cp = tf.where(done, tf.cast(composite, chars.cp.dtype), chars.cp)
            out = chars._replace(cp=cp)
            if chars.start is not None:
                out = out._replace(end=tf.where(done, tf.gather(chars.end, nxt), chars.end))
            keep = tf.where(~taken)[:, 0]
            return out.gather(keep), tf.gather(ccc, keep)

        return tf.cond(tf.reduce_any(done), merge, lambda: (chars, ccc))

    def _final_sigma(self, chars):
        """True where a capital sigma lowercases to ς (CPython's handle_capital_sigma): the nearest
        character before it that is not case-ignorable is cased, and the nearest after it is not."""
        is_sigma = tf.equal(chars.cp, tables.CAPITAL_SIGMA)

        def context():
            bits = self._sigma_context.lookup(chars.cp)
            decisive = _lacks(bits, tables.CASE_IGNORABLE)
            decisive_at = tf.where(decisive)[:, 0]
            count_before = tf.cumsum(tf.cast(decisive, tf.int64), exclusive=True)

            def cased(k):
                valid = (k >= 0) & (k < tf.size(decisive_at, out_type=tf.int64))
                neighbour = tf.gather(decisive_at, tf.where(valid, k, 0))  # the sigma is decisive: never empty
                same_row = tf.equal(tf.gather(chars.row, neighbour), chars.row)
                return valid & same_row & _has(tf.gather(bits, neighbour), tables.CASED)

            return is_sigma & cased(count_before - 1) & ~cased(count_before + tf.cast(decisive, tf.int64))

        return tf.cond(tf.reduce_any(is_sigma), context, lambda: tf.zeros_like(is_sigma))

    def _reorder_nonstarters(self, chars):
        """NFD's canonical ordering, needed only where a non-starter survives the removal of Mn characters.

        The characters of a run that holds such a non-starter share the run's span of input text.
        """
        kept = _has(chars.flags, tables.KEPT_NONSTARTER)

        def reorder():
            ccc = tf.cast(self._combining.lookup(chars.cp), tf.int64)
            run = tf.cumsum(tf.cast(tf.equal(ccc, 0) | row_starts(chars.row), tf.int64)) - 1
            order = tf.argsort(run * 256 + ccc, stable=True)
            out = chars
            if chars.start is not None:
                union = tf.gather(tf.math.segment_max(tf.cast(kept, tf.int32), run), run) > 0
                start = tf.where(union, tf.gather(tf.math.segment_min(chars.start, run), run), chars.start)
                end = tf.where(union, tf.gather(tf.math.segment_max(chars.end, run), run), chars.end)
                out = chars._replace(start=start, end=end)
            return out.gather(order)

        return tf.cond(tf.reduce_any(kept), reorder, lambda: chars)


class CodePointTable:
    """Code point → value: a dense table for the BMP, run-length search above it.

    Args:
        bmp: the values of U+0000-U+FFFF (a NumPy array), or None to search the runs for every code point.
        starts, values: the runs (`unicode_tables.run_length`): code points `starts[i]..starts[i+1]-1` map to
            `values[i]`.

    Example:
    >>> import numpy as np
    >>> table = CodePointTable(None, np.array([0, 65, 91], np.int32), np.array([0, 1, 0], np.int32))
    >>> table.lookup(tf.constant([64, 65, 90, 0x1F600])).numpy().tolist()
    [0, 1, 1, 0]
    """

    def __init__(self, bmp, starts, values):
        self.bmp, self.starts, self.values = bmp, starts, values

    def lookup(self, cp):
        def runs():
            return tf.gather(self.values, tf.searchsorted(self.starts, cp, side="right") - 1)
        if self.bmp is None:
            return runs()
        bmp = tf.gather(self.bmp, tf.minimum(cp, _BMP - 1))
        astral = cp >= _BMP
        return tf.cond(tf.reduce_any(astral), lambda: tf.where(astral, runs(), bmp), lambda: bmp)


def text_batch(inputs, who):
    """Returns `inputs` as a string tensor [batch], or raises an error saying what `who` expects."""
    inputs = tf.convert_to_tensor(inputs)
    if inputs.dtype != tf.string:
        raise TypeError(f"{who} expects a string tensor of shape [batch], got {inputs.dtype.name}")
    if inputs.shape.rank != 1:
        raise ValueError(f"{who} expects a string tensor of shape [batch], got shape {inputs.shape}")
    return inputs


class _Chars(collections.namedtuple("_Chars", ["cp", "flags", "row", "start", "end", "keep"])):
    """Flat per-character arrays: code point, property bits, batch row, span of the input it came from, and
    whether it belongs to a preserved token (None when nothing is preserved)."""

    def gather(self, indices):
        return _Chars(*(None if a is None else tf.gather(a, indices) for a in self))

    def drop(self, mask):
        def keep():
            return self.gather(tf.where(~mask)[:, 0])
        return tf.cond(tf.reduce_any(mask), keep, lambda: self)


def _replace_by_sequences(chars, cp, at, index, splits, values):
    """`chars` with the code points `cp`, where those at `at` are replaced by the sequences `index` points at:
    `values[splits[index]:splits[index + 1]]`; each character of a sequence keeps its source's span."""
    first = tf.gather(splits, index)
    counts = tf.gather(splits, index + 1) - first

    def one_to_one():
        return chars._replace(cp=tf.tensor_scatter_nd_update(cp, at[:, None], tf.gather(values, first)))

    def expand():
        all_counts = tf.tensor_scatter_nd_update(tf.ones_like(cp), at[:, None], counts)
        all_first = tf.tensor_scatter_nd_update(tf.fill(tf.shape(cp), -1), at[:, None], first)
        owner = tf.repeat(tf.range(tf.size(cp)), all_counts)
        within = tf.range(tf.reduce_sum(all_counts)) - tf.gather(tf.cumsum(all_counts, exclusive=True), owner)
        owner_first = tf.gather(all_first, owner)
        mapped = tf.where(owner_first >= 0, tf.gather(values, tf.maximum(owner_first, 0) + within),
                          tf.gather(cp, owner))
        return chars.gather(owner)._replace(cp=mapped)

    return tf.cond(tf.reduce_all(tf.equal(counts, 1)), one_to_one, expand)


def decode_utf8(text):
    """Decodes a batch of UTF-8 strings into flat code points, their rows and byte offsets, and the batch size.

    Example:
    >>> cp, row, start, nrows = decode_utf8(tf.constant(["aé", "€"]))
    >>> cp.numpy().tolist(), row.numpy().tolist(), start.numpy().tolist(), int(nrows)
    ([97, 233, 8364], [0, 0, 1], [0, 1, 0], 2)

    Undecodable bytes are dropped, as `convert_to_unicode`'s "ignore" does. Valid input (the usual case)
    is decoded with elementwise ops on the bytes, several times faster than
    tf.strings.unicode_decode_with_offsets, which handles the rest.
    """
    nrows = tf.size(text, out_type=tf.int64)
    lengths = tf.cast(tf.strings.length(text), tf.int64)
    row_starts = tf.cumsum(lengths, exclusive=True)
    data = tf.cast(tf.io.decode_raw(tf.strings.reduce_join(text), tf.uint8), tf.int32)
    n = tf.size(data, out_type=tf.int64)
    byte_row = tf.repeat(tf.range(nrows), lengths)

    def ascii():
        return data, byte_row, tf.range(n)

    def utf8():
        # Every byte is decoded as if it began a character; the lead bytes are picked out at the end.
        size = 1 + tf.cast(data >= 0xC0, tf.int32) + tf.cast(data >= 0xE0, tf.int32) + tf.cast(data >= 0xF0, tf.int32)
        cp = data & tf.gather(tf.constant([0x7F, 0x1F, 0x0F, 0x07]), size - 1)
        padded = tf.concat([data, tf.zeros([3], tf.int32)], 0)
        for i in (1, 2, 3):
            cp = tf.where(size > i, cp * 64 + (padded[i:n + i] & 0x3F), cp)
        bad_lead = tf.cast((data == 0xC0) | (data == 0xC1) | (data >= 0xF5), tf.int32)
        at = tf.where(tf.not_equal(data & 0xC0, 0x80))[:, 0]
        packed = tf.gather(cp + size * _SIZE_UNIT + bad_lead * _BAD_UNIT, at)  # one gather instead of three
        cp, size, bad_lead = packed % _SIZE_UNIT, packed // _SIZE_UNIT % 8, packed // _BAD_UNIT
        next_at = tf.concat([at[1:], n[None]], 0)
        # Each lead byte is followed by exactly size - 1 continuation bytes, encodes no overlong form, no
        # surrogate and nothing above U+10FFFF; a row does not begin with continuation bytes (which would
        # complete the previous row's last character).
        valid = tf.reduce_all(
            tf.equal(next_at - at, tf.cast(size, tf.int64)) & tf.equal(bad_lead, 0)
            & tf.where(size == 3, (cp >= 0x800) & ((cp < 0xD800) | (cp > 0xDFFF)), True)
            & tf.where(size == 4, (cp >= _BMP) & (cp <= tables.MAX_CODE_POINT), True))
        valid &= tf.reduce_all(tf.not_equal(tf.gather(padded, tf.boolean_mask(row_starts, lengths > 0)) & 0xC0, 0x80))

        def fast():
            return cp, tf.gather(byte_row, at), at

        def slow():
            codes, starts = tf.strings.unicode_decode_with_offsets(text, "UTF-8", errors="ignore")
            row = codes.value_rowids()
            return codes.flat_values, row, starts.flat_values + tf.gather(row_starts, row)

        return tf.cond(valid, fast, slow)

    cp, row, at = tf.cond(tf.reduce_all(data < 0x80), ascii, utf8)
    return cp, row, at - tf.gather(row_starts, row), nrows


def _lower_bound(sorted_values, values):
    """tf.searchsorted(side="left") of integers, written as the right side of values - 1: the same indices, but an
    UpperBound op, which LiteRT's Select TF ops carry (LowerBound it does not), so a raw-text export converts."""
    return tf.searchsorted(sorted_values, values - 1, side="right")


def utf8_length(cp):
    """Bytes of each code point in UTF-8, int64."""
    return tf.cast(1 + tf.cast(cp >= 0x80, tf.int32) + tf.cast(cp >= 0x800, tf.int32) + tf.cast(cp >= _BMP, tf.int32),
                   tf.int64)


def _has(flags, bits):
    return tf.not_equal(flags & bits, 0)


def _lacks(flags, bits):
    return tf.equal(flags & bits, 0)


def row_starts(row):
    """True where a character is the first of its batch row.

    Example:
    >>> row_starts(tf.constant([0, 0, 2, 2])).numpy().tolist()
    [True, False, True, False]
    """
    return tf.concat([tf.ones_like(row[:1], tf.bool), tf.not_equal(row[1:], row[:-1])], 0)


def _split_words(chars, nrows):
    """Splits at separators (dropped) and around punctuation and CJK characters (kept as words)."""
    separator = _has(chars.flags, tables.SEPARATOR)
    alone = _has(chars.flags, tables.PUNCTUATION | tables.CJK)
    if chars.keep is not None:
        alone &= ~chars.keep
    breaks_after = tf.concat([[False], (separator | alone)[:-1]], 0)
    word_start = row_starts(chars.row) | breaks_after | alone
    kept = tf.where(~separator)[:, 0]
    chars = chars.gather(kept)
    first_chars = tf.where(tf.gather(word_start, kept))[:, 0]
    word_chars = tf.RaggedTensor.from_row_starts(chars.cp, first_chars)
    words = tf.RaggedTensor.from_value_rowids(
        tf.strings.unicode_encode(word_chars, "UTF-8"), tf.gather(chars.row, first_chars), nrows=nrows)
    return Words(words, word_chars, chars.start, chars.end)
