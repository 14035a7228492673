"""The information-retrieval metrics of sentence-transformers' InformationRetrievalEvaluator, and the STS metrics of
its EmbeddingSimilarityEvaluator, from rankings (and cosine similarities) already computed.

Relevance is binary (a judged document with a score above 0 is relevant); a query without a relevant document is
left out of every mean, as sentence-transformers leaves it out. For each query, with hits[r] = 1 when the document at
rank r (from 0) is relevant and R its number of relevant documents:

- mrr@k: 1 / (1 + the rank of the first hit within the first k), 0 without one;
- ndcg@k: Σ_{r<k} hits[r] / log2(r + 2), divided by the same sum for R hits first (the ideal ranking);
- map@k: Σ_{r<k} hits[r] · precision@(r + 1), divided by min(k, R);
- recall@k: the hits within the first k, divided by R;
- accuracy@k: 1 when a hit is within the first k.

Each is the mean over the queries.
"""

import numpy as np

from official_bert.classification.metrics import pearson, spearman

DEFAULT_CUTOFFS = {"mrr": (10,), "ndcg": (10,), "map": (100,), "recall": (1, 10, 100)}


def deepest_cutoff(cutoffs=None):
    """The most ranks a query needs for `cutoffs` ({metric: ks}).

    Example:
    >>> deepest_cutoff(), deepest_cutoff({"mrr": (5,)})
    (100, 5)
    """
    return max(k for ks in (cutoffs or DEFAULT_CUTOFFS).values() for k in ks)


def ranking_metrics(rankings, relevant, cutoffs=None):
    """The metrics of the module's docstring, e.g. {"mrr@10": ..., "ndcg@10": ..., "map@100": ...,
    "recall@1": ..., "recall@10": ..., "recall@100": ...}.

    Args:
        rankings: for each query, its retrieved document ids, best first (at least the deepest cutoff's, or all
            of the corpus).
        relevant: for each query, the set of its relevant document ids.
        cutoffs: {metric ("mrr", "ndcg", "map", "recall", "accuracy"): ks}; default `DEFAULT_CUTOFFS`.

    Returns:
        {"<metric>@<k>": mean over the queries that have a relevant document} (NaN for none).

    Example:
    >>> figures = ranking_metrics([["d3", "d1", "d2"], ["d9"]], [{"d1"}, set()], {"mrr": (10,), "recall": (1, 2)})
    >>> figures  # the second query has no relevant document: left out
    {'mrr@10': 0.5, 'recall@1': 0.0, 'recall@2': 1.0}
    """
    cutoffs = cutoffs or DEFAULT_CUTOFFS
    if len(rankings) != len(relevant):
        raise ValueError(f"{len(rankings)} rankings, {len(relevant)} sets of relevant documents: expected one each")
    judged = [i for i, documents in enumerate(relevant) if documents]
    depth = deepest_cutoff(cutoffs)
    hits = np.zeros([len(judged), depth], bool)
    for row, i in enumerate(judged):
        ranked = list(rankings[i])[:depth]
        hits[row, :len(ranked)] = [document in relevant[i] for document in ranked]
    counts = np.array([len(relevant[i]) for i in judged], np.float64)
    ranks = np.arange(depth)
    discounts = 1.0 / np.log2(ranks + 2)
    found = np.cumsum(hits, axis=1)
    figures = {}
    for metric, ks in cutoffs.items():
        for k in ks:
            top = hits[:, :k]
            if metric == "mrr":
                first = np.where(top.any(axis=1), top.argmax(axis=1), -1)
                values = np.where(first >= 0, 1.0 / np.maximum(first + 1, 1), 0.0)
            elif metric == "ndcg":
                ideal = np.array([discounts[:min(int(n), k)].sum() for n in counts])
                values = (top * discounts[:k]).sum(axis=1) / ideal
            elif metric == "map":
                precision = found[:, :k] / (ranks[:k] + 1)
                values = (top * precision).sum(axis=1) / np.minimum(k, counts)
            elif metric == "recall":
                values = top.sum(axis=1) / counts
            elif metric == "accuracy":
                values = top.any(axis=1).astype(np.float64)
            else:
                raise ValueError(f"unknown metric {metric!r}: expected mrr, ndcg, map, recall or accuracy")
            figures[f"{metric}@{k}"] = float(values.mean()) if len(values) else float("nan")
    return figures


def similarity_metrics(embeddings_a, embeddings_b, scores):
    """sentence-transformers' EmbeddingSimilarityEvaluator: the Pearson and Spearman correlations of the pairs'
    cosine similarities with their gold scores.

    Args:
        embeddings_a, embeddings_b: [N, D] the pairs' embeddings.
        scores: [N] gold scores.

    Returns:
        {"pearson_cosine": ..., "spearman_cosine": ...}.

    Example:
    >>> a = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> b = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    >>> similarity_metrics(a, b, [5.0, 3.0, 1.0])["spearman_cosine"]
    1.0
    """
    a, b = (np.asarray(x, np.float64) for x in (embeddings_a, embeddings_b))
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    cosines = (a * b).sum(axis=1)
    scores = np.asarray(scores, np.float64)
    return {"pearson_cosine": float(pearson(cosines, scores)), "spearman_cosine": float(spearman(cosines, scores))}
