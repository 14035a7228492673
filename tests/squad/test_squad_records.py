"""SQuAD features through TFRecords and the training-feature cache."""

import os

import pytest
import tensorflow as tf

from official_bert.squad import (InputFeatures, SquadError, cached_train_features, feature_dataset,
                                 write_feature_records)
from official_bert.squad import cache as cache_module
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "squad", "train-v2.0.json")


def _feature(unique_id, ids, start=None, end=None, impossible=False):
    return InputFeatures(unique_id, 0, 0, [], {}, {}, ids + [0], [1] * len(ids) + [0], [0] * len(ids) + [1],
                         start_position=start, end_position=end, is_impossible=impossible)


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(real_vocab_file(), do_lower_case=True)


def test_training_records_keep_the_original_names_and_read_back_under_hub_names(tmp_path):
    path = str(tmp_path / "train.tf_record")
    features = [_feature(1000000000, [101, 7, 102], 1, 1), _feature(1000000001, [101, 8, 102], 0, 0, True)]
    assert write_feature_records(iter(features), path, is_training=True) == 2
    raw = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(path))).numpy()).features.feature
    assert sorted(raw) == ["end_positions", "input_ids", "input_mask", "is_impossible", "segment_ids",
                           "start_positions", "unique_ids"]
    read = list(feature_dataset(path, seq_length=4, is_training=True))
    assert len(read) == 2
    inputs, targets = read[1]
    assert sorted(inputs) == ["input_mask", "input_type_ids", "input_word_ids"]
    assert inputs["input_word_ids"].numpy().tolist() == [101, 8, 102, 0]
    assert inputs["input_mask"].numpy().tolist() == [1, 1, 1, 0]
    assert inputs["input_type_ids"].numpy().tolist() == [0, 0, 0, 1]
    assert inputs["input_word_ids"].dtype == tf.int32
    assert {k: int(v) for k, v in targets.items()} == {"start_positions": 0, "end_positions": 0}
    assert int(read[0][1]["start_positions"]) == 1


def test_prediction_records_carry_unique_ids(tmp_path):
    path = str(tmp_path / "eval.tf_record")
    write_feature_records([_feature(1000000007, [101, 9, 102])], path, is_training=False)
    [(inputs, targets)] = list(feature_dataset(path, seq_length=4, is_training=False))
    assert int(targets["unique_ids"]) == 1000000007 and list(targets) == ["unique_ids"]
    assert inputs["input_word_ids"].numpy().tolist() == [101, 9, 102, 0]


def test_a_failed_write_leaves_no_file(tmp_path):
    def failing():
        yield _feature(1000000000, [101, 102], 0, 0)
        raise RuntimeError("tokenizer crashed")

    with pytest.raises(RuntimeError):
        write_feature_records(failing(), str(tmp_path / "train.tf_record"), is_training=True)
    assert os.listdir(tmp_path) == []


def test_cache_is_reused_and_keyed_by_the_options(tmp_path, tokenizer, monkeypatch):
    options = dict(max_seq_length=64, doc_stride=16, max_query_length=16, version_2_with_negative=True)
    first = cached_train_features(FIXTURE, tokenizer, str(tmp_path), **options)
    # 8 questions kept (2 skipped), one window each.
    assert (first.num_examples, first.num_skipped, first.num_features, first.reused) == (8, 2, 8, False)
    assert len(list(feature_dataset(first.path, 64, is_training=True))) == 8

    def no_conversion(*args, **kwargs):
        raise AssertionError("features were recomputed")

    monkeypatch.setattr(cache_module, "convert_examples_to_features", no_conversion)
    again = cached_train_features(FIXTURE, tokenizer, str(tmp_path), **options)
    assert (again.path, again.num_features, again.reused) == (first.path, 8, True)
    monkeypatch.undo()

    shorter = cached_train_features(FIXTURE, tokenizer, str(tmp_path), **{**options, "max_seq_length": 16,
                                                                          "max_query_length": 8, "doc_stride": 3})
    assert shorter.path != first.path and not shorter.reused
    assert shorter.num_features > 8  # the paragraphs now need several windows
    uncased_as_cased = FullTokenizer(real_vocab_file(), do_lower_case=False)
    assert cached_train_features(FIXTURE, uncased_as_cased, str(tmp_path), **options).path != first.path


def test_cache_of_a_missing_file_is_a_clear_error(tmp_path, tokenizer):
    with pytest.raises(SquadError, match=r"missing\.json: cannot read"):
        cached_train_features(str(tmp_path / "missing.json"), tokenizer, str(tmp_path), 64, 16, 16, False)
