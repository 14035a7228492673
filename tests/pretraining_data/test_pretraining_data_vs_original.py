"""Our instances have the statistics of google-research/bert's create_pretraining_data.py on the same corpus.

`original_instances` is the original's create_training_instances (with the whole-word masking of its last
version), transcribed onto token strings: the independent reference. Both run on one generated corpus;
every statistic must agree within 5 standard errors of the difference of two sample means.
"""

import collections
import math
import random

import numpy as np
import pytest

from official_bert import pretraining_data as ptd
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file, write_corpus

MaskedLm = collections.namedtuple("MaskedLm", ["index", "label"])


def original_instances(documents, max_seq_length, dupe_factor, short_seq_prob, masked_lm_prob,
                       max_predictions_per_seq, vocab_words, rng, do_whole_word_mask):
    """create_training_instances, corpus read: [(tokens, segment_ids, is_random_next, positions, labels)]."""
    documents = [d for d in documents if d]
    rng.shuffle(documents)
    instances = []
    for _ in range(dupe_factor):
        for document_index in range(len(documents)):
            instances.extend(create_instances_from_document(
                documents, document_index, max_seq_length, short_seq_prob, masked_lm_prob,
                max_predictions_per_seq, vocab_words, rng, do_whole_word_mask))
    rng.shuffle(instances)
    return instances


def create_instances_from_document(all_documents, document_index, max_seq_length, short_seq_prob,
                                   masked_lm_prob, max_predictions_per_seq, vocab_words, rng, do_whole_word_mask):
    document = all_documents[document_index]
    max_num_tokens = max_seq_length - 3
    target_seq_length = max_num_tokens
    if rng.random() < short_seq_prob:
        target_seq_length = rng.randint(2, max_num_tokens)
    instances = []
    current_chunk = []
    current_length = 0
    i = 0
    while i < len(document):
        segment = document[i]
        current_chunk.append(segment)
        current_length += len(segment)
        if i == len(document) - 1 or current_length >= target_seq_length:
            if current_chunk:
                a_end = 1
                if len(current_chunk) >= 2:
                    a_end = rng.randint(1, len(current_chunk) - 1)
                tokens_a = []
                for j in range(a_end):
                    tokens_a.extend(current_chunk[j])
                tokens_b = []
                if len(current_chunk) == 1 or rng.random() < 0.5:
                    is_random_next = True
                    target_b_length = target_seq_length - len(tokens_a)
                    for _ in range(10):
                        random_document_index = rng.randint(0, len(all_documents) - 1)
                        if random_document_index != document_index:
                            break
                    random_document = all_documents[random_document_index]
                    random_start = rng.randint(0, len(random_document) - 1)
                    for j in range(random_start, len(random_document)):
                        tokens_b.extend(random_document[j])
                        if len(tokens_b) >= target_b_length:
                            break
                    num_unused_segments = len(current_chunk) - a_end
                    i -= num_unused_segments
                else:
                    is_random_next = False
                    for j in range(a_end, len(current_chunk)):
                        tokens_b.extend(current_chunk[j])
                truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
                tokens = ["[CLS]"] + tokens_a + ["[SEP]"] + tokens_b + ["[SEP]"]
                segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
                tokens, positions, labels = create_masked_lm_predictions(
                    tokens, masked_lm_prob, max_predictions_per_seq, vocab_words, rng, do_whole_word_mask)
                instances.append((tokens, segment_ids, is_random_next, positions, labels))
            current_chunk = []
            current_length = 0
        i += 1
    return instances


def create_masked_lm_predictions(tokens, masked_lm_prob, max_predictions_per_seq, vocab_words, rng,
                                 do_whole_word_mask):
    cand_indexes = []
    for (i, token) in enumerate(tokens):
        if token == "[CLS]" or token == "[SEP]":
            continue
        if do_whole_word_mask and len(cand_indexes) >= 1 and token.startswith("##"):
            cand_indexes[-1].append(i)
        else:
            cand_indexes.append([i])
    rng.shuffle(cand_indexes)
    output_tokens = list(tokens)
    num_to_predict = min(max_predictions_per_seq, max(1, int(round(len(tokens) * masked_lm_prob))))
    masked_lms = []
    covered_indexes = set()
    for index_set in cand_indexes:
        if len(masked_lms) >= num_to_predict:
            break
        if len(masked_lms) + len(index_set) > num_to_predict:
            continue
        if any(index in covered_indexes for index in index_set):
            continue
        for index in index_set:
            covered_indexes.add(index)
            if rng.random() < 0.8:
                masked_token = "[MASK]"
            else:
                if rng.random() < 0.5:
                    masked_token = tokens[index]
                else:
                    masked_token = vocab_words[rng.randint(0, len(vocab_words) - 1)]
            output_tokens[index] = masked_token
            masked_lms.append(MaskedLm(index=index, label=tokens[index]))
    masked_lms = sorted(masked_lms, key=lambda x: x.index)
    return output_tokens, [p.index for p in masked_lms], [p.label for p in masked_lms]


def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    while True:
        total_length = len(tokens_a) + len(tokens_b)
        if total_length <= max_num_tokens:
            break
        trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()


def measures(rows):
    """Per-instance samples of each statistic, from (tokens, a_length, is_random_next, positions, labels) rows."""
    samples = collections.defaultdict(list)
    for tokens, a_length, is_random_next, positions, labels in rows:
        samples["length"].append(len(tokens))
        samples["segment A length"].append(a_length)
        samples["random next"].append(float(is_random_next))
        samples["masked"].append(len(positions))
        for i, label in zip(positions, labels):
            samples["shown as [MASK]"].append(float(tokens[i] == "[MASK]"))
            samples["kept"].append(float(tokens[i] == label))
            samples["masked piece is ##"].append(float(label.startswith("##")))
    return samples


@pytest.mark.parametrize("do_whole_word_mask", [False, True])
def test_statistics_equal_the_original(tmp_path, do_whole_word_mask):
    tokenizer = FullTokenizer(real_vocab_file(), do_lower_case=True)
    corpus = write_corpus(str(tmp_path / "corpus.txt"), num_documents=150, seed=3, max_sentences=20)
    block = next(ptd.iter_blocks(ptd.read_documents([corpus]), ptd.PoolConfig(documents=1000)))
    options = dict(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=8, short_seq_prob=0.1,
                   masked_lm_prob=0.15)
    documents = [[tokenizer.tokenize(line) for line in d.lines] for d in block.documents]
    reference = original_instances(documents, **options, vocab_words=list(tokenizer.vocab),
                                   rng=random.Random(12345), do_whole_word_mask=do_whole_word_mask)
    ours, _ = ptd.BlockProcessor(tokenizer, ptd.PretrainingOptions(do_whole_word_mask=do_whole_word_mask,
                                                                    **options)).instances(block)
    inv = {i: t for t, i in tokenizer.vocab.items()}
    expected = measures((tokens, segments.count(0), r, p, l) for tokens, segments, r, p, l in reference)
    actual = measures(([inv[i] for i in x.input_ids], x.segment_a_length, x.is_random_next,
                       x.masked_lm_positions, [inv[i] for i in x.masked_lm_ids]) for x in ours)
    assert abs(len(ours) - len(reference)) <= 5 * math.sqrt(len(reference))
    for name, values in expected.items():
        x, y = np.array(values), np.array(actual[name])
        assert abs(x.mean() - y.mean()) <= 5 * math.sqrt(x.var() / len(x) + y.var() / len(y) + 1e-12), name
