"""The original's segment-pair rules (create_instances_from_document, truncate_seq_pair).

Every token id encodes where it came from (document, sentence, position), so each pair can be traced
back to the corpus. Tolerances are 5 standard deviations of the binomial or of the chi-square statistic.
"""

import collections
import math
import random

from official_bert.pretraining_data import create_segment_pairs, create_single_segments, truncate_seq_pair
from official_bert.pretraining_data.instances import target_length

SIGMAS = 5


def within_binomial(count, n, p):
    return abs(count - n * p) <= SIGMAS * math.sqrt(n * p * (1 - p))


def chi_square_ok(counts):
    expected = sum(counts) / len(counts)
    df = len(counts) - 1
    return sum((c - expected) ** 2 / expected for c in counts) < df + SIGMAS * math.sqrt(2 * df)


def traced_corpus(rng, num_documents, sentence_length=10, min_sentences=2, max_sentences=30):
    """Documents of `sentence_length`-token sentences; token = document * 10**6 + sentence * 1000 + position."""
    return [[[d * 10**6 + s * 1000 + t for t in range(sentence_length)]
             for s in range(rng.randint(min_sentences, max_sentences))] for d in range(num_documents)]


def where(token):
    return token // 10**6, token // 1000 % 1000, token % 1000


def sentences_of(tokens):
    return sorted({where(t)[1] for t in tokens})


def original_truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    """google-research/bert's truncate_seq_pair, verbatim but for style: the reference."""
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()


def test_truncation_matches_the_original_loop():
    rng = random.Random(0)
    for _ in range(300):
        len_a, len_b, max_num_tokens = rng.randint(1, 300), rng.randint(1, 300), rng.randint(2, 200)
        a, b = list(range(len_a)), list(range(1000, 1000 + len_b))
        ours = truncate_seq_pair(list(a), list(b), max_num_tokens, rng)
        original_truncate_seq_pair(a, b, max_num_tokens, rng)
        # Lengths (which side loses how much) are the same; which end a token leaves from is random.
        assert (len(ours[0]), len(ours[1])) == (len(a), len(b))
        for kept in ours:  # what is left is a contiguous run of the input
            assert kept and kept == list(range(kept[0], kept[0] + len(kept)))


def test_truncation_takes_from_front_and_back_with_probability_half():
    rng = random.Random(1)
    fronts = [truncate_seq_pair(list(range(100)), [7] * 10, 50, rng)[0][0] for _ in range(2000)]
    # 60 tokens leave the longer list A, each from the front with probability 1/2: Binomial(60, 1/2).
    mean = sum(fronts) / len(fronts)
    variance = sum((f - mean) ** 2 for f in fronts) / (len(fronts) - 1)
    assert abs(mean - 30) < SIGMAS * math.sqrt(15 / len(fronts))
    assert abs(variance - 15) < SIGMAS * 15 * math.sqrt(2 / len(fronts))


def test_short_target_length_probability_and_range():
    rng = random.Random(2)
    draws = [target_length(125, 0.1, rng) for _ in range(20000)]
    short = [d for d in draws if d < 125]
    # randint(2, 125) itself returns 125 one time in 124.
    assert within_binomial(len(short), len(draws), 0.1 * 123 / 124)
    assert min(short) >= 2 and chi_square_ok([sum(1 for d in short if lo <= d < lo + 41) for lo in (2, 43, 84)])


def pairs_by_document(documents, rng, max_num_tokens=125, short_seq_prob=0.0, dupe_factor=1):
    for _ in range(dupe_factor):
        for d in range(len(documents)):
            yield d, create_segment_pairs(documents, d, max_num_tokens, short_seq_prob, rng)


def test_pairs_trace_back_to_the_corpus():
    rng = random.Random(3)
    documents = traced_corpus(rng, 40)
    for d, pairs in pairs_by_document(documents, rng, short_seq_prob=0.1, dupe_factor=3):
        for tokens_a, tokens_b, is_random_next in pairs:
            assert tokens_a and tokens_b and len(tokens_a) + len(tokens_b) <= 125
            flat = [t for s in documents[d] for t in s]
            start = flat.index(tokens_a[0])
            assert tokens_a == flat[start:start + len(tokens_a)]  # A is contiguous text of the document
            b_document = where(tokens_b[0])[0]
            b_flat = [t for s in documents[b_document] for t in s]
            b_start = b_flat.index(tokens_b[0])
            assert tokens_b == b_flat[b_start:b_start + len(tokens_b)]
            if is_random_next:
                assert b_document != d  # a pool of 40 documents repeats itself with probability 40**-10
            else:
                assert b_document == d and b_start > start + len(tokens_a) - 1


