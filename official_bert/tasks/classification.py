"""Sentence (pair) classification, regression and multiple choice — GLUE, XNLI, SWAG, STS-B or your own TSVs — as
a `FineTuningTask`: run_classifier.py's task logic.

    task = ClassificationTask("mrpc", "glue/MRPC")
    run_task(task, FineTuningSettings("out", "bert_config.json", "vocab.txt", do_train=True, do_eval=True))

The data (processors, features and their cache, metrics, result files) is `official_bert.classification`'s; this
module adds the model, its loss, the training stream, evaluation, the test predictions and the export.
"""

import os

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.classification import (best_metric, evaluation_metrics, feature_dataset, get_processor,
                                          results_file_name, write_leaderboard_file, write_test_results)
from official_bert.classification.cache import load_or_create_splits
from official_bert.classification.metrics import mean_loss
from official_bert.classification.records import batch_parser
from official_bert.classification.tsv_tasks import TSV_TASKS
from official_bert.classification.windows import check_window_pooling, document_outputs
from official_bert.configs import ConfigError
from official_bert.export.classifier import classifier_serving_spec
from official_bert.finetuning.stream import TrainingRecords
from official_bert.finetuning.task import FineTuningTask
from official_bert.models import BertClassifier, BertMultipleChoice


class ClassificationTask(FineTuningTask):
    """run_classifier.py's task: a GLUE/XNLI/SWAG/STS-B processor's splits, a `BertClassifier` (or
    `BertMultipleChoice`), the original's result files and a SavedModel that serves raw text.

    Args:
        task_name: --task_name (cola, sst-2, mrpc, sts-b, qqp, mnli, qnli, rte, wnli, ax, xnli, swag, single, pair).
        data_dir: --data_dir.
        label_list: --label_list, for single / pair.
        xnli_language: --xnli_language, for xnli.
        use_tfds: --use_tfds; tfds_data_dir: --tfds_data_dir.
        freeze_encoder: --freeze_encoder (the feature-based approach of the paper's Table 7).
        doc_stride: --doc_stride (0: truncate long texts; N: windows N tokens apart).
        window_pooling: --window_pooling ("mean" or "max").
        tsv_first_line: --tsv_first_line ("header", "data" or None), for the tasks read from .tsv files.

    Example:
    >>> task = ClassificationTask("mnli", "glue/MNLI")
    >>> task.name, task.metric, task.processor.dev_splits
    ('mnli', 'eval_accuracy', ('dev_matched', 'dev_mismatched'))
    """

    def __init__(self, task_name, data_dir=None, label_list=None, xnli_language="zh", use_tfds=False,
                 tfds_data_dir=None, freeze_encoder=False, doc_stride=0, window_pooling="mean", tsv_first_line=None):
        self.processor = get_processor(task_name, data_dir, label_list=label_list,
                                       xnli_language=xnli_language if task_name.lower() == "xnli" else None,
                                       use_tfds=use_tfds, tfds_data_dir=tfds_data_dir, tsv_first_line=tsv_first_line)
        self.name = self.processor.task_name
        # AX, a test set alone, has no dev metric: it can be predicted, not evaluated, swept or kept best.
        self.metric = best_metric(self.name, self.processor.dev_splits) if self.processor.dev_splits else None
        self.freeze_encoder = freeze_encoder
        self.doc_stride = doc_stride
        self.window_pooling = window_pooling
        self.train_file, self.dev_files, self.test_files, self.extra_files = None, {}, {}, {}

    def check(self, settings):
        check_window_pooling(self.window_pooling)

    def load(self, settings, tokenizer, extra=None):
        """As `FineTuningTask.load`; `extra`, for a task built on this one (distillation's unlabelled text), is
        (a DataProcessor that reads this task's splits and more, {more split: pad_to_multiple_of}): those splits
        are read and checked with the others before any is written, their FeatureFiles kept in `extra_files`."""
        # Every split needed, converted once and cached (see classification/cache.py), all of them read and checked
        # before any is written; evaluation and prediction sets are padded to whole batches.
        processor, more = extra or (self.processor, {})
        dev = self.processor.dev_splits if settings.do_eval else ()
        test = self.processor.test_splits if settings.do_predict else ()
        splits = {**({"train": 1} if settings.do_train else {}), **dict.fromkeys(dev, settings.eval_batch_size),
                  **dict.fromkeys(test, settings.predict_batch_size), **more}
        files = load_or_create_splits(processor, splits, tokenizer.python_tokenizer(), settings.max_seq_length,
                                      settings.cache_dir, tokenizer_file=tokenizer.file,
                                      do_lower_case=tokenizer.do_lower_case, doc_stride=self.doc_stride)
        self.train_file = files.get("train")
        self.dev_files = {split: files[split] for split in dev}
        self.test_files = {split: files[split] for split in test}
        self.extra_files = {split: files[split] for split in more}

    def build_model(self, encoder):
        layers = min(4, encoder.config.num_hidden_layers) if self.freeze_encoder else None
        return classifier_model(encoder, self.processor, feature_layers=layers)

    def loss(self):
        return classifier_loss(self.processor)

    def metrics(self):
        return classifier_metrics(self.processor)

    def num_train_examples(self):
        return self.train_file.num_features

    def train_records(self):
        return train_records(self.train_file)

    def evaluate(self, predictor, settings):
        return evaluate_classifier(predictor, self.processor, self.dev_files, settings.eval_batch_size,
                                   window_pooling=self.window_pooling)

    def write_outputs(self, predictor, settings, directory):
        tables = {"eval_results": self.evaluate(predictor, settings)} if settings.do_eval else {}
        for split, feature_file in self.test_files.items():
            for path in predict_test_set(predictor, self.processor, split, feature_file, settings.predict_batch_size,
                                         directory, window_pooling=self.window_pooling):
                logging.info("wrote %s", path)
        return tables

    def serving_spec(self, tokenizer, seq_length):
        return classifier_serving_spec(tokenizer, seq_length, self.processor.label_list,
                                       text_b=has_text_b(self.processor), num_choices=self.processor.num_choices,
                                       doc_stride=self.doc_stride, window_pooling=self.window_pooling)


