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

LiteRT's builtin kernels are float32 (its own quantization aside), so a SavedModel that computes in bfloat16
(`--export_precision=bf16`: bfloat16 weights and computation, float32 signatures) is converted from its float32
twin — the same graph and weights with every bfloat16 made float32 (`float32_saved_model`) — which is the float32
model `--export_tflite_dir` converts beside a bf16 export.
"""

import dataclasses
import os
import re
import tempfile

import numpy as np
import tensorflow as tf

from official_bert.errors import Error
from official_bert.export.versions import versions
from official_bert.io.atomic import atomic_directory, check_replaceable, copy_atomically
from official_bert.io.paths import files_under

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
        text_model_path: text_model.tflite (raw text in), or None where the converter could not write it.
        text_problem: None, or why text_model.tflite was not written, naming the blocking ops.
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
        quantization: "none" (float32), "dynamic_int8" (weights stored as int8, about a quarter of the size;
            activations stay float) or "float16" (weights stored as float16, half the size).
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

    The directory is written whole under a temporary name and renamed into place, with the SavedModel's assets
    (vocab.txt) beside the models. An earlier output of this function there is replaced; anything else there —
    a user's files in the directory, a regular file at its path — is refused before the conversion and left as it
    is. A SavedModel that computes in bfloat16 is converted from its float32 twin (the same graph and weights with
    every bfloat16 made float32).

    Args:
        saved_model_version_dir: a SavedModel of `export_saved_model`, or its export directory (its newest
            version is converted).
        output_dir: where to write them (local or any gfile filesystem): new, empty, or an earlier output of
            this function.
        quantization: "none" (float32), "dynamic_int8" (weights stored as int8, about a quarter of the size;
            activations stay float) or "float16" (weights stored as float16, half the size).
        text_model: also try text_model.tflite.

    Returns a `TfliteExport`. Raises `LiteRtExportError` when model.tflite cannot be converted, `OutputError`
    when output_dir holds something else.

    Example:
    >>> import os
    >>> import tempfile
    >>> import tensorflow as tf
    >>> import keras
    >>> from official_bert.export.tflite import export_tflite
    >>> from official_bert.export.saved_model import ServingSpec, export_saved_model
    >>> inputs = {name: keras.Input((4,), dtype="int32", name=name) for name in
    ...           ("input_word_ids", "input_mask", "input_type_ids")}
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
    (['.official_bert.written', 'model.tflite', 'text_model.tflite'], None)
    """
    source = saved_model_version(saved_model_version_dir)
    if quantization not in QUANTIZATIONS:
        raise LiteRtExportError(f"--tflite_quantization={quantization}: expected one of {', '.join(QUANTIZATIONS)}")
    output_dir = os.fspath(output_dir).rstrip("/")
    check_replaceable(output_dir)  # before the conversion, which may take minutes
    with tempfile.TemporaryDirectory(prefix="official_bert_") as scratch:
        converted = float32_saved_model(source, os.path.join(scratch, "float32")) or source
        model = convert_signature(converted, TENSOR_SIGNATURE, quantization)
        text, problem = None, None
        if text_model:
            try:
                text = convert_signature(converted, TEXT_SIGNATURE, quantization, select_tf_ops=True)
            except LiteRtExportError as e:
                problem = str(e).replace(converted, source)
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


