"""The original's masked-LM rules (create_masked_lm_predictions), checked on synthetic id sequences.

Tolerances are 5 standard deviations of the binomial (or of the chi-square statistic), so a correct
implementation fails about once in 3 million runs; every test uses a fixed seed anyway.
"""

import collections
import math
import random

import pytest

from official_bert.pretraining_data import Masker, PretrainingDataError, PretrainingOptions, num_to_predict

CLS, SEP, MASK = 2, 3, 4
SIGMAS = 5


def within_binomial(count, n, p):
    return abs(count - n * p) <= SIGMAS * math.sqrt(n * p * (1 - p)) + 1e-9


def pair_ids(rng, vocab_size, len_a, len_b):
    return [CLS, *(rng.randrange(5, vocab_size) for _ in range(len_a)), SEP,
            *(rng.randrange(5, vocab_size) for _ in range(len_b)), SEP]


@pytest.mark.parametrize("num_tokens, prob, max_predictions, expected", [
    (128, 0.15, 20, 19),   # 19.2
    (30, 0.15, 20, 4),     # 4.5 rounds half to even, as Python 3 (the original run today)
    (10, 0.15, 20, 2),     # 1.5 → 2
    (3, 0.15, 20, 1),      # 0.45 → 0, raised to 1
    (512, 0.15, 20, 20),   # 76.8, capped by max_predictions_per_seq
    (512, 0.15, 80, 77),
])
def test_num_to_predict_formula(num_tokens, prob, max_predictions, expected):
    assert num_to_predict(num_tokens, prob, max_predictions) == expected


def test_masked_count_follows_formula_and_never_touches_cls_sep():
    options = PretrainingOptions()
    masker = Masker(options, vocab_size=1000, cls_id=CLS, sep_id=SEP, mask_id=MASK)
    rng = random.Random(1)
    for _ in range(500):
        len_a = rng.randint(1, 100)
        ids = pair_ids(rng, 1000, len_a, rng.randint(1, 125 - len_a))
        ids[rng.randrange(1, len(ids) - 1)] = SEP if rng.random() < 0.5 else CLS  # identity rule, not position
        out, positions, labels = masker(ids, rng)
        specials = {i for i, t in enumerate(ids) if t in (CLS, SEP)}
        assert len(positions) == min(num_to_predict(len(ids), 0.15, 20), len(ids) - len(specials))
        assert positions == sorted(set(positions)) and not specials & set(positions)
        assert labels == [ids[i] for i in positions]
        assert all(out[i] == ids[i] for i in range(len(ids)) if i not in positions)


@pytest.mark.parametrize("mask_prob, random_prob", [(0.8, 0.1), (1.0, 0.0), (0.8, 0.0), (0.0, 0.8), (0.0, 1.0)])
def test_replacement_split_is_binomial(mask_prob, random_prob):
    vocab_size = 1000
    options = PretrainingOptions(mask_token_prob=mask_prob, random_token_prob=random_prob)
    masker = Masker(options, vocab_size=vocab_size, cls_id=CLS, sep_id=SEP, mask_id=MASK)
    rng = random.Random(2)
    outcome = collections.Counter()
    for _ in range(2000):
        ids = pair_ids(rng, vocab_size, 60, 63)
        out, positions, labels = masker(ids, rng)
        for i, label in zip(positions, labels):
            outcome["mask" if out[i] == MASK else "kept" if out[i] == label else "random"] += 1
    n = sum(outcome.values())
    # A random replacement is uniform over the whole vocabulary: it shows [MASK] or the original 1/V of the time.
    keep_prob = 1 - mask_prob - random_prob
    expected = {"mask": mask_prob + random_prob / vocab_size, "kept": keep_prob + random_prob / vocab_size,
                "random": random_prob * (1 - 2 / vocab_size)}
    for name, p in expected.items():
        assert within_binomial(outcome[name], n, p), (name, outcome, n)


def chi_square(counts, expected_each):
    return sum((c - expected_each) ** 2 / expected_each for c in counts)


def chi_square_bound(df):
    return df + SIGMAS * math.sqrt(2 * df)


def test_random_replacements_are_uniform_over_the_vocabulary():
    vocab_size = 50
    options = PretrainingOptions(mask_token_prob=0.0, random_token_prob=1.0)
    masker = Masker(options, vocab_size=vocab_size, cls_id=CLS, sep_id=SEP, mask_id=MASK)
    rng = random.Random(3)
    counts = collections.Counter()
    for _ in range(1000):
        out, positions, _ = masker(pair_ids(rng, vocab_size, 60, 63), rng)
        counts.update(out[i] for i in positions)
    n = sum(counts.values())
    assert chi_square([counts[i] for i in range(vocab_size)], n / vocab_size) < chi_square_bound(vocab_size - 1)


def test_masked_positions_are_uniform_over_the_candidates():
    masker = Masker(PretrainingOptions(), vocab_size=1000, cls_id=CLS, sep_id=SEP, mask_id=MASK)
    rng = random.Random(4)
    counts = collections.Counter()
    trials = 4000
    for _ in range(trials):
        counts.update(masker(pair_ids(rng, 1000, 60, 65), rng)[1])
    candidates = [i for i in range(129) if i not in (0, 61, 127, 128)][:125]
    assert set(counts) <= set(range(1, 61)) | set(range(62, 127))
    p = num_to_predict(128, 0.15, 20) / 125  # 19 of the 125 text positions
    assert all(within_binomial(counts[i], trials, p) for i in candidates)
    assert chi_square([counts[i] for i in candidates], trials * p) < chi_square_bound(124)


