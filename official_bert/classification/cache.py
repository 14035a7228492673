"""Features cached as TFRecords in output_dir, keyed by everything that changes them; later runs reuse them."""

import dataclasses
import hashlib
import json
import os

import tensorflow as tf
from absl import logging

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.features import convert_example_windows, padding_features
from official_bert.classification.records import serialize_features
from official_bert.io import atomic_path, write_text
from official_bert.io.fingerprints import file_fingerprint
from official_bert.io.paths import hash_file
from official_bert.text.tokenizers import tokenizer_options

# Bump when the conversion or the record format changes, so that old caches are not reused.
# 2: every record carries its example_index. 3: data files keyed by their content.
CACHE_FORMAT = 3


@dataclasses.dataclass(frozen=True)
class FeatureFile:
    """A cached TFRecord file of one split's features, and what is needed to read it.

    Args:
        path: the TFRecord file.
        num_examples: real examples, in the order of the split's file.
        num_padding: padding examples after their features (is_real_example=0).
        max_seq_length: T.
        num_choices: C for multiple choice, else None.
        is_regression: float labels.
        skipped_rows: malformed rows of the split's file that were left out (QQP's), with a warning.
        doc_stride: the stride of the windows long texts were cut into, 0 for none (truncation).
        num_windows: with doc_stride, the real records (windows, in example order); else None.
        multi_hot: for multi-label, the number of labels (each label is a multi-hot vector of this width); else 0.

    Example:
    >>> FeatureFile("train.tf_record", 30, 2, 128, None, False).num_records
    32
    >>> FeatureFile("train.tf_record", 30, 2, 128, None, False, doc_stride=64, num_windows=45).num_records
    47
    """

    path: str
    num_examples: int
    num_padding: int
    max_seq_length: int
    num_choices: int | None
    is_regression: bool
    skipped_rows: int = 0
    doc_stride: int = 0
    num_windows: int | None = None
    multi_hot: int = 0

    @property
    def num_features(self):
        """The real records: one per example, or with windows one per window."""
        return self.num_examples if self.num_windows is None else self.num_windows

    @property
    def num_records(self):
        return self.num_features + self.num_padding


def _sha256(path):
    try:
        return hash_file(path)[0].hexdigest()
    except tf.errors.NotFoundError:
        raise ClassificationDataError(f"{path}: tokenizer file not found") from None


def _file_contents(paths):
    """[path, content fingerprint] of each data file: a file rewritten at the same path is another cache."""
    contents = []
    for path in paths:
        try:
            contents.append([path if "://" in path else os.path.abspath(path), file_fingerprint(path)])
        except (OSError, tf.errors.NotFoundError):
            raise ClassificationDataError(f"{path}: file not found") from None
        except tf.errors.OpError as e:
            raise ClassificationDataError(f"{path}: cannot read it ({e.message})") from None
    return contents


def check_unchanged(processor, split, before):
    """Raises if a split's data files changed while they were read (`before`: their `_file_contents` then)."""
    for (path, was), (_, now) in zip(before, _file_contents(processor.data_files(split))):
        if was != now:
            raise ClassificationDataError(f"{path}: changed while it was read (rewritten or truncated): its "
                                          "features would mix two versions; rerun once it is final")


