"""Which checkpoint a path holds, and the config and vocabulary that came with it."""

import dataclasses
import os
import re

import tensorflow as tf

from official_bert.checkpoints import google, huggingface, native
from official_bert.checkpoints.source import CheckpointError
from official_bert.io import files, is_file

_BUNDLE_FILE = re.compile(r"\.(index|data-\d{5}-of-\d{5})$")
_VOCAB_NAME = "vocab.txt"
_READERS = {"google": google.read, "huggingface": huggingface.read, "official_bert": native.read,
            "keras": native.read_keras}
_EXPECTED = ("expected a directory holding model.safetensors or a TF checkpoint, a TF checkpoint prefix "
             "(with its .index file), a .safetensors file or a .keras file")


@dataclasses.dataclass(frozen=True)
class Located:
    """A checkpoint found on disk.

    Args:
        format: "google" (TF1 names), "official_bert" (a tf.train.Checkpoint of our model), "huggingface"
            (safetensors) or "keras" (a .keras model file).
        path: what to open: a TF checkpoint prefix or a file.
        config_file: the bert_config.json / config.json beside it, or None.
        vocab_file: the vocab.txt beside it, or None.
    """

    format: str
    path: str
    config_file: str = None
    vocab_file: str = None

    @property
    def directory(self):
        return os.path.dirname(self.path) or "."


def locate(path, expected=_EXPECTED):
    """Finds the checkpoint at `path`: a directory (Google's release, a training run's, a Hugging Face
    model's), a TF checkpoint prefix or one of its files, a `.safetensors` or a `.keras` file.

    Args:
        path: the path given.
        expected: what a message says was expected there (a caller that takes fewer forms names its own).

    Example:
    >>> import os, tempfile
    >>> work = tempfile.TemporaryDirectory()
    >>> directory = work.name
    >>> _ = open(os.path.join(directory, "model.safetensors"), "wb")
    >>> _ = open(os.path.join(directory, "config.json"), "w")
    >>> found = locate(directory)
    >>> found.format, os.path.basename(found.path), os.path.basename(found.config_file), found.vocab_file
    ('huggingface', 'model.safetensors', 'config.json', None)
    """
    path = os.fspath(path)
    # A checkpoint prefix first: some filesystems (ram://) call any prefix of a file's name a directory.
    if is_file(_BUNDLE_FILE.sub("", path) + ".index"):
        target = _BUNDLE_FILE.sub("", path)
        fmt = _tf_format(target)
    elif tf.io.gfile.isdir(path):
        fmt, target = _inside(path, expected)
    elif path.endswith(".safetensors") and is_file(path):
        fmt, target = "huggingface", path
    elif path.endswith(".keras") and is_file(path):
        fmt, target = "keras", path
    elif is_file(path):
        raise CheckpointError(_unsupported(path, expected))
    else:
        raise CheckpointError(f"{path}: no checkpoint there; {expected}")
    directory = os.path.dirname(target) or "."
    config_names = ((huggingface.CONFIG_NAME, google.CONFIG_NAME) if fmt == "huggingface"
                    else (google.CONFIG_NAME, huggingface.CONFIG_NAME))
    return Located(fmt, target, _first_file(directory, config_names), _first_file(directory, (_VOCAB_NAME,)))


def open_source(located):
    """Opens a located checkpoint with the reader for its format (a `Source` of Google-named tensors)."""
    return _READERS[located.format](located.path)


def _inside(directory, expected):
    if is_file(os.path.join(directory, huggingface.WEIGHTS_NAME)):
        return "huggingface", os.path.join(directory, huggingface.WEIGHTS_NAME)
    latest = tf.train.latest_checkpoint(directory)  # a training run's `checkpoint` state file
    if latest:
        return _tf_format(latest), latest
    for name in (google.CHECKPOINT_NAME, native.CHECKPOINT_NAME):
        prefix = os.path.join(directory, name)
        if is_file(prefix + ".index"):
            return _tf_format(prefix), prefix
    indexes = files.glob("*.index", directory)  # hidden names (a killed write's) left out
    if len(indexes) == 1:
        prefix = indexes[0][:-len(".index")]
        return _tf_format(prefix), prefix
    weights = files.glob("*.safetensors", directory)
    if len(weights) == 1:
        return "huggingface", weights[0]
    others = [os.path.join(directory, n) for n in ("pytorch_model.bin", "tf_model.h5") if
              is_file(os.path.join(directory, n))]
    if others:
        raise CheckpointError(_unsupported(others[0], expected))
    found = ", ".join(sorted(tf.io.gfile.listdir(directory))[:12]) or "nothing"
    many = " (several: pass the one to load)" if len(indexes) > 1 or len(weights) > 1 else ""
    raise CheckpointError(f"{directory}: no checkpoint found{many}; {expected}. It holds: {found}")


def _tf_format(prefix):
    reader = google.open_reader(prefix)
    return "official_bert" if reader.has_tensor(native.OBJECT_GRAPH_KEY) else "google"


def _unsupported(path, expected):
    if path.endswith(".bin"):
        return (f"{path}: PyTorch pickle weights are not read (that would need torch); save them as "
                "safetensors first (transformers: model.save_pretrained(dir, safe_serialization=True))")
    if path.endswith(".h5"):
        return (f"{path}: a Keras/TF .h5 weights file holds no variable names to match; load it with "
                "model.load_weights into the same architecture, or use a .keras file or save_checkpoint")
    return f"{path}: not a checkpoint file this library reads; {expected}"


def _first_file(directory, candidates):
    for name in candidates:
        if is_file(os.path.join(directory, name)):
            return os.path.join(directory, name)
    return None
