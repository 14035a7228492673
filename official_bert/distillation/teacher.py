"""The teacher: a fine-tuned classifier (a run_classifier.py output directory, a checkpoint or its --export_dir), what
it was trained on (config, vocabulary, labels.json), its identity by content, and its outputs on a feature file,
computed once and cached beside the features.

The cache: feature_cache/<features>.teacher-<key>.npz beside the feature file `<features>.tf_record`, where the key
hashes the feature file's name (itself a hash of everything the features depend on) and the teacher's identity: its
config and the bytes of its checkpoint's index (which holds a checksum of every weight) or, for a single-file
checkpoint, of the file; an export's, the bytes of its model.keras (config and weights). A retrained teacher, or
other features, compute again; the same ones are read back.
"""

import hashlib
import io
import json
import os
import tempfile

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.checkpoints import causal, detect, kinds, load_checkpoint
from official_bert.classification import feature_dataset
from official_bert.classification.own_files import read_label_file
from official_bert.configs import BertConfig
from official_bert.distillation.errors import DistillationError
from official_bert.errors import Error
from official_bert.export.saved_model import KERAS_NAME
from official_bert.export.tflite import saved_model_version
from official_bert.finetuning.best import best_checkpoint
from official_bert.finetuning.predict import Predictor
from official_bert.io import atomic_path
from official_bert.io.paths import hash_file
from official_bert.keras_models.text_model import head_size
from official_bert.models import BertClassifier
from official_bert.networks.bert_encoder import BertEncoder

# Bump when what the cached outputs hold, or how they are computed, changes.
CACHE_FORMAT = 1
# What --teacher reads (and nothing else: a .keras file alone lacks the vocabulary and labels beside it).
TEACHER_FORMS = ("expected a run_classifier.py --output_dir, a fine-tuned classifier's checkpoint (a directory, a TF "
                 "checkpoint prefix or a .safetensors file, with bert_config.json and vocab.txt beside it) or its "
                 "--export_dir (or one version of it)")
_HEAD = "output_weights"  # the classifier's kernel under its Google name, [num_outputs, hidden]
_TF_FORMATS = ("google", "official_bert")


