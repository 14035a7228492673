"""The training input of fine-tuning: one endless stream of shuffled passes, cut into whole batches, resumable.

As the original's input_fn (repeat, shuffle, batch with drop_remainder=True), batches run across pass
boundaries: a pass is not a whole number of batches, and no batch is partial. Here pass k over the records is
shuffled with seed + k (shuffle buffer of `shuffle_buffer_size` records), so the stream is a function of the seed
alone, and the batch of step s is records [s·B, (s+1)·B) of it. A run resumed at step s builds the stream from
there (skipping whole passes without reading them, then the records of the pass before s) and reads exactly the
batches an uninterrupted run reads from s on.

With `bucket_by_length`, the stream is read in chunks of `BUCKET_CHUNK_BATCHES` batches: the records of a chunk
are sorted by length, cut into batches, and the batches of the chunk shuffled (seeded with the chunk's index), so
a batch holds sequences of similar length and per-batch padding cuts more. Steps still map to records: chunk c
holds the records [c·m·B, (c+1)·m·B), so a resume stays exact.
"""

import dataclasses
from typing import Callable

import tensorflow as tf

from official_bert.batch_padding import trim_batches
from official_bert.prefetching import prefetched

BUCKET_CHUNK_BATCHES = 64
_ENDLESS = 2 ** 62


@dataclasses.dataclass(frozen=True)
class TrainingRecords:
    """One pass over a task's training set, as `run_task` streams it (`finetuning.stream.training_batches`).

    Args:
        records: a finite `tf.data.Dataset` of records (serialized tf.Examples, or tensors).
        num_records: how many.
        parse: a batch of records → (inputs, targets), inputs the encoder's {"input_word_ids", "input_mask",
            "input_type_ids"}.
        shuffle_buffer_size: records in the shuffle buffer.
        per_token_targets: the targets are [batch, seq_length] (cut with the inputs when a batch is padded to its
            longest sequence).

    Example:
    >>> records = TrainingRecords(tf.data.Dataset.range(10), 10,
    ...                           lambda ids: ({"input_mask": tf.ones([tf.shape(ids)[0], 4], tf.int32)}, ids))
    >>> batches = records.dataset_fn(batch_size=4, seed=3)
    >>> [ids.numpy().tolist() for _, ids in batches(3).take(2)] == [
    ...     ids.numpy().tolist() for _, ids in batches(0).take(5)][3:]
    True
    """

    records: object
    num_records: int
    parse: Callable
    shuffle_buffer_size: int = 10000
    per_token_targets: bool = False

    def dataset_fn(self, batch_size, seed, bucket_width=None, bucket_by_length=False):
        """step → the training batches from that global step on (`training_batches`): pass k over the records
        shuffled with seed + k, whole batches across passes, each padded to its longest sequence rounded up to
        `bucket_width` (None: as the records are), of similar lengths with `bucket_by_length`."""

        def dataset(step):
            return training_batches(self.records, self.num_records, batch_size, seed, self.parse, step, bucket_width,
                                    bucket_by_length, self.shuffle_buffer_size, self.per_token_targets)

        return dataset


def shuffled_passes(records, num_records, seed, start=0, shuffle_buffer_size=10000):
    """Record `start` onwards of the endless stream of passes over `records`, pass k shuffled with seed + k.

    Args:
        records: a finite `tf.data.Dataset`, one pass (e.g. a TFRecordDataset), the same each time it is read.
        num_records: its length.
        seed: the stream's seed (--seed).
        start: the first record of the stream to give.
        shuffle_buffer_size: records in the shuffle buffer (at most num_records).

    Example:
    >>> stream = shuffled_passes(tf.data.Dataset.range(4), 4, seed=1)
    >>> first = [int(x) for x in stream.take(10)]
    >>> sorted(first[:4]), sorted(first[4:8]), [int(x) for x in shuffled_passes(tf.data.Dataset.range(4), 4, 1, 6)
    ...                                          .take(4)] == first[6:10]
    ([0, 1, 2, 3], [0, 1, 2, 3], True)
    """
    first_pass, offset = divmod(start, num_records)
    buffer = max(1, min(shuffle_buffer_size, num_records))
    passes = tf.data.Dataset.range(first_pass, _ENDLESS).flat_map(
        lambda k: records.shuffle(buffer, seed=seed + k, reshuffle_each_iteration=False))
    return passes.skip(offset)


