"""Pretraining examples from TFRecord shards as a tf.data pipeline feeding `BertPretrainer`.

The files are those create_pretraining_data.py writes: the original's feature names or Model Garden's v2 names,
plain or GZIP-compressed, told apart per file from its first bytes and first record.
`open_pretraining_files` reads one record of every file before training starts, so a wrong path, a file of
other examples, or a --max_seq_length/--max_predictions_per_seq that disagrees with the data is one clear
message instead of a parse error in the middle of training.

Training input (the original's recipe, per input pipeline): files sharded across workers, shuffled, read
interleaved, records shuffled, repeated, batched, parsed in parallel and prefetched. With fewer files than
workers every worker reads every file and keeps every n-th record.
"""

import contextlib
import dataclasses
import re

import tensorflow as tf
from google.protobuf.message import DecodeError

from official_bert.prefetching import prefetched
from official_bert.pretraining_data.documents import expand_input_files
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.example_codec import V1_NAMES, V2_NAMES

_GZIP_MAGIC = b"\x1f\x8b"
_PREDICTION_FEATURES = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")
_NSP_FEATURE = "next_sentence_labels"
SHUFFLE_BUFFER_SIZE = 10000
_MAX_CYCLE_LENGTH = 16  # files read at once: enough to mix shards, few enough to bound memory


@dataclasses.dataclass(frozen=True)
class PretrainingFiles:
    """Checked pretraining TFRecord files and the shape of their examples.

    Args:
        paths: the files, in --input_file order.
        compression: "GZIP" or "" for each file.
        names: the feature names of ids, mask and segments: `V1_NAMES` or `V2_NAMES`.
        seq_length: T, the length of input_ids.
        max_predictions_per_seq: P, the length of the masked_lm_* features.
    """

    paths: tuple
    compression: tuple
    names: tuple
    seq_length: int
    max_predictions_per_seq: int


def open_pretraining_files(input_file, max_seq_length, max_predictions_per_seq, vocab_size=None, use_nsp=True):
    """Finds the files of --input_file and checks the first record of each against the flags.

    Args:
        input_file: comma-separated paths and glob patterns.
        max_seq_length: the expected T (--max_seq_length).
        max_predictions_per_seq: the expected P (--max_predictions_per_seq).
        vocab_size: if given, token ids in the checked records must be below it.
        use_nsp: require next_sentence_labels.

    Returns:
        a `PretrainingFiles`.

    Raises:
        PretrainingDataError: naming the file or flag and what was expected.
    """
    paths = expand_input_files(input_file)
    compression, shapes = [], {}
    for path in paths:
        compression.append(_compression(path))
        first = _first_record(path, compression[-1])
        if first is not None:
            shapes[path] = _shape(path, first, vocab_size, use_nsp)
    if not shapes:
        raise PretrainingDataError(f"--input_file: no examples in {', '.join(paths[:3])}"
                                   + (f" and {len(paths) - 3} more files" if len(paths) > 3 else ""))
    (first_path, (names, seq_length, predictions)), *others = shapes.items()
    for path, shape in others:
        if shape[1:] != (seq_length, predictions):
            raise PretrainingDataError(
                f"{path}: examples of length {shape[1]} with {shape[2]} predictions, but {first_path} has "
                f"{seq_length} and {predictions}: all input files must come from the same --max_seq_length "
                "and --max_predictions_per_seq")
    for flag, expected, found in (("--max_seq_length", max_seq_length, seq_length),
                                  ("--max_predictions_per_seq", max_predictions_per_seq, predictions)):
        if expected != found:
            raise PretrainingDataError(f"{flag}={expected}, but the examples in {first_path} were made with "
                                       f"{flag}={found}; pass {flag}={found} or regenerate the data")
    return PretrainingFiles(tuple(paths), tuple(compression), names, seq_length, predictions)


