"""Exact top-k search: the same results as NumPy's full sort of every score (ties in corpus order), whatever the chunk
and query batch sizes; a corpus read chunk by chunk from a generator is never whole in memory."""

import numpy as np
import pytest

from official_bert.retrieval.search import TopK, exact_search


def numpy_top_k(queries, corpus, k):
    scores = queries @ corpus.T
    order = np.lexsort((np.broadcast_to(np.arange(len(corpus)), scores.shape), -scores), axis=1)[:, :k]
    return np.take_along_axis(scores, order, axis=1), order


@pytest.mark.parametrize("chunk, query_batch", [(7, 3), (50, 50), (1, 1), (1000, 4)])
def test_chunked_search_is_numpy_top_k(chunk, query_batch):
    rng = np.random.default_rng(chunk)
    corpus = rng.integers(-3, 4, (120, 8)).astype("float32")  # small integers: many tied scores
    queries = rng.integers(-3, 4, (11, 8)).astype("float32")
    scores, indices = exact_search(queries, (corpus[i:i + chunk] for i in range(0, len(corpus), chunk)), 10,
                                   query_batch)
    expected_scores, expected_indices = numpy_top_k(queries, corpus, 10)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(scores, expected_scores)


def test_k_beyond_the_corpus_gives_the_whole_corpus_ranked():
    corpus = np.eye(3, dtype="float32")
    scores, indices = exact_search(np.array([[1.0, 3.0, 2.0]], "float32"), [corpus[:2], corpus[2:]], 10)
    assert indices.tolist() == [[1, 2, 0]] and scores.tolist() == [[3.0, 2.0, 1.0]]


def test_a_generated_corpus_is_searched_one_chunk_at_a_time():
    """Each chunk is scored before the next one is made, and the search keeps no more than the k best a query: a
    generated corpus is never whole in memory."""
    rng = np.random.default_rng(0)
    search = TopK(rng.normal(size=(5, 16)).astype("float32"), 100, query_batch_size=2)
    seen = []

    def chunks(seed):
        chunk_rng = np.random.default_rng(seed)
        for _ in range(20):
            seen.append(search.size)
            yield chunk_rng.normal(size=(500, 16)).astype("float32")

    for chunk in chunks(1):
        search.add(chunk)
        assert search.result()[0].shape == (5, 100) and search.result()[1].shape == (5, 100)
    assert seen == list(range(0, 10_000, 500))
    corpus = np.concatenate(list(chunks(1)))
    np.testing.assert_array_equal(search.result()[1], numpy_top_k(search.queries, corpus, 100)[1])


@pytest.mark.parametrize("k", [0, -1, 1.5])
def test_bad_k_is_refused(k):
    with pytest.raises(ValueError, match="k="):
        TopK(np.zeros((1, 2), "float32"), k)


def test_a_chunk_of_another_width_is_refused():
    with pytest.raises(ValueError, match=r"expected \[n, 2\]"):
        TopK(np.zeros((1, 2), "float32"), 1).add(np.zeros((3, 4), "float32"))
