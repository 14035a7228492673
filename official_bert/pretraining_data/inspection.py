"""Reads pretraining TFRecords back (v1 or v2 names, gzip or not) and measures how they were made."""

import collections
import contextlib
import re

import numpy as np
import tensorflow as tf
from google.protobuf.message import DecodeError

from official_bert.prefetching import prefetched
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.example_codec import V1_NAMES, V2_NAMES
from official_bert.pretraining_data.options import num_to_predict

_GZIP_MAGIC = b"\x1f\x8b"
_RENAME = dict(zip(V2_NAMES, V1_NAMES))


def read_batches(paths, max_records=None, batch_size=1024):
    """Yields the records of `paths` as dicts of numpy arrays [batch, length], named input_ids, input_mask,
    segment_ids, masked_lm_positions, masked_lm_ids, masked_lm_weights, next_sentence_labels (v2 names
    are renamed). Lengths come from the first record; every record must have them. A file that is not
    such a TFRecord file raises PretrainingDataError naming it."""
    spec, left = None, max_records
    for path in paths:
        with _reading(path):
            if spec is None:
                first = _first_example(path)
                if first is None:
                    continue
                _check_feature_names(path, first)
                spec = {name: tf.io.FixedLenFeature([len(values)], tf.float32 if name == "masked_lm_weights"
                                                    else tf.int64) for name, values in first.items()}
            dataset = tf.data.TFRecordDataset(path, compression_type=_compression(path))
            if left is not None:
                dataset = dataset.take(left)
            for batch in prefetched(dataset.batch(batch_size).map(lambda records: tf.io.parse_example(records, spec))):
                if left is not None:
                    left -= len(batch["input_mask"])
                yield {_RENAME.get(name, name): values.numpy() for name, values in batch.items()}


def feature_names(path):
    """"v1" (input_ids, segment_ids) or "v2" (input_word_ids, input_type_ids) for the first record of `path`."""
    with _reading(path):
        first = _first_example(path)
    return None if first is None else ("v2" if "input_word_ids" in first else "v1")


@contextlib.contextmanager
def _reading(path):
    """Turns TensorFlow's and protobuf's errors about `path` into a PretrainingDataError naming it."""
    try:
        yield
    except (tf.errors.OpError, DecodeError) as e:
        message = re.sub(r"\{\{.*?\}\}\s*|\s*\[Op:.*", "", getattr(e, "message", str(e)))
        raise PretrainingDataError(f"{path}: not a TFRecord file of pretraining examples ({message})") from None


_PREDICTION_NAMES = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights", "next_sentence_labels")


def _check_feature_names(path, example):
    """Refuses a record that lacks a feature of pretraining examples, naming those missing: parsing it would fail
    with TensorFlow's dataset internals as the message.

    Example:
    >>> _check_feature_names("a.tfrecord", {"input_ids": [1], "label": [0]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.pretraining_data.errors.PretrainingDataError: a.tfrecord: not a TFRecord file of pretraining examples: its first record lacks the features input_mask, segment_ids, masked_lm_positions, ... (it has input_ids, label)
    """
    expected = (V2_NAMES if "input_word_ids" in example else V1_NAMES) + _PREDICTION_NAMES
    missing = [name for name in expected if name not in example]
    if missing:
        raise PretrainingDataError(f"{path}: not a TFRecord file of pretraining examples: its first record lacks the "
                                   f"features {', '.join(missing)} (it has {', '.join(sorted(example)) or 'none'})")


def _compression(path):
    with tf.io.gfile.GFile(path, "rb") as f:
        return "GZIP" if f.read(2) == _GZIP_MAGIC else ""


def _first_example(path):
    for record in tf.data.TFRecordDataset(path, compression_type=_compression(path)).take(1).as_numpy_iterator():
        features = tf.train.Example.FromString(record).features.feature
        return {name: list(f.int64_list.value or f.float_list.value) for name, f in features.items()}
    return None


# The [MASK] check needs this many [MASK]s expected in the sample: fewer would refuse good data by chance.
_MIN_EXPECTED_MASKS = 40


