"""The feature cache: reused when nothing changed (no re-tokenizing), rebuilt when anything did, never half-written;
and the tf.data reader over it."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from official_bert.classification import (MultipleChoiceExample, convert_single_example, feature_dataset,
                                          get_processor, load_or_create_features)
from official_bert.tokenization import FullTokenizer
from tests.classification.test_glue_fixtures import GLUE, SWAG, write_files
from tests.tokenization_helpers import write_vocab

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "a", "is", "man", "plane", "taking", "off", ".", "playing"]


class CountingTokenizer(FullTokenizer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = 0

    def tokenize(self, text):
        self.calls += 1
        return super().tokenize(text)


@pytest.fixture
def setup(tmp_path):
    data_dir = write_files(tmp_path / "STS-B", GLUE["STS-B"])
    vocab = write_vocab(tmp_path, VOCAB)
    return get_processor("sts-b", data_dir), vocab, str(tmp_path / "out")


def cache(processor, vocab, output_dir, max_seq_length=8, do_lower_case=True, tokenizer=None, split="train", **kw):
    tokenizer = tokenizer or CountingTokenizer(vocab, do_lower_case=do_lower_case)
    cached = load_or_create_features(processor, split, tokenizer, max_seq_length, output_dir, tokenizer_file=vocab,
                                     do_lower_case=do_lower_case, **kw)
    return cached, tokenizer.calls if isinstance(tokenizer, CountingTokenizer) else None


def cache_files(output_dir):
    return sorted(os.listdir(os.path.join(output_dir, "feature_cache")))


def test_second_call_reuses_the_cache_without_reading_or_tokenizing(setup, monkeypatch):
    processor, vocab, out = setup
    first, calls = cache(processor, vocab, out)
    assert calls == 4 and first.num_examples == 2 and first.is_regression
    monkeypatch.setattr(processor, "get_examples", lambda split: pytest.fail("read the data again"))
    second, calls = cache(processor, vocab, out)
    assert calls == 0 and second == first
    assert len(cache_files(out)) == 2  # the records and their .json


@pytest.mark.parametrize("change", ["vocab", "casing", "length", "data", "tokenizer", "padding", "split"])
def test_anything_that_changes_the_features_makes_a_new_cache(setup, change):
    processor, vocab, out = setup
    first, _ = cache(processor, vocab, out)
    kwargs = {}
    if change == "vocab":
        write_vocab(os.path.dirname(vocab), VOCAB + ["flute"])
    elif change == "casing":
        kwargs["do_lower_case"] = False
    elif change == "length":
        kwargs["max_seq_length"] = 16
    elif change == "data":
        path = processor.data_files("train")[0]
        with open(path, "a") as f:
            f.write("\t".join(["2", "g", "f", "y", "o", "s", "s", "A man.", "A man.", "5.0"]) + "\n")
    elif change == "tokenizer":
        kwargs["tokenizer"] = FullTokenizer(vocab)
    elif change == "padding":
        kwargs["pad_to_multiple_of"] = 4
    elif change == "split":
        kwargs["split"] = "dev"
    second, calls = cache(processor, vocab, out, **kwargs)
    assert second.path != first.path and calls != 0
    assert len(cache_files(out)) == 4


def test_a_failed_conversion_leaves_nothing_and_the_next_run_rebuilds(setup):
    processor, vocab, out = setup

    class Failing(CountingTokenizer):
        def tokenize(self, text):
            if self.calls == 3:
                raise KeyboardInterrupt
            return super().tokenize(text)

    with pytest.raises(KeyboardInterrupt):
        cache(processor, vocab, out, tokenizer=Failing(vocab))
    assert cache_files(out) == []
    cached, calls = cache(processor, vocab, out)
    assert calls == 4 and tf.io.gfile.exists(cached.path)


def test_records_without_their_json_are_unfinished_and_rebuilt(setup):
    processor, vocab, out = setup
    cached, _ = cache(processor, vocab, out)
    os.remove(cached.path + ".json")
    assert cache(processor, vocab, out)[1] == 4


def test_a_moved_output_dir_keeps_its_cache(setup, tmp_path):
    processor, vocab, out = setup
    cache(processor, vocab, out)
    moved = str(tmp_path / "moved")
    shutil.move(out, moved)
    cached, calls = cache(processor, vocab, moved)
    assert calls == 0 and cached.path.startswith(moved)
    assert sum(1 for _ in feature_dataset(cached, 1)) == 2


def test_dataset_gives_tf_hub_names_int32_and_the_converted_ids(setup):
    processor, vocab, out = setup
    tokenizer = FullTokenizer(vocab)
    cached, _ = cache(processor, vocab, out, tokenizer=tokenizer, pad_to_multiple_of=3)
    assert (cached.num_examples, cached.num_padding) == (2, 1)
    inputs, labels, weights = next(iter(feature_dataset(cached, 8, with_sample_weights=True)))
    assert sorted(inputs) == ["input_mask", "input_type_ids", "input_word_ids"]
    assert all(t.dtype == tf.int32 and t.shape == (3, 8) for t in inputs.values())
    expected = [convert_single_example(e, None, 8, tokenizer) for e in processor.get_examples("train")]
    np.testing.assert_array_equal(inputs["input_word_ids"][:2], [f.input_ids for f in expected])
    np.testing.assert_array_equal(inputs["input_type_ids"][:2], [f.segment_ids for f in expected])
    np.testing.assert_array_equal(inputs["input_mask"], [f.input_mask for f in expected] + [[0] * 8])
    assert labels.dtype == tf.float32 and labels.numpy().tolist() == pytest.approx([5.0, 3.8, 0.0])
    assert weights.numpy().tolist() == [1.0, 1.0, 0.0]
    two = feature_dataset(cached, 2)
    assert [x[1].shape[0] for x in two] == [2, 1] and len(two.element_spec) == 2


def test_multiple_choice_dataset_is_b_c_t_with_int_labels(tmp_path):
    processor = get_processor("swag", write_files(tmp_path / "swag", SWAG))
    vocab = write_vocab(tmp_path, VOCAB)
    cached, _ = cache(processor, vocab, str(tmp_path / "out"), split="dev", max_seq_length=6)
    inputs, labels = next(iter(feature_dataset(cached, 4)))
    assert inputs["input_word_ids"].shape == (1, 4, 6) and labels.dtype == tf.int32
    assert labels.numpy().tolist() == [3]
    [example] = processor.get_examples("dev")
    assert isinstance(example, MultipleChoiceExample)
    expected = convert_single_example(example, processor.label_list, 6, FullTokenizer(vocab))
    np.testing.assert_array_equal(inputs["input_word_ids"][0], expected.input_ids)


def test_training_order_is_shuffled_and_complete(tmp_path):
    rows = "".join(f"s{i}\t{i % 2}\n" for i in range(64))
    processor = get_processor("single", write_files(tmp_path / "d", {"train.tsv": "sentence\tlabel\n" + rows}),
                              label_list="0,1")
    vocab = write_vocab(tmp_path, VOCAB + [f"s{i}" for i in range(64)])
    cached, _ = cache(processor, vocab, str(tmp_path / "out"), max_seq_length=3)
    ids = lambda dataset: [int(i) for x, _ in dataset for i in x["input_word_ids"][:, 1]]
    in_order = ids(feature_dataset(cached, 16))
    shuffled = ids(feature_dataset(cached, 16, is_training=True, seed=1))
    assert in_order == list(range(len(VOCAB), len(VOCAB) + 64))
    assert shuffled != in_order and sorted(shuffled) == in_order


def test_skipped_rows_are_remembered_with_the_cache(tmp_path):
    processor = get_processor("qqp", write_files(tmp_path / "QQP", GLUE["QQP"]))
    vocab = write_vocab(tmp_path, VOCAB)
    first, calls = cache(processor, vocab, str(tmp_path / "out"))
    second, again = cache(get_processor("qqp", str(tmp_path / "QQP")), vocab, str(tmp_path / "out"))
    assert (first.num_examples, first.skipped_rows, calls) == (2, 2, 4)
    assert (second.skipped_rows, again) == (2, 0)
