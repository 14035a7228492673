"""Per-batch padding and the training stream: the original's step counts, whole batches across passes, batches
cut to their longest sequence with the same logits, length bucketing, and no retracing per length."""

import math

import numpy as np
import pytest
import tensorflow as tf

from official_bert import distribution
from official_bert.batch_padding import padding_bucket_width, trim_to_longest
from official_bert.classification import feature_dataset
from official_bert.finetuning import Predictor, fine_tuning_schedule
from official_bert.tasks.classification import train_records
from official_bert.finetuning import stream
from tests.finetuning import test_run_classifier as run_classifier_fixtures
from tests.finetuning.test_run_classifier import Task


@pytest.mark.parametrize("num_examples, batch, epochs, warmup", [
    (560, 32, 3.0, 0.1), (3668, 32, 3.0, 0.1), (100, 32, 2.5, 0.1), (87599, 12, 2.0, 0.1), (7, 4, 1.0, 0.5)])
def test_steps_are_the_originals(num_examples, batch, epochs, warmup):
    # run_classifier.py / run_squad.py of google-research/bert, transcribed.
    num_train_steps = int(num_examples / batch * epochs)
    num_warmup_steps = int(num_train_steps * warmup)
    schedule = fine_tuning_schedule(num_examples, batch, epochs, warmup)
    assert (schedule.num_train_steps, schedule.num_warmup_steps) == (num_train_steps, num_warmup_steps)
    # Epoch k ends where the k-th pass over the examples does; the log's epoch count is --num_train_epochs.
    assert schedule.steps_per_epoch == num_examples / batch
    assert schedule.num_epochs == math.ceil(epochs)
    assert schedule.epoch_ends[-1] == num_train_steps


def _ids(dataset, steps):
    return [labels.numpy().tolist() for _, labels in dataset.take(steps)]


def test_the_stream_is_whole_batches_of_shuffled_passes_and_starts_at_any_step():
    records = tf.data.Dataset.range(10)
    parse = lambda ids: ({"input_mask": tf.ones([tf.shape(ids)[0], 3], tf.int32)}, ids)  # noqa: E731
    batches = _ids(stream.training_batches(records, 10, 4, seed=5, parse=parse), 15)
    assert all(len(batch) == 4 for batch in batches)
    flat = sum(batches, [])
    passes = [flat[i:i + 10] for i in range(0, 60, 10)]
    assert all(sorted(p) == list(range(10)) for p in passes)  # every pass is every record once
    assert len({tuple(p) for p in passes}) == 6  # each pass in its own order
    assert passes[0] != list(range(10))
    for step in (1, 2, 7, 12):  # inside a pass, across a boundary, in later passes
        assert _ids(stream.training_batches(records, 10, 4, seed=5, parse=parse, start_step=step), 3) == \
            batches[step:step + 3]
    assert _ids(stream.training_batches(records, 10, 4, seed=6, parse=parse), 15) != batches


def test_bucketing_batches_similar_lengths_and_starts_at_any_step(monkeypatch):
    monkeypatch.setattr(stream, "BUCKET_CHUNK_BATCHES", 4)
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 33, size=50)
    masks = (np.arange(32)[None] < lengths[:, None]).astype(np.int32)
    records = tf.data.Dataset.from_tensor_slices((masks, np.arange(50)))
    parse = lambda mask, ids: ({"input_mask": mask}, ids)  # noqa: E731
    batches = _ids(stream.training_batches(records, 50, 4, seed=1, parse=parse, bucket_by_length=True), 24)
    flat = sum(batches, [])
    for chunk in range(6):  # a chunk is 16 consecutive records of the stream, sorted into 4 batches
        rows = flat[chunk * 16:(chunk + 1) * 16]
        [expected] = _ids(stream.training_batches(records, 50, 16, seed=1, parse=parse).skip(chunk), 1)
        assert sorted(rows) == sorted(expected)
        spans = sorted((lengths[b].min(), lengths[b].max()) for b in np.reshape(rows, [4, 4]))
        assert all(high <= next_low for (_, high), (next_low, _) in zip(spans, spans[1:]))
    for step in (3, 5, 9):
        assert _ids(stream.training_batches(records, 50, 4, seed=1, parse=parse, start_step=step,
                                            bucket_by_length=True), 4) == batches[step:step + 4]