@contextlib.contextmanager
def reading_records():
    """Turns the errors of records that `open_pretraining_files` did not check (damaged, or not shaped like
    the first record of their file) into a PretrainingDataError, when they stop training or evaluation."""
    try:
        yield
    except tf.errors.DataLossError as e:
        raise PretrainingDataError(f"--input_file: a damaged record ({_first_line(e)})") from None
    except tf.errors.InvalidArgumentError as e:
        if "Key: " not in str(e):  # not tf.io.parse_example's
            raise
        raise PretrainingDataError(f"--input_file: a record unlike the first of its file ({_first_line(e)}); "
                                   "are all files from one create_pretraining_data.py run?") from None


def _compression(path):
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            return "GZIP" if f.read(2) == _GZIP_MAGIC else ""
    except tf.errors.OpError as e:
        raise PretrainingDataError(f"{path}: cannot read it ({_first_line(e)})") from None


def _first_record(path, compression):
    """The first record's features as {name: list of values}, or None for an empty file."""
    try:
        for record in tf.data.TFRecordDataset(path, compression).take(1).as_numpy_iterator():
            features = tf.train.Example.FromString(record).features.feature
            return {name: list(f.int64_list.value or f.float_list.value) for name, f in features.items()}
    except (tf.errors.OpError, DecodeError) as e:
        raise PretrainingDataError(f"{path}: not a TFRecord file of tf.train.Examples ({_first_line(e)})") from None
    return None


def _first_line(error):
    """The line of a TensorFlow error that says what went wrong, without graph-execution boilerplate."""
    message = getattr(error, "message", None) or str(error)
    lines = [line.strip() for line in re.sub(r"\{\{.*?\}\}|\[Op:.*", "", message).splitlines()]
    lines = [line for line in lines if line and not line.startswith(
        ("Graph execution error", "Detected at node", "<stack traces", "[[", 'File "'))] or [message.strip()]
    return lines[0][lines[0].find("Key: "):] if "Key: " in lines[0] else lines[0]


def _shape(path, features, vocab_size, use_nsp):
    """(names, T, P) of one record; raises PretrainingDataError unless it is a pretraining example."""
    names = V2_NAMES if V2_NAMES[0] in features else V1_NAMES
    required = names + _PREDICTION_FEATURES + ((_NSP_FEATURE,) if use_nsp else ())
    missing = [name for name in required if name not in features]
    if missing:
        raise PretrainingDataError(
            f"{path}: the examples lack the feature(s) {', '.join(missing)}; expected those create_pretraining_data.py "
            f"writes: {', '.join(V1_NAMES + _PREDICTION_FEATURES)}, {_NSP_FEATURE} (or the v2 names "
            f"{V2_NAMES[0]}, {V2_NAMES[2]}); found {', '.join(sorted(features)) or 'none'}")
    seq_length, predictions = len(features[names[0]]), len(features[_PREDICTION_FEATURES[0]])
    expected = {**dict.fromkeys(names, seq_length), **dict.fromkeys(_PREDICTION_FEATURES, predictions), _NSP_FEATURE: 1}
    uneven = [f"{name} has {len(features[name])}" for name in required if len(features[name]) != expected[name]]
    if uneven:
        raise PretrainingDataError(f"{path}: inconsistent example: {names[0]} has {seq_length} values and "
                                   f"{_PREDICTION_FEATURES[0]} {predictions}, but " + ", ".join(uneven))
    ids = features[names[0]] + features["masked_lm_ids"]
    if vocab_size is not None and max(ids) >= vocab_size:
        raise PretrainingDataError(f"{path}: token id {max(ids)} is outside the vocabulary of --bert_config_file "
                                   f"(vocab_size {vocab_size}); the data was made with another vocabulary")
    return names, seq_length, predictions