def float32_saved_model(saved_model_dir, output_dir):
    """Writes the float32 twin of a SavedModel that computes in bfloat16 to `output_dir` and returns its path;
    returns None (writing nothing) for one without bfloat16.

    The twin is the same graph with every bfloat16 type, cast, constant and weight made float32 (a bfloat16 weight
    widened exactly): it computes in float32 what the SavedModel computes in bfloat16, with the SavedModel's weights
    (a `--export_precision=bf16` export stores them rounded to bfloat16).

    Args:
        saved_model_dir: a SavedModel directory (local or any gfile filesystem).
        output_dir: a new local directory for the twin.

    Example:
    >>> module = tf.Module()
    >>> module.w = tf.Variable([2.0, 3.0])
    >>> module.f = tf.function(lambda x: {"y": tf.cast(tf.cast(module.w, tf.bfloat16) * tf.cast(x, tf.bfloat16),
    ...                                                 tf.float32)}, input_signature=[tf.TensorSpec([2], tf.float32)])
    >>> work = tempfile.mkdtemp()
    >>> tf.saved_model.save(module, work + "/bf16", signatures={"serve": module.f.get_concrete_function()})
    >>> twin = float32_saved_model(work + "/bf16", work + "/fp32")
    >>> tf.saved_model.load(twin).signatures["serve"](tf.constant([1.001, 1.0]))["y"].numpy()
    array([2.002, 3.   ], dtype=float32)
    >>> float32_saved_model(twin, work + "/again") is None
    True
    >>> module.v = tf.Variable(tf.constant([1.5, 2.0], tf.bfloat16))  # weights stored as bfloat16
    >>> module.g = tf.function(lambda x: {"y": tf.cast(module.v * tf.cast(x, tf.bfloat16), tf.float32)},
    ...                        input_signature=[tf.TensorSpec([2], tf.float32)])
    >>> tf.saved_model.save(module, work + "/bf16_weights", signatures={"serve": module.g.get_concrete_function()})
    >>> twin = float32_saved_model(work + "/bf16_weights", work + "/fp32_weights")
    >>> [round(float(y), 6) for y in tf.saved_model.load(twin).signatures["serve"](tf.constant([1.001, 1.0]))["y"]]
    [1.5015, 2.0]
    """
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(os.path.join(saved_model_dir, "saved_model.pb"), "rb") as f:
        saved_model.ParseFromString(f.read())
    if not _to_float32(saved_model):
        return None
    os.makedirs(output_dir, exist_ok=True)
    # fingerprint.pb hashes the original graph: the twin's has no fingerprint rather than a wrong one.
    for file in files_under(saved_model_dir):
        if file not in ("saved_model.pb", "fingerprint.pb") and not file.startswith("variables/"):
            os.makedirs(os.path.join(output_dir, os.path.dirname(file)), exist_ok=True)
            tf.io.gfile.copy(os.path.join(saved_model_dir, file), os.path.join(output_dir, file))
    os.makedirs(os.path.join(output_dir, "variables"), exist_ok=True)
    _float32_variables(os.path.join(saved_model_dir, "variables", "variables"),
                       os.path.join(output_dir, "variables", "variables"))
    with open(os.path.join(output_dir, "saved_model.pb"), "wb") as f:
        f.write(saved_model.SerializeToString())
    return output_dir


def _float32_variables(prefix, output_prefix):
    """Copies the checkpoint at `prefix` to `output_prefix` under the same keys, bfloat16 values widened to float32
    (exactly: every bfloat16 is a float32)."""
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    keys = sorted(dtypes)
    values = [tf.cast(tf.constant(reader.get_tensor(key), dtypes[key]), tf.float32) if dtypes[key] == tf.bfloat16
              else tf.constant(reader.get_tensor(key)) for key in keys]
    tf.raw_ops.SaveV2(prefix=output_prefix, tensor_names=keys, shape_and_slices=[""] * len(keys), tensors=values)


def _to_float32(message):
    """Makes every bfloat16 in a protobuf message float32, in place: DataType fields (a node's T, a Cast's DstT,
    a function's argument types, a TensorSpec's dtype) and bfloat16 TensorProtos (constants). Returns whether
    anything changed."""
    if message.DESCRIPTOR.full_name == "tensorflow.TensorProto" and message.dtype == tf.bfloat16.as_datatype_enum:
        message.CopyFrom(tf.make_tensor_proto(tf.make_ndarray(message).astype(np.float32)))
        return True
    changed = False
    for field, value in message.ListFields():
        if field.enum_type is not None and field.enum_type.full_name == "tensorflow.DataType":
            if field.is_repeated:
                for i, dtype in enumerate(value):
                    if dtype == tf.bfloat16.as_datatype_enum:
                        value[i], changed = tf.float32.as_datatype_enum, True
            elif value == tf.bfloat16.as_datatype_enum:
                setattr(message, field.name, tf.float32.as_datatype_enum)
                changed = True
        elif field.message_type is not None:
            if field.message_type.GetOptions().map_entry:
                children = value.values() if field.message_type.fields_by_name["value"].message_type else ()
            else:
                children = value if field.is_repeated else (value,)
            for child in children:
                changed = _to_float32(child) or changed
    if changed and message.DESCRIPTOR.full_name == "tensorflow.FunctionDef":
        _identity_casts(message)
    return changed


def _identity_casts(function):
    """Rewrites a function's Casts from a type to itself (float32 to float32, once bfloat16 is float32) as the
    Identity ops they are: left as Casts, Grappler makes them Identities that keep the Cast's Truncate attribute
    and log it as unknown. A function's nodes name a Cast's output `y`, an Identity's `output`."""
    renamed = set()
    for node in function.node_def:
        if node.op == "Cast" and node.attr["SrcT"].type == node.attr["DstT"].type:
            node.op = "Identity"
            node.attr["T"].type = node.attr["SrcT"].type
            for name in ("SrcT", "DstT", "Truncate"):
                node.attr.pop(name, None)
            renamed.add(node.name)

    def rename(reference):
        node, _, rest = reference.partition(":")
        return f"{node}:output:{rest[2:]}" if node in renamed and rest.startswith("y:") else reference

    for node in function.node_def:
        node.input[:] = [rename(reference) for reference in node.input]
    for key in list(function.ret):
        function.ret[key] = rename(function.ret[key])


def _write_bytes(path, data):
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)
