"""Exact match and F1 of one answer against one gold answer, as the official SQuAD scripts compute them.

evaluate-v1.1 and evaluate-v2.0 normalize answers the same way but differ at the edges, so both are here:
v2.0's F1 is 1 when both answers are empty (no answer, correctly predicted), v1.1's is 0.
"""

import collections
import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(s):
    """Lowercases, removes ASCII punctuation, then the articles a/an/the, then collapses whitespace.

    Example:
    >>> normalize_answer("  The  Eiffel-Tower's  (A) tower! ")
    'eiffeltowers tower'
    """
    text = s.lower()
    text = "".join(char for char in text if char not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match_score(prediction, ground_truth):
    """evaluate-v1.1's exact match: True when the normalized answers are equal.

    Example:
    >>> exact_match_score("the Beatles!", "Beatles")
    True
    """
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def f1_score(prediction, ground_truth):
    """evaluate-v1.1's F1 over normalized tokens (0 when nothing is shared, even when both are empty).

    Example:
    >>> f1_score("John Smith Jr", "John Smith")
    0.8
    """
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    return _token_f1(prediction_tokens, ground_truth_tokens)


def compute_exact(a_gold, a_pred):
    """evaluate-v2.0's exact match: 1 when the normalized answers are equal, else 0.

    Example:
    >>> compute_exact("", ""), compute_exact("an apple", "Apple.")
    (1, 1)
    """
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold, a_pred):
    """evaluate-v2.0's F1: as v1.1's, except that an empty answer scores 1 against an empty one, else 0.

    Example:
    >>> compute_f1("", "the"), compute_f1("", "Paris"), compute_f1("John Smith", "John Smith Jr")
    (1, 0, 0.8)
    """
    gold_toks = _get_tokens(a_gold)
    pred_toks = _get_tokens(a_pred)
    if not gold_toks or not pred_toks:
        return int(gold_toks == pred_toks)
    return _token_f1(pred_toks, gold_toks)


def _get_tokens(s):
    if not s:
        return []
    return normalize_answer(s).split()


def _token_f1(prediction_tokens, ground_truth_tokens):
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)
