"""The hand-written tf.train.Example bytes equal the original's message: exact names, dtypes and lengths."""

import random

import pytest
import tensorflow as tf

from official_bert.pretraining_data import ExampleEncoder, TrainingInstance


def original_example(instance, max_seq_length, max_predictions_per_seq, v2=False):
    """The message google-research/bert's write_instance_to_example_files builds (v2: Model Garden's names)."""
    input_ids = list(instance.input_ids) + [0] * (max_seq_length - len(instance.input_ids))
    input_mask = [1] * len(instance.input_ids) + [0] * (max_seq_length - len(instance.input_ids))
    segment_ids = ([0] * instance.segment_a_length + [1] * (len(instance.input_ids) - instance.segment_a_length)
                   + [0] * (max_seq_length - len(instance.input_ids)))
    pad = max_predictions_per_seq - len(instance.masked_lm_positions)

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    features = {
        "input_word_ids" if v2 else "input_ids": ints(input_ids),
        "input_mask": ints(input_mask),
        "input_type_ids" if v2 else "segment_ids": ints(segment_ids),
        "masked_lm_positions": ints(list(instance.masked_lm_positions) + [0] * pad),
        "masked_lm_ids": ints(list(instance.masked_lm_ids) + [0] * pad),
        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(
            value=[1.0] * len(instance.masked_lm_ids) + [0.0] * pad)),
        "next_sentence_labels": ints([1 if instance.is_random_next else 0]),
    }
    return tf.train.Example(features=tf.train.Features(feature=features))


def random_instance(rng, max_seq_length, max_predictions, vocab_size):
    length = rng.randint(3, max_seq_length)
    positions = sorted(rng.sample(range(1, length), rng.randint(1, min(max_predictions, length - 1))))
    return TrainingInstance([rng.randrange(vocab_size) for _ in range(length)], rng.randint(2, length - 1),
                            positions, [rng.randrange(vocab_size) for _ in positions], rng.random() < 0.5)


@pytest.mark.parametrize("max_seq_length, max_predictions, vocab_size, v2", [
    (128, 20, 30522, False), (512, 80, 250002, True), (8, 2, 10, False)])
def test_bytes_parse_to_the_original_message(max_seq_length, max_predictions, vocab_size, v2):
    rng = random.Random(0)
    encoder = ExampleEncoder(max_seq_length, max_predictions, vocab_size, use_v2_feature_names=v2)
    for _ in range(200):
        instance = random_instance(rng, max_seq_length, max_predictions, vocab_size)
        expected = original_example(instance, max_seq_length, max_predictions, v2)
        assert tf.train.Example.FromString(encoder.encode(instance)) == expected


@pytest.mark.parametrize("v2", [False, True])
def test_the_original_trainer_spec_parses_it(v2):
    """run_pretraining.py's name_to_features: exact names, dtypes and lengths."""
    ids_name, type_name = ("input_word_ids", "input_type_ids") if v2 else ("input_ids", "segment_ids")
    spec = {ids_name: tf.io.FixedLenFeature([128], tf.int64), "input_mask": tf.io.FixedLenFeature([128], tf.int64),
            type_name: tf.io.FixedLenFeature([128], tf.int64),
            "masked_lm_positions": tf.io.FixedLenFeature([20], tf.int64),
            "masked_lm_ids": tf.io.FixedLenFeature([20], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([20], tf.float32),
            "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64)}
    instance = TrainingInstance([101, 7, 102, 2000, 102], 3, [1, 3], [1996, 2001], True)
    parsed = tf.io.parse_single_example(ExampleEncoder(128, 20, 30522, v2).encode(instance), spec)
    assert set(tf.train.Example.FromString(ExampleEncoder(128, 20, 30522, v2).encode(instance))
               .features.feature) == set(spec)
    assert parsed[ids_name].numpy().tolist() == [101, 7, 102, 2000, 102] + [0] * 123
    assert parsed["input_mask"].numpy().tolist() == [1] * 5 + [0] * 123
    assert parsed[type_name].numpy().tolist() == [0, 0, 0, 1, 1] + [0] * 123
    assert parsed["masked_lm_positions"].numpy().tolist() == [1, 3] + [0] * 18
    assert parsed["masked_lm_ids"].numpy().tolist() == [1996, 2001] + [0] * 18
    assert parsed["masked_lm_weights"].numpy().tolist() == [1.0, 1.0] + [0.0] * 18
    assert parsed["next_sentence_labels"].numpy().tolist() == [1]
