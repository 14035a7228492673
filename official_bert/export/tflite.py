"""LiteRT (TensorFlow Lite) files from an exported SavedModel, for phones and embedded devices.

`export_tflite` converts a SavedModel version written by `export_saved_model`:

- `model.tflite`, from `serve_tensors`: int32 input_word_ids, input_mask, input_type_ids [batch, seq_length] →
  the same outputs (for a classifier logits, probabilities and the label string), with LiteRT's builtin ops only,
  so the stock runtime (Android, iOS, microcontrollers, `ai-edge-litert`) runs it; the app tokenizes with the
  SavedModel's vocabulary, which is copied beside it;
- `text_model.tflite`, from `serving_default` (raw text in, the tokenizer in the graph), with TensorFlow ops the
  builtins lack carried as Select TF ops (which need the Flex delegate at run time), where the converter can
  convert every op the tokenizer uses; where it cannot, the file is not written and `TfliteExport.text_problem`
  names the op that blocks it.

Quantization (`QUANTIZATIONS`): "none" (float32), "dynamic_int8" (weights stored as int8, about a quarter of the
size; activations stay float) or "float16" (weights stored as float16, half the size).
"""

import dataclasses
import os
import re

import tensorflow as tf

from official_bert.errors import Error
from official_bert.export.versions import versions
from official_bert.io.atomic import atomic_directory, copy_atomically

QUANTIZATIONS = ("none", "dynamic_int8", "float16")
MODEL_FILE = "model.tflite"
TEXT_MODEL_FILE = "text_model.tflite"
TENSOR_SIGNATURE = "serve_tensors"
TEXT_SIGNATURE = "serving_default"


class LiteRtExportError(Error):
    """A SavedModel that cannot be converted, or a bad quantization; the message names the path or the flag."""


@dataclasses.dataclass(frozen=True)
class TfliteExport:
    """What `export_tflite` wrote.

    Args:
        model_path: model.tflite (token ids in).
        text_model_path: text_model.tflite (raw text in), or None where the converter could not write it ...
        text_problem: ... and then why, naming the blocking ops.
        assets: the SavedModel's assets copied beside them (the vocabulary an app tokenizes with).
    """

    model_path: str
    text_model_path: str = None
    text_problem: str = None
    assets: tuple = ()


def saved_model_version(directory):
    """The SavedModel at `directory`, or the newest numbered version in it (an export directory).

    Args:
        directory: a SavedModel directory or an export directory of versions, local or on any gfile filesystem.

    Example:
    >>> import tempfile
    >>> export_dir = tempfile.mkdtemp()
    >>> for version in ("1", "2"):
    ...     os.makedirs(os.path.join(export_dir, version))
    ...     _ = open(os.path.join(export_dir, version, "saved_model.pb"), "w").write("")
    >>> os.path.basename(saved_model_version(export_dir))
    '2'
    """
    directory = os.fspath(directory).rstrip("/")
    if tf.io.gfile.exists(os.path.join(directory, "saved_model.pb")):
        return directory
    numbered = [v for v in versions(directory) if tf.io.gfile.exists(os.path.join(directory, str(v), "saved_model.pb"))]
    if not numbered:
        raise LiteRtExportError(f"{directory}: no saved_model.pb in it, nor in a numbered version directory")
    return os.path.join(directory, str(numbered[-1]))


def convert_signature(saved_model_dir, signature, quantization="none", select_tf_ops=False):
    """One signature of a SavedModel as a LiteRT flatbuffer (bytes).

    Args:
        saved_model_dir: the SavedModel (a version directory).
        signature: the signature's name.
        quantization: one of `QUANTIZATIONS`.
        select_tf_ops: allow TensorFlow ops that have no builtin (the Flex delegate runs them); False converts
            with builtin ops only and fails on any other.

    Raises `LiteRtExportError` naming the ops the converter cannot convert.

    Example:
    >>> import tempfile
    >>> module = tf.Module()
    >>> module.f = tf.function(lambda x: {"y": 2.0 * x}, input_signature=[tf.TensorSpec([None], tf.float32)])
    >>> path = tempfile.mkdtemp()
    >>> tf.saved_model.save(module, path, signatures={"double": module.f.get_concrete_function()})
    >>> flatbuffer = convert_signature(path, "double", "float16")
    >>> flatbuffer[4:8]  # LiteRT's file identifier
    b'TFL3'
    """
    if quantization not in QUANTIZATIONS:
        raise LiteRtExportError(f"--tflite_quantization={quantization}: expected one of {', '.join(QUANTIZATIONS)}")
    converter = tf.lite.TFLiteConverter.from_saved_model(saved_model_dir, signature_keys=[signature])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS] + (
        [tf.lite.OpsSet.SELECT_TF_OPS] if select_tf_ops else [])
    if quantization != "none":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if quantization == "float16":
        converter.target_spec.supported_types = [tf.float16]
    try:
        return converter.convert()
    except Exception as e:  # the converter raises ConverterError, or plain Exceptions from its MLIR passes
        raise LiteRtExportError(f"{saved_model_dir}: the LiteRT converter cannot convert {signature} "
                                f"({_blocking_ops(str(e))})") from None


