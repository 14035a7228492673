"""Classification on your own CSV, TSV or JSON Lines files as a `FineTuningTask`: single-label (softmax), multi-label
(sigmoid outputs, a decision threshold per label chosen on dev) or regression, with class weights, and predictions
that keep your ids — run_classifier.py --train_file/--dev_file/--test_file.

    task = OwnFilesTask({"train": "tickets.csv", "dev": "dev.csv"}, Columns("body", label="tags"),
                        label_separator="|")
    run_task(task, FineTuningSettings("out", "bert_config.json", "vocab.txt", do_train=True, do_eval=True))

Everything else is `ClassificationTask`'s: the feature cache, --doc_stride windows, the training stream, sweeps,
--keep_best, resume and the export. The output directory gets labels.json (the kind and the label order, so that
a later run with --init_checkpoint=<this directory> predicts and exports with the same), and for multi-label
thresholds.json (the thresholds of the checkpoint the outputs were made with).
"""

import json
import os

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.classification import ClassificationDataError, feature_dataset
from official_bert.classification.label_metrics import (binary_cross_entropy, choose_thresholds, multi_label_metrics,
                                                        regression_metrics, sigmoid, single_label_metrics, softmax)
from official_bert.classification.losses import ClassWeightedCrossentropy, MultiLabelCrossentropy
from official_bert.classification.own_files import (MULTI_LABEL, REGRESSION, Columns, OwnFilesProcessor,
                                                    class_weights, read_label_file, write_label_file)
from official_bert.classification.predictions import write_predictions
from official_bert.classification.windows import document_outputs
from official_bert.export.classifier import classifier_serving_spec
from official_bert.io import write_text
from official_bert.tasks.classification import ClassificationTask, classifier_loss, classifier_metrics

THRESHOLD_FILE = "thresholds.json"
THRESHOLDS_NOTE = ("chosen on this dev set to maximise each label's F1 (the figures at them are optimistic; those "
                   "*_at_0.5 are not)")
_METRICS = {"single_label": "eval_accuracy", MULTI_LABEL: "eval_micro_f1", REGRESSION: "eval_spearman"}


