"""Our output has the statistics of google-research/bert's create_pretraining_data.py on the same corpus.

`original_instances` is the original's create_training_instances (with the whole-word masking of its last
version), transcribed onto token strings: the independent reference. Both run on one generated corpus; our
side is the whole pipeline (`create_pretraining_data`, several chunks and workers), read back from its TFRecord
file. Every statistic must agree within 5 standard errors of the difference of the two samples.

Where the random next segments come from, and how the output is ordered, are measured on a corpus whose every
token names its document ("d17"): the original draws them from the whole corpus and shuffles all instances.
"""

import collections
import math
import os
import random

import numpy as np
import pytest
import tensorflow as tf

from official_bert import pretraining_data as ptd
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file, write_corpus

MaskedLm = collections.namedtuple("MaskedLm", ["index", "label"])
SIGMAS = 5


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


def read_document_lines(path):
    """The corpus as the original reads it: documents of stripped non-blank lines."""
    documents = [[]]
    for line in open(path, encoding="utf-8"):
        if line.strip():
            documents[-1].append(line.strip())
        else:
            documents.append([])
    return [d for d in documents if d]


def ours(tmp_path, corpus, tokenizer, num_workers=2, chunk_values=2000, **options):
    """Our pipeline's output, in file order, as (tokens, segment A length, is_random_next, positions, labels)."""
    generator = ptd.InstanceGenerator(tokenizer, ptd.PretrainingOptions(**options))
    output = str(tmp_path / "ours.tfrecord")
    ptd.create_pretraining_data([corpus], [output], generator, num_workers=num_workers, chunk_values=chunk_values)
    inv = ptd.tokens_by_id(tokenizer.vocab)
    rows = []
    for record in tf.data.TFRecordDataset(output):
        features = tf.train.Example.FromString(record.numpy()).features.feature
        values = {name: list(f.int64_list.value or f.float_list.value) for name, f in features.items()}
        length, k = int(sum(values["input_mask"])), int(sum(values["masked_lm_weights"]))
        rows.append(([inv[i] for i in values["input_ids"][:length]], length - sum(values["segment_ids"]),
                     bool(values["next_sentence_labels"][0]), values["masked_lm_positions"][:k],
                     [inv[i] for i in values["masked_lm_ids"][:k]]))
    return rows


@pytest.mark.parametrize("do_whole_word_mask", [False, True])
def test_statistics_equal_the_original(tmp_path, do_whole_word_mask):
    tokenizer = FullTokenizer(real_vocab_file(), do_lower_case=True)
    corpus = write_corpus(str(tmp_path / "corpus.txt"), num_documents=150, seed=3, max_sentences=20)
    options = dict(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=8, short_seq_prob=0.1,
                   masked_lm_prob=0.15)
    documents = [[tokenizer.tokenize(line) for line in d] for d in read_document_lines(corpus)]
    reference = original_instances(documents, **options, vocab_words=list(tokenizer.vocab),
                                   rng=random.Random(12345), do_whole_word_mask=do_whole_word_mask)
    actual_rows = ours(tmp_path, corpus, tokenizer, do_whole_word_mask=do_whole_word_mask, **options)
    expected = measures((tokens, segments.count(0), r, p, l) for tokens, segments, r, p, l in reference)
    actual = measures(actual_rows)
    assert abs(len(actual_rows) - len(reference)) <= 5 * math.sqrt(len(reference))
    for name, values in expected.items():
        x, y = np.array(values), np.array(actual[name])
        assert abs(x.mean() - y.mean()) <= SIGMAS * math.sqrt(x.var() / len(x) + y.var() / len(y) + 1e-12), name


