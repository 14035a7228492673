"""Evaluating an embedding model: retrieval (every query searched against the whole corpus, exactly, with
sentence-transformers' InformationRetrievalEvaluator's metrics) and STS (the correlation of the pairs' cosine
similarities with their scores, its EmbeddingSimilarityEvaluator's).

Texts are embedded by an `embed` function (texts → [n, D] vectors), the corpus a chunk at a time, each chunk searched
and let go: memory holds the queries' vectors, their best results so far and one chunk, whatever the corpus's size.
Vectors are compared by cosine similarity (normalised first), as sentence-transformers' evaluators compare them. With
Matryoshka widths, each width's metrics come from the same vectors cut to that width and renormalised.
"""

import time

import numpy as np
from absl import logging

from official_bert.retrieval.metrics import deepest_cutoff, ranking_metrics, similarity_metrics
from official_bert.retrieval.search import DEFAULT_CHUNK_SIZE, TopK


def unit_vectors(vectors, dim=None):
    """`vectors` [n, D] (their first `dim` dimensions) divided by their L2 norms.

    Example:
    >>> [round(float(v), 6) for v in unit_vectors(np.array([[3.0, 4.0, 12.0]]), dim=2)[0]]
    [0.6, 0.8]
    """
    vectors = np.asarray(vectors, np.float32)[:, :dim]
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def retrieve(retrieval_set, embed, depth, corpus_chunk_size=DEFAULT_CHUNK_SIZE, dims=(None,)):
    """Each query's best `depth` passages, for each width in `dims`.

    Args:
        retrieval_set: a `beir.RetrievalSet`.
        embed: texts → [n, D] vectors.
        depth: results a query.
        corpus_chunk_size: passages embedded and searched at once.
        dims: the widths to search at (None: the whole vector).

    Returns:
        {dim: (scores [Q, depth], passage ids [Q][depth])}.

    Example:
    >>> from official_bert.retrieval.beir import RetrievalSet
    >>> vectors = {"cats purr": [1.0, 0.0], "dogs bark": [0.0, 1.0], "what purrs": [0.9, 0.1]}
    >>> found = retrieve(RetrievalSet(["p1", "p2"], ["cats purr", "dogs bark"], ["q1"], ["what purrs"], [{"p1"}]),
    ...                  lambda texts: np.array([vectors[t] for t in texts]), depth=2)
    >>> found[None][1]
    [['p1', 'p2']]
    """
    queries = embed(retrieval_set.query_texts)
    searches = {dim: TopK(unit_vectors(queries, dim), depth) for dim in dims}
    total, started = len(retrieval_set.corpus_texts), time.monotonic()
    for start in range(0, total, corpus_chunk_size):
        vectors = embed(retrieval_set.corpus_texts[start:start + corpus_chunk_size])
        for dim, search in searches.items():
            search.add(unit_vectors(vectors, dim))
        done = min(start + corpus_chunk_size, total)
        if done < total:
            rate = done / max(time.monotonic() - started, 1e-9)
            logging.info("searched %s of %s passages, %.0f passages/s, ETA %.0f s", f"{done:,}", f"{total:,}", rate,
                         (total - done) / rate)
    ids = retrieval_set.corpus_ids
    return {dim: (search.result()[0], [[ids[i] for i in row] for row in search.result()[1]])
            for dim, search in searches.items()}


def evaluate_retrieval(retrieval_set, embed, cutoffs=None, corpus_chunk_size=DEFAULT_CHUNK_SIZE, dims=()):
    """sentence-transformers' retrieval metrics of the model behind `embed` on `retrieval_set`.

    Args:
        retrieval_set: a `beir.RetrievalSet`.
        embed: texts → [n, D] vectors.
        cutoffs: {metric: ks} (`metrics.ranking_metrics`); default mrr@10, ndcg@10, map@100, recall@1/10/100.
        corpus_chunk_size: passages embedded and searched at once.
        dims: Matryoshka widths to evaluate too; their metrics are named "<metric>@<k>_dim<width>".

    Returns:
        ({metric: value}, the full-width search's (scores, passage ids)).

    Example:
    >>> from official_bert.retrieval.beir import RetrievalSet
    >>> vectors = {"cats purr": [1.0, 0.0], "dogs bark": [0.0, 1.0], "what barks": [0.2, 0.9]}
    >>> figures, _ = evaluate_retrieval(
    ...     RetrievalSet(["p1", "p2"], ["cats purr", "dogs bark"], ["q1"], ["what barks"], [{"p2"}]),
    ...     lambda texts: np.array([vectors[t] for t in texts]), {"mrr": (10,)}, dims=[1])
    >>> figures
    {'mrr@10': 1.0, 'mrr@10_dim1': 0.5}
    """
    found = retrieve(retrieval_set, embed, deepest_cutoff(cutoffs), corpus_chunk_size, (None, *dims))
    figures = {}
    for dim, (_, rankings) in found.items():
        suffix = "" if dim is None else f"_dim{dim}"
        figures.update({f"{name}{suffix}": value for name, value in
                        ranking_metrics(rankings, retrieval_set.relevant, cutoffs).items()})
    return figures, found[None]


def evaluate_similarity(texts_a, texts_b, scores, embed, dims=()):
    """sentence-transformers' STS metrics ("pearson_cosine", "spearman_cosine"; "_dim<width>" for each of `dims`)
    of the model behind `embed` on scored pairs.

    Example:
    >>> vectors = {"a": [1.0, 0.0], "b": [1.0, 0.1], "c": [0.0, 1.0]}
    >>> evaluate_similarity(["a", "a"], ["b", "c"], [5.0, 0.0], lambda t: np.array([vectors[x] for x in t]))
    {'pearson_cosine': 1.0, 'spearman_cosine': 1.0}
    """
    vectors = embed(list(texts_a) + list(texts_b))
    a, b = vectors[:len(texts_a)], vectors[len(texts_a):]
    figures = dict(similarity_metrics(a, b, scores))
    for dim in dims:
        figures.update({f"{name}_dim{dim}": value for name, value in
                        similarity_metrics(a[:, :dim], b[:, :dim], scores).items()})
    return figures