def cache_key(processor, split, tokenizer, tokenizer_file, do_lower_case, max_seq_length, pad_to_multiple_of=1,
              doc_stride=0, data_contents=None):
    """A hex digest of everything the features depend on.

    That is: the task's settings (labels, language, reader), the split, the data files' paths and contents, the
    tokenizer's type and its vocabulary or model file's contents, the casing, max_seq_length, the batch padding
    and the windows' stride.

    Args:
        processor: the task's DataProcessor.
        split: the split name.
        tokenizer: the tokenizer object (its type is part of the key).
        tokenizer_file: the vocabulary or SentencePiece model file the tokenizer was made from.
        do_lower_case: the casing flag.
        max_seq_length: T.
        pad_to_multiple_of: the record count is padded to a multiple of this.
        doc_stride: the windows' stride, 0 for none.
        data_contents: the data files' contents (`_file_contents`), if already taken.

    Example:
    >>> import os, tempfile
    >>> from official_bert.classification.tasks import get_processor
    >>> from official_bert.tokenization import FullTokenizer
    >>> data_dir = tempfile.mkdtemp()
    >>> _ = open(os.path.join(data_dir, "dev.tsv"), "w").write("sentence\\tlabel\\nFine .\\t1\\n")
    >>> vocab = os.path.join(data_dir, "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nfine\\n")
    >>> processor, tokenizer = get_processor("sst-2", data_dir), FullTokenizer(vocab)
    >>> key = cache_key(processor, "dev", tokenizer, vocab, True, 128)
    >>> key == cache_key(processor, "dev", tokenizer, vocab, True, 64)
    False
    >>> key == cache_key(processor, "dev", tokenizer, vocab, True, 128, doc_stride=64)
    False
    >>> key == cache_key(processor, "dev", FullTokenizer(vocab, preserve_unused_tokens=True), vocab, True, 128)
    False
    """
    ingredients = {
        "format": CACHE_FORMAT, "split": split, "processor": processor.cache_settings(),
        "data_files": data_contents or _file_contents(processor.data_files(split)),
        "tokenizer": f"{type(tokenizer).__module__}.{type(tokenizer).__qualname__}",
        "tokenizer_options": tokenizer_options(tokenizer),
        "tokenizer_file": _sha256(tokenizer_file), "do_lower_case": bool(do_lower_case),
        "max_seq_length": max_seq_length, "pad_to_multiple_of": pad_to_multiple_of, "doc_stride": doc_stride,
    }
    return hashlib.sha256(json.dumps(ingredients, sort_keys=True).encode()).hexdigest()


def load_or_create_features(processor, split, tokenizer, max_seq_length, output_dir, *, tokenizer_file,
                            do_lower_case, pad_to_multiple_of=1, doc_stride=0):
    """Returns the FeatureFile of a split, converting and writing it only if no cache with the same key exists.

    Files go to output_dir/feature_cache/<task>-<split>-<key>.tf_record, with a .json beside it that is
    written last: a record file without its .json is unfinished and is rebuilt. Both are written under a
    temporary name and renamed.

    Args:
        processor: the task's DataProcessor.
        split: the split name ("train", "dev", "test_matched", ...).
        tokenizer: anything with the FullTokenizer interface.
        max_seq_length: T.
        output_dir: the run's output directory.
        tokenizer_file: the vocabulary (or SentencePiece model) file behind `tokenizer`.
        do_lower_case: the casing flag the tokenizer was made with.
        pad_to_multiple_of: append padding examples until the record count is a multiple of this (a batch
            size, for accelerators that need every batch full).
        doc_stride: cut texts longer than max_seq_length into windows this many tokens apart, one record each
            (see `features.convert_example_windows`); 0 truncates them, one record per example.

    Example:
    >>> import os, tempfile
    >>> from official_bert.classification.tasks import get_processor
    >>> from official_bert.tokenization import FullTokenizer
    >>> data_dir = tempfile.mkdtemp()
    >>> _ = open(os.path.join(data_dir, "dev.tsv"), "w").write("sentence\\tlabel\\nFine .\\t1\\n")
    >>> vocab = os.path.join(data_dir, "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nfine\\n")
    >>> cached = load_or_create_features(get_processor("sst-2", data_dir), "dev", FullTokenizer(vocab), 8,
    ...                                  data_dir, tokenizer_file=vocab, do_lower_case=True, pad_to_multiple_of=4)
    >>> cached.num_examples, cached.num_padding
    (1, 3)
    """
    return load_or_create_splits(processor, {split: pad_to_multiple_of}, tokenizer, max_seq_length, output_dir,
                                 tokenizer_file=tokenizer_file, do_lower_case=do_lower_case,
                                 doc_stride=doc_stride)[split]


