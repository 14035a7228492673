"""Fingerprints of what a run reads, by content: a file, the files of globs, a directory, a model.

What resumes or reuses earlier work (a training run's directory, a feature cache, a teacher's cached outputs,
bert-predict's partial output) compares these, so that an input rewritten at the same path, or a model replaced by
another at the same place, is noticed — and comparing the fingerprint taken before reading a file with one taken
after catches a file changed while it was read.

- A file's fingerprint is the SHA-256 of its bytes. Above `SAMPLED_ABOVE` bytes (a corpus of pretraining records)
  it is the size and the hash of `SAMPLES` blocks spread over the file, so that a start does not read hundreds of
  GB twice: a change that keeps the size and falls between the blocks goes unnoticed there.
- A TensorFlow checkpoint's data shards count by their size: the `.index` beside them holds a CRC32C of every
  tensor, and is hashed whole.
- A model (a checkpoint, a run, an export or a Hugging Face directory) is the files that make the model: weights,
  configs, vocabularies, label files; not its evaluation results, logs, caches or a run's own bookkeeping, which
  change without the model changing.
"""

import fnmatch
import hashlib
import os

from official_bert.io import files

SAMPLED_ABOVE = 1 << 30
SAMPLES, BLOCK = 64, 1 << 20
# The files and folders of a model directory that make the model (see the module's docstring).
_MODEL_FILES = ("checkpoint", "*.index", "*.data-*", "*.json", "vocab.txt", "*.model", "*.safetensors", "*.bin",
                "*.keras", "saved_model.pb", "merges.txt", "*.h5")
_NOT_MODEL = ("eval_results*", "test_results*", "predictions*", "nbest_predictions*", "null_odds*", "run.json",
              "*.partial*")
_MODEL_FOLDERS = ("best-*", "variables", "assets", "[0-9]*")


def file_fingerprint(path):
    """The SHA-256 of a file's bytes as hex (sampled above `SAMPLED_ABOVE` bytes; see the module's docstring).

    Args:
        path: a file, local or on any tf.io.gfile filesystem.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "w").write("hello")
    >>> file_fingerprint(path) == hashlib.sha256(b"hello").hexdigest()
    True
    """
    digest = hashlib.sha256()
    with files.open_file(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(0)
        if size <= SAMPLED_ABOVE:
            for chunk in iter(lambda: f.read(BLOCK), b""):
                digest.update(chunk)
            return digest.hexdigest()
        digest.update(f"sampled {size}".encode())
        for i in range(SAMPLES):
            f.seek((size - BLOCK) * i // (SAMPLES - 1))
            digest.update(f.read(BLOCK))
    return digest.hexdigest()


def fingerprint(path, kind="file"):
    """A hex digest of what `path` holds, or None where nothing is there.

    Args:
        path: the path as the user gave it.
        kind: "file"; "files" (a glob or comma-separated globs: every file they match, by name and content);
            "directory" (every file below it, by relative name and content, hidden ones aside); "model" (a
            checkpoint prefix or file, or a run, export or model directory: the files that make the model).

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> for name, text in (("a.txt", "one"), ("b.txt", "two")):
    ...     _ = open(os.path.join(work, name), "w").write(text)
    >>> before = fingerprint(os.path.join(work, "*.txt"), "files")
    >>> _ = open(os.path.join(work, "b.txt"), "w").write("TWO")
    >>> before == fingerprint(os.path.join(work, "*.txt"), "files")
    False
    >>> fingerprint(os.path.join(work, "missing.txt")) is None
    True
    """
    path = os.fspath(path)
    if kind == "files":
        parts = [(p, file_fingerprint(p)) for pattern in path.split(",") if pattern.strip()
                 for p in files.glob(pattern.strip()) if not files.isdir(p)]
        return _combine(parts) if parts else None
    if not files.exists(path):
        if kind == "model" and files.exists(path + ".index"):  # a checkpoint prefix
            directory, prefix = os.path.split(path)
            return _combine(_model_parts(directory or ".", prefix + "*"))
        return None
    if not files.isdir(path):
        return file_fingerprint(path)
    if kind == "directory":
        return _combine([(name, file_fingerprint(os.path.join(path, name))) for name in _files_below(path)])
    return _combine(_model_parts(path))


def is_model_file(name):
    """Whether a file of this name, in a model's directory, is part of the model (a checkpoint's shard or index,
    its config, vocabulary, weights or SavedModel) rather than a run's report or a user's file.

    Example:
    >>> is_model_file("model.ckpt-9.index"), is_model_file("vocab.txt"), is_model_file("eval_results.json")
    (True, True, False)
    """
    return (any(fnmatch.fnmatchcase(name, p) for p in _MODEL_FILES)
            and not any(fnmatch.fnmatchcase(name, p) for p in _NOT_MODEL))


def _combine(parts):
    digest = hashlib.sha256()
    for name, value in parts:
        digest.update(f"{name}\t{value}\n".encode())
    return digest.hexdigest()


def _files_below(directory, prefix=""):
    found = []
    for name in sorted(files.listdir(directory)):
        name = name.rstrip("/")
        if name.startswith("."):
            continue
        path = os.path.join(directory, name)
        if files.isdir(path):
            found += _files_below(path, os.path.join(prefix, name))
        else:
            found.append(os.path.join(prefix, name))
    return found


def _model_parts(directory, pattern="*", prefix=""):
    """(relative name, fingerprint) of the files that make the model in `directory` (names matching `pattern`)."""
    parts = []
    for name in sorted(files.listdir(directory)):
        name = name.rstrip("/")
        path = os.path.join(directory, name)
        if name.startswith(".") or not fnmatch.fnmatchcase(name, pattern):
            continue
        if files.isdir(path):
            if any(fnmatch.fnmatchcase(name, folder) for folder in _MODEL_FOLDERS):
                parts += _model_parts(path, prefix=os.path.join(prefix, name))
        elif is_model_file(name):
            if ".data-" in name:
                with files.open_file(path, "rb") as f:
                    f.seek(0, os.SEEK_END)
                    value = f"{f.tell()} bytes"
            else:
                value = file_fingerprint(path)
            parts.append((os.path.join(prefix, name), value))
    return parts