def named_corpus(directory, num_documents, seed=0, min_sentences=3, max_sentences=8, last_document_tokens=0):
    """A corpus whose tokens name their document ("d17 d17 d17" is a sentence of document 17), and its vocab."""
    rng = random.Random(seed)
    sizes = [rng.randint(min_sentences, max_sentences) for _ in range(num_documents)]
    with open(os.path.join(directory, "named.txt"), "w") as f:
        for d, n in enumerate(sizes):
            for _ in range(n):
                f.write(" ".join([f"d{d}"] * rng.randint(2, 6)) + "\n")
            if d == num_documents - 1 and last_document_tokens:
                for _ in range(last_document_tokens // 4):
                    f.write(f"d{d} d{d} d{d} d{d}\n")
            f.write("\n")
    with open(os.path.join(directory, "named_vocab.txt"), "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"d{d}" for d in range(num_documents)]))
    return os.path.join(directory, "named.txt"), FullTokenizer(os.path.join(directory, "named_vocab.txt"))


def sources(rows):
    """(document of segment A, document of segment B or None, is_random_next) per row, masking undone."""
    out = []
    for tokens, a_length, is_random_next, positions, labels in rows:
        tokens = list(tokens)
        for i, label in zip(positions, labels):
            tokens[i] = label
        a, b = set(tokens[1:a_length - 1]), set(tokens[a_length:-1])
        assert len(a) == 1 and len(b) <= 1, (a, b)  # a segment never spans documents
        out.append((int(a.pop()[1:]), int(b.pop()[1:]) if b else None, is_random_next))
    return out


def original_rows(corpus, tokenizer, options, seed=12345):
    documents = [[line.split() for line in d] for d in read_document_lines(corpus)]
    rows = original_instances(documents, **options, vocab_words=list(tokenizer.vocab), rng=random.Random(seed),
                              do_whole_word_mask=False)
    return [(tokens, segments.count(0), r, p, l) for tokens, segments, r, p, l in rows]


def spearman(x, y):
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def within_proportions(k1, n1, k2, n2):
    p = (k1 + k2) / (n1 + n2)
    return abs(k1 / n1 - k2 / n2) <= SIGMAS * math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))


def test_random_next_comes_from_the_whole_corpus_and_the_output_is_shuffled_as_the_original(tmp_path):
    """1000 documents: the original's pool is all of them, and its output order says nothing of the input order."""
    corpus, tokenizer = named_corpus(str(tmp_path), 1000)
    options = dict(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=2, short_seq_prob=0.1,
                   masked_lm_prob=0.15)
    results = {}
    for name, rows in (("original", original_rows(corpus, tokenizer, options)),
                       ("ours", ours(tmp_path, corpus, tokenizer, **options))):
        traced = sources(rows)
        distances = np.array([abs(a - b) for a, b, is_random in traced if is_random])
        own = [a for a, _, _ in traced]
        assert all(a != b for a, b, is_random in traced if is_random)  # never its own document
        assert all(a == b for a, b, is_random in traced if not is_random and b is not None)
        results[name] = distances, spearman(np.arange(len(own)), own), len(own)
    (d1, rho1, n1), (d2, rho2, n2) = results["original"], results["ours"]
    # Uniform over the other 999 documents: about 49 % are more than 300 apart (a pool of 500 allows 16 %).
    assert within_proportions(int((d1 > 300).sum()), len(d1), int((d2 > 300).sum()), len(d2))
    bins = [0, 50, 150, 300, 500, 700, 1000]
    h1, h2 = np.histogram(d1, bins)[0], np.histogram(d2, bins)[0]
    expected1 = (h1 + h2) * len(d1) / (len(d1) + len(d2))
    expected2 = (h1 + h2) * len(d2) / (len(d1) + len(d2))
    chi2 = (((h1 - expected1) ** 2 / expected1) + ((h2 - expected2) ** 2 / expected2)).sum()
    df = len(bins) - 2
    assert chi2 < df + SIGMAS * math.sqrt(2 * df), (h1, h2)
    # Position in the output against the source document: no correlation in either.
    assert abs(rho1) < SIGMAS / math.sqrt(n1) and abs(rho2) < SIGMAS / math.sqrt(n2), (rho1, rho2)


def test_a_huge_last_document_takes_random_next_segments_from_the_others(tmp_path):
    """The last document holds most of the text (once, blocks put it alone in its pool and its "random"
    segments B came from itself, labelled random)."""
    corpus, tokenizer = named_corpus(str(tmp_path), 30, last_document_tokens=160_000)
    assert os.path.getsize(corpus) > 600_000
    rows = ours(tmp_path, corpus, tokenizer, max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1,
                chunk_values=1 << 16)
    traced = sources(rows)
    from_last = [b for a, b, is_random in traced if is_random and a == 29]
    assert len(from_last) > 1000 and 29 not in from_last
    assert set(from_last) == set(range(29))