def test_actual_next_follows_a_and_unused_sentences_are_put_back():
    rng = random.Random(4)
    documents = traced_corpus(rng, 40)
    for d, pairs in pairs_by_document(documents, rng, dupe_factor=3):
        next_sentence = 0
        for tokens_a, tokens_b, is_random_next in pairs:
            a_sentences = sentences_of(tokens_a)
            # Truncation takes under one 10-token sentence, so sentence membership survives it.
            assert a_sentences[0] == next_sentence
            if is_random_next:
                next_sentence = a_sentences[-1] + 1  # the rest of the chunk went back
            else:
                b_sentences = sentences_of(tokens_b)
                assert b_sentences[0] == a_sentences[-1] + 1
                next_sentence = b_sentences[-1] + 1
        assert next_sentence == len(documents[d])  # every sentence was used


def test_next_sentence_is_random_half_the_time_and_a_split_is_uniform():
    rng = random.Random(5)
    documents = traced_corpus(rng, 40)
    random_count = coin_flips = 0
    splits = collections.defaultdict(collections.Counter)
    for d, pairs in pairs_by_document(documents, rng, dupe_factor=10):
        for tokens_a, tokens_b, is_random_next in pairs:
            a_sentences = sentences_of(tokens_a)
            if a_sentences[-1] == len(documents[d]) - 1:
                assert is_random_next  # a one-sentence chunk (the document's last sentence) has no next
                continue
            coin_flips += 1
            random_count += is_random_next
            if not is_random_next:
                splits[len(a_sentences) + len(sentences_of(tokens_b))][len(a_sentences)] += 1
    assert within_binomial(random_count, coin_flips, 0.5)
    # Full chunks hold 13 sentences (120 < 125 <= 130 tokens): A takes randint(1, 12) of them.
    assert chi_square_ok([splits[13][k] for k in range(1, 13)]) and set(splits[13]) == set(range(1, 13))


def test_random_next_comes_from_a_uniformly_random_other_document():
    rng = random.Random(6)
    documents = traced_corpus(rng, 20)
    sources = collections.Counter()
    for d, pairs in pairs_by_document(documents, rng, dupe_factor=20):
        sources.update((where(b[0])[0] - d) % 20 for a, b, is_random in pairs if is_random)
    assert 0 not in sources and chi_square_ok([sources[k] for k in range(1, 20)])


def test_short_targets_shape_the_pairs():
    rng = random.Random(7)
    documents = traced_corpus(rng, 300, sentence_length=1, min_sentences=260, max_sentences=260)
    # One-token sentences fill each chunk exactly to the document's target, so the longest pair shows it.
    longest = [max(len(a) + len(b) for a, b, _ in pairs)
               for _, pairs in pairs_by_document(documents, rng, short_seq_prob=1.0)]
    mean = sum(longest) / len(longest)
    assert min(longest) >= 2 and max(longest) <= 125
    assert abs(mean - 63.5) < SIGMAS * math.sqrt((124 ** 2 - 1) / 12 / len(longest))  # uniform on 2..125


def test_single_segments_pack_whole_sentences_to_full_length():
    rng = random.Random(8)
    for document in traced_corpus(rng, 20):
        segments = create_single_segments(document, 120, 0.0, rng)
        assert [t for s in segments for t in s] == [t for s in document for t in s]  # 12 sentences fill 120
        assert all(len(s) == 120 for s in segments[:-1]) and 0 < len(segments[-1]) <= 120
    # 13 sentences overshoot 125 by 5 tokens, which leave from the front or the back.
    document = traced_corpus(rng, 1, min_sentences=13, max_sentences=13)[0]
    flat = [t for s in document for t in s]
    (segment,) = create_single_segments(document, 125, 0.0, rng)
    start = flat.index(segment[0])
    assert len(segment) == 125 and segment == flat[start:start + 125]
