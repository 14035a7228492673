"""Chooses the masked-LM positions of a sequence and replaces their tokens (create_masked_lm_predictions)."""

import bisect
import itertools

from official_bert.pretraining_data.options import num_to_predict


class Masker:
    """Masks a [CLS] A [SEP] B [SEP] sequence of ids the way the original does.

    num_to_predict = min(max_predictions_per_seq, max(1, round(len(ids) × masked_lm_prob))) positions
    are chosen uniformly among all but [CLS]/[SEP], or, with whole-word masking, whole words are chosen
    (a word is a piece plus the continuation pieces after it in the same segment) and a word that would
    overshoot num_to_predict is skipped. With max_ngram_size > 1, runs of up to that many adjacent words
    are chosen, a run of n words with weight 1/n (Model Garden's scheme). Each chosen WordPiece is then,
    independently, [MASK] (mask_token_prob), a uniformly random vocabulary id (random_token_prob), or kept.

    The choice has the original's distribution (a uniformly random order of the candidates, taken until
    the budget is met) but is drawn lazily, so that only the candidates used cost a random number.

    Args:
        options: a `PretrainingOptions`.
        vocab_size: random replacements are drawn from range(vocab_size), special tokens included (as the
            original).
        cls_id, sep_id, mask_id: ids of [CLS], [SEP], [MASK].
        is_continuation: sequence of bools indexed by id, true for pieces that continue a word ("##…");
            needed for whole-word masking.
        random_ids: the ids random replacements are drawn from (default: all of range(vocab_size)); a
            vocabulary that lists a token twice leaves out the ids of its earlier lines, as the original does.

    Example:
    >>> import random
    >>> from official_bert.pretraining_data.options import PretrainingOptions
    >>> options = PretrainingOptions(max_seq_length=10, max_predictions_per_seq=4, masked_lm_prob=0.4,
    ...                              mask_token_prob=1.0, random_token_prob=0.0)
    >>> masker = Masker(options, vocab_size=10, cls_id=2, sep_id=3, mask_id=4)
    >>> masker([2, 5, 6, 7, 3, 8, 9, 5, 3], random.Random(0))  # round(9 × 0.4) = 4 of the 6 text tokens
    ([2, 5, 6, 4, 3, 4, 4, 4, 3], [3, 5, 6, 7], [7, 8, 9, 5])
    """

    def __init__(self, options, vocab_size, cls_id, sep_id, mask_id, is_continuation=None, random_ids=None):
        if options.do_whole_word_mask and is_continuation is None:
            raise ValueError("whole-word masking needs is_continuation")
        self._options = options
        self._random_ids = random_ids
        self._num_random = vocab_size if random_ids is None else len(random_ids)
        self._cls_id, self._sep_id, self._mask_id = cls_id, sep_id, mask_id
        self._is_continuation = is_continuation
        self._maskable = [True] * vocab_size
        self._maskable[cls_id] = self._maskable[sep_id] = False
        self._max_ngram = options.max_ngram_size or 1
        self._ngram_weights = list(itertools.accumulate(1.0 / n for n in range(1, self._max_ngram + 1)))
        # One draw decides all three outcomes: [0, mask) → [MASK], [mask, 1 − random) → kept, rest → random.
        self._mask_below = options.mask_token_prob
        self._keep_below = 1.0 - options.random_token_prob

    def __call__(self, ids, rng):
        """Returns (masked ids, sorted masked positions, original ids at those positions); `ids` is untouched."""
        budget = num_to_predict(len(ids), self._options.masked_lm_prob, self._options.max_predictions_per_seq)
        if self._options.do_whole_word_mask:
            words = self._words(ids)
            spans = self._choose_words(words, budget, rng) if self._max_ngram == 1 else \
                self._choose_ngrams(words, budget, rng)
            positions = sorted(i for begin, end in spans for i in range(begin, end))
        else:
            candidates = list(itertools.compress(range(len(ids)), map(self._maskable.__getitem__, ids)))
            positions = _random_sample(candidates, budget, rng.random)
            positions.sort()
        output = list(ids)
        random, mask_below, keep_below, mask_id = rng.random, self._mask_below, self._keep_below, self._mask_id
        for i in positions:
            r = random()
            if r < mask_below:
                output[i] = mask_id
            elif r >= keep_below:
                output[i] = self._random_id(random)
        return output, positions, [ids[i] for i in positions]

    def _random_id(self, random):
        index = int(random() * self._num_random)
        return index if self._random_ids is None else self._random_ids[index]

    def _words(self, ids):
        """[begin, end) spans of the words: a piece and the continuation pieces after it, [CLS]/[SEP] excluded."""
        cls_id, sep_id = self._cls_id, self._sep_id
        is_continuation = self._is_continuation
        words = []
        in_word = False
        for i, t in enumerate(ids):
            if t == cls_id or t == sep_id:
                in_word = False
            elif in_word and is_continuation[t]:
                words[-1] = (words[-1][0], i + 1)
            else:
                words.append((i, i + 1))
                in_word = True
        return words

    @staticmethod
    def _choose_words(words, budget, rng):
        """Walks the words in random order, taking each one that still fits the budget."""
        chosen, count = [], 0
        for begin, end in _random_order(words, rng.random):
            if count >= budget:
                break
            if count + end - begin <= budget:
                chosen.append((begin, end))
                count += end - begin
        return chosen

    def _choose_ngrams(self, words, budget, rng):
        """Model Garden's _masking_ngrams: pick a run length by weight, then a random unused run of that length."""
        runs = []  # runs[n - 1]: the [begin, end) spans of n adjacent words (not across [SEP])
        for n in range(1, self._max_ngram + 1):
            runs.append([(words[k][0], words[k + n - 1][1]) for k in range(len(words) - n + 1)
                         if all(words[k + t][1] == words[k + t + 1][0] for t in range(n - 1))])
        covered = bytearray(words[-1][1] if words else 0)
        chosen, count, left = [], 0, sum(map(len, runs))
        while count < budget and left:
            n = 1 + bisect.bisect_right(self._ngram_weights, rng.random() * self._ngram_weights[-1])
            pool = runs[n - 1]
            if count + n > budget:
                left -= len(pool)  # every run of n words holds at least n pieces: none fits any more
                pool.clear()
                continue
            if not pool:
                continue
            j = int(rng.random() * len(pool))
            pool[j], pool[-1] = pool[-1], pool[j]
            begin, end = pool.pop()
            left -= 1
            if count + end - begin > budget or any(covered[begin:end]):
                continue
            covered[begin:end] = b"\x01" * (end - begin)
            chosen.append((begin, end))
            count += end - begin
        return chosen


def _random_sample(items, k, random):
    """The first `k` items that `_random_order` would yield, as a list: the same draws, without a generator's
    cost per item (this runs once per instance)."""
    n = len(items)
    k = min(k, n)
    for i in range(k):
        j = i + int(random() * (n - i))
        items[i], items[j] = items[j], items[i]
    return items[:k]


def _random_order(items, random):
    """Yields `items` in a uniformly random order (a Fisher-Yates shuffle of the list, done as it goes), so
    that taking k of them costs k random numbers. `int(random() * n)` is uniform to within 2**-53."""
    n = len(items)
    for i in range(n):
        j = i + int(random() * (n - i))
        items[i], items[j] = items[j], items[i]
        yield items[i]
