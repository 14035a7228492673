"""The training windows cached in a features directory, keyed by everything that changes them: a sweep's runs
read the windows their sweep converted, instead of each tokenizing train.txt again."""

import dataclasses
import hashlib
import io
import json
import os

import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.io import atomic_path
from official_bert.ner.features import convert_sentences_to_features, feature_arrays
from official_bert.text.tokenizers import tokenizer_options

# Bump when the windows' content or layout changes, so that old caches are not reused.
_FORMAT_VERSION = 1


@dataclasses.dataclass
class TrainWindows:
    """A training set's windows as the arrays `train_dataset_fn` batches.

    Args:
        path: the cache file (.npz).
        inputs: {"input_word_ids", "input_mask", "input_type_ids"}: int32 [N, T].
        labels: int32 [N, T], `IGNORE` where there is none.
        reused: whether the file came from an earlier run.

    Example:
    >>> windows = TrainWindows("ner-train.npz", {}, np.zeros([3, 8], np.int32), reused=False)
    >>> len(windows)
    3
    """

    path: str
    inputs: dict
    labels: np.ndarray
    reused: bool

    def __len__(self):
        return len(self.labels)


def cached_train_windows(sentences, tokenizer, label_map, max_seq_length, doc_stride, document_context=False, *,
                         cache_dir):
    """`convert_sentences_to_features` of the training sentences as arrays, converted once and cached in
    cache_dir/feature_cache/ner-train-<key>.npz (written under a temporary name, then renamed); a later call
    with the same key reads the file.

    The key covers the sentences (words, tags, documents), the tokenizer's type, vocabulary, casing and
    [unused*] handling, the labels, both lengths and the document context.

    Args:
        sentences, tokenizer, label_map, max_seq_length, doc_stride, document_context: as for
            `convert_sentences_to_features`.
        cache_dir: where feature_cache/ goes: --features_dir, by default --output_dir.

    Returns a `TrainWindows`.

    Example:
    >>> import tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.ner.conll import Sentence
    >>> from official_bert.ner.labels import LabelMap
    >>> work = tempfile.mkdtemp()
    >>> vocab = os.path.join(work, "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "jo", "##hn", "ran"]))
    >>> args = ([Sentence([["John", "B-PER"], ["ran", "O"]], [1, 2], 0)], FullTokenizer(vocab), LabelMap(["PER"]),
    ...         8, 2)
    >>> first, second = cached_train_windows(*args, cache_dir=work), cached_train_windows(*args, cache_dir=work)
    >>> first.labels.tolist(), first.reused, second.reused, second.path == first.path
    ([[-1, 1, -1, 0, -1, -1, -1, -1]], False, True, True)
    """
    key = _cache_key(sentences, tokenizer, label_map, max_seq_length, doc_stride, document_context)
    path = os.path.join(cache_dir, "feature_cache", f"ner-train-{key}.npz")
    if tf.io.gfile.exists(path):
        with tf.io.gfile.GFile(path, "rb") as f, np.load(io.BytesIO(f.read())) as arrays:
            labels = arrays["labels"]
            inputs = {name: arrays[name] for name in arrays.files if name != "labels"}
        logging.info("reusing the cached training windows %s (%d windows)", path, len(labels))
        return TrainWindows(path, inputs, labels, reused=True)
    features = convert_sentences_to_features(sentences, tokenizer, label_map, max_seq_length, doc_stride,
                                             document_context)
    inputs, labels = feature_arrays(features)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, labels=labels, **inputs)
    tf.io.gfile.makedirs(os.path.dirname(path))
    with atomic_path(path) as tmp, tf.io.gfile.GFile(tmp, "wb") as f:
        f.write(buffer.getvalue())
    logging.info("wrote %d training windows to %s", len(labels), path)
    return TrainWindows(path, inputs, labels, reused=False)


def _cache_key(sentences, tokenizer, label_map, max_seq_length, doc_stride, document_context):
    data_hash = hashlib.sha256()
    for sentence in sentences:
        data_hash.update(json.dumps([sentence.document, sentence.words, sentence.tags]).encode("utf-8"))
    vocab_hash = hashlib.sha256("\n".join(tokenizer.vocab).encode("utf-8")).hexdigest()
    # A FullTokenizer's BasicTokenizer knows whether [unused*] tokens stay whole; SentencePiece has none.
    basic = getattr(tokenizer, "basic_tokenizer", None)
    key = {"format": _FORMAT_VERSION, "data": data_hash.hexdigest(), "vocab": vocab_hash,
           "tokenizer": type(tokenizer).__name__, "do_lower_case": tokenizer.do_lower_case,
           "tokenizer_options": tokenizer_options(tokenizer),
           "preserve_unused_tokens": bool(getattr(basic, "preserve_unused_tokens", False)),
           "labels": list(label_map.labels), "max_seq_length": max_seq_length, "doc_stride": doc_stride,
           "document_context": bool(document_context)}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:16]
