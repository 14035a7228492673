"""Cuts a tokenized document into segment pairs (create_instances_from_document) or single segments (no NSP)."""

import dataclasses
import itertools


@dataclasses.dataclass
class TrainingInstance:
    """One example before encoding.

    Args:
        input_ids: [CLS] A [SEP] B [SEP] (or [CLS] A [SEP] without NSP), after masking.
        segment_a_length: leading positions with segment id 0 ([CLS] A [SEP]); the rest have 1.
        masked_lm_positions: sorted positions of the predicted tokens.
        masked_lm_ids: the original ids at those positions.
        is_random_next: B is a random segment of another document (next_sentence_labels 1).

    Example:
    >>> instance = TrainingInstance([101, 7, 102, 103, 102], 3, [3], [2000], False)
    >>> instance.input_ids[instance.segment_a_length:]  # segment B: [MASK] (was 2000) [SEP]
    [103, 102]
    """

    input_ids: list
    segment_a_length: int
    masked_lm_positions: list
    masked_lm_ids: list
    is_random_next: bool


def target_length(max_num_tokens, short_seq_prob, rng):
    """The rough length a document's sequences aim for: usually max_num_tokens, sometimes randint(2, max)."""
    if rng.random() < short_seq_prob:
        return rng.randint(2, max_num_tokens)
    return max_num_tokens


def create_segment_pairs(documents, document_index, max_num_tokens, short_seq_prob, rng):
    """Returns [(tokens_a, tokens_b, is_random_next)] for one document, as the original's loop does.

    Sentences accumulate until they reach the target length (or the document ends); A takes the first
    randint(1, n − 1) of them; B is the rest with probability 0.5, otherwise (and always when the chunk
    has one sentence) a run of sentences from a uniformly random other document of the pool (never this one),
    starting at a random sentence,
    in which case the unused sentences of the chunk are put back. The pair is then truncated to
    max_num_tokens.

    Args:
        documents: the pool, at least two documents: a sequence of documents, each a list of sentences, each a
            non-empty sequence of ids (a `TokenStore` pool reads the drawn ones from disk).
        document_index: the document to cut.
        max_num_tokens: max_seq_length − 3.
        short_seq_prob: see `target_length`.
        rng: a `random.Random`.

    Example:
    >>> import random
    >>> docs = [[[1, 2], [3], [4, 5, 6]], [[7, 8], [9]]]
    >>> create_segment_pairs(docs, 0, 3, 0.0, random.Random(1))
    [([1, 2], [9], True), ([3], [5, 6], False)]
    """
    document = documents[document_index]
    target = target_length(max_num_tokens, short_seq_prob, rng)
    pairs = []
    chunk, length, i = [], 0, 0
    while i < len(document):
        chunk.append(document[i])
        length += len(document[i])
        if i == len(document) - 1 or length >= target:
            a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
            tokens_a = list(itertools.chain.from_iterable(chunk[:a_end]))
            is_random_next = len(chunk) == 1 or rng.random() < 0.5
            if is_random_next:
                tokens_b = _random_segment(documents, document_index, target - len(tokens_a), rng)
                i -= len(chunk) - a_end  # the unused sentences go back for the next chunk
            else:
                tokens_b = list(itertools.chain.from_iterable(chunk[a_end:]))
            pairs.append((*truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng), is_random_next))
            chunk, length = [], 0
        i += 1
    return pairs


def create_single_segments(document, max_num_tokens, short_seq_prob, rng):
    """Returns [tokens] for one document without NSP: whole sentences packed up to the target length.

    Example:
    >>> import random
    >>> create_single_segments([[1, 2], [3], [4, 5, 6]], 3, 0.0, random.Random(0))
    [[1, 2, 3], [4, 5, 6]]
    """
    target = target_length(max_num_tokens, short_seq_prob, rng)
    segments, chunk = [], []
    for i, sentence in enumerate(document):
        chunk.extend(sentence)
        if i == len(document) - 1 or len(chunk) >= target:
            segments.append(_trim(chunk, len(chunk) - max_num_tokens, rng))
            chunk = []
    return segments


def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    """Returns (a, b) cut to max_num_tokens together, as the original's token-by-token loop would.

    The original removes one token at a time from the longer list (b on a tie), each time from the front
    or the back with probability 0.5. Which list loses how many tokens does not depend on the draws, and
    the number taken from the front of a list is then Binomial(n, 0.5): one `getrandbits` draws it.

    >>> import random
    >>> truncate_seq_pair([1, 2, 3, 4, 5], [6], 4, random.Random(0))
    ([3, 4, 5], [6])
    """
    len_a, len_b = len(tokens_a), len(tokens_b)
    while len_a + len_b > max_num_tokens:
        if len_a > len_b:
            len_a -= 1
        else:
            len_b -= 1
    return _trim(tokens_a, len(tokens_a) - len_a, rng), _trim(tokens_b, len(tokens_b) - len_b, rng)


def _trim(tokens, excess, rng):
    if excess <= 0:
        return tokens
    front = rng.getrandbits(excess).bit_count()
    return tokens[front:len(tokens) - (excess - front)]


def _random_segment(documents, document_index, target_b_length, rng):
    # A uniformly random other document. The original drew up to ten times until it got another one, so with
    # probability n**-10 it took its own document (every time, in a one-document corpus, which is refused here).
    random_index = rng.randint(0, len(documents) - 2)
    if random_index >= document_index:
        random_index += 1
    random_document = documents[random_index]
    tokens_b = []
    for sentence in random_document[rng.randint(0, len(random_document) - 1):]:
        tokens_b.extend(sentence)
        if len(tokens_b) >= target_b_length:
            break
    return tokens_b
