"""From the model's logits to each word's tag, the predictions file conlleval reads, and its scores.

The model predicts IOB2 labels (`labels.LabelMap`); each word takes the label of its first piece in its
max-context window. The tags written and scored are the same chunks in the file's own scheme
(`tags.detect_scheme`: IOB1 for CoNLL-2003), so the predicted column is comparable with the gold one.
"""

import numpy as np
import tensorflow as tf

from official_bert.io import atomic_path
from official_bert.ner.conlleval import count_chunks
from official_bert.ner.tags import to_scheme


def word_tags(features, logits, sentences, label_map):
    """Each sentence's predicted tags (IOB2), a word's from its max-context window.

    Args:
        features: the sentences' `NerFeature`s.
        logits: float [len(features), T, num_labels].
        sentences: the `conll.Sentence`s they were made from.
        label_map: the `labels.LabelMap`.

    Example:
    >>> from official_bert.ner.conll import Sentence
    >>> from official_bert.ner.features import NerFeature
    >>> from official_bert.ner.labels import LabelMap
    >>> sentence = Sentence([["Rome", "B-LOC"], ["wins", "O"]], [1, 2], 0)
    >>> windows = [NerFeature(0, [], [], [], {1: 0, 2: 1}, {1: True, 2: False}),
    ...            NerFeature(0, [], [], [], {1: 1}, {1: True})]
    >>> logits = np.eye(3)[[[0, 1, 2], [0, 0, 0]]]  # window 1: B-LOC at 1, I-LOC at 2; window 2: O at 1
    >>> word_tags(windows, logits, [sentence], LabelMap(["LOC"]))
    [['B-LOC', 'O']]
    """
    tags = [[None] * len(sentence.words) for sentence in sentences]
    best = np.argmax(logits, axis=-1)
    for feature, labels in zip(features, best):
        for position, word in feature.word_positions.items():
            if feature.max_context[position]:
                tags[feature.sentence_index][word] = label_map.labels[labels[position]]
    return tags


def in_scheme(predicted, scheme):
    """Predicted IOB2 tags of every sentence → the same chunks in `scheme` (`tags.to_scheme`)."""
    return [to_scheme(tags, scheme) for tags in predicted]


def score(sentences, predicted):
    """conlleval's `ChunkCounts` of the gold tags of `sentences` against `predicted`, read as conlleval reads the
    predictions file (`write_predictions`): a -DOCSTART- line is a token tagged O O.

    Example:
    >>> from official_bert.ner.conll import Sentence
    >>> sentence = Sentence([["Rome", "I-LOC"]], [3], 1, docstart=["-DOCSTART-", "O"])
    >>> counts = score([sentence], [["I-LOC"]])
    >>> counts.tokens, counts.correct_tags, dict(counts.correct)
    (2, 2, {'LOC': 1})
    """
    pairs = []
    for sentence, tags in zip(sentences, predicted):
        if sentence.docstart:
            pairs.append((["O"], ["O"]))
        pairs.append((sentence.tags, tags))
    return count_chunks(pairs)


def write_predictions(path, sentences, predicted):
    """Writes the sentences as CoNLL lines with the predicted tag appended (the form conlleval reads: word ...
    gold tag, predicted tag), -DOCSTART- lines tagged O, a blank line after each sentence; returns `path`.

    Args:
        path: the file (written under a temporary name first).
        sentences: the `conll.Sentence`s.
        predicted: each sentence's tags.

    Example:
    >>> import os, tempfile
    >>> from official_bert.ner.conll import Sentence
    >>> path = os.path.join(tempfile.mkdtemp(), "test_predictions.txt")
    >>> sentence = Sentence([["Rome", "NNP", "I-LOC"]], [3], 1, docstart=["-DOCSTART-", "-X-", "O"])
    >>> print(open(write_predictions(path, [sentence], [["I-ORG"]])).read(), end="")
    -DOCSTART- -X- O O
    <BLANKLINE>
    Rome NNP I-LOC I-ORG
    <BLANKLINE>
    """
    lines = []
    for sentence, tags in zip(sentences, predicted):
        if sentence.docstart:
            lines += [" ".join(sentence.docstart + ["O"]), ""]
        lines += [" ".join(columns + [tag]) for columns, tag in zip(sentence.columns, tags)]
        lines.append("")
    directory = path.rpartition("/")[0]
    if directory:
        tf.io.gfile.makedirs(directory)
    with atomic_path(path) as tmp, tf.io.gfile.GFile(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path
