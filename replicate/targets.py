"""What one pretraining sequence gives each objective to learn from: `make replicate`'s equal-compute figures.

    python replicate/targets.py --input_file=replicate_out/data/train.tfrecord --output_file=replicate_out/targets.txt

writes, as "key = value" lines (the mean over the records):

    tokens_per_sequence        real tokens ([CLS], the text, the [SEP]s): what every objective reads
    mlm_targets_per_sequence   masked positions the masked LM predicts (masked_lm_weights 1; about 15 %)
    ltr_targets_per_sequence   next tokens the left-to-right LM predicts: every real token but the first
                               (official_bert.models.BertLanguageModel)

MLM + NSP predicts one next-sentence label per sequence besides its masked tokens.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import tensorflow as tf
from absl import flags

from official_bert.errors import Error
from official_bert.io import write_text

FLAGS = flags.FLAGS


class TargetsError(Error):
    """Records the count cannot read."""


def count_targets(path):
    """{tokens_per_sequence, mlm_targets_per_sequence, ltr_targets_per_sequence, sequences} over the records at
    `path` (create_pretraining_data's TFRecords).

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "records")
    >>> def record(mask, weights):
    ...     feature = {"input_mask": tf.train.Feature(int64_list=tf.train.Int64List(value=mask)),
    ...                "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=weights))}
    ...     return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     writer.write(record([1] * 6 + [0] * 2, [1, 1, 0]))
    ...     writer.write(record([1] * 4 + [0] * 4, [1, 0, 0]))
    >>> counts = count_targets(path)
    >>> counts["tokens_per_sequence"], counts["mlm_targets_per_sequence"], counts["ltr_targets_per_sequence"]
    (5.0, 1.5, 4.0)
    """
    if not tf.io.gfile.exists(path):
        raise TargetsError(f"--input_file={path}: no such file (run create_pretraining_data.py first)")
    spec = {"input_mask": tf.io.VarLenFeature(tf.int64), "masked_lm_weights": tf.io.VarLenFeature(tf.float32)}
    tokens = masked = sequences = 0
    try:
        for batch in tf.data.TFRecordDataset(path).batch(4096).map(lambda x: tf.io.parse_example(x, spec)):
            tokens += int(tf.sparse.reduce_sum(batch["input_mask"]))
            masked += float(tf.sparse.reduce_sum(batch["masked_lm_weights"]))
            sequences += int(batch["input_mask"].dense_shape[0])
    except tf.errors.OpError as e:
        raise TargetsError(f"--input_file={path}: not pretraining TFRecords ({e.message.splitlines()[0]})") from None
    if not sequences:
        raise TargetsError(f"--input_file={path}: no records")
    return {"tokens_per_sequence": tokens / sequences, "mlm_targets_per_sequence": masked / sequences,
            "ltr_targets_per_sequence": (tokens - sequences) / sequences, "sequences": sequences}


def main():
    counts = count_targets(FLAGS.input_file)
    write_text(FLAGS.output_file, "".join(f"{key} = {value}\n" for key, value in counts.items()))
    print(", ".join(f"{key} {value:.2f}" if isinstance(value, float) else f"{key} {value}"
                    for key, value in counts.items()))


def run():
    flags.DEFINE_string("input_file", None, "The pretraining TFRecords (replicate_out/data/train.tfrecord).")
    flags.DEFINE_string("output_file", None, "Where the counts go (replicate_out/targets.txt).")
    cli.run(main, required_flags=["input_file", "output_file"])


if __name__ == "__main__":
    run()