def vocabulary_mismatch(batch, cls_id, sep_id, mask_id, mask_token_prob=0.8):
    """What in a sample of records (a batch of `read_batches`) shows that the vocabulary's [CLS], [SEP] and
    [MASK] ids are not those the records were made with; None when they fit.

    Every record starts with [CLS] and ends each segment with [SEP] (create_pretraining_data never masks
    them), and about `mask_token_prob` of the masked positions hold [MASK] (the 80/10/10 rule): fewer than
    half of that is refused, once the sample is large enough for it not to happen by chance.

    Args:
        batch: the sample, named as `read_batches` names it.
        cls_id, sep_id, mask_id: the vocabulary's ids of [CLS], [SEP], [MASK].
        mask_token_prob: the --mask_token_prob the data was made with.

    Returns:
        a message saying what was found, or None.

    Example:
    >>> batch = {"input_ids": np.array([[2, 4, 3, 6, 3, 0]]), "input_mask": np.array([[1, 1, 1, 1, 1, 0]]),
    ...          "segment_ids": np.array([[0, 0, 0, 1, 1, 0]]), "masked_lm_positions": np.array([[1, 0]]),
    ...          "masked_lm_weights": np.array([[1.0, 0.0]])}
    >>> vocabulary_mismatch(batch, cls_id=2, sep_id=3, mask_id=4) is None
    True
    >>> vocabulary_mismatch(batch, cls_id=3, sep_id=2, mask_id=4)  # doctest: +ELLIPSIS
    '1 of 1 records do not start with its [CLS] (id 3; the first starts with id 2); 1 of 1 records do not end...'
    """
    ids, real = batch["input_ids"], batch["input_mask"] > 0
    records, rows = len(ids), np.arange(len(ids))
    lengths = real.sum(axis=1)
    found = []
    bad_start = ids[:, 0] != cls_id
    if bad_start.any():
        found.append(f"{int(bad_start.sum())} of {records} records do not start with its [CLS] (id {cls_id}; the "
                     f"first starts with id {int(ids[bad_start][0, 0])})")
    second = (batch["segment_ids"] > 0) & real
    has_second = second.any(axis=1)
    segment_ends = [(rows, np.maximum(lengths - 1, 0)), (rows[has_second], second[has_second].argmax(axis=1) - 1)]
    bad_end = np.zeros(records, bool)
    for where, end in segment_ends:
        bad_end[where] |= ids[where, end] != sep_id
    if bad_end.any():
        found.append(f"{int(bad_end.sum())} of {records} records do not end each segment with its [SEP] "
                     f"(id {sep_id})")
    weights = batch["masked_lm_weights"] > 0
    shown = np.take_along_axis(ids, batch["masked_lm_positions"], axis=1)[weights]
    share = float((shown == mask_id).mean()) if shown.size else 0.0
    if shown.size * mask_token_prob >= _MIN_EXPECTED_MASKS and share < mask_token_prob / 2:
        found.append(f"{100 * share:.0f} % of {shown.size} masked positions hold its [MASK] (id {mask_id}), "
                     f"not about {100 * mask_token_prob:.0f} %")
    return "; ".join(found) or None