def pretraining_dataset(files, batch_size, is_training=True, seed=None, input_context=None, use_nsp=True,
                        shuffle_buffer_size=SHUFFLE_BUFFER_SIZE, skip_records=0):
    """A `tf.data.Dataset` of (features, labels) batches for `BertPretrainer.fit`.

    features: int32 input_word_ids, input_mask, input_type_ids [B, T] and masked_lm_positions [B, P];
    labels: int32 masked_lm_ids [B, P], float32 masked_lm_weights [B, P] and, with NSP, int32
    next_sentence_labels [B, 1]. The input repeats forever, in full batches.

    Args:
        files: a `PretrainingFiles`.
        batch_size: examples per batch (per replica under a distribution strategy).
        is_training: shuffle files and records (with `seed`); otherwise read in order.
        seed: the shuffle seed; None for a different order in every run.
        input_context: a `tf.distribute.InputContext`: this pipeline reads its share of the data.
        use_nsp: include next_sentence_labels.
        shuffle_buffer_size: records shuffled at once, when training.
        skip_records: records of this pipeline's stream to pass over before the first batch: those a run
            resumed at a step read before it. The stream is a function of `seed`, so the batches that follow are
            those an uninterrupted run reads (the skipped records are read, not parsed).

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
    >>> feature = lambda *v: tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    >>> example = tf.train.Example(features=tf.train.Features(feature={
    ...     "input_ids": feature(2, 4, 3, 0), "input_mask": feature(1, 1, 1, 0), "segment_ids": feature(0, 0, 0, 0),
    ...     "masked_lm_positions": feature(1), "masked_lm_ids": feature(7), "next_sentence_labels": feature(0),
    ...     "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))}))
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     writer.write(example.SerializeToString())
    >>> files = open_pretraining_files(path, max_seq_length=4, max_predictions_per_seq=1)
    >>> x, y = next(iter(pretraining_dataset(files, batch_size=2)))
    >>> x["input_word_ids"].numpy().tolist(), y["masked_lm_ids"].numpy().tolist()
    ([[2, 4, 3, 0], [2, 4, 3, 0]], [[7], [7]])
    """
    pipelines, pipeline_id = (input_context.num_input_pipelines, input_context.input_pipeline_id
                              ) if input_context else (1, 0)
    shard_files = len(files.paths) >= pipelines
    dataset = tf.data.Dataset.from_tensor_slices((list(files.paths), list(files.compression)))
    if shard_files:
        dataset = dataset.shard(pipelines, pipeline_id)
    if is_training:
        dataset = dataset.shuffle(len(files.paths), seed=seed)
    dataset = dataset.repeat().interleave(
        tf.data.TFRecordDataset, cycle_length=min(len(files.paths), _MAX_CYCLE_LENGTH) if is_training else 1,
        num_parallel_calls=tf.data.AUTOTUNE)
    if not shard_files:
        dataset = dataset.shard(pipelines, pipeline_id)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    dataset = dataset.skip(skip_records).batch(batch_size, drop_remainder=True).map(
        _parser(files, use_nsp), num_parallel_calls=tf.data.AUTOTUNE)
    return prefetched(dataset)


def _parser(files, use_nsp):
    ids, mask, segments = files.names
    int_features = {name: files.seq_length for name in files.names}
    int_features.update(masked_lm_positions=files.max_predictions_per_seq,
                        masked_lm_ids=files.max_predictions_per_seq)
    if use_nsp:
        int_features[_NSP_FEATURE] = 1
    spec = {name: tf.io.FixedLenFeature([n], tf.int64) for name, n in int_features.items()}
    spec["masked_lm_weights"] = tf.io.FixedLenFeature([files.max_predictions_per_seq], tf.float32)

    def parse(records):
        parsed = {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
                  for name, value in tf.io.parse_example(records, spec).items()}
        x = {"input_word_ids": parsed[ids], "input_mask": parsed[mask], "input_type_ids": parsed[segments],
             "masked_lm_positions": parsed["masked_lm_positions"]}
        y = {name: parsed[name] for name in ("masked_lm_ids", "masked_lm_weights") + ((_NSP_FEATURE,) * use_nsp)}
        return x, y

    return parse
