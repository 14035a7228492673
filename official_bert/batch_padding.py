"""Per-batch padding: each batch cut to its longest sequence, rounded up to a multiple of a bucket width.

Features are stored padded to --max_seq_length. Attention and feed-forward cost grow with the padded length, and
real sentences are short (~25 WordPiece tokens in SST-2), so a batch is cut to the longest sequence it holds. The
cut positions are padding of every sequence in the batch (input_mask 0, token ids 0): attention never reads them
and nothing else mixes positions, so the outputs are those of the fixed-length batch. Rounding the length up to a
multiple of `bucket_width` keeps the distinct shapes few (16 at width 8 and length 128); the compiled steps take a
variable sequence dimension anyway, so a new length does not trace them again.

TPUs and XLA (--jit_compile) compile one program per shape: they keep fixed shapes (`padding_bucket_width`).
"""

import tensorflow as tf

from official_bert.errors import Error

DEFAULT_BUCKET_WIDTH = 8
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


class PaddingError(Error):
    """A bucket width that cannot pad batches; the message names the flag."""


def padding_bucket_width(bucket_width, strategy=None, jit_compile=False):
    """The bucket width batches are padded with under `strategy`: None (fixed length) on TPUs, with XLA or for a
    width of 0.

    Args:
        bucket_width: --length_bucket_width (0: every batch at --max_seq_length).
        strategy: the `tf.distribute.Strategy` (None: the default one).
        jit_compile: --jit_compile.

    Example:
    >>> padding_bucket_width(8), padding_bucket_width(8, jit_compile=True), padding_bucket_width(0)
    (8, None, None)
    """
    if bucket_width < 0:
        raise PaddingError(f"--length_bucket_width={bucket_width}: expected 0 (fixed length) or a positive integer")
    if not bucket_width or jit_compile or isinstance(strategy, tf.distribute.TPUStrategy):
        return None
    return bucket_width


def trim_to_longest(inputs, bucket_width):
    """Cuts the encoder inputs of a batch to its longest sequence, rounded up to a multiple of `bucket_width`.

    Args:
        inputs: {"input_word_ids", "input_mask", "input_type_ids"} of one batch, [B, T] or [B, C, T] (other
            entries pass unchanged); the sequences' real tokens come first (input_mask 1), as BERT features have.
        bucket_width: the rounding; None returns `inputs` as they are.

    Returns:
        the inputs, [..., L] with L = min(T, bucket_width · ⌈longest / bucket_width⌉) (at least bucket_width).

    Example:
    >>> mask = tf.constant([[1, 1, 1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0]])
    >>> inputs = {"input_word_ids": mask * 5, "input_mask": mask, "input_type_ids": mask * 0}
    >>> trim_to_longest(inputs, 2)["input_word_ids"].numpy().tolist()
    [[5, 5, 5, 0], [5, 5, 0, 0]]
    """
    if bucket_width is None:
        return inputs
    full = tf.shape(inputs["input_mask"])[-1]
    longest = tf.reduce_max(tf.reduce_sum(tf.cast(inputs["input_mask"] != 0, tf.int32), axis=-1))
    length = tf.minimum(full, tf.maximum(1, -(-longest // bucket_width)) * bucket_width)
    return {name: value[..., :length] if name in INPUT_NAMES else value for name, value in inputs.items()}


def trim_batches(dataset, bucket_width, per_token_targets=False):
    """`trim_to_longest` on the inputs (the first element) of every batch of `dataset`; with `per_token_targets`,
    the targets (the second, [batch, seq_length]) are cut to the same length.

    Example:
    >>> mask = tf.constant([[1, 1, 0, 0, 0, 0]])
    >>> data = tf.data.Dataset.from_tensors(({"input_word_ids": mask, "input_mask": mask, "input_type_ids": mask},
    ...                                      tf.constant([1])))
    >>> inputs, labels = next(iter(trim_batches(data, 4)))
    >>> inputs["input_mask"].shape.as_list(), trim_batches(data, 4).element_spec[0]["input_mask"].shape.as_list()
    ([1, 4], [1, None])
    """
    if bucket_width is None:
        return dataset

    def trim(inputs, *rest):
        inputs = trim_to_longest(inputs, bucket_width)
        if per_token_targets:
            rest = (rest[0][:, :tf.shape(inputs["input_mask"])[-1]], *rest[1:])
        return (inputs, *rest)

    return dataset.map(trim, num_parallel_calls=tf.data.AUTOTUNE)
