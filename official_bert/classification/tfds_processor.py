"""The GLUE and XNLI tasks read through tensorflow-datasets, from datasets the user prepared locally.

tfds numbers labels in its own order (MNLI: entailment, neutral, contradiction); they are mapped to the label
strings of the TSV processors, so both readers give the same InputExamples and label ids.
"""

import os

import tensorflow as tf

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import InputExample
from official_bert.classification.processor import DataProcessor
from official_bert.classification.tsv_tasks import BINARY, ENTAILMENT, TSV_TASKS

_TFDS_NLI = ("entailment", "neutral", "contradiction")
# task → (tfds dataset, text_a key, text_b key, label strings by tfds class id; None for regression)
TFDS_TASKS = {
    "cola": ("glue/cola", "sentence", None, BINARY),
    "sst-2": ("glue/sst2", "sentence", None, BINARY),
    "mrpc": ("glue/mrpc", "sentence1", "sentence2", BINARY),
    "sts-b": ("glue/stsb", "sentence1", "sentence2", None),
    "qqp": ("glue/qqp", "question1", "question2", BINARY),
    "mnli": ("glue/mnli", "premise", "hypothesis", _TFDS_NLI),
    "qnli": ("glue/qnli", "question", "sentence", ENTAILMENT),
    "rte": ("glue/rte", "sentence1", "sentence2", ENTAILMENT),
    "wnli": ("glue/wnli", "sentence1", "sentence2", BINARY),
    "ax": ("glue/ax", "premise", "hypothesis", _TFDS_NLI),
    # tfds's xnli has the dev and test sets; the translated MNLI training data is xtreme_xnli.
    "xnli": ("xnli", "premise", "hypothesis", _TFDS_NLI),
}


def tfds_split(split):
    """The tfds split name of one of our splits ("dev" is tfds's "validation").

    Args:
        split: e.g. "dev_matched".

    Example:
    >>> tfds_split("dev_matched"), tfds_split("test")
    ('validation_matched', 'test')
    """
    return split.replace("dev", "validation", 1) if split.startswith("dev") else split


class TfdsProcessor(DataProcessor):
    """Reads a GLUE or XNLI task through `tfds.load(..., download=False)` into InputExamples.

    Args:
        task_name: one of TFDS_TASKS.
        tfds_data_dir: tfds's data_dir (None: $TFDS_DATA_DIR or ~/tensorflow_datasets).
        language: the XNLI language.

    Example:
    >>> processor = TfdsProcessor("mnli", "/nonexistent")
    >>> processor.dev_splits, processor.label_list
    (('dev_matched', 'dev_mismatched'), ('contradiction', 'entailment', 'neutral'))
    """

    def __init__(self, task_name, tfds_data_dir=None, language=None):
        task = TSV_TASKS[task_name]
        super().__init__(task_name, task.layouts, task.labels, leaderboard_files=task.leaderboard_files)
        self.tfds_data_dir = tfds_data_dir
        self.language = language

    def _source(self, split):
        name = TFDS_TASKS[self.task_name][0]
        if self.task_name == "xnli" and split == "train":
            name = "xtreme_xnli"
        return name, tfds_split(split)

    def data_files(self, split):
        # A prepared tfds dataset does not change in place; its files fingerprint it for the feature cache.
        self.check_split(split)
        root = self.tfds_data_dir or os.environ.get("TFDS_DATA_DIR") or os.path.expanduser("~/tensorflow_datasets")
        directory = os.path.join(root, self._source(split)[0])
        return sorted(os.path.join(d, f) for d, _, files in tf.io.gfile.walk(directory) for f in files)

    def cache_settings(self):
        return {**super().cache_settings(), "tfds": True, "language": self.language}

    def _read(self, split):
        import tensorflow_datasets as tfds  # only --use_tfds pays for importing it

        name, source_split = self._source(split)
        try:
            dataset = tfds.load(name, split=source_split, data_dir=self.tfds_data_dir, download=False)
        except (AssertionError, ValueError, OSError, tf.errors.OpError) as e:
            where = self.tfds_data_dir or "the default tfds data_dir"
            raise ClassificationDataError(
                f"--use_tfds: cannot load {name} split {source_split!r} from {where} (prepare it first with "
                f"`tfds build {name} --data_dir=...`): {e}") from None
        return [self._example(split, i, record) for i, record in enumerate(tfds.as_numpy(dataset))]

    def _example(self, split, index, record):
        _, key_a, key_b, tfds_labels = TFDS_TASKS[self.task_name]
        guid = f"{split}-{int(record.get('idx', index))}"
        if self.task_name == "xnli":
            text_a, text_b = self._xnli_texts(guid, record)
        else:
            text_a = record[key_a].decode("utf-8")
            text_b = record[key_b].decode("utf-8") if key_b else None
        label = record["label"]
        if tfds_labels is None:
            label = float(label) if not split.startswith("test") else self.placeholder_label
        elif label < 0:  # tfds's unlabelled test examples
            label = self.placeholder_label
        else:
            label = tfds_labels[label]
        return InputExample(guid, text_a, text_b, label)

    def _xnli_texts(self, guid, record):
        languages = [language.decode("utf-8") for language in record["hypothesis"]["language"]]
        if self.language not in languages or self.language not in record["premise"]:
            raise ClassificationDataError(f"--use_tfds: xnli example {guid} has no {self.language!r} text; it has "
                                          f"{', '.join(languages)}")
        hypothesis = record["hypothesis"]["translation"][languages.index(self.language)]
        return record["premise"][self.language].decode("utf-8"), hypothesis.decode("utf-8")
