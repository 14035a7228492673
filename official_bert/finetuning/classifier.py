"""run_classifier's task logic: a task's model and loss, its training input, evaluation, predictions and weights."""

import os

import keras
import numpy as np
import tensorflow as tf

from official_bert.classification import (evaluation_metrics, feature_dataset, results_file_name,
                                          write_leaderboard_file, write_test_results)
from official_bert.classification.metrics import mean_loss
from official_bert.classification.records import batch_parser
from official_bert.classification.tsv_tasks import TSV_TASKS
from official_bert.finetuning.stream import training_batches
from official_bert.finetuning.windows import document_outputs
from official_bert.configs import ConfigError
from official_bert.models import BertClassifier, BertMultipleChoice
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.training.options import MIXED_PRECISION_POLICIES


def classifier_model(config, processor, mixed_precision=None, causal_attention=False, feature_layers=None):
    """The task's model: `BertMultipleChoice` for multiple choice, else a `BertClassifier` with one output per
    label (one for regression).

    Args:
        config: the `BertConfig`.
        processor: the task's DataProcessor.
        mixed_precision: None, "bf16" or "fp16" (the encoder computes in it; the head's logits are float32).
        causal_attention: keep a left-to-right model's left-only constraint: causal attention, and the last
            real token's output as the sequence representation (see `BertEncoder`).
        feature_layers: the feature-based approach: a frozen encoder, classified from its last
            `feature_layers` layers (see `BertClassifier`); not for multiple choice.

    Example:
    >>> from official_bert import BertConfig
    >>> from official_bert.classification import get_processor
    >>> config = BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                     intermediate_size=32)
    >>> classifier_model(config, get_processor("mnli", "glue/MNLI")).num_classes
    3
    """
    encoder = BertEncoder(config, dtype=MIXED_PRECISION_POLICIES.get(mixed_precision),
                          causal_attention=causal_attention)
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


def train_dataset_fn(feature_file, batch_size, seed, bucket_width=None, bucket_by_length=False):
    """step → the training batches from that global step on: the stream of `stream.training_batches` (pass k
    over the examples shuffled with seed + k, whole batches across passes), the same for the same step and seed.

    Args:
        feature_file: the training set's `FeatureFile`.
        batch_size: the global batch.
        seed: --seed.
        bucket_width: pad each batch to its longest sequence, rounded up to a multiple of this
            (`batch_padding.padding_bucket_width`); None: every batch at the features' max_seq_length.
        bucket_by_length: batch examples of similar lengths together (--bucket_by_length).
    """
    parse = batch_parser(feature_file.max_seq_length, feature_file.num_choices, feature_file.is_regression)

    def dataset(step):
        return training_batches(tf.data.TFRecordDataset(feature_file.path), feature_file.num_records, batch_size,
                                seed, lambda records: parse(records)[:2], step, bucket_width, bucket_by_length)

    return dataset


def evaluate_classifier(predictor, processor, dev_files, batch_size, bucket_width=None, window_pooling="mean"):
    """The task's metrics on its dev splits under the original's names (see `classification.evaluation_metrics`),
    and `loss`: as the original's Estimator reports it, the mean over the first split's batches of each batch's
    mean loss, the batches' padding examples (all-zero inputs, label 0) included.

    Args:
        predictor: a `Predictor` of the model.
        processor: the task's DataProcessor.
        dev_files: dev split → `FeatureFile` (padded to a multiple of batch_size).
        batch_size: the global evaluation batch.
        bucket_width: per-batch padding (see `train_dataset_fn`); the results are the same.
        window_pooling: how a document's windows' logits are pooled, where the features are windows
            (`finetuning.windows`): "mean" or "max".
    """
    results, batch_losses = {}, None
    for split, feature_file in dev_files.items():
        logits, labels, real = predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True,
                                                         bucket_width=bucket_width))
        if batch_losses is None:
            batch_losses = [mean_loss(processor.task_name, labels[i:i + batch_size], logits[i:i + batch_size])
                            for i in range(0, len(labels), batch_size)]
        logits, labels = document_outputs(feature_file, logits, labels, real, window_pooling)
        results[split] = (labels, logits)
    metrics = evaluation_metrics(processor.task_name, results)
    if batch_losses:
        metrics["loss"] = float(np.mean(batch_losses))
    return metrics


def predict_test_set(predictor, processor, split, feature_file, batch_size, output_dir, bucket_width=None,
                     window_pooling="mean"):
    """Writes a test split's predictions: test_results*.tsv (class probabilities, or scores, as the original)
    and the GLUE leaderboard file of the split, if it has one. Returns the paths written.

    Args:
        predictor: a `Predictor` of the model.
        processor: the task's DataProcessor.
        split: one of its test splits.
        feature_file: the split's `FeatureFile` (padded to a multiple of batch_size).
        batch_size: the global prediction batch.
        output_dir: where the files go.
        bucket_width: per-batch padding (see `train_dataset_fn`); the predictions are the same.
        window_pooling: see `evaluate_classifier`; one line per document.
    """
    logits, labels, real = predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True,
                                                     bucket_width=bucket_width))
    logits, _ = document_outputs(feature_file, logits, labels, real, window_pooling)
    scores = logits if processor.is_regression else tf.nn.softmax(logits, axis=-1).numpy()
    written = [write_test_results(os.path.join(output_dir, results_file_name(processor, split)), scores),
               write_leaderboard_file(output_dir, processor, split, scores)]
    return [path for path in written if path]