def wordpiece_sequence(rng, num_words, continuation_ids, plain_ids):
    """[CLS] words [SEP] words [SEP], each word a plain id and 0-3 continuation ids; returns ids and word spans."""
    ids, words = [CLS], []
    for segment in range(2):
        for _ in range(num_words):
            begin = len(ids)
            ids.append(rng.choice(plain_ids))
            ids.extend(rng.choice(continuation_ids) for _ in range(rng.choice([0, 0, 0, 1, 2, 3])))
            words.append((begin, len(ids)))
        ids.append(SEP)
    return ids, words


def whole_word_masker(**options):
    vocab_size = 200
    is_continuation = [i >= 100 for i in range(vocab_size)]  # ids 100-199 play "##" pieces
    options = PretrainingOptions(do_whole_word_mask=True, **options)
    return Masker(options, vocab_size, CLS, SEP, MASK, is_continuation)


def test_whole_word_masking_never_splits_a_word_and_fills_greedily():
    masker = whole_word_masker()
    rng = random.Random(5)
    for _ in range(500):
        ids, words = wordpiece_sequence(rng, rng.randint(3, 25), list(range(100, 200)), list(range(5, 100)))
        _, positions, _ = masker(ids, rng)
        chosen = set(positions)
        budget = num_to_predict(len(ids), 0.15, 20)
        assert len(chosen) <= budget
        for begin, end in words:
            inside = sum(i in chosen for i in range(begin, end))
            assert inside in (0, end - begin)
            # The original walks every candidate: a word left out must not have fitted in what was left.
            assert inside or end - begin > budget - len(chosen)


def test_whole_word_masking_does_not_join_a_continuation_across_sep():
    masker = whole_word_masker(max_seq_length=8, max_predictions_per_seq=2, masked_lm_prob=0.25)
    # [CLS] w ##x [SEP] ##y z [SEP]: ##y starts its own word after [SEP]; budget round(7 × 0.25) = 2.
    ids = [CLS, 10, 150, SEP, 160, 20, SEP]
    seen = collections.Counter(tuple(masker(ids, random.Random(seed))[1]) for seed in range(300))
    assert set(seen) == {(1, 2), (4, 5)}  # the two-piece word alone, or the two one-piece words
    assert within_binomial(seen[(1, 2)], 300, 1 / 3)  # the first word drawn is the pair with probability 1/3


def test_whole_word_replacement_is_drawn_per_wordpiece():
    masker = whole_word_masker()
    rng = random.Random(6)
    mixed = two_piece_words = 0
    for _ in range(3000):
        ids, words = wordpiece_sequence(rng, 20, list(range(100, 200)), list(range(5, 100)))
        out, positions, _ = masker(ids, rng)
        chosen = set(positions)
        for begin, end in words:
            if end - begin == 2 and begin in chosen:
                two_piece_words += 1
                kinds = {"mask" if out[i] == MASK else "kept" if out[i] == ids[i] else "random"
                         for i in (begin, end - 1)}
                mixed += len(kinds) > 1
    # Independent 80/10/10 draws per piece disagree with probability 1 − (0.8² + 0.1² + 0.1²) = 0.34
    # (a random id equal to [MASK] or the original shifts this by under 0.002).
    assert within_binomial(mixed, two_piece_words, 0.34), (mixed, two_piece_words)


def test_ngram_masking_masks_runs_of_whole_words():
    masker = whole_word_masker(max_ngram_size=3)
    rng = random.Random(7)
    run_lengths = collections.Counter()
    for _ in range(300):
        ids, words = wordpiece_sequence(rng, 25, list(range(100, 200)), list(range(5, 100)))
        _, positions, _ = masker(ids, rng)
        chosen = set(positions)
        assert len(chosen) <= num_to_predict(len(ids), 0.15, 20)
        assert all(sum(i in chosen for i in range(b, e)) in (0, e - b) for b, e in words)
        run = 0
        for begin, _ in words + [(None, None)]:
            if begin is not None and begin in chosen:
                run += 1
            elif run:
                run_lengths[run] += 1
                run = 0
    assert run_lengths[1] > run_lengths[2] > 0 and run_lengths[3] > 0


@pytest.mark.parametrize("options, message", [
    (dict(max_predictions_per_seq=0), "max_predictions_per_seq=0: expected at least 1"),
    (dict(max_ngram_size=3), "also pass --do_whole_word_mask"),
    (dict(masked_lm_prob=0.0), "masked_lm_prob=0.0: expected a value in (0, 1]"),
    (dict(short_seq_prob=1.5), "short_seq_prob=1.5: expected a probability"),
    (dict(mask_token_prob=0.8, random_token_prob=0.3), "exceeds 1"),
    (dict(max_seq_length=4), "max_seq_length=4: expected at least 5"),
    (dict(dupe_factor=0), "dupe_factor=0: expected at least 1"),
])
def test_invalid_options_name_the_flag(options, message):
    with pytest.raises(PretrainingDataError, match=message.replace("(", r"\(").replace("]", r"\]")):
        PretrainingOptions(**options)


def test_few_predictions_cap_the_masking_as_the_original_with_a_warning():
    """The original refused nothing: num_to_predict = min(max_predictions_per_seq, ...) capped each sequence."""
    options = PretrainingOptions(max_seq_length=512, max_predictions_per_seq=20)
    assert "max_predictions_per_seq=20 is below the 77 predictions" in options.prediction_cap_warning()
    assert PretrainingOptions(max_seq_length=128, max_predictions_per_seq=20).prediction_cap_warning() is None
    masker = Masker(options, vocab_size=100, cls_id=2, sep_id=3, mask_id=4)
    ids = [2] + [random.Random(0).randrange(5, 100) for _ in range(510)] + [3]
    _, positions, _ = masker(ids, random.Random(1))
    assert len(positions) == 20
