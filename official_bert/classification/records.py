"""The TFRecord format of cached features: the original's feature names, read back under TF Hub's names.

Each tf.train.Example has int64 input_ids, input_mask and segment_ids (T values, or C*T for multiple choice),
label_ids (int64; float for regression; multi-hot floats for multi-label) and is_real_example (int64), as the
original's train.tf_record; and, where the features were made with an example index (windows of long documents),
int64 example_index.
"""

import numpy as np
import tensorflow as tf


def _int64s(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _flat(values):
    return [v for row in values for v in row] if values and isinstance(values[0], list) else values


def serialize_features(features):
    """Serializes InputFeatures as a tf.train.Example.

    Args:
        features: an InputFeatures; a float label_id is written as a float (regression).

    Example:
    >>> from official_bert.classification.features import InputFeatures
    >>> record = serialize_features(InputFeatures([2, 5, 3], [1, 1, 1], [0, 0, 0], 1))
    >>> list(tf.train.Example.FromString(record).features.feature["label_ids"].int64_list.value)
    [1]
    """
    if isinstance(features.label_id, (float, list)):
        values = features.label_id if isinstance(features.label_id, list) else [features.label_id]
        label = tf.train.Feature(float_list=tf.train.FloatList(value=values))
    else:
        label = _int64s([features.label_id])
    feature = {"input_ids": _int64s(_flat(features.input_ids)), "input_mask": _int64s(_flat(features.input_mask)),
               "segment_ids": _int64s(_flat(features.segment_ids)), "label_ids": label,
               "is_real_example": _int64s([int(features.is_real_example)])}
    if features.example_index is not None:
        feature["example_index"] = _int64s([features.example_index])
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def read_example_indices(path, batch_size=4096):
    """The example_index of every record of a file, in order (-1 for records without one), int64 [N].

    Args:
        path: a TFRecord file of serialized features.
        batch_size: records parsed at a time.

    Example:
    >>> import os, tempfile
    >>> from official_bert.classification.features import InputFeatures, padding_features
    >>> path = os.path.join(tempfile.mkdtemp(), "dev.tf_record")
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     for index in (0, 0, 1):
    ...         writer.write(serialize_features(InputFeatures([2, 3], [1, 1], [0, 0], 1, example_index=index)))
    ...     writer.write(serialize_features(padding_features(1, 2)[0]))
    >>> read_example_indices(path).tolist()
    [0, 0, 1, -1]
    """
    spec = {"example_index": tf.io.FixedLenFeature([], tf.int64, default_value=-1)}
    dataset = tf.data.TFRecordDataset(path).batch(batch_size).map(
        lambda records: tf.io.parse_example(records, spec)["example_index"])
    return np.concatenate([np.zeros([0], np.int64), *dataset.as_numpy_iterator()])


def batch_parser(max_seq_length, num_choices=None, is_regression=False, multi_hot=0):
    """Returns a function: a batch of serialized records → (inputs, labels, is_real_example).

    inputs are {"input_word_ids", "input_mask", "input_type_ids"}, int32 [B, T] (or [B, C, T]); labels int32
    [B] (float32 for regression; float32 [B, L] multi-hot for multi-label); is_real_example float32 [B], usable as
    Keras sample weights.

    Args:
        max_seq_length: T.
        num_choices: C, or None.
        is_regression: labels are floats.
        multi_hot: L, the multi-hot labels' width (multi-label), or 0.

    Example:
    >>> from official_bert.classification.features import InputFeatures
    >>> record = serialize_features(InputFeatures([[2, 3], [2, 3]], [[1, 1], [1, 1]], [[0, 0], [0, 0]], 1))
    >>> inputs, labels, weights = batch_parser(2, num_choices=2)(tf.constant([record]))
    >>> inputs["input_word_ids"].shape, labels.numpy(), weights.numpy()
    (TensorShape([1, 2, 2]), array([1], dtype=int32), array([1.], dtype=float32))
    """
    shape = [max_seq_length] if num_choices is None else [num_choices, max_seq_length]
    width = max_seq_length * (num_choices or 1)
    spec = {name: tf.io.FixedLenFeature([width], tf.int64) for name in ("input_ids", "input_mask", "segment_ids")}
    if multi_hot:
        spec["label_ids"] = tf.io.FixedLenFeature([multi_hot], tf.float32)
    else:
        spec["label_ids"] = tf.io.FixedLenFeature([], tf.float32 if is_regression else tf.int64)
    spec["is_real_example"] = tf.io.FixedLenFeature([], tf.int64)

    def parse(serialized):
        parsed = tf.io.parse_example(serialized, spec)

        def ids(name):
            return tf.reshape(tf.cast(parsed[name], tf.int32), [-1, *shape])

        inputs = {"input_word_ids": ids("input_ids"), "input_mask": ids("input_mask"),
                  "input_type_ids": ids("segment_ids")}
        labels = parsed["label_ids"] if is_regression or multi_hot else tf.cast(parsed["label_ids"], tf.int32)
        return inputs, labels, tf.cast(parsed["is_real_example"], tf.float32)

    return parse