def _blocking_ops(message):
    """The ops a converter error names ("Custom ops: LowerBound", "'tf.X' op is neither a custom op nor a flex
    op"), or its last line."""
    names = set(re.findall(r"'tf\.(\w+)' op is neither a custom op nor a flex op", message))
    for listed in re.findall(r"(?:Custom|Flex) ops: ([\w, ]+)", message):
        names.update(name.strip() for name in listed.split(",") if name.strip())
    if names:
        return ("ops without a LiteRT builtin or Select TF kernel: " if "neither" in message or "Custom ops" in message
                else "ops that need Select TF ops: ") + ", ".join(f"tf.{name}" for name in sorted(names))
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[-1] if lines else "no reason given"


def export_tflite(saved_model_version_dir, output_dir, quantization="none", text_model=True):
    """Writes model.tflite (and text_model.tflite where the converter can) of a SavedModel to output_dir.

    The directory is written whole under a temporary name and renamed into place (a previous one is replaced),
    with the SavedModel's assets (vocab.txt) beside the models.

    Args:
        saved_model_version_dir: a SavedModel of `export_saved_model`, or its export directory (its newest
            version is converted).
        output_dir: where to write them (local or any gfile filesystem).
        quantization: one of `QUANTIZATIONS`.
        text_model: also try text_model.tflite.

    Returns a `TfliteExport`. Raises `LiteRtExportError` when model.tflite cannot be converted.

    Example:
    >>> import tempfile, keras
    >>> from official_bert.export.saved_model import ServingSpec, export_saved_model
    >>> from official_bert.models.task_model import ENCODER_INPUTS
    >>> inputs = {name: keras.Input((4,), dtype="int32", name=name) for name in ENCODER_INPUTS}
    >>> total = keras.layers.Add()([keras.ops.cast(x, "float32") for x in inputs.values()])
    >>> model = keras.Model(inputs, keras.layers.Dense(2)(total))
    >>> def pack(text):
    ...     ids = tf.strings.unicode_decode(text, "UTF-8").to_tensor(shape=[None, 4])
    ...     return {"input_word_ids": ids, "input_mask": tf.sign(ids), "input_type_ids": tf.zeros_like(ids)}
    >>> spec = ServingSpec({"text": tf.TensorSpec([None], tf.string)}, lambda call, text: {"logits": call(pack(text))},
    ...                    lambda logits: {"logits": logits}, input_shape=(4,))
    >>> work = tempfile.mkdtemp()
    >>> export_saved_model(os.path.join(work, "export"), model, spec) and None
    >>> written = export_tflite(os.path.join(work, "export"), os.path.join(work, "lite"), "dynamic_int8")
    >>> sorted(os.listdir(os.path.join(work, "lite"))), written.text_problem
    (['model.tflite', 'text_model.tflite'], None)
    """
    source = saved_model_version(saved_model_version_dir)
    if quantization not in QUANTIZATIONS:
        raise LiteRtExportError(f"--tflite_quantization={quantization}: expected one of {', '.join(QUANTIZATIONS)}")
    model = convert_signature(source, TENSOR_SIGNATURE, quantization)
    text, problem = None, None
    if text_model:
        try:
            text = convert_signature(source, TEXT_SIGNATURE, quantization, select_tf_ops=True)
        except LiteRtExportError as e:
            problem = str(e)
    output_dir = os.fspath(output_dir).rstrip("/")
    assets_dir = os.path.join(source, "assets")
    assets = sorted(tf.io.gfile.listdir(assets_dir)) if tf.io.gfile.isdir(assets_dir) else []
    with atomic_directory(output_dir) as tmp:
        _write_bytes(os.path.join(tmp, MODEL_FILE), model)
        if text is not None:
            _write_bytes(os.path.join(tmp, TEXT_MODEL_FILE), text)
        for name in assets:
            copy_atomically(os.path.join(assets_dir, name), os.path.join(tmp, name))
    return TfliteExport(os.path.join(output_dir, MODEL_FILE),
                        None if text is None else os.path.join(output_dir, TEXT_MODEL_FILE), problem,
                        tuple(os.path.join(output_dir, name) for name in assets))


def _write_bytes(path, data):
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)