class Teacher:
    """A fine-tuned classifier to distil: found at `path`, checked, and built only when its outputs are needed.

    A run_classifier.py output directory means its --keep_best checkpoint if it kept one, else its newest; a
    checkpoint is anything `load_checkpoint` reads, with its bert_config.json and vocab.txt beside it; an export
    (--export_dir, or one version of it: the newest if not named) is its model.keras, assets/vocab.txt and
    labels.json, computing in the export's precision.

    Args:
        path: --teacher.

    Raises:
        DistillationError: no checkpoint, config, vocabulary or classifier head there.

    Example:
    >>> import tempfile
    >>> from official_bert import BertConfig, BertClassifier, BertEncoder, save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> _ = open(work.name + "/vocab.txt", "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
    >>> model = BertClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, num_hidden_layers=1)), 3)
    >>> _ = save_checkpoint(model, work.name)
    >>> teacher = Teacher(work.name)
    >>> teacher.num_outputs, teacher.config.hidden_size, teacher.kind, len(teacher.identity)
    (3, 128, None, 64)
    """

    def __init__(self, path):
        self.path = path
        self._identity = None
        self._model = None
        if not tf.io.gfile.isdir(path):
            version = os.path.dirname(os.fspath(path)) or "."
            if _export_version(version) == version:  # e.g. its model.keras, which lists as a checkpoint format
                raise DistillationError(f"--teacher={path}: a file of the export {version}; give the export's "
                                        f"directory, --teacher={version} (or {os.path.dirname(version) or '.'}): a "
                                        f"teacher export is read whole, its {KERAS_NAME} with the assets/vocab.txt and "
                                        "labels.json beside it")
            if os.fspath(path).endswith(".keras"):
                raise DistillationError(f"--teacher={path}: a .keras file alone is not a teacher (it lacks the "
                                        f"vocabulary and labels a distillation reads); {TEACHER_FORMS}")
        export = _export_version(path)
        if export:
            self._from_export(export)
        else:
            self._from_checkpoint(path)

    def _from_checkpoint(self, path):
        best = best_checkpoint(path) if tf.io.gfile.isdir(path) else None
        try:
            located = detect.locate(best[0] if best else path, TEACHER_FORMS)
            if located.config_file is None:
                raise DistillationError(f"--teacher={path}: no bert_config.json beside its checkpoint")
            if located.vocab_file is None:
                raise DistillationError(f"--teacher={path}: no vocab.txt beside its checkpoint")
            kinds.check(located, "BertClassifier", f"--teacher={path}")
            config = BertConfig.from_json_file(located.config_file)
            self.config = causal.resolve_causal_attention(config, None, located.config_file, [located.path])
            self.num_outputs = head_size(located, _HEAD)
        except DistillationError:
            raise
        except Error as e:
            raise DistillationError(f"--teacher={path}: {str(e).removeprefix(f'{path}: ')}") from None
        if self.num_outputs is None:
            raise DistillationError(f"--teacher={path}: its checkpoint has no classifier head (expected a "
                                    "run_classifier.py output directory, a fine-tuned classifier's checkpoint or "
                                    "its export)")
        self.vocab_file = located.vocab_file
        self.located = located
        weights = located.path + ".index" if located.format in _TF_FORMATS else located.path
        self._identity_files = [located.config_file, weights]
        self._checkpoint = located.path
        # labels.json of a run_classifier.py run on own files: beside the checkpoint, or in the run above best-<n>/.
        self.label_file = read_label_file(located.directory, path)

    def _from_export(self, version):
        """A SavedModel written by --export_dir: its model.keras, assets/vocab.txt and labels.json."""
        path, keras_file = self.path, os.path.join(version, KERAS_NAME)
        if not tf.io.gfile.exists(keras_file):
            raise DistillationError(f"--teacher={path}: the export {version} has no {KERAS_NAME} (the Keras model "
                                    "official_bert writes beside saved_model.pb); give the run's output directory or "
                                    "checkpoint instead")
        self.vocab_file = os.path.join(version, "assets", "vocab.txt")
        if not tf.io.gfile.exists(self.vocab_file):
            raise DistillationError(f"--teacher={path}: the export has no assets/vocab.txt (a WordPiece teacher is "
                                    "distilled; its student reads its vocabulary)")
        model = _load_keras(keras_file, path)
        if not isinstance(model, BertClassifier) or model.feature_layers:
            raise DistillationError(f"--teacher={path}: the export serves a {type(model).__name__}, not a fine-tuned "
                                    "BertClassifier (a classification, multi-label or regression model)")
        self._model, self.config, self.num_outputs = model, model.encoder.config, model.num_classes
        self.located = detect.Located("keras", keras_file, None, self.vocab_file)
        self._identity_files = [keras_file]
        self.label_file = read_label_file(version)

    @property
    def kind(self):
        """The teacher's task kind from its labels.json ("single_label", "multi_label", "regression"), or None."""
        return (self.label_file or {}).get("kind")

    @property
    def labels(self):
        """Its labels in output order, from labels.json, or None."""
        return (self.label_file or {}).get("labels")

    @property
    def identity(self):
        """A hex digest of the teacher's config and weights, by content (see the module's docstring)."""
        if self._identity is None:
            self._identity = _digest(self._identity_files)
        return self._identity

    def model(self):
        """The teacher's `BertClassifier`, float32, with its weights (built on first use)."""
        if self._model is None:
            self._model = BertClassifier(BertEncoder(self.config), self.num_outputs)
            load_checkpoint(self._model, self._checkpoint)
        return self._model

    def outputs(self, feature_file, batch_size, bucket_width=None):
        """The teacher's (logits, labels, is_real_example) on every record of `feature_file`, in order, computed
        once and cached beside it (see the module's docstring).

        Args:
            feature_file: a `classification.cache.FeatureFile`.
            batch_size: records per batch of the teacher.
            bucket_width: pad each batch to its longest sequence rounded up to this (None: to max_seq_length).
        """
        key = hashlib.sha256(json.dumps({"format": CACHE_FORMAT, "teacher": self.identity,
                                         "features": os.path.basename(feature_file.path)}).encode()).hexdigest()
        path = f"{feature_file.path.removesuffix('.tf_record')}.teacher-{key[:16]}.npz"
        if tf.io.gfile.exists(path):
            with tf.io.gfile.GFile(path, "rb") as f:
                saved = np.load(io.BytesIO(f.read()))
                logging.info("reusing the teacher's cached outputs: %s", path)
                return saved["logits"], saved["labels"], saved["real"]
        logits, labels, real = compute_outputs(self, feature_file, batch_size, bucket_width)
        buffer = io.BytesIO()
        np.savez(buffer, logits=logits, labels=labels, real=real)
        with atomic_path(path) as tmp, tf.io.gfile.GFile(tmp, "wb") as f:
            f.write(buffer.getvalue())
        logging.info("wrote the teacher's outputs on %d records: %s", len(logits), path)
        return logits, labels, real


def compute_outputs(teacher, feature_file, batch_size, bucket_width=None):
    """Runs the teacher over a feature file: (logits, labels, is_real_example), every record in order.

    Args:
        teacher: a `Teacher`.
        feature_file: a `classification.cache.FeatureFile`.
        batch_size: records per batch.
        bucket_width: see `Teacher.outputs`.
    """
    logging.info("the teacher labels %d records of %s", feature_file.num_records, feature_file.path)
    predictor = Predictor(teacher.model(), tf.distribute.get_strategy(), bucket_width)
    return predictor(feature_dataset(feature_file, batch_size, with_sample_weights=True))


def _export_version(path):
    """The SavedModel version `path` names (a version directory, or the newest of an export directory), or None."""
    if not tf.io.gfile.isdir(path):
        return None
    try:
        return saved_model_version(path)
    except Error:
        return None


def _load_keras(keras_file, teacher):
    try:
        with tempfile.TemporaryDirectory() as local:  # Keras reads a local file; the export may be on gs://
            copy = os.path.join(local, KERAS_NAME)
            tf.io.gfile.copy(keras_file, copy)
            return keras.saving.load_model(copy, compile=False)
    except (ValueError, OSError, TypeError, tf.errors.OpError) as e:
        raise DistillationError(f"--teacher={teacher}: cannot load {keras_file} ({str(e).strip().splitlines()[0]})"
                                ) from None


def _digest(paths):
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{os.path.basename(path)}\n".encode())
        hash_file(path, digest)
    return digest.hexdigest()
