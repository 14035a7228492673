"""Hard negatives mined with an embedding model, as sentence-transformers' `mine_hard_negatives` mines them (its
"top" sampling): each query's nearest passages of a corpus, its positives left out, filtered by score, a range of
ranks kept.

The corpus is the positives plus any more passages given, each text once. For each distinct query (its positives:
every pair's positive with that query) the model's best `range_max` + (its most positives) passages by cosine
similarity are searched exactly; a candidate is dropped if it is one of the query's positives, if its score is within
`absolute_margin` of the query's lowest positive score (score + absolute_margin > positive) or above
positive − |positive| × `relative_margin`, above `max_score` or below `min_score`. Of what is left, in order of score,
ranks `range_min` to `range_max` are candidates and the first `num_negatives` of them the negatives. "triplet" writes
one row a negative (anchor, positive, negative), "n-tuple" one row a pair with all its negatives (negative_1, ...),
pairs that lack as many left out.
"""

import dataclasses
import math

import numpy as np
from absl import logging

from official_bert.retrieval.errors import RetrievalDataError
from official_bert.retrieval.evaluation import unit_vectors
from official_bert.retrieval.search import DEFAULT_CHUNK_SIZE, TopK

FORMATS = ("triplet", "n-tuple")


@dataclasses.dataclass(frozen=True)
class MiningSettings:
    """What `mine_hard_negatives` keeps (sentence-transformers' arguments of the same names).

    Args:
        num_negatives: negatives a pair.
        range_min: candidates skipped first (the nearest, often unlabelled positives).
        range_max: the last rank considered; default range_min + num_negatives (× 10 when a score filter is set).
        absolute_margin, relative_margin, max_score, min_score: the score filters (None: off).
        output_format: "triplet" or "n-tuple".

    Example:
    >>> MiningSettings(num_negatives=2, max_score=0.9).check().window
    20
    """

    num_negatives: int = 3
    range_min: int = 0
    range_max: int = None
    absolute_margin: float = None
    relative_margin: float = None
    max_score: float = None
    min_score: float = None
    output_format: str = "triplet"

    @property
    def filtered(self):
        return any(v is not None for v in (self.absolute_margin, self.relative_margin, self.max_score,
                                           self.min_score))

    @property
    def window(self):
        """The last rank (after the positives) considered."""
        if self.range_max is not None:
            return self.range_max
        return self.range_min + self.num_negatives * (10 if self.filtered else 1)

    def check(self):
        """Raises RetrievalDataError for settings that mine nothing or are not numbers; returns self."""
        for name in ("num_negatives", "range_min", "range_max"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and value >= (1 if name == "num_negatives" else 0)):
                raise RetrievalDataError(f"--{name}={value}: expected an integer >= "
                                         f"{1 if name == 'num_negatives' else 0}")
        for name in ("absolute_margin", "relative_margin", "max_score", "min_score"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise RetrievalDataError(f"--{name}={value}: expected a finite number")
        if self.relative_margin is not None and not 0 <= self.relative_margin <= 1:
            raise RetrievalDataError(f"--relative_margin={self.relative_margin}: expected a share between 0 and 1")
        if self.num_negatives > self.window - self.range_min:
            raise RetrievalDataError(f"--num_negatives={self.num_negatives}: only {self.window - self.range_min} "
                                     f"candidates between --range_min={self.range_min} and --range_max={self.window}")
        if self.output_format not in FORMATS:
            raise RetrievalDataError(f"--output_format={self.output_format}: expected one of {', '.join(FORMATS)}")
        return self


def mine_hard_negatives(anchors, positives, embed, settings=MiningSettings(), corpus=(),
                        corpus_chunk_size=DEFAULT_CHUNK_SIZE):
    """The training rows with mined negatives (see the module's docstring).

    Args:
        anchors, positives: the pairs.
        embed: texts → [n, D] vectors (the model's).
        settings: the `MiningSettings`.
        corpus: more passages to mine from, beside the positives.
        corpus_chunk_size: passages embedded and searched at once.

    Returns:
        (rows: a list of {"anchor", "positive", "negative"} or {"anchor", "positive", "negative_1", ...} dicts,
        pairs: how many pairs found as many negatives).

    Example:
    >>> vectors = {"q": [1.0, 0.0], "p": [0.9, 0.1], "near": [0.8, 0.2], "far": [0.0, 1.0], "mid": [0.5, 0.5]}
    >>> embed = lambda texts: np.array([vectors[t] for t in texts])
    >>> mine_hard_negatives(["q"], ["p"], embed, MiningSettings(num_negatives=2), corpus=["far", "near", "mid"])
    ([{'anchor': 'q', 'positive': 'p', 'negative': 'near'}, {'anchor': 'q', 'positive': 'p', 'negative': 'mid'}], 1)
    >>> mine_hard_negatives(["q"], ["p"], embed, MiningSettings(num_negatives=1, range_min=1), corpus=["far", "near",
    ...                     "mid"])[0]
    [{'anchor': 'q', 'positive': 'p', 'negative': 'mid'}]
    """
    settings.check()
    passages = list(dict.fromkeys([*corpus, *positives]))
    index = {text: i for i, text in enumerate(passages)}
    queries = list(dict.fromkeys(anchors))
    positives_of = {query: [] for query in queries}
    for anchor, positive in zip(anchors, positives):
        if index[positive] not in positives_of[anchor]:
            positives_of[anchor].append(index[positive])
    most = max(len(p) for p in positives_of.values())
    owners = {}  # passage → the queries it is a positive of
    for q, query in enumerate(queries):
        for p in positives_of[query]:
            owners.setdefault(p, []).append(q)
    query_vectors = unit_vectors(embed(queries))
    search = TopK(query_vectors, settings.window + most)
    positive_scores = {}
    for start in range(0, len(passages), corpus_chunk_size):
        vectors = unit_vectors(embed(passages[start:start + corpus_chunk_size]))
        search.add(vectors)
        for p in range(start, start + len(vectors)):
            for q in owners.get(p, ()):
                positive_scores[(q, p)] = float(query_vectors[q] @ vectors[p - start])
        logging.info("mining: searched %s of %s passages", f"{min(start + corpus_chunk_size, len(passages)):,}",
                     f"{len(passages):,}")
    scores, found = search.result()
    negatives = {}
    for q, query in enumerate(queries):
        positive = min(positive_scores[(q, p)] for p in positives_of[query])
        kept = [i for i, score in zip(found[q], scores[q]) if i not in positives_of[query]
                and _passes(score, positive, settings)]
        negatives[query] = [passages[i] for i in kept[settings.range_min:settings.window][:settings.num_negatives]]
    rows, complete = [], 0
    for anchor, positive in zip(anchors, positives):
        mined = negatives[anchor]
        complete += len(mined) == settings.num_negatives
        if settings.output_format == "triplet":
            rows += [{"anchor": anchor, "positive": positive, "negative": negative} for negative in mined]
        elif len(mined) == settings.num_negatives:
            rows.append({"anchor": anchor, "positive": positive,
                         **{f"negative_{i + 1}": negative for i, negative in enumerate(mined)}})
    return rows, complete


def _passes(score, positive, settings):
    if settings.absolute_margin is not None and score + settings.absolute_margin > positive:
        return False
    if settings.relative_margin is not None and score > positive - abs(positive) * settings.relative_margin:
        return False
    if settings.max_score is not None and score > settings.max_score:
        return False
    return settings.min_score is None or score >= settings.min_score
