"""The tf.data pipeline over a cached feature file, with TF Hub's input names."""

import tensorflow as tf

from official_bert.batch_padding import trim_batches
from official_bert.classification.records import batch_parser
from official_bert.prefetching import prefetched


def feature_dataset(feature_file, batch_size, *, is_training=False, drop_remainder=False, shuffle_buffer_size=10000,
                    seed=None, with_sample_weights=False, bucket_width=None):
    """Batches of ({"input_word_ids", "input_mask", "input_type_ids"}, labels) from a FeatureFile.

    Inputs are int32 [B, T] ([B, C, T] for multiple choice); labels int32 [B] (float32 for regression, float32
    [B, L] multi-hot for multi-label). The dataset is finite (one epoch); in order unless training.

    Args:
        feature_file: a FeatureFile from `load_or_create_features`.
        batch_size: B.
        is_training: shuffle, reshuffling each epoch.
        drop_remainder: drop a last partial batch (fixed shapes).
        shuffle_buffer_size: examples in the shuffle buffer (at most the file's).
        seed: the shuffle seed.
        with_sample_weights: add a third element, is_real_example as float32 [B] (0 for padding examples),
            for Keras' sample weights.
        bucket_width: pad each batch only to its longest sequence, rounded up to a multiple of this
            (`official_bert.batch_padding`); None: to max_seq_length.

    Example:
    >>> import os, tempfile
    >>> from official_bert.classification.cache import FeatureFile
    >>> from official_bert.classification.features import InputFeatures, padding_features
    >>> from official_bert.classification.records import serialize_features
    >>> path = os.path.join(tempfile.mkdtemp(), "dev.tf_record")
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     for f in [InputFeatures([2, 9, 3], [1, 1, 1], [0, 0, 0], 1)] + padding_features(1, 3):
    ...         writer.write(serialize_features(f))
    >>> dataset = feature_dataset(FeatureFile(path, 1, 1, 3, None, False), 2, with_sample_weights=True)
    >>> inputs, labels, weights = next(iter(dataset))
    >>> inputs["input_word_ids"].numpy().tolist(), labels.numpy().tolist(), weights.numpy().tolist()
    ([[2, 9, 3], [0, 0, 0]], [1, 0], [1.0, 0.0])
    """
    dataset = tf.data.TFRecordDataset(feature_file.path)
    if is_training:
        dataset = dataset.shuffle(max(1, min(shuffle_buffer_size, feature_file.num_records)), seed=seed,
                                  reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
    parse = batch_parser(feature_file.max_seq_length, feature_file.num_choices, feature_file.is_regression,
                         feature_file.multi_hot)
    if with_sample_weights:
        dataset = dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    else:
        dataset = dataset.map(lambda records: parse(records)[:2], num_parallel_calls=tf.data.AUTOTUNE)
    return prefetched(trim_batches(dataset, bucket_width))
