"""The retrieval metrics against a NumPy transcription of sentence-transformers' InformationRetrievalEvaluator
(compute_metrics, loop by loop) on hand-made rankings — ties, a query without relevant documents, several relevant —
and against figures worked out by hand."""

import numpy as np
import pytest

from official_bert.retrieval.metrics import ranking_metrics, similarity_metrics

CUTOFFS = {"mrr": (1, 3, 10), "ndcg": (1, 3, 10), "map": (3, 100), "recall": (1, 3, 10, 100), "accuracy": (1, 3)}


def transcribed(rankings, relevant, cutoffs):
    """sentence-transformers' compute_metrics, its loops as they are; queries without relevant documents dropped as
    its constructor drops them."""
    kept = [(ranking, docs) for ranking, docs in zip(rankings, relevant) if docs]
    out = {}
    for metric, ks in cutoffs.items():
        for k in ks:
            values = []
            for ranking, docs in kept:
                top = ranking[:k]
                if metric == "mrr":
                    values.append(next((1.0 / (rank + 1) for rank, d in enumerate(top) if d in docs), 0.0))
                elif metric == "ndcg":
                    dcg = sum((d in docs) / np.log2(i + 2) for i, d in enumerate(top))
                    idcg = sum(1 / np.log2(i + 2) for i in range(min(len(docs), k)))
                    values.append(dcg / idcg)
                elif metric == "map":
                    correct, total = 0, 0.0
                    for rank, d in enumerate(top):
                        if d in docs:
                            correct += 1
                            total += correct / (rank + 1)
                    values.append(total / min(k, len(docs)))
                elif metric == "recall":
                    values.append(sum(d in docs for d in top) / len(docs))
                else:
                    values.append(float(any(d in docs for d in top)))
            out[f"{metric}@{k}"] = float(np.mean(values))
    return out


def rank(scores, ids):
    """sentence-transformers' order: score descending, then corpus id ascending (ties)."""
    return [doc for _, doc in sorted(zip(scores, ids), key=lambda pair: (-pair[0], pair[1]))]


CORPUS = [f"d{i:02d}" for i in range(12)]
HAND_MADE = [
    # Ties: d03 and d01 score alike, so d01 (the lower id) ranks first.
    (rank([0.9, 0.5, 0.1, 0.5, 0.2] + [0.0] * 7, CORPUS), {"d03"}),
    # Several relevant, one of them never retrieved in the top 10.
    (rank([0.1, 0.9, 0.8, 0.1, 0.7, 0.3, 0.2, 0.0, 0.0, 0.0, 0.0, -1.0], CORPUS), {"d02", "d05", "d11"}),
    # No relevant document: left out of every mean.
    (rank(list(np.linspace(1, 0, 12)), CORPUS), set()),
    # The relevant document first.
    (rank(list(np.linspace(0, 1, 12)), CORPUS), {"d11"}),
    # Nothing relevant retrieved.
    (["d00", "d01"], {"d05"}),
]


def test_metrics_are_the_transcribed_definitions_on_hand_made_rankings():
    rankings, relevant = zip(*HAND_MADE)
    np.testing.assert_allclose(list(ranking_metrics(rankings, relevant, CUTOFFS).values()),
                               list(transcribed(rankings, relevant, CUTOFFS).values()), rtol=1e-12)
    assert list(ranking_metrics(rankings, relevant, CUTOFFS)) == list(transcribed(rankings, relevant, CUTOFFS))


def test_metrics_by_hand():
    rankings, relevant = zip(*HAND_MADE)
    figures = ranking_metrics(rankings, relevant, CUTOFFS)
    # First query: d01 (tie, lower id) before d03: the hit at rank 3. Second: hits at ranks 2, 4 and 12 of 3.
    # Third: no relevant (left out). Fourth: rank 1. Fifth: none. Four queries count.
    assert figures["mrr@10"] == pytest.approx((1 / 3 + 1 / 2 + 1 + 0) / 4)
    assert figures["mrr@1"] == pytest.approx(1 / 4)
    assert figures["recall@3"] == pytest.approx((1 + 1 / 3 + 1 + 0) / 4)
    assert figures["map@100"] == pytest.approx((1 / 3 + (1 / 2 + 2 / 4 + 3 / 12) / 3 + 1 + 0) / 4)
    ndcg_second = (1 / np.log2(3) + 1 / np.log2(5)) / (1 + 1 / np.log2(3) + 1 / np.log2(4))
    assert figures["ndcg@10"] == pytest.approx((1 / np.log2(4) + ndcg_second + 1 + 0) / 4)
    assert figures["accuracy@3"] == pytest.approx(3 / 4)


def test_random_rankings_match_the_transcription():
    rng = np.random.default_rng(0)
    corpus = [f"doc{i}" for i in range(150)]
    rankings, relevant = [], []
    for _ in range(40):
        scores = rng.integers(0, 20, len(corpus)) / 20  # many ties
        rankings.append(rank(list(scores), corpus))
        relevant.append(set(rng.choice(corpus, rng.integers(0, 5), replace=False)))
    cutoffs = {"mrr": (10,), "ndcg": (10,), "map": (100,), "recall": (1, 10, 100)}
    ours = ranking_metrics(rankings, relevant, cutoffs)
    assert list(ours) == ["mrr@10", "ndcg@10", "map@100", "recall@1", "recall@10", "recall@100"]
    np.testing.assert_allclose(list(ours.values()), list(transcribed(rankings, relevant, cutoffs).values()),
                               rtol=1e-12)


def test_no_judged_query_gives_nan_and_unequal_lengths_are_refused():
    assert np.isnan(ranking_metrics([["a"]], [set()])["mrr@10"])
    with pytest.raises(ValueError, match="2 rankings, 1 sets"):
        ranking_metrics([["a"], ["b"]], [{"a"}])


def test_similarity_metrics_are_pearson_and_spearman_of_the_cosines():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(30, 5)), rng.normal(size=(30, 5))
    scores = rng.normal(size=30)
    cosines = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    ranks = lambda x: np.argsort(np.argsort(x))  # noqa: E731 (no ties in continuous draws)
    figures = similarity_metrics(a, b, scores)
    assert figures["pearson_cosine"] == pytest.approx(np.corrcoef(cosines, scores)[0, 1])
    assert figures["spearman_cosine"] == pytest.approx(np.corrcoef(ranks(cosines), ranks(scores))[0, 1])