def training_batches(records, num_records, batch_size, seed, parse, start_step=0, bucket_width=None,
                     bucket_by_length=False, shuffle_buffer_size=10000, per_token_targets=False):
    """The training batches from global step `start_step` on: endless, every batch whole.

    Args:
        records: one pass of serialized records (a finite `tf.data.Dataset`).
        num_records: how many.
        batch_size: B, the global batch.
        seed: --seed.
        parse: a batch of serialized records → (inputs, targets[, ...]), inputs a dict with input_mask.
        start_step: the step whose batch comes first.
        bucket_width: pad each batch to its longest sequence rounded up to this (`batch_padding`); None keeps
            the records' fixed length.
        bucket_by_length: batch records of similar lengths together (see the module's docstring).
        shuffle_buffer_size: records in the shuffle buffer.
        per_token_targets: the targets are [B, seq_length], cut with the inputs (`batch_padding.trim_batches`).

    Example:
    >>> records = tf.data.Dataset.range(10)
    >>> parse = lambda ids: ({"input_mask": tf.ones([tf.shape(ids)[0], 4], tf.int32)}, ids)
    >>> batches = [ids.numpy().tolist() for _, ids in training_batches(records, 10, 4, 3, parse).take(5)]
    >>> sorted(sum(batches, [])) == sorted(list(range(10)) * 2)  # 5 batches of 4: two passes, no partial batch
    True
    >>> [ids.numpy().tolist() for _, ids in training_batches(records, 10, 4, 3, parse, start_step=3).take(2)
    ...  ] == batches[3:]
    True
    """
    if not bucket_by_length:
        stream = shuffled_passes(records, num_records, seed, start_step * batch_size, shuffle_buffer_size)
        batches = stream.batch(batch_size, drop_remainder=True).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    else:
        chunk, skipped = divmod(start_step, BUCKET_CHUNK_BATCHES)
        size = BUCKET_CHUNK_BATCHES * batch_size
        stream = shuffled_passes(records, num_records, seed, chunk * size, shuffle_buffer_size)
        chunks = stream.batch(size, drop_remainder=True).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        batches = chunks.enumerate(start=chunk).map(
            lambda index, batch: _sorted_batches(batch, index, seed, batch_size),
            num_parallel_calls=tf.data.AUTOTUNE).unbatch().skip(skipped)
    return prefetched(trim_batches(batches, bucket_width, per_token_targets))


def _sorted_batches(chunk, index, seed, batch_size):
    """A chunk's records sorted by length, as batches [m, B, ...] in a random order seeded with (seed, index)."""
    inputs = chunk[0]
    lengths = tf.reduce_sum(tf.cast(inputs["input_mask"] != 0, tf.int32), axis=-1)
    if lengths.shape.rank > 1:  # multiple choice: a question's longest choice
        lengths = tf.reduce_max(lengths, axis=-1)
    by_length = tf.argsort(lengths, stable=True)
    order = tf.random.experimental.stateless_shuffle(tf.range(BUCKET_CHUNK_BATCHES),
                                                     tf.stack([tf.cast(seed, tf.int64), index]))
    rows = tf.reshape(tf.gather(tf.reshape(by_length, [BUCKET_CHUNK_BATCHES, batch_size]), order), [-1])

    def regroup(value):
        value = tf.gather(value, rows)
        return tf.reshape(value, tf.concat([[BUCKET_CHUNK_BATCHES, batch_size], tf.shape(value)[1:]], 0))

    return tf.nest.map_structure(regroup, chunk)
