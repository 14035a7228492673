"""`TextClassifier`: a `BertClassifier` that takes text — single sentences or pairs; one label, several labels, or a
score — with `from_checkpoint`, the paper's `compile`, one `.keras` file with its tokenizer, and `export`."""

import json
import os

import keras
import numpy as np
import tensorflow as tf

from official_bert.checkpoints import CheckpointError, kinds, load_checkpoint, save_checkpoint
from official_bert.classification import validation
from official_bert.classification.own_files import LABEL_FILE, MULTI_LABEL, REGRESSION, SINGLE_LABEL, read_label_file
from official_bert.io import write_text
from official_bert.export.classifier import export_classifier
from official_bert.keras_models import text_model
from official_bert.keras_models.preprocessor import TextPreprocessor
from official_bert.models.bert_classifier import BertClassifier

# The Google name of the classifier's kernel, [num_classes, hidden] (the original run_classifier.py's).
_HEAD = "output_weights"
# A multi-label run_classifier.py output directory's decision thresholds: {"thresholds": {label: probability}}.
_THRESHOLD_FILE = "thresholds.json"


@keras.saving.register_keras_serializable(package="official_bert")
class TextClassifier(text_model.TextModelMixin, BertClassifier):
    """Classifies texts, or sentence pairs, with a fine-tuned BERT: the original run_classifier.py's model
    (dropout + Dense on the pooled [CLS] output) behind a `TextPreprocessor`.

    Three kinds, by `num_classes` and `multi_label`: one label of num_classes (softmax cross-entropy, accuracy),
    any number of num_classes labels (`multi_label=True`: a sigmoid per label, binary cross-entropy, a label is
    on where its probability reaches its threshold), or a score (`num_classes=1`: regression, mean squared error,
    Pearson correlation). `predict` returns the logits (the score for regression), as Keras's classifiers do;
    `classify` the labels.

    `fit`, `evaluate` and `predict` take texts (a list of strings, a pair of lists, a `tf.data.Dataset`); y holds
    label ids or names (from `label_list`), [N, num_classes] 0/1 rows for multi-label, numbers for regression.
    The model is compiled with the paper's fine-tuning optimizer when built (`compile` to change it). The weights
    are `BertClassifier`'s: `save_checkpoint` writes a valid run_classifier.py --init_checkpoint, and a
    run_classifier.py output directory loads with `from_checkpoint`.

    Args:
        encoder (BertEncoder): the encoder, new or with a checkpoint's weights.
        preprocessor (TextPreprocessor | dict): the tokenizer and packer (or its config).
        num_classes (int): the number of labels (1: regression).
        label_list (list[str] | None): the label names in id order; default "0", "1", ...
        multi_label (bool): several labels per text (a sigmoid per label).
        thresholds (float | list[float] | None): multi-label: the probability at which each label is on (one
            number for all); default 0.5.
        dropout_rate (float): dropout before the output layer.
        **kwargs: passed to `BertClassifier` (e.g. `name`).

    Example:
    >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
    >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
    ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
    >>> history = model.fit(["good film", "bad film"] * 8, ["pos", "neg"] * 8, epochs=1, verbose=0)
    >>> model.predict(["good film", "a bad film"], verbose=0).shape
    (2, 2)
    >>> [label in ("neg", "pos") for label in model.classify(["good film"])]
    [True]
    """

    def __init__(self, encoder, preprocessor, num_classes, label_list=None, multi_label=False, thresholds=None,
                 dropout_rate=0.1, **kwargs):
        super().__init__(encoder, num_classes, dropout_rate=dropout_rate, name=kwargs.pop("name", "text_classifier"),
                         **kwargs)
        if isinstance(preprocessor, dict):
            preprocessor = keras.saving.deserialize_keras_object(preprocessor)
        text_model.check_sequence_length(encoder, preprocessor)
        if label_list is not None:
            if isinstance(label_list, (str, bytes)):
                raise validation.ValidationError(f"label_list: expected a list of names, got a string {label_list!r}")
            if len(label_list) != num_classes:
                raise validation.ValidationError(f"label_list has {len(label_list)} labels, num_classes={num_classes}:"
                                                 " expected one name per class")
            # Stripped as run_classifier strips the labels of its files: "pos " is the class "pos".
            label_list = [validation.label_name(label, f"label_list[{i}]") for i, label in enumerate(label_list)]
            repeated = [label for i, label in enumerate(label_list) if label in label_list[:i]]
            if repeated:
                raise validation.ValidationError(f"label_list names {repeated[0]!r} twice")
        if multi_label and num_classes < 2:
            raise ValueError("multi_label needs num_classes >= 2 (num_classes=1 is regression)")
        self.preprocessor = preprocessor
        self.label_list = label_list
        self.multi_label = multi_label
        self.thresholds = thresholds
        self.compile()

    @property
    def labels(self):
        """The label names in id order ("0", "1", ... without a label_list); None for regression."""
        if self.num_classes == 1:
            return None
        return self.label_list or [str(i) for i in range(self.num_classes)]

    @classmethod
    def from_checkpoint(cls, path, num_classes=None, label_list=None, *, config=None, vocab_file=None,
                        spm_model_file=None, do_lower_case=None, preserve_unused_tokens=False, sequence_length=128,
                        multi_label=False, thresholds=None, dtype=None, **kwargs):
        """A `TextClassifier` with a checkpoint's weights: the encoder always, the classifier head where the
        checkpoint has one (a run_classifier.py output directory, a Hugging Face BertForSequenceClassification, a
        fine-tuned Google checkpoint); a new head (num_classes needed) otherwise.

        Args:
            path (str): a Google TF1, Hugging Face or official_bert checkpoint: a directory, a checkpoint prefix or
                a weights file (see `load_checkpoint`).
            num_classes (int | None): default: the checkpoint head's, or len(label_list).
            label_list (list[str] | None): default: the labels.json of a run_classifier.py output directory, or a
                Hugging Face config's id2label.
            config (BertConfig | str | None): the model's config or its file; default: the bert_config.json or
                config.json beside the weights.
            vocab_file (str | None): the WordPiece vocabulary; default: the vocab.txt beside the weights.
            spm_model_file (str | None): a SentencePiece model, instead of vocab_file.
            do_lower_case (bool | None): default: what the checkpoint suggests (a tokenizer_config.json, the casing
                of its vocabulary, Google's release names), uncased without evidence.
            preserve_unused_tokens (bool): keep `[unused<n>]` tokens whole.
            sequence_length (int): the longest packed row, [CLS] and [SEP] included.
            multi_label (bool): several labels per text; default: what labels.json beside the checkpoint says.
            thresholds (float | list[float] | None): multi-label decision thresholds; default: the
                thresholds.json beside the checkpoint, or 0.5.
            dtype (str | None): the encoder's dtype policy (e.g. "mixed_bfloat16"); default float32.
            **kwargs: passed to the constructor (e.g. `dropout_rate`).

        Returns:
            TextClassifier: compiled with the paper's fine-tuning optimizer.

        Raises:
            CheckpointError: unreadable or mismatched, or without a config or vocabulary beside it (pass them).

        Example:
        >>> import tempfile
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, save_checkpoint
        >>> work = tempfile.TemporaryDirectory()
        >>> vocab = work.name + "/words.txt"
        >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
        >>> _ = save_checkpoint(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5)), work.name, "google",
        ...                     vocab_file=vocab)
        >>> TextClassifier.from_checkpoint(work.name, 3).predict(["hi"], verbose=0).shape
        (1, 3)
        """
        encoder, preprocessor, located = text_model.from_checkpoint_parts(
            path, config, vocab_file, spm_model_file, do_lower_case, preserve_unused_tokens, sequence_length, dtype)
        saved = read_label_file(located.directory) or {}  # a run_classifier.py output directory's labels.json
        source = "label_list" if label_list else f"{LABEL_FILE} beside the checkpoint"
        label_list = label_list or saved.get("labels")
        hub_labels = text_model.checkpoint_labels(located)
        multi_label = multi_label or saved.get("kind") == MULTI_LABEL
        head = text_model.head_size(located, _HEAD)
        kind = kinds.recorded(located)
        if not kinds.same_heads(kind, "BertClassifier"):  # another task's head (a tagger's is also `classifier`)
            if not (num_classes or label_list):
                raise CheckpointError(f"{path} is {kinds.describe(kind)}, not {kinds.describe('BertClassifier')}: "
                                      "pass num_classes (or label_list) to start a new classifier from its encoder")
            head = None
        num_classes = num_classes or head or len(label_list or hub_labels or ()) or None
        if num_classes is None:
            raise ValueError(f"{path}: the checkpoint has no classifier head; pass num_classes (or label_list)")
        if head is not None and head != num_classes:
            raise ValueError(f"{path}: the checkpoint's classifier has {head} outputs, num_classes={num_classes}; "
                             "leave num_classes out to use its head, or load the encoder of another checkpoint")
        if label_list is not None and len(label_list) != num_classes:
            against = f"the checkpoint's classifier has {head} outputs" if head else f"num_classes={num_classes}"
            raise ValueError(f"{path}: {source} has {len(label_list)} labels, but {against}: expected one name per "
                             "class")
        if label_list is None and hub_labels and len(hub_labels) == num_classes:
            # A Hugging Face config's id2label; one of another length is its placeholder for another head.
            label_list = hub_labels
        if multi_label and thresholds is None:
            thresholds = _saved_thresholds(located.directory, label_list)
        model = cls(encoder, preprocessor, num_classes, label_list, multi_label, thresholds, **kwargs)
        load_checkpoint(model, path, do_lower_case=preprocessor.do_lower_case)
        return model

    def default_loss(self):
        if self.num_classes == 1:
            return keras.losses.MeanSquaredError()
        if self.multi_label:
            return keras.losses.BinaryCrossentropy(from_logits=True)
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def default_metrics(self):
        if self.num_classes == 1:
            # Across each batch's rows (axis 0; Keras's default, the last axis, is a single score: NaN), averaged
            # over the batches.
            return [keras.metrics.PearsonCorrelation(axis=0, name="pearson")]
        if self.multi_label:
            return [keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)]  # on logits: probability 0.5
        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]

    def targets(self, y):
        """y as the loss takes it, each row checked (`classification.validation`, as run_classifier's files are):
        class ids or names (stripped, as the files' labels) → int32 ids; multi-label rows of num_classes 0/1 →
        float32; regression scores → float32 finite numbers. A row may be a one-element list ([N, 1] arrays).

        Args:
            y: the labels, one per text.

        Raises:
            ValidationError: a row that is not one of these, naming it (e.g. "y[3]").

        Example:
        >>> from official_bert import BertConfig, BertEncoder
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, num_hidden_layers=1)),
        ...                        TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hi"]), 2, ["neg", "pos"])
        >>> model.targets(["pos ", 0, 1.0]).tolist()
        [1, 0, 1]
        >>> model.targets([0.5])
        Traceback (most recent call last):
        ...
        official_bert.classification.validation.ValidationError: y[0]: label 0.5 is a number, not a class id (an \
integer in [0, 2)); for float labels use regression (num_classes=1)
        """
        rows = list(y) if isinstance(y, (list, tuple)) else list(np.asarray(y, dtype=object)) if np.ndim(y) else None
        if rows is None:
            raise validation.ValidationError(f"y: expected one label per text, got {y!r}")
        if self.multi_label:
            return np.array([validation.label_row(row, self.num_classes, f"y[{i}]") for i, row in enumerate(rows)],
                            "float32").reshape([-1, self.num_classes])
        rows = [_one(row) for row in rows]
        if self.num_classes == 1:
            return np.array([validation.score(row, f"y[{i}]") for i, row in enumerate(rows)], "float32")
        index = {label: i for i, label in enumerate(self.labels)}
        ids = []
        for i, row in enumerate(rows):
            if isinstance(row, (str, bytes)):
                name = validation.label_name(row, f"y[{i}]")
                if name not in index:
                    raise validation.ValidationError(f"y[{i}]: label {name!r} is not in label_list {self.labels}"
                                                     + validation.other_spelling(name, self.labels))
                ids.append(index[name])
            else:
                ids.append(validation.class_id(row, self.num_classes, f"y[{i}]"))
        return np.array(ids, "int32")

    def probabilities(self, logits):
        """The logits `predict` returns as probabilities: softmax, or a sigmoid per label for multi-label.

        Args:
            logits (numpy.ndarray): [N, num_classes], as `predict` returns them.

        Returns:
            numpy.ndarray: float64 [N, num_classes].

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> model.probabilities([[0.0, 0.0], [0.0, 2.0]]).round(3).tolist()
        [[0.5, 0.5], [0.119, 0.881]]
        """
        logits = np.asarray(logits, "float64")
        if self.multi_label:
            return 1 / (1 + np.exp(-logits))
        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return shifted / shifted.sum(axis=-1, keepdims=True)

    def classify(self, x, batch_size=None):
        """The answer for each text: its label; for multi-label the list of labels that are on; for regression
        the score.

        Args:
            x (list[str] | tuple | numpy.ndarray | tf.data.Dataset): the texts, in the forms `predict` takes.
            batch_size (int | None): texts per batch; default 32.

        Returns:
            list: a label name per text; a list of label names per text for multi-label; a float per text for
                regression.

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> [label in ("neg", "pos") for label in model.classify(["good film", "bad film"])]
        [True, True]
        """
        logits = self.predict(x, batch_size=batch_size, verbose=0)
        if self.num_classes == 1:
            return logits[:, 0].tolist()
        if self.multi_label:
            on = self.probabilities(logits) >= np.asarray(self._thresholds())
            return [[label for label, is_on in zip(self.labels, row) if is_on] for row in on]
        return [self.labels[i] for i in np.argmax(logits, axis=-1)]

    def _thresholds(self):
        """Each label's threshold."""
        return np.broadcast_to(np.asarray(0.5 if self.thresholds is None else self.thresholds, "float64"),
                               [self.num_classes]).tolist()

    def export(self, export_dir, text_b=False):
        """Writes the raw-text SavedModel run_classifier.py --export_dir writes (core TensorFlow ops for WordPiece,
        versioned, requests padded to their longest row; a multi-label model's thresholds in it) as the next version
        in export_dir; returns its path.

        Args:
            export_dir (str): the directory of versions, as TF Serving's --model_base_path.
            text_b (bool): serve sentence pairs (inputs `text_a` and `text_b`; else `text_a` only).

        Returns:
            str: the version written, `export_dir/<n>`.

        Example:
        >>> import tempfile
        >>> import tensorflow as tf
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> served = tf.saved_model.load(model.export(tempfile.mkdtemp()))
        >>> sorted(served.signatures["serving_default"](text_a=tf.constant(["good film"])))
        ['label', 'logits', 'probabilities']
        """
        thresholds = self._thresholds() if self.multi_label else None
        return export_classifier(export_dir, self, self.preprocessor.spec, self.preprocessor.sequence_length,
                                 self.labels, text_b=text_b, thresholds=thresholds)

    def save_checkpoint(self, directory, format="official_bert"):
        """Writes the weights, config and vocab.txt as `save_checkpoint` does, with run_classifier.py's labels.json
        (and a multi-label model's thresholds.json): a run_classifier.py --init_checkpoint (or a Hugging Face /
        Google checkpoint); returns the checkpoint prefix or weights file.

        Args:
            directory (str): created if needed.
            format (str): "official_bert", "huggingface" or "google".

        Returns:
            str: the checkpoint prefix or weights file written.

        Example:
        >>> import os, tempfile
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> directory = tempfile.mkdtemp()
        >>> _ = model.save_checkpoint(directory)
        >>> TextClassifier.from_checkpoint(directory).label_list
        ['neg', 'pos']
        """
        written = save_checkpoint(self, directory, format, vocab_file=self.preprocessor.spec.vocab_file)
        kind = REGRESSION if self.num_classes == 1 else MULTI_LABEL if self.multi_label else SINGLE_LABEL
        write_text(os.path.join(directory, LABEL_FILE), json.dumps({"kind": kind, "labels": self.labels}, indent=2)
                   + "\n")
        if self.multi_label:
            write_text(os.path.join(directory, _THRESHOLD_FILE), json.dumps(
                {"thresholds": dict(zip(self.labels, self._thresholds()))}, indent=2) + "\n")
        return written

    def get_config(self):
        return {**super().get_config(), "preprocessor": keras.saving.serialize_keras_object(self.preprocessor),
                "label_list": self.label_list, "multi_label": self.multi_label, "thresholds": self.thresholds}


def _one(row):
    """A row's single value: a one-element list or array (a row of an [N, 1] array) as its element."""
    return row[0] if isinstance(row, (list, tuple, np.ndarray)) and len(row) == 1 else row


def _saved_thresholds(directory, label_list):
    path = os.path.join(directory, _THRESHOLD_FILE)
    if not label_list or not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "rb") as f:
        saved = json.loads(f.read().decode("utf-8"))["thresholds"]
    return [float(saved.get(label, 0.5)) for label in label_list]
