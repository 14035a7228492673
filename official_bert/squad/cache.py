"""Training features cached as TFRecords, keyed by everything that changes them; a second run reuses them."""

import dataclasses
import hashlib
import json
import os
import random

import tensorflow as tf
from absl import logging

from official_bert.io.paths import hash_file
from official_bert.squad import json_files
from official_bert.squad.errors import SquadError
from official_bert.squad.examples import read_squad_examples
from official_bert.squad.features import check_lengths, convert_examples_to_features
from official_bert.squad.records import write_feature_records
from official_bert.text.tokenizers import tokenizer_options

# Bump when the features' content or layout changes, so that old caches are not reused.
_FORMAT_VERSION = 1


@dataclasses.dataclass
class CachedFeatures:
    """Where a training set's features are, and how many.

    Args:
        path: the TFRecord file (read it with `feature_dataset`).
        num_examples: examples kept (the original computes the number of training steps from this).
        num_skipped: questions skipped because their answer was not found in the text.
        num_features: records in the file (an example has one per window).
        reused: whether the file came from an earlier run.

    Example:
    >>> CachedFeatures("out/squad_train.tf_record", 2, 0, 3, reused=False).num_features
    3
    """

    path: str
    num_examples: int
    num_skipped: int
    num_features: int
    reused: bool


def cached_train_features(input_file, tokenizer, cache_dir, max_seq_length, doc_stride, max_query_length,
                          version_2_with_negative, seed=12345):
    """Reads, shuffles and converts a SQuAD training file to TFRecords in `cache_dir`, unless already done.

    The cache key covers the file's bytes, the vocabulary and casing, the three lengths, the version and the
    shuffle seed. The examples are shuffled before conversion with `random.Random(seed)`, as the original did
    (so that a small shuffle buffer suffices in training). A counts file is written after the records and
    marks the cache complete.

    Args:
        input_file: the SQuAD training JSON.
        tokenizer: a `FullTokenizer` (with `vocab` and `do_lower_case`).
        cache_dir: where the files go (created if needed), e.g. the output directory.
        max_seq_length, doc_stride, max_query_length: as for `convert_examples_to_features`.
        version_2_with_negative: SQuAD 2.0 (honour `is_impossible`).
        seed: the examples' shuffle seed.

    Returns a `CachedFeatures`.

    Example:
    >>> import json, os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> work = tempfile.mkdtemp()
    >>> vocab = os.path.join(work, "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "ann", "ran"]))
    >>> data = os.path.join(work, "train.json")
    >>> qa = {"id": "q1", "question": "Who ran?", "answers": [{"text": "Ann", "answer_start": 0}]}
    >>> _ = open(data, "w").write(json.dumps({"data": [{"paragraphs": [{"context": "Ann ran", "qas": [qa]}]}]}))
    >>> args = (data, FullTokenizer(vocab), work, 16, 4, 4, False)
    >>> first, second = cached_train_features(*args), cached_train_features(*args)
    >>> first.num_features, first.reused, second.reused, second.path == first.path
    (1, False, True, True)
    """
    check_lengths(max_seq_length, doc_stride, max_query_length)
    key = _cache_key(input_file, tokenizer, max_seq_length, doc_stride, max_query_length,
                     version_2_with_negative, seed)
    path = os.path.join(cache_dir, f"squad_train_{key}.tf_record")
    counts_path = path + ".counts.json"
    if tf.io.gfile.exists(path) and tf.io.gfile.exists(counts_path):
        counts = json_files.read_json(counts_path, "the counts of a feature cache")
        logging.info("reusing cached SQuAD features %s", path)
        return CachedFeatures(path, reused=True, **counts)
    examples = read_squad_examples(input_file, is_training=True, version_2_with_negative=version_2_with_negative)
    if _cache_key(input_file, tokenizer, max_seq_length, doc_stride, max_query_length, version_2_with_negative,
                  seed) != key:
        raise SquadError(f"{input_file}: changed while it was read: its features would not be the cached file's; "
                         "rerun once it is final")
    random.Random(seed).shuffle(examples)
    tf.io.gfile.makedirs(cache_dir)
    features = convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                                            is_training=True)
    counts = {"num_examples": len(examples), "num_skipped": examples.num_skipped,
              "num_features": write_feature_records(features, path, is_training=True)}
    json_files.write_json(counts_path, counts)
    logging.info("wrote %d SQuAD features of %d examples to %s", counts["num_features"], len(examples), path)
    return CachedFeatures(path, reused=False, **counts)


def _cache_key(input_file, tokenizer, max_seq_length, doc_stride, max_query_length, version_2_with_negative,
               seed):
    try:
        data_hash = hash_file(input_file)[0]
    except tf.errors.OpError as e:
        raise SquadError(f"{input_file}: cannot read ({e.message}); expected a SQuAD JSON file") from None
    vocab_hash = hashlib.sha256("\n".join(tokenizer.vocab).encode("utf-8")).hexdigest()
    key = {"format": _FORMAT_VERSION, "data": data_hash.hexdigest(), "vocab": vocab_hash,
           "tokenizer": type(tokenizer).__name__, "do_lower_case": tokenizer.do_lower_case,
           "tokenizer_options": tokenizer_options(tokenizer),
           "max_seq_length": max_seq_length, "doc_stride": doc_stride, "max_query_length": max_query_length,
           "version_2_with_negative": version_2_with_negative, "seed": seed}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:16]
