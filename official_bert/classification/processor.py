"""What every task's data processor provides: its splits, labels, examples and the files they come from."""

from official_bert.classification.errors import ClassificationDataError


class DataProcessor:
    """Base class of the task processors (the original's DataProcessor, keyed by split name).

    Split names are "train", names starting with "dev" (evaluated; MNLI has "dev_matched" and
    "dev_mismatched") and names starting with "test" (predicted; no labels). Subclasses implement
    `_read(split)` and `data_files(split)`.

    Args:
        task_name: the --task_name the processor serves.
        splits: the split names the task has, in order.
        label_list: the label strings in label-id order; None for a regression task.
        num_choices: the number of endings of a multiple-choice task, else None.
        leaderboard_files: split name → GLUE submission file name, for the splits that have one.

    Example:
    >>> class Tiny(DataProcessor):
    ...     def _read(self, split):
    ...         return []
    >>> tiny = Tiny("tiny", ("train", "dev", "test"), ("no", "yes"))
    >>> tiny.train_split, tiny.dev_splits, tiny.test_splits, tiny.num_labels, tiny.placeholder_label
    ('train', ('dev',), ('test',), 2, 'no')
    >>> tiny.get_examples("dev")
    Traceback (most recent call last):
    ...
    official_bert.classification.errors.ClassificationDataError: task tiny: no examples in the dev set
    """

    def __init__(self, task_name, splits, label_list, num_choices=None, leaderboard_files=None):
        self.task_name = task_name
        self.splits = tuple(splits)
        self.label_list = tuple(label_list) if label_list is not None else None
        self.num_choices = num_choices
        self.leaderboard_files = dict(leaderboard_files or {})
        # Rows skipped while reading (QQP's malformed ones), per split, so callers can report them.
        self.skipped_rows = {}

    multi_label = False  # each example has a set of labels (a multi-hot vector), not one

    @property
    def is_regression(self):
        return self.label_list is None

    @property
    def num_labels(self):
        """Outputs of the classifier head: 1 for regression, else the number of labels."""
        return 1 if self.is_regression else len(self.label_list)

    @property
    def placeholder_label(self):
        """The label test examples carry (they have none): the first label, or 0.0, as the original."""
        return 0.0 if self.is_regression else self.label_list[0]

    @property
    def train_split(self):
        return "train" if "train" in self.splits else None

    @property
    def dev_splits(self):
        return tuple(s for s in self.splits if s.startswith("dev"))

    @property
    def test_splits(self):
        return tuple(s for s in self.splits if s.startswith("test"))

    def get_examples(self, split):
        """Reads the examples of `split`; raises ClassificationDataError if the task lacks it or it is empty."""
        self.check_split(split)
        examples = self._read(split)
        if not examples:
            files = ", ".join(self.data_files(split)) or f"task {self.task_name}"
            raise ClassificationDataError(f"{files}: no examples in the {split} set")
        return examples

    def check_split(self, split):
        if split not in self.splits:
            raise ClassificationDataError(f"task {self.task_name} has no {split!r} split; it has: "
                                          f"{', '.join(self.splits)}")

    def data_files(self, split):
        """The files `split` is read from (their sizes and times key the feature cache)."""
        return []

    def cache_settings(self):
        """Settings besides the data files that change the examples (they key the feature cache)."""
        return {"task": self.task_name, "labels": self.label_list, "num_choices": self.num_choices}

    def check_label(self, label, where):
        """Returns `label` if it is in the label list, else raises an error naming `where` (file:line)."""
        if label not in self.label_list:
            raise ClassificationDataError(f"{where}: label {label!r} is not one of the task's labels "
                                          f"{', '.join(self.label_list)}")
        return label

    def _read(self, split):
        raise NotImplementedError
