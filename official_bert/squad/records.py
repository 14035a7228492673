"""SQuAD features as TFRecords: written under the original's feature names, read under TF Hub's input names.

The files keep the original run_squad.py's `tf.train.Example` layout (unique_ids, input_ids, input_mask,
segment_ids, and for training start_positions, end_positions, is_impossible; all int64), so the original's
and Model Garden's trainers read them too.
"""

import tensorflow as tf

from official_bert.io import atomic_path


def serialize_feature(feature, is_training):
    """One `InputFeatures` as a serialized `tf.train.Example`, as the original's `FeatureWriter` wrote it.

    Example:
    >>> from official_bert.squad.features import InputFeatures
    >>> feature = InputFeatures(1000000000, 0, 0, ["[CLS]", "[SEP]", "[SEP]"], {}, {}, [2, 3, 3], [1, 1, 1],
    ...                         [0, 0, 1], start_position=0, end_position=0)
    >>> values = tf.train.Example.FromString(serialize_feature(feature, is_training=True)).features.feature
    >>> list(values["input_ids"].int64_list.value), list(values["start_positions"].int64_list.value)
    ([2, 3, 3], [0])
    """
    values = {"unique_ids": [feature.unique_id], "input_ids": feature.input_ids, "input_mask": feature.input_mask,
              "segment_ids": feature.segment_ids}
    if is_training:
        values.update(start_positions=[feature.start_position], end_positions=[feature.end_position],
                      is_impossible=[int(feature.is_impossible)])
    example = tf.train.Example(features=tf.train.Features(feature={
        name: tf.train.Feature(int64_list=tf.train.Int64List(value=value)) for name, value in values.items()}))
    return example.SerializeToString()


def write_feature_records(features, path, is_training):
    """Writes `features` (any iterable, e.g. the generator of `convert_examples_to_features`) to a TFRecord file.

    The file appears under its name only when complete. Returns the number of features written.

    Example:
    >>> import os, tempfile
    >>> from official_bert.squad.features import InputFeatures
    >>> path = os.path.join(tempfile.mkdtemp(), "eval.tf_record")
    >>> write_feature_records([InputFeatures(1000000000, 0, 0, [], {}, {}, [2, 3, 3], [1, 1, 1], [0, 0, 1])],
    ...                       path, is_training=False)
    1
    """
    count = 0
    with atomic_path(path) as tmp:
        with tf.io.TFRecordWriter(tmp) as writer:
            for feature in features:
                writer.write(serialize_feature(feature, is_training))
                count += 1
    return count


def feature_dataset(path, seq_length, is_training):
    """A `tf.data.Dataset` of the features in `path` (one file or a list), unbatched, in file order.

    Elements are `(inputs, targets)`: inputs `{input_word_ids, input_mask, input_type_ids}` (int32 [seq_length],
    the TF Hub names the models take); targets `{start_positions, end_positions}` (int32 scalars) for training,
    `{unique_ids}` (int64 scalar) for prediction, so that `model.predict` sees only the inputs. Shuffle,
    repeat and batch it as the training loop needs.

    Example:
    >>> import os, tempfile
    >>> from official_bert.squad.features import InputFeatures
    >>> path = os.path.join(tempfile.mkdtemp(), "train.tf_record")
    >>> _ = write_feature_records([InputFeatures(1000000000, 0, 0, [], {}, {}, [2, 5, 3], [1, 1, 1], [0, 0, 1],
    ...                                          start_position=1, end_position=1)], path, is_training=True)
    >>> inputs, targets = next(iter(feature_dataset(path, seq_length=3, is_training=True)))
    >>> inputs["input_word_ids"].numpy().tolist(), int(targets["start_positions"])
    ([2, 5, 3], 1)
    """
    parse = batch_parser(seq_length, is_training)
    return tf.data.TFRecordDataset(path).map(lambda record: parse(record[tf.newaxis]), deterministic=True,
                                             num_parallel_calls=tf.data.AUTOTUNE).unbatch()


def batch_parser(seq_length, is_training):
    """Returns a function: a batch of serialized features [B] → (inputs, targets), as `feature_dataset`'s
    elements but batched ([B, seq_length] inputs, [B] targets); parsing whole batches is the fast way to read
    them in training.

    Example:
    >>> from official_bert.squad.features import InputFeatures
    >>> from official_bert.squad.records import serialize_feature
    >>> record = serialize_feature(InputFeatures(1000000000, 0, 0, [], {}, {}, [2, 5, 3], [1, 1, 1], [0, 0, 1]),
    ...                            is_training=False)
    >>> inputs, targets = batch_parser(3, is_training=False)(tf.constant([record, record]))
    >>> inputs["input_mask"].shape.as_list(), targets["unique_ids"].numpy().tolist()
    ([2, 3], [1000000000, 1000000000])
    """
    spec = {name: tf.io.FixedLenFeature([seq_length], tf.int64)
            for name in ("input_ids", "input_mask", "segment_ids")}
    spec["unique_ids"] = tf.io.FixedLenFeature([], tf.int64)
    if is_training:
        spec.update(start_positions=tf.io.FixedLenFeature([], tf.int64),
                    end_positions=tf.io.FixedLenFeature([], tf.int64))

    def parse(records):
        example = tf.io.parse_example(records, spec)
        inputs = {"input_word_ids": tf.cast(example["input_ids"], tf.int32),
                  "input_mask": tf.cast(example["input_mask"], tf.int32),
                  "input_type_ids": tf.cast(example["segment_ids"], tf.int32)}
        if is_training:
            return inputs, {"start_positions": tf.cast(example["start_positions"], tf.int32),
                            "end_positions": tf.cast(example["end_positions"], tf.int32)}
        return inputs, {"unique_ids": example["unique_ids"]}

    return parse
