"""Entity-level precision, recall and F1 exactly as the CoNLL shared tasks' `conlleval` script computes them.

conlleval reads one word per line, the gold tag and the guessed tag last, a blank line between sentences. A
chunk is correct when the gold and the guessed chunk have the same type, start and end (see `tags.chunks` for
where chunks start and end); precision is correct / guessed chunks, recall correct / gold chunks, FB1 their
harmonic mean, all in percent, overall and per type (the union of gold and guessed types, sorted). Token
accuracy counts every line but the blank ones, so a `-DOCSTART-` line (tagged O O) counts as a correct token,
as conlleval counts it in a file that keeps those lines.

    counts = count_chunks([(gold_tags, guessed_tags) for each sentence])
    print(report(counts))       # conlleval's output, to the character
    scores(counts)              # {"precision": 91.84, "recall": ..., "f1": ..., "accuracy": ..., "LOC_f1": ...}
"""

import collections
import dataclasses

from official_bert.ner.tags import chunks


@dataclasses.dataclass
class ChunkCounts:
    """What conlleval counts.

    Args:
        tokens: words scored (blank lines not counted).
        correct_tags: words whose guessed tag is the gold tag.
        gold: entity type → chunks in the gold tags.
        guessed: entity type → chunks in the guessed tags.
        correct: entity type → guessed chunks that are gold chunks (same type, start and end).
    """

    tokens: int = 0
    correct_tags: int = 0
    gold: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    guessed: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    correct: collections.Counter = dataclasses.field(default_factory=collections.Counter)


def count_chunks(sentences):
    """Counts the chunks and tags of sentences of (gold tags, guessed tags), as conlleval.

    Args:
        sentences: (gold, guessed) tag lists of equal length per sentence (any scheme).

    Example: gold `I-PER I-PER O I-LOC`, guessed `B-PER I-PER O B-ORG` (IOB1 against IOB2: the person is
    found, the place is guessed as an organization).

    >>> counts = count_chunks([(["I-PER", "I-PER", "O", "I-LOC"], ["B-PER", "I-PER", "O", "B-ORG"])])
    >>> counts.tokens, counts.correct_tags, sorted(counts.gold.items()), sorted(counts.guessed.items())
    (4, 2, [('LOC', 1), ('PER', 1)], [('ORG', 1), ('PER', 1)])
    >>> dict(counts.correct)
    {'PER': 1}
    """
    counts = ChunkCounts()
    for gold, guessed in sentences:
        if len(gold) != len(guessed):
            raise ValueError(f"a sentence has {len(gold)} gold tags and {len(guessed)} guessed tags")
        gold_chunks, guessed_chunks = set(chunks(gold)), set(chunks(guessed))
        counts.tokens += len(gold)
        counts.correct_tags += sum(g == p for g, p in zip(gold, guessed))
        counts.gold.update(entity_type for entity_type, _, _ in gold_chunks)
        counts.guessed.update(entity_type for entity_type, _, _ in guessed_chunks)
        counts.correct.update(entity_type for entity_type, _, _ in gold_chunks & guessed_chunks)
    return counts


def _prf(correct, guessed, gold):
    precision = 100 * correct / guessed if guessed > 0 else 0.0
    recall = 100 * correct / gold if gold > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def _types(counts):
    return sorted(set(counts.gold) | set(counts.guessed))


def report(counts):
    """conlleval's report of `counts`, line for line (without its final newline).

    Example:
    >>> print(report(count_chunks([(["B-PER", "O", "B-LOC"], ["B-PER", "O", "O"])])))
    processed 3 tokens with 2 phrases; found: 1 phrases; correct: 1.
    accuracy:  66.67%; precision: 100.00%; recall:  50.00%; FB1:  66.67
                  LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0
                  PER: precision: 100.00%; recall: 100.00%; FB1: 100.00  1
    """
    correct, guessed, gold = (sum(c.values()) for c in (counts.correct, counts.guessed, counts.gold))
    lines = [f"processed {counts.tokens} tokens with {gold} phrases; found: {guessed} phrases; correct: {correct}."]
    if counts.tokens > 0:
        precision, recall, f1 = _prf(correct, guessed, gold)
        lines.append(f"accuracy: {100 * counts.correct_tags / counts.tokens:6.2f}%; precision: {precision:6.2f}%; "
                     f"recall: {recall:6.2f}%; FB1: {f1:6.2f}")
    for entity_type in _types(counts):
        precision, recall, f1 = _prf(counts.correct[entity_type], counts.guessed[entity_type],
                                     counts.gold[entity_type])
        lines.append(f"{entity_type:>17}: precision: {precision:6.2f}%; recall: {recall:6.2f}%; FB1: {f1:6.2f}  "
                     f"{counts.guessed[entity_type]}")
    return "\n".join(lines)


def scores(counts):
    """The report's figures as numbers, rounded to the 2 decimals it prints: precision, recall, f1, accuracy
    (token accuracy), all in percent, and <TYPE>_precision, <TYPE>_recall, <TYPE>_f1 for each type.

    Example:
    >>> scores(count_chunks([(["B-PER", "O", "B-LOC"], ["B-PER", "O", "O"])]))["f1"]
    66.67
    """
    def rounded(value):
        return float(f"{value:.2f}")  # as printf's %.2f rounds

    correct, guessed, gold = (sum(c.values()) for c in (counts.correct, counts.guessed, counts.gold))
    precision, recall, f1 = _prf(correct, guessed, gold)
    results = {"precision": rounded(precision), "recall": rounded(recall), "f1": rounded(f1),
               "accuracy": rounded(100 * counts.correct_tags / counts.tokens if counts.tokens else 0.0)}
    for entity_type in _types(counts):
        values = _prf(counts.correct[entity_type], counts.guessed[entity_type], counts.gold[entity_type])
        for name, value in zip(("precision", "recall", "f1"), values):
            results[f"{entity_type}_{name}"] = rounded(value)
    return results