class ExampleStatistics:
    """Accumulates the statistics that show the procedure: masked share and the num_to_predict formula,
    [MASK]/kept/random split, [CLS]/[SEP] never masked, NSP balance, lengths, whole words.

    Args:
        mask_id, cls_id, sep_id: ids of [MASK], [CLS], [SEP].
        masked_lm_prob: the run's value, to check each example's count against the formula.
        is_continuation: optional bools indexed by id ("##" pieces): counts words masked only in part.

    Example:
    >>> stats = ExampleStatistics(mask_id=4, cls_id=2, sep_id=3, masked_lm_prob=0.5)
    >>> stats.add_batch({"input_ids": np.array([[2, 4, 6, 3, 7, 3, 0]]),
    ...                  "input_mask": np.array([[1, 1, 1, 1, 1, 1, 0]]),
    ...                  "segment_ids": np.array([[0, 0, 0, 0, 1, 1, 0]]),
    ...                  "masked_lm_positions": np.array([[1, 2, 4, 0]]),
    ...                  "masked_lm_ids": np.array([[5, 6, 8, 0]]),
    ...                  "masked_lm_weights": np.array([[1.0, 1.0, 1.0, 0.0]]),
    ...                  "next_sentence_labels": np.array([[1]])})
    >>> stats.masked, stats.replaced_by_mask, stats.kept, stats.replaced_randomly, stats.formula_matches
    (3, 1, 1, 1, 1)
    """

    def __init__(self, mask_id, cls_id, sep_id, masked_lm_prob=0.15, is_continuation=None):
        self._mask_id, self._special = mask_id, np.array([cls_id, sep_id])
        self._masked_lm_prob = masked_lm_prob
        self._is_continuation = None if is_continuation is None else np.asarray(is_continuation, bool)
        self.records = self.tokens = self.masked = self.formula_matches = 0
        self.replaced_by_mask = self.kept = self.replaced_randomly = self.special_masked = 0
        self.random_next = self.partly_masked_words = self.segment_a_tokens = 0
        self.max_seq_length = self.max_predictions = 0
        self.lengths = collections.Counter()

    def add_batch(self, batch):
        ids, lengths = batch["input_ids"], batch["input_mask"].sum(axis=1)
        weights = batch["masked_lm_weights"] > 0
        counts = weights.sum(axis=1)
        shown = np.take_along_axis(ids, batch["masked_lm_positions"], axis=1)[weights]
        labels = batch["masked_lm_ids"][weights]
        self.records += len(ids)
        self.max_seq_length, self.max_predictions = ids.shape[1], weights.shape[1]
        self.tokens += int(lengths.sum())
        self.masked += int(counts.sum())
        expected = [num_to_predict(int(n), self._masked_lm_prob, self.max_predictions) for n in lengths]
        self.formula_matches += int((counts == np.array(expected)).sum())
        is_mask = shown == self._mask_id
        self.replaced_by_mask += int(is_mask.sum())
        self.kept += int(((shown == labels) & ~is_mask).sum())
        self.replaced_randomly += int(((shown != labels) & ~is_mask).sum())
        self.special_masked += int(np.isin(labels, self._special).sum())
        self.random_next += int(batch["next_sentence_labels"].sum())
        self.segment_a_tokens += int((lengths - (batch["segment_ids"] * batch["input_mask"]).sum(axis=1)).sum())
        self.lengths.update(lengths.tolist())
        if self._is_continuation is not None:
            self.partly_masked_words += self._partly_masked(batch, weights)

    def _partly_masked(self, batch, weights):
        """Words (a piece plus the continuation pieces after it) with some but not all pieces masked."""
        # Words are read from the original ids: a [MASK] or a random id in place of "##ing" would end its word.
        ids, real = batch["input_ids"].copy(), batch["input_mask"] > 0
        rows = np.repeat(np.arange(len(ids)), weights.shape[1]).reshape(weights.shape)
        ids[rows[weights], batch["masked_lm_positions"][weights]] = batch["masked_lm_ids"][weights]
        in_word = real & ~np.isin(ids, self._special)
        masked = np.zeros(ids.shape, bool)
        masked[rows[weights], batch["masked_lm_positions"][weights]] = True
        continues = in_word & self._is_continuation[ids]
        continues[:, 1:] &= in_word[:, :-1]
        continues[:, 0] = False
        word = np.cumsum(~continues.ravel()) - 1  # one number per word (and per non-word position)
        keep = in_word.ravel()
        size = np.bincount(word[keep], minlength=word[-1] + 1)
        hit = np.bincount(word[keep], weights=masked.ravel()[keep], minlength=word[-1] + 1)
        return int(((hit > 0) & (hit < size)).sum())

    def report(self):
        """Lines of text: the statistics, a length histogram in eighths of max_seq_length."""
        n, masked = max(1, self.records), max(1, self.masked)
        short = sum(c for k, c in self.lengths.items() if 2 * k <= self.max_seq_length)
        lines = [
            f"records: {self.records:,} (max_seq_length {self.max_seq_length}, max_predictions_per_seq "
            f"{self.max_predictions})",
            f"masked: {self.masked:,} of {self.tokens:,} tokens "
            f"({100 * self.masked / max(1, self.tokens):.2f} %); "
            f"count = num_to_predict formula in {100 * self.formula_matches / n:.2f} % of records",
            f"masked positions: [MASK] {100 * self.replaced_by_mask / masked:.2f} %, kept "
            f"{100 * self.kept / masked:.2f} %, random {100 * self.replaced_randomly / masked:.2f} %; "
            f"[CLS]/[SEP] masked: {self.special_masked}",
            f"next sentence: random {100 * self.random_next / n:.2f} %, "
            f"actual {100 - 100 * self.random_next / n:.2f} %",
            f"mean length {self.tokens / n:.1f} tokens, segment A {self.segment_a_tokens / n:.1f}; "
            f"short (at most half of max_seq_length): {100 * short / n:.2f} %",
        ]
        if self._is_continuation is not None:
            lines.append(f"words masked only in part: {self.partly_masked_words:,}")
        lines.append("length histogram:")
        step = max(1, self.max_seq_length // 8)
        for low in range(0, self.max_seq_length, step):
            count = sum(c for k, c in self.lengths.items() if low < k <= low + step)
            lines.append(f"  {low + 1:4d}-{low + step:<4d} {100 * count / n:6.2f} % {'#' * round(50 * count / n)}")
        return lines


def decode_example(example, inv_vocab):
    """One example (a dict of 1-D arrays, e.g. a row of a batch) as text: segments, masked tokens as
    shown→original, and the NSP label.

    >>> example = {"input_ids": np.array([2, 4, 3, 6, 3, 0]), "input_mask": np.array([1, 1, 1, 1, 1, 0]),
    ...            "segment_ids": np.array([0, 0, 0, 1, 1, 0]), "masked_lm_positions": np.array([1, 0]),
    ...            "masked_lm_ids": np.array([5, 0]), "masked_lm_weights": np.array([1.0, 0.0]),
    ...            "next_sentence_labels": np.array([0])}
    >>> print(decode_example(example, {2: "[CLS]", 3: "[SEP]", 4: "[MASK]", 5: "cat", 6: "sat"}))
    [CLS] [MASK]→cat [SEP] | sat [SEP]   (next sentence: actual)
    """
    length = int(example["input_mask"].sum())
    k = int((example["masked_lm_weights"] > 0).sum())
    originals = dict(zip(example["masked_lm_positions"][:k].tolist(), example["masked_lm_ids"][:k].tolist()))
    words = []
    for i in range(length):
        if i and example["segment_ids"][i] != example["segment_ids"][i - 1]:
            words.append("|")
        token = inv_vocab.get(int(example["input_ids"][i]), "?")
        words.append(f"{token}→{inv_vocab.get(originals[i], '?')}" if i in originals else token)
    label = "random" if example["next_sentence_labels"][0] else "actual"
    return " ".join(words) + f"   (next sentence: {label})"
