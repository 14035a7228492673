"""`NerFeature`s as tf.data batches under the encoder's input names: shuffled for training, padded for prediction."""

import numpy as np
import tensorflow as tf

from official_bert.batch_padding import trim_to_longest
from official_bert.finetuning.stream import training_batches


def feature_arrays(features, padding=0):
    """The features' inputs as int32 arrays {"input_word_ids", "input_mask", "input_type_ids"} [N + padding, T]
    and their label ids [N + padding, T]; padding rows are all zeros, their labels all `IGNORE`.

    Example:
    >>> from official_bert.ner.features import NerFeature
    >>> inputs, labels = feature_arrays([NerFeature(0, [2, 5, 3], [1, 1, 1], [-1, 1, -1], {1: 0}, {1: True})], 1)
    >>> inputs["input_word_ids"].tolist(), labels.tolist()
    ([[2, 5, 3], [0, 0, 0]], [[-1, 1, -1], [-1, -1, -1]])
    """
    length = len(features[0].input_ids)
    inputs = {"input_word_ids": [f.input_ids for f in features], "input_mask": [f.input_mask for f in features],
              "input_type_ids": [f.segment_ids for f in features]}
    inputs = {name: np.array(rows + [[0] * length] * padding, np.int32) for name, rows in inputs.items()}
    labels = np.array([f.label_ids for f in features] + [[-1] * length] * padding, np.int32)
    return inputs, labels


def train_dataset_fn(inputs, labels, batch_size, seed, bucket_width=None, bucket_by_length=False):
    """step → the training batches of (inputs, label ids) from that global step on: fine-tuning's endless stream
    of shuffled passes (`finetuning.stream.training_batches`), the same for the same step and seed.

    Args:
        inputs, labels: the training windows' arrays (`feature_arrays`; a `TrainWindows`' .inputs, .labels).
        batch_size: the global batch.
        seed: --seed.
        bucket_width: pad each batch to its longest sequence, rounded up to a multiple of this (the labels are
            cut with the inputs); None: every batch at max_seq_length.
        bucket_by_length: batch features of similar lengths together (--bucket_by_length).

    Example:
    >>> from official_bert.ner.features import NerFeature
    >>> features = [NerFeature(0, [2, i, 3, 0], [1, 1, 1, 0], [-1, 0, -1, -1], {1: 0}, {1: True})
    ...             for i in range(5)]
    >>> batches = list(train_dataset_fn(*feature_arrays(features), 5, seed=1, bucket_width=3)(0).take(1))
    >>> sorted(batches[0][0]["input_word_ids"][:, 1].numpy().tolist()), batches[0][1].shape.as_list()
    ([0, 1, 2, 3, 4], [5, 3])
    """

    def trim(batch_inputs, batch_labels):
        batch_inputs = trim_to_longest(batch_inputs, bucket_width)
        return batch_inputs, batch_labels[:, :tf.shape(batch_inputs["input_mask"])[1]]

    def dataset(step):
        records = tf.data.Dataset.from_tensor_slices((inputs, labels))
        batches = training_batches(records, len(labels), batch_size, seed, lambda x, y: (x, y), step,
                                   bucket_by_length=bucket_by_length)
        return batches.map(trim, num_parallel_calls=tf.data.AUTOTUNE) if bucket_width else batches

    return dataset


def predict_logits(predictor, features, batch_size):
    """The model's logits [N, T, num_labels] for the features, in order (padded to whole batches meanwhile).

    Args:
        predictor: a `finetuning.Predictor` of the model.
        features: `NerFeature`s.
        batch_size: the global prediction batch.
    """
    padding = -len(features) % batch_size
    inputs, _ = feature_arrays(features, padding)
    real = np.array([1.0] * len(features) + [0.0] * padding, np.float32)
    index = np.arange(len(real), dtype=np.int32)
    logits, _, real = predictor(tf.data.Dataset.from_tensor_slices((inputs, index, real)).batch(batch_size))
    return logits[real > 0]
