"""The examples a task's data is read into, before tokenization (the original's InputExample)."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class InputExample:
    """One single-sentence or sentence-pair example.

    Args:
        guid: a unique id such as "dev-12" (split, then the file's index or row number).
        text_a: the first (or only) sentence.
        text_b: the second sentence, or None for single-sentence tasks.
        label: a label string from the task's label list, a float for regression; test examples carry the
            task's placeholder (its first label, or 0.0), as the original.

    Example:
    >>> InputExample("dev-3", "It rains.", label="1").text_b is None
    True
    """

    guid: str
    text_a: str
    text_b: str | None = None
    label: str | float | None = None


@dataclasses.dataclass(frozen=True)
class MultipleChoiceExample:
    """One multiple-choice example: a context and the candidate endings, each paired with it.

    Args:
        guid: a unique id such as "train-7".
        context: the first segment of every choice.
        endings: the second segment of each choice, in order.
        label: the correct choice's index as a string ("0", "1", ...).

    Example:
    >>> MultipleChoiceExample("dev-0", "She opens the door.", ("She walks in.", "It sings."), "0").endings[0]
    'She walks in.'
    """

    guid: str
    context: str
    endings: tuple
    label: str | None = None