def load_or_create_splits(processor, splits, tokenizer, max_seq_length, output_dir, *, tokenizer_file,
                          do_lower_case, doc_stride=0):
    """The FeatureFiles of several splits, as `load_or_create_features` gives each, every split without a cache read
    and checked before any feature is written: a bad dev file stops the run with no training features left behind.

    Args:
        processor: the task's DataProcessor.
        splits: split name → pad_to_multiple_of (see `load_or_create_features`).
        tokenizer, max_seq_length, output_dir, tokenizer_file, do_lower_case, doc_stride: as
            `load_or_create_features`'s.

    Returns:
        split name → FeatureFile.

    Example:
    >>> import os, tempfile
    >>> from official_bert.classification.tasks import get_processor
    >>> from official_bert.tokenization import FullTokenizer
    >>> data_dir = tempfile.mkdtemp()
    >>> _ = open(os.path.join(data_dir, "train.tsv"), "w").write("sentence\\tlabel\\nFine .\\t1\\n")
    >>> _ = open(os.path.join(data_dir, "dev.tsv"), "w").write("sentence\\tlabel\\nFine .\\t7\\n")
    >>> vocab = os.path.join(data_dir, "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nfine\\n")
    >>> load_or_create_splits(get_processor("sst-2", data_dir), {"train": 1, "dev": 8}, FullTokenizer(vocab), 8,
    ...                       data_dir, tokenizer_file=vocab, do_lower_case=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.classification.errors.ClassificationDataError: .../dev.tsv:2: label '7' is not one of the task's ...
    >>> os.path.exists(os.path.join(data_dir, "feature_cache"))
    False
    """
    directory = os.path.join(output_dir, "feature_cache")
    found, pending = {}, {}
    for split in splits:
        contents = _file_contents(processor.data_files(split))
        key = cache_key(processor, split, tokenizer, tokenizer_file, do_lower_case, max_seq_length, splits[split],
                        doc_stride, contents)
        path = os.path.join(directory, f"{processor.task_name}-{split}-{key[:16]}.tf_record")
        cached = _read_metadata(path)
        if cached is not None and tf.io.gfile.exists(path):
            logging.info("reusing cached %s %s features: %s (%d examples)", processor.task_name, split, path,
                         cached.num_examples)
            found[split] = cached
        else:
            pending[split] = (path, processor.get_examples(split))
            check_unchanged(processor, split, contents)
    for split in list(pending):
        path, examples = pending.pop(split)  # each split's examples let go once written
        found[split] = _write_features(processor, split, examples, path, tokenizer, max_seq_length, splits[split],
                                       doc_stride)
    return {split: found[split] for split in splits}


def _write_features(processor, split, examples, path, tokenizer, max_seq_length, pad_to_multiple_of, doc_stride):
    label_list = processor.label_list
    multi_hot = len(label_list) if processor.multi_label else 0
    tf.io.gfile.makedirs(os.path.dirname(path))
    num_features = 0
    with atomic_path(path) as tmp, tf.io.TFRecordWriter(tmp) as writer:
        for i, example in enumerate(examples):
            for features in convert_example_windows(example, label_list, max_seq_length, tokenizer, doc_stride, i):
                writer.write(serialize_features(features))
                num_features += 1
            if (i + 1) % 10000 == 0:
                logging.info("%s %s: converted %d of %d examples", processor.task_name, split, i + 1, len(examples))
        padding = -num_features % pad_to_multiple_of
        for features in padding_features(padding, max_seq_length, processor.num_choices, processor.is_regression,
                                         multi_hot):
            writer.write(serialize_features(features))
    cached = FeatureFile(path, len(examples), padding, max_seq_length, processor.num_choices,
                         processor.is_regression, processor.skipped_rows.get(split, 0), doc_stride,
                         num_features if doc_stride else None, multi_hot)
    metadata = dataclasses.asdict(cached)
    del metadata["path"]  # the cache stays valid when output_dir moves
    write_text(path + ".json", json.dumps(metadata, indent=2))
    windows = f", {num_features} windows" if doc_stride else ""
    logging.info("wrote %s %s features: %s (%d examples%s, %d padding)", processor.task_name, split, path,
                 len(examples), windows, padding)
    return cached


def _read_metadata(path):
    try:
        with tf.io.gfile.GFile(path + ".json", "rb") as f:
            return FeatureFile(path, **json.loads(f.read().decode("utf-8")))
    except (tf.errors.OpError, ValueError, TypeError):
        return None