class OwnFilesTask(ClassificationTask):
    """run_classifier.py on your own files (see `classification.own_files.OwnFilesProcessor`).

    Args:
        files: split ("train", "dev", "test") → path (--train_file, --dev_file, --test_file).
        columns: the `Columns` (--text_a_column, --text_b_column, --label_column, --id_column).
        input_format: --input_format, or None for each file's extension.
        label_list: --label_list, or None for the training file's labels (or the saved ones).
        multi_label: --multi_label.
        label_separator: --label_separator.
        regression: --regression.
        threshold: --threshold: every label's fixed decision threshold (multi-label); None chooses them on dev.
        class_weights: --class_weights: "balanced" or a comma-separated list, or None.
        freeze_encoder, doc_stride, window_pooling: as `ClassificationTask`'s.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.jsonl")
    >>> _ = open(path, "w").write('{"text": "a", "label": ["x", "y"]}\\n{"text": "b", "label": []}\\n')
    >>> from official_bert.finetuning import FineTuningSettings
    >>> task = OwnFilesTask({"train": path, "dev": path})
    >>> task.check(FineTuningSettings(os.path.dirname(path), "bert_config.json", "vocab.txt", do_train=True,
    ...                               do_eval=True))
    >>> task.processor.kind, task.processor.label_list, task.metric
    ('multi_label', ('x', 'y'), 'eval_micro_f1')
    """

    def __init__(self, files, columns=Columns(), *, input_format=None, label_list=None, multi_label=False,
                 label_separator=None, regression=False, threshold=None, class_weights=None, freeze_encoder=False,
                 doc_stride=0, window_pooling="mean"):
        self.files, self.columns, self.input_format = dict(files), columns, input_format
        self.label_settings = {"label_list": label_list, "multi_label": multi_label,
                               "label_separator": label_separator, "regression": regression}
        self.threshold, self.class_weight_spec = threshold, class_weights
        self.freeze_encoder, self.doc_stride, self.window_pooling = freeze_encoder, doc_stride, window_pooling
        self.processor, self.weights, self.thresholds = None, None, None
        self.name, self.metric = "own", None
        self.train_file, self.dev_files, self.test_files, self.extra_files = None, {}, {}, {}
        if threshold is not None and not 0.0 < threshold < 1.0:
            raise ClassificationDataError(f"--threshold={threshold}: expected a probability between 0 and 1")

    def check(self, settings):
        super().check(settings)
        # A file is read for its step alone: one given without it would be ignored (or, a training file, read for
        # its labels while the model stays untrained), which is the user's slip more often than the plan.
        for split, flag, needed in (("train", "do_train", settings.do_train), ("dev", "do_eval", settings.do_eval),
                                    ("test", "do_predict", settings.do_predict)):
            if needed and not self.files.get(split):
                raise ClassificationDataError(f"--{flag} needs --{split}_file")
            if self.files.get(split) and not needed:
                raise ClassificationDataError(f"--{split}_file is given but --{flag} is not: pass --{flag}, or leave "
                                              f"--{split}_file out")
        # The label order of the run this one continues: its output directory's, else its init checkpoint's.
        saved = read_label_file(settings.output_dir, settings.init_checkpoint)
        files = {split: path for split, path in self.files.items() if path}
        self.processor = OwnFilesProcessor(files, self.columns, input_format=self.input_format, saved=saved,
                                           **self.label_settings)
        if saved and saved.get("labels") != self.processor.label_file()["labels"] and not settings.do_train:
            raise ClassificationDataError(f"--label_list={','.join(self.processor.label_list or [])}: the model "
                                          f"was trained with the labels {', '.join(saved['labels'] or [])}")
        if self.threshold is not None and not self.processor.multi_label:
            raise ClassificationDataError("--threshold is for multi-label tasks (--multi_label)")
        self.weights = class_weights(self.class_weight_spec, self.processor)
        self.metric = _METRICS[self.processor.kind] if "dev" in self.processor.splits else None
        logging.info("%s task, labels: %s", self.processor.kind.replace("_", "-"),
                     ", ".join(self.processor.label_list or ["(a score)"]))
        if self.weights is not None:
            logging.info("class weights: %s", self.weights)

    def load(self, settings, tokenizer, extra=None):
        super().load(settings, tokenizer, extra)
        write_label_file(settings.output_dir, self.processor)

    def loss(self):
        if self.processor.multi_label:
            return MultiLabelCrossentropy(*(self.weights or (None, None)))
        if self.weights is not None:
            return ClassWeightedCrossentropy(self.weights)
        return classifier_loss(self.processor)

    def metrics(self):
        if self.processor.multi_label:
            return [keras.metrics.BinaryAccuracy("accuracy", threshold=0.0)]  # on logits: probability 0.5
        return classifier_metrics(self.processor)

    def evaluate(self, predictor, settings):
        labels, logits = self._outputs(predictor, self.dev_files["dev"], settings.eval_batch_size)
        kind, label_list = self.processor.kind, self.processor.label_list
        if kind == REGRESSION:
            figures = regression_metrics(labels, logits)
            figures["loss"] = figures["mse"]
        elif kind == MULTI_LABEL:
            probabilities = sigmoid(logits)
            self.thresholds = (np.full(len(label_list), self.threshold) if self.threshold is not None
                               else choose_thresholds(labels, probabilities))
            figures = multi_label_metrics(label_list, labels, probabilities, self.thresholds)
            at_half = multi_label_metrics(label_list, labels, probabilities, np.full(len(label_list), 0.5))
            figures.update({f"{name}_at_0.5": at_half[name] for name in ("micro_f1", "macro_f1", "subset_accuracy")})
            figures["loss"] = binary_cross_entropy(labels, logits, *(self.weights or (None, None)))
            if self.threshold is None:
                figures["thresholds"] = THRESHOLDS_NOTE
        else:
            figures = single_label_metrics(label_list, labels, logits, self.weights)
        return {f"eval_{name}": value for name, value in figures.items()}

    def write_outputs(self, predictor, settings, directory):
        tables = {"eval_results": self.evaluate(predictor, settings)} if settings.do_eval else {}
        if self.processor.multi_label:
            if not settings.do_eval:
                self.thresholds = self._saved_thresholds(settings)
            write_text(os.path.join(directory, THRESHOLD_FILE), json.dumps(
                {"thresholds": dict(zip(self.processor.label_list, map(float, self.thresholds))),
                 "chosen_on": self.files.get("dev") if settings.do_eval and self.threshold is None else None},
                indent=2) + "\n")
        if self.test_files:
            _, logits = self._outputs(predictor, self.test_files["test"], settings.predict_batch_size)
            outputs = (logits if self.processor.is_regression else sigmoid(logits) if self.processor.multi_label
                       else softmax(logits))
            for path in write_predictions(directory, self.processor.ids("test"), self.processor.label_list, outputs,
                                          self.thresholds, csv_too=self.processor.formats["test"] == "csv",
                                          label_separator=self.processor.label_separator or "|"):
                logging.info("wrote %s", path)
        return tables

    def serving_spec(self, tokenizer, seq_length):
        return classifier_serving_spec(tokenizer, seq_length, self.processor.label_list,
                                       text_b=bool(self.columns.text_b), doc_stride=self.doc_stride,
                                       window_pooling=self.window_pooling,
                                       thresholds=self.thresholds if self.processor.multi_label else None)

    def _outputs(self, predictor, feature_file, batch_size):
        """(labels, logits) of a split's examples, windows pooled."""
        logits, labels, real = predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True))
        logits, labels = document_outputs(feature_file, logits, labels, real, self.window_pooling)
        return labels, logits

    def _saved_thresholds(self, settings):
        """Without a dev set: --threshold, else the thresholds saved beside the checkpoint, else 0.5."""
        count = len(self.processor.label_list)
        if self.threshold is not None:
            return np.full(count, self.threshold)
        for directory in (settings.output_dir, settings.init_checkpoint):
            for candidate in dict.fromkeys(c for c in (directory, os.path.dirname(directory or "")) if c):
                path = os.path.join(candidate, THRESHOLD_FILE)
                if tf.io.gfile.exists(path):
                    with tf.io.gfile.GFile(path, "rb") as f:
                        saved = json.loads(f.read().decode("utf-8"))["thresholds"]
                    logging.info("decision thresholds from %s", path)
                    return np.array([saved.get(label, 0.5) for label in self.processor.label_list])
        logging.warning("no %s beside the checkpoint and no --threshold: every label's threshold is 0.5 (evaluate "
                        "with --dev_file --do_eval to choose them)", THRESHOLD_FILE)
        return np.full(count, 0.5)