def test_trim_to_longest_cuts_to_a_multiple_of_the_width():
    rng = np.random.default_rng(1)
    for shape in ([5, 40], [3, 4, 40]):
        lengths = rng.integers(0, 30, size=shape[:-1])
        mask = (np.arange(40) < lengths[..., None]).astype(np.int32)
        ids = mask * rng.integers(5, 100, size=shape)
        inputs = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": mask, "other": np.zeros(2)}
        trimmed = trim_to_longest({k: tf.constant(v) for k, v in inputs.items()}, 8)
        width = max(8, int(np.ceil(lengths.max() / 8)) * 8)
        for name in ("input_word_ids", "input_mask", "input_type_ids"):
            np.testing.assert_array_equal(trimmed[name].numpy(), inputs[name][..., :width])
        assert trimmed["other"].shape == (2,)
    full = {name: tf.ones([2, 12], tf.int32) for name in ("input_word_ids", "input_mask", "input_type_ids")}
    assert trim_to_longest(full, 8)["input_mask"].shape == (2, 12)  # never beyond the stored length


def test_fixed_shapes_where_compiled_per_shape():
    assert padding_bucket_width(8) == 8
    assert padding_bucket_width(8, jit_compile=True) is None
    assert padding_bucket_width(0) is None


@pytest.mark.parametrize("task", ["sst-2", "mrpc", "sts-b", "swag"])
def test_per_batch_padding_gives_the_same_logits(tmp_path, monkeypatch, task):
    monkeypatch.setattr(run_classifier_fixtures, "SEQ_LENGTH", 32)  # room to cut, SWAG's pairs included
    fixture = Task(task, tmp_path, repeat=1)
    model = fixture.model()
    predictor = Predictor(model, fixture.strategy)
    for split in [*fixture.processor.dev_splits, *fixture.processor.test_splits]:
        features = fixture.features[split]
        fixed, labels, real = predictor(feature_dataset(features, 4, with_sample_weights=True))
        padded = feature_dataset(features, 4, with_sample_weights=True, bucket_width=4)
        assert max(batch[0]["input_mask"].shape[-1] for batch in padded) < features.max_seq_length  # it cuts
        trimmed, trimmed_labels, trimmed_real = predictor(padded)
        # Padding examples (no real token: attention spreads over every position) are left out, as everywhere.
        real_rows = real.astype(bool)
        np.testing.assert_allclose(trimmed[real_rows], fixed[real_rows], rtol=0, atol=1e-5)
        np.testing.assert_array_equal(trimmed_labels, labels)
        np.testing.assert_array_equal(trimmed_real, real)


def test_training_on_batches_of_many_lengths_and_loops_of_two_lengths_traces_the_step_once(tmp_path):
    fixture = Task("mrpc", tmp_path, repeat=2)
    model = fixture.model()
    # Epochs of 4 steps in loops of 3: each epoch is a loop of 3, then one of 1.
    run = fixture.run(model, epochs=3, iterations_per_loop=3, log_steps=3, save_checkpoints_steps=3)
    dataset_fn = train_records(fixture.features["train"]).dataset_fn(4, fixture.seed, bucket_width=2)
    lengths = {inputs["input_mask"].shape[-1] for inputs, _ in dataset_fn(0).take(run.schedule.num_train_steps)}
    assert len(lengths) > 1
    run.train(dataset_fn)
    assert run.step == run.schedule.num_train_steps == 12
    train_loop, _ = run._loops
    assert train_loop.experimental_get_tracing_count() == 1


@pytest.mark.slow
def test_training_with_per_batch_padding_matches_fixed_padding(tmp_path):
    # The classifier reads [CLS] only and attention masks the padding: the same updates, to float rounding.
    weights = []
    for width in (None, 4):
        fixture = Task("sst-2", tmp_path / str(width), repeat=2)
        model = fixture.model(head_dropout=False)
        run = fixture.run(model, epochs=2)
        run.train(train_records(fixture.features["train"]).dataset_fn(4, fixture.seed, bucket_width=width))
        weights.append([w.numpy() for w in model.weights])
    for fixed, trimmed in zip(*weights):
        np.testing.assert_allclose(trimmed, fixed, rtol=0, atol=1e-5)


def test_one_device_strategy_gets_per_batch_padding():
    assert padding_bucket_width(8, distribution.get_strategy("one_device")) == 8
