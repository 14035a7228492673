"""run_classifier's task logic: a task's model and loss, its training input, evaluation, predictions and weights."""

import os

import keras
import tensorflow as tf

from official_bert.classification import (evaluation_metrics, feature_dataset, results_file_name,
                                          write_leaderboard_file, write_test_results)
from official_bert.classification.tsv_tasks import TSV_TASKS
from official_bert.models import BertClassifier, BertMultipleChoice
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.training.options import MIXED_PRECISION_POLICIES


def classifier_model(config, processor, mixed_precision=None):
    """The task's model: `BertMultipleChoice` for multiple choice, else a `BertClassifier` with one output per
    label (one for regression).

    Args:
        config: the `BertConfig`.
        processor: the task's DataProcessor.
        mixed_precision: None, "bf16" or "fp16" (the encoder computes in it; the head's logits are float32).

    Example:
    >>> from official_bert import BertConfig
    >>> from official_bert.classification import get_processor
    >>> config = BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                     intermediate_size=32)
    >>> classifier_model(config, get_processor("mnli", "glue/MNLI")).num_classes
    3
    """
    encoder = BertEncoder(config, dtype=MIXED_PRECISION_POLICIES.get(mixed_precision))
    if processor.num_choices:
        return BertMultipleChoice(encoder, processor.num_choices)
    return BertClassifier(encoder, processor.num_labels)


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


def train_dataset_fn(feature_file, batch_size, seed, drop_remainder=False):
    """epoch → the shuffled training batches of that epoch, the same ones for the same epoch and seed.

    Args:
        feature_file: the training set's `FeatureFile`.
        batch_size: the global batch.
        seed: --seed; epoch e is shuffled with seed + e.
        drop_remainder: leave out each epoch's last partial batch.
    """
    def dataset(epoch):
        return feature_dataset(feature_file, batch_size, is_training=True, drop_remainder=drop_remainder,
                               seed=seed + epoch)

    return dataset


def evaluate_classifier(predictor, processor, dev_files, batch_size):
    """The task's metrics on its dev splits (see `classification.evaluation_metrics`).

    Args:
        predictor: a `Predictor` of the model.
        processor: the task's DataProcessor.
        dev_files: dev split → `FeatureFile` (padded to a multiple of batch_size).
        batch_size: the global evaluation batch.
    """
    results = {}
    for split, feature_file in dev_files.items():
        logits, labels, real = predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True))
        real = real.astype(bool)
        results[split] = (labels[real], logits[real])
    return evaluation_metrics(processor.task_name, results)


def predict_test_set(predictor, processor, split, feature_file, batch_size, output_dir):
    """Writes a test split's predictions: test_results*.tsv (class probabilities, or scores, as the original)
    and the GLUE leaderboard file of the split, if it has one. Returns the paths written.

    Args:
        predictor: a `Predictor` of the model.
        processor: the task's DataProcessor.
        split: one of its test splits.
        feature_file: the split's `FeatureFile` (padded to a multiple of batch_size).
        batch_size: the global prediction batch.
        output_dir: where the files go.
    """
    logits, _, real = predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True))
    scores = logits if processor.is_regression else tf.nn.softmax(logits, axis=-1).numpy()
    written = [write_test_results(os.path.join(output_dir, results_file_name(processor, split)), scores, real),
               write_leaderboard_file(output_dir, processor, split, scores, real)]
    return [path for path in written if path]
