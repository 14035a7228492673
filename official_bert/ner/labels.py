"""The model's labels (IOB2 over the entity types) from --label_list or the training file, and the check that a
file's tags fit them."""

from official_bert.ner.errors import NerError
from official_bert.ner.tags import split_tag, to_scheme


class LabelMap:
    """The model's labels: O, then B- and I- of every entity type (IOB2, the one scheme the model predicts in,
    whatever the files use).

    Args:
        types: the entity types, in id order.
        tags: the tags a file may hold (--label_list), or None for any tag of these types.

    Example:
    >>> labels = LabelMap.from_tags(["O", "B-PER", "I-PER", "I-LOC", "S-MISC"])
    >>> labels.labels, labels.ids(["I-LOC", "I-LOC", "B-LOC", "O"])
    (['O', 'B-PER', 'I-PER', 'B-LOC', 'I-LOC', 'B-MISC', 'I-MISC'], [3, 4, 3, 0])
    """

    def __init__(self, types, tags=None):
        self.types = list(types)
        self.tags = tags
        self.labels = ["O"] + [f"{prefix}-{t}" for t in self.types for prefix in ("B", "I")]
        self._ids = {label: i for i, label in enumerate(self.labels)}

    @classmethod
    def from_tags(cls, tags):
        """The types of `tags` (any scheme), in the order they first appear; a file may hold only these tags."""
        types = []
        for tag in tags:
            entity_type = split_tag(tag)[1]
            if entity_type and entity_type not in types:
                types.append(entity_type)
        return cls(types, tags=set(tags))

    def __len__(self):
        return len(self.labels)

    def ids(self, tags):
        """One sentence's tags (any scheme) → the label ids of the same chunks in IOB2."""
        return [self._ids[tag] for tag in to_scheme(tags, "iob2")]


def label_map(label_list, train_sentences, train_path):
    """The labels of a run: --label_list's (comma-separated tags, any scheme, in the order their types should
    take), else the entity types of the training file, sorted.

    Args:
        label_list: --label_list, or None.
        train_sentences: the training file's `conll.Sentence`s (used without --label_list).
        train_path: that file, for messages.

    Example:
    >>> label_map("O,B-PER,I-PER,B-LOC,I-LOC", None, None).types
    ['PER', 'LOC']
    >>> label_map("O,PER", None, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.ner.errors.NerError: --label_list=O,PER: tag 'PER' is neither O nor B-, I-, E-, S-, L- or U- ...
    """
    if label_list:
        tags = [tag.strip() for tag in label_list.split(",") if tag.strip()]
        for tag in tags:
            try:
                split_tag(tag)
            except ValueError as e:
                raise NerError(f"--label_list={label_list}: {e}") from None
        if "O" not in tags:
            tags.append("O")
        return LabelMap.from_tags(tags)
    if train_sentences is None:
        raise NerError(f"no labels: pass --label_list, or put the training file {train_path} in --data_dir")
    types = sorted({split_tag(tag)[1] for sentence in train_sentences for tag in sentence.tags} - {""})
    return LabelMap(types)


def check_tags(sentences, path, labels, source):
    """Raises NerError at the first word whose tag the labels do not have: not in --label_list, or of a type the
    training file does not have.

    Args:
        sentences: the file's `conll.Sentence`s.
        path: the file, for the message.
        labels: the `LabelMap`.
        source: where the labels come from, for the message ("--label_list", "train.txt").

    Example:
    >>> from official_bert.ner.conll import Sentence
    >>> sentences = [Sentence([["Rome", "B-LOC"]], [7], 0)]
    >>> check_tags(sentences, "test.txt", LabelMap.from_tags(["O", "I-LOC"]), "--label_list")
    Traceback (most recent call last):
    ...
    official_bert.ner.errors.NerError: test.txt:7: tag 'B-LOC' is not in --label_list (I-LOC, O)
    >>> check_tags(sentences, "test.txt", LabelMap(["PER"]), "train.txt")
    Traceback (most recent call last):
    ...
    official_bert.ner.errors.NerError: test.txt:7: tag 'B-LOC' is of a type train.txt has no tag of (its types: PER)
    """
    for sentence in sentences:
        for tag, line in zip(sentence.tags, sentence.lines):
            if labels.tags is not None and tag not in labels.tags:
                raise NerError(f"{path}:{line}: tag {tag!r} is not in {source} ({', '.join(sorted(labels.tags))})")
            entity_type = split_tag(tag)[1]
            if entity_type and entity_type not in labels.types:
                raise NerError(f"{path}:{line}: tag {tag!r} is of a type {source} has no tag of (its types: "
                               f"{', '.join(labels.types) or 'none'})")
