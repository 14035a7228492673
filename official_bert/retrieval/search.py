"""Exact top-k search in TensorFlow: every query against every corpus vector, the corpus read a chunk at a time.

Memory holds the queries, each query's best k so far, one corpus chunk and one [query batch, chunk] block of
scores, whatever the corpus's size: a corpus of a million passages is searched in chunks without ever being whole
in memory (the chunks may come from a generator that embeds or reads them one at a time).

The order is the score's, highest first; equal scores in the order of the corpus (the lower position first), which
is how `tf.math.top_k` orders ties. An evaluation that orders the corpus by id gives sentence-transformers' order
(score, then ascending corpus id).
"""

import numpy as np
import tensorflow as tf

DEFAULT_CHUNK_SIZE = 50_000  # corpus vectors a chunk (sentence-transformers' corpus_chunk_size)
DEFAULT_QUERY_BATCH_SIZE = 256  # queries scored at once against a chunk


class TopK:
    """The k best corpus vectors for each query, kept as the corpus is read in chunks (`add`).

    Args:
        queries: [Q, D] query vectors.
        k: how many to keep a query.
        query_batch_size: queries scored at once (the score block is [query_batch_size, chunk]).

    Example:
    >>> search = TopK(np.array([[1.0, 0.0], [0.0, 1.0]], "float32"), k=2)
    >>> search.add(np.array([[0.5, 0.5], [1.0, 0.0]], "float32"))
    >>> search.add(np.array([[0.5, 0.5], [0.0, 2.0]], "float32"))
    >>> scores, indices = search.result()
    >>> scores.tolist(), indices.tolist()  # query 0: corpus 1 (1.0), then the tie 0 and 2 (0.5): the lower first
    ([[1.0, 0.5], [2.0, 0.5]], [[1, 0], [3, 0]])
    """

    def __init__(self, queries, k, query_batch_size=DEFAULT_QUERY_BATCH_SIZE):
        if not (isinstance(k, (int, np.integer)) and k >= 1):
            raise ValueError(f"k={k!r}: expected a positive integer")
        if not (isinstance(query_batch_size, (int, np.integer)) and query_batch_size >= 1):
            raise ValueError(f"query_batch_size={query_batch_size!r}: expected a positive integer")
        self.queries = np.asarray(queries, np.float32)
        if self.queries.ndim != 2:
            raise ValueError(f"queries: expected [Q, D] vectors, got shape {self.queries.shape}")
        self.k = int(k)
        self.query_batch_size = int(query_batch_size)
        self.size = 0  # corpus vectors seen
        count = len(self.queries)
        self._scores = np.zeros([count, 0], np.float32)
        self._indices = np.zeros([count, 0], np.int64)

    def add(self, chunk):
        """Scores the next corpus vectors (positions size, size + 1, ...) against every query.

        Args:
            chunk: [n, D] corpus vectors (D the queries').
        """
        chunk = tf.convert_to_tensor(np.asarray(chunk, np.float32))
        if chunk.shape.rank != 2 or chunk.shape[1] != self.queries.shape[1]:
            raise ValueError(f"corpus chunk of shape {tuple(chunk.shape)}: expected [n, {self.queries.shape[1]}]")
        if chunk.shape[0] == 0:
            return
        width = min(self.k, self._scores.shape[1] + int(chunk.shape[0]))
        scores = np.empty([len(self.queries), width], np.float32)
        indices = np.empty([len(self.queries), width], np.int64)
        for start in range(0, len(self.queries), self.query_batch_size):
            rows = slice(start, start + self.query_batch_size)
            best_scores, best_indices = _merge(self.queries[rows], chunk, tf.constant(self.size, tf.int64),
                                               self._scores[rows], self._indices[rows], tf.constant(width))
            scores[rows], indices[rows] = best_scores.numpy(), best_indices.numpy()
        self._scores, self._indices = scores, indices
        self.size += int(chunk.shape[0])

    def result(self):
        """(scores [Q, k'], corpus positions [Q, k']) best first, k' = min(k, corpus size)."""
        return self._scores, self._indices


@tf.function(reduce_retracing=True)
def _merge(queries, chunk, offset, best_scores, best_indices, width):
    """The `width` best of a query batch's kept results and a chunk's (ties: the earlier position first)."""
    scores = tf.matmul(queries, chunk, transpose_b=True)
    top_scores, top_positions = tf.math.top_k(scores, tf.minimum(width, tf.shape(scores)[1]))
    # The kept results come first: their positions are lower, so top_k's tie order stays the corpus's.
    scores = tf.concat([best_scores, top_scores], axis=1)
    positions = tf.concat([best_indices, tf.cast(top_positions, tf.int64) + offset], axis=1)
    merged_scores, order = tf.math.top_k(scores, width)
    return merged_scores, tf.gather(positions, order, batch_dims=1)


def exact_search(queries, corpus_chunks, k, query_batch_size=DEFAULT_QUERY_BATCH_SIZE):
    """The k corpus vectors of highest dot product with each query (cosine similarity for normalised vectors).

    Args:
        queries: [Q, D].
        corpus_chunks: an iterable of [n, D] arrays: the corpus in order (a generator keeps memory bounded).
        k: results a query.
        query_batch_size: queries scored at once.

    Returns:
        (scores [Q, k'], corpus positions [Q, k']), best first, k' = min(k, corpus size).

    Example:
    >>> corpus = np.eye(3, dtype="float32")
    >>> exact_search(np.array([[0.0, 2.0, 1.0]], "float32"), (corpus[i:i + 2] for i in (0, 2)), 2)[1].tolist()
    [[1, 2]]
    """
    search = TopK(queries, k, query_batch_size)
    for chunk in corpus_chunks:
        search.add(chunk)
    return search.result()