def classifier_model(encoder, processor, feature_layers=None):
    """The task's model on `encoder`: `BertMultipleChoice` for multiple choice, else a `BertClassifier` with one
    output per label (one for regression); the head's logits are float32 whatever the encoder computes in.

    Args:
        encoder: the `BertEncoder` (a left-to-right one keeps its left-only constraint: the last real token's
            output is the sequence representation).
        processor: the task's DataProcessor.
        feature_layers: the feature-based approach: a frozen encoder, classified from its last
            `feature_layers` layers (see `BertClassifier`); not for multiple choice.

    Example:
    >>> from official_bert import BertConfig, BertEncoder
    >>> from official_bert.classification import get_processor
    >>> config = BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                     intermediate_size=32)
    >>> classifier_model(BertEncoder(config), get_processor("mnli", "glue/MNLI")).num_classes
    3
    """
    if processor.num_choices:
        if feature_layers:
            raise ConfigError(f"--freeze_encoder: the feature-based head is for classification, not for "
                              f"multiple choice (--task_name={processor.task_name})")
        return BertMultipleChoice(encoder, processor.num_choices)
    return BertClassifier(encoder, processor.num_labels, feature_layers=feature_layers)


def classifier_loss(processor):
    """Mean squared error for regression, else softmax cross-entropy on the logits."""
    if processor.is_regression:
        return keras.losses.MeanSquaredError()
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def classifier_metrics(processor):
    """The Keras metrics reported while training: accuracy, except for regression."""
    return [] if processor.is_regression else [keras.metrics.SparseCategoricalAccuracy("accuracy")]


def has_text_b(processor):
    """Whether the task's examples have a second text (sentence pairs, or multiple choice's endings).

    Example:
    >>> from official_bert.classification import get_processor
    >>> has_text_b(get_processor("sst-2", "glue/SST-2")), has_text_b(get_processor("rte", "glue/RTE"))
    (False, True)
    """
    if processor.num_choices:
        return True
    return any(layout.text_b is not None for layout in TSV_TASKS[processor.task_name].layouts.values())


def train_records(feature_file):
    """The training set's `TrainingRecords`: its cached TFRecords and their parser.

    Args:
        feature_file: the training set's `FeatureFile`.
    """
    parse = batch_parser(feature_file.max_seq_length, feature_file.num_choices, feature_file.is_regression,
                         feature_file.multi_hot)
    return TrainingRecords(tf.data.TFRecordDataset(feature_file.path), feature_file.num_records,
                           lambda records: parse(records)[:2])


def evaluate_classifier(predictor, processor, dev_files, batch_size, window_pooling="mean"):
    """The task's metrics on its dev splits under the original's names (see `classification.evaluation_metrics`),
    and `loss`: as the original's Estimator reports it on CPUs and GPUs, the mean over the first split's batches
    of each batch's mean loss (over its real examples: the padding that fills the last batch is left out).

    Args:
        predictor: a `Predictor` of the model.
        processor: the task's DataProcessor.
        dev_files: dev split → `FeatureFile` (padded to a multiple of batch_size).
        batch_size: the global evaluation batch.
        window_pooling: how a document's windows' logits are pooled, where the features are windows
            (`classification.windows`): "mean" or "max".
    """
    results, batch_losses = {}, None
    for split, feature_file in dev_files.items():
        logits, labels, real = predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True))
        if batch_losses is None:
            # Each batch's mean over its real rows: on CPUs and GPUs the original has no padding rows, and its
            # last batch is just smaller.
            batch_losses = [mean_loss(processor.task_name, labels[i:i + batch_size][keep],
                                      logits[i:i + batch_size][keep])
                            for i in range(0, len(labels), batch_size)
                            for keep in [real[i:i + batch_size] > 0] if keep.any()]
        logits, labels = document_outputs(feature_file, logits, labels, real, window_pooling)
        results[split] = (labels, logits)
    metrics = evaluation_metrics(processor.task_name, results)
    if batch_losses:
        metrics["loss"] = float(np.mean(batch_losses))
    return metrics


def predict_test_set(predictor, processor, split, feature_file, batch_size, output_dir, window_pooling="mean"):
    """Writes a test split's predictions: test_results*.tsv (class probabilities, or scores, as the original)
    and the GLUE leaderboard file of the split, if it has one. Returns the paths written.

    Args:
        predictor: a `Predictor` of the model.
        processor: the task's DataProcessor.
        split: one of its test splits.
        feature_file: the split's `FeatureFile` (padded to a multiple of batch_size).
        batch_size: the global prediction batch.
        output_dir: where the files go.
        window_pooling: see `evaluate_classifier`; one line per document.
    """
    logits, labels, real = predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True))
    logits, _ = document_outputs(feature_file, logits, labels, real, window_pooling)
    scores = logits if processor.is_regression else tf.nn.softmax(logits, axis=-1).numpy()
    written = [write_test_results(os.path.join(output_dir, results_file_name(processor, split)), scores),
               write_leaderboard_file(output_dir, processor, split, scores)]
    return [path for path in written if path]
