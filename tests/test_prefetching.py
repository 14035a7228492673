"""Every input pipeline the library hands to Keras runs without tf.data's autotuning model thread
(`official_bert.prefetching`): destroying an iterator with it waited, at random, for the thread's next wake-up (up to
60 s), at the end of every `fit`, `evaluate` and `predict`."""

import os

import numpy as np
import tensorflow as tf

from official_bert import BertEncoder
from official_bert.classification.cache import FeatureFile
from official_bert.classification.dataset import feature_dataset
from official_bert.classification.features import InputFeatures
from official_bert.classification.records import serialize_features
from official_bert.finetuning.stream import training_batches
from official_bert.keras_models import MaskedLM, TextClassifier, TextPreprocessor
from official_bert.prefetching import prefetched
from official_bert.training.input_pipeline import open_pretraining_files, pretraining_dataset
from tests.finetuning.test_run_classifier import VOCAB, tiny_config


def autotuned(dataset):
    return dataset.options().autotune.enabled is not False


def test_prefetched_keeps_the_elements_and_turns_the_model_thread_off():
    dataset = tf.data.Dataset.range(5).map(lambda x: x + 1, num_parallel_calls=tf.data.AUTOTUNE)
    assert autotuned(dataset) and not autotuned(prefetched(dataset))
    assert [int(x) for x in prefetched(dataset)] == [1, 2, 3, 4, 5]
    # Options hold for the whole pipeline, the maps Keras or a caller adds after it included.
    assert not autotuned(prefetched(dataset).map(lambda x: x).batch(2))


def test_the_pretraining_and_fine_tuning_pipelines_end_prefetched(tmp_path):
    path = str(tmp_path / "pretraining.tfrecord")
    ints = lambda *v: tf.train.Feature(int64_list=tf.train.Int64List(value=v))  # noqa: E731
    example = tf.train.Example(features=tf.train.Features(feature={
        "input_ids": ints(2, 4, 3, 0), "input_mask": ints(1, 1, 1, 0), "segment_ids": ints(0, 0, 0, 0),
        "masked_lm_positions": ints(1), "masked_lm_ids": ints(7), "next_sentence_labels": ints(0),
        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))}))
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(example.SerializeToString())
    files = open_pretraining_files(path, max_seq_length=4, max_predictions_per_seq=1)
    assert not autotuned(pretraining_dataset(files, batch_size=2, is_training=True, seed=1))

    path = os.path.join(str(tmp_path), "train.tf_record")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(serialize_features(InputFeatures([2, 9, 3], [1, 1, 1], [0, 0, 0], 1)))
    assert not autotuned(feature_dataset(FeatureFile(path, 1, 1, 3, None, False), 2, is_training=True, seed=1))

    parse = lambda ids: ({"input_mask": tf.ones([tf.shape(ids)[0], 4], tf.int32)}, ids)  # noqa: E731
    for bucket_by_length in (False, True):
        assert not autotuned(training_batches(tf.data.Dataset.range(10), 10, 4, 3, parse,
                                              bucket_by_length=bucket_by_length))


def test_the_keras_models_datasets_end_prefetched():
    preprocessor = TextPreprocessor(VOCAB, sequence_length=8)
    model = TextClassifier(BertEncoder(tiny_config()), preprocessor, 2)
    texts = ["the cat", "a dog"]
    assert not autotuned(model._dataset(texts, np.array([0, 1]), batch_size=2))
    assert not autotuned(model._dataset(tf.data.Dataset.from_tensor_slices((texts, [0, 1])).batch(2), batch_size=2))
    assert not autotuned(MaskedLM(BertEncoder(tiny_config()), preprocessor)._dataset(texts, batch_size=2))
