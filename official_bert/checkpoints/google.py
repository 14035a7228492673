"""Google's original TF1 checkpoints (`bert_model.ckpt.*` + `bert_config.json`), read and written by name."""

import os
import re

import tensorflow as tf
from absl import logging

from official_bert.checkpoints import names
from official_bert.checkpoints.source import GOOGLE_CAUSAL_MARKER, CheckpointError, Source, Tensor
from official_bert.io import atomic_bundle, is_file

CHECKPOINT_NAME = "bert_model.ckpt"
CONFIG_NAME = "bert_config.json"

# What TensorFlow's checkpoint reader raises on a damaged file (IndexError: a data file cut short).
_READ_ERRORS = (tf.errors.OpError, ValueError, IndexError, RuntimeError)

# Training state that TF1 BERT trainers store beside the weights: the original's AdamWeightDecay slots
# (adam_m/adam_v), tf.train optimizers' slots, NVIDIA's LAMB slots and loss-scaling counters.
_TRAINING_STATE = re.compile(
    r"(^|/)(global_step|beta[12]_power|loss_scale|good_steps|current_loss_scale)$"
    r"|/(adam_[mv]|Adam(_1)?|LAMB(_1)?|Momentum)$")


def open_reader(prefix):
    """`tf.train.load_checkpoint` with TensorFlow's errors turned into a `CheckpointError` naming the file."""
    try:
        if is_file(prefix + ".index"):
            # Read the bundle itself: load_checkpoint would take the prefix for a directory on filesystems (ram://)
            # that call any prefix of a file's name one.
            return tf.compat.v1.train.NewCheckpointReader(prefix)
        return tf.train.load_checkpoint(prefix)
    except _READ_ERRORS as e:
        raise CheckpointError(f"{prefix}: cannot open TF checkpoint ({_first_line(e)}); the .index or "
                              ".data file may be truncated or not a checkpoint") from None


def read_tensor(reader, prefix, key):
    """One tensor from an open reader, with read failures (e.g. a truncated data file) named.

    Args:
        reader: from `open_reader(prefix)`.
        prefix: the checkpoint prefix, for messages.
        key: the tensor's name in the checkpoint.
    """
    try:
        return reader.get_tensor(key)
    except _READ_ERRORS as e:
        raise CheckpointError(f"{prefix}: cannot read variable {key!r} ({_first_line(e)}); the .data file "
                              "may be truncated") from None


def read(prefix):
    """Opens a TF1 checkpoint written under the original variable names as a `Source`.

    Args:
        prefix: the checkpoint prefix, e.g. ".../uncased_L-12_H-768_A-12/bert_model.ckpt".
    """
    reader = open_reader(prefix)
    source = Source(format="google", path=prefix, tensors={})
    for name, shape in sorted(reader.get_variable_to_shape_map().items()):
        if name == GOOGLE_CAUSAL_MARKER:
            source.causal_attention = bool(read_tensor(reader, prefix, name)) or None
        elif _TRAINING_STATE.search(name):
            source.skipped.append(name)
        else:
            source.tensors[name] = Tensor(name, tuple(shape), False,
                                          lambda name=name: read_tensor(reader, prefix, name))
    return source


def write(model, config, directory):
    """Writes `model` as a TF1 checkpoint `directory/bert_model.ckpt` + `bert_config.json`.

    The variables carry exactly the original names (`names.py`), so `tf.train.load_checkpoint` and the original
    google-research/bert code read them.

    The original modeling.py computes only tanh GELU and rejects any other `hidden_act` it does not know: a model
    with exact erf GELU (every Hugging Face BERT) is written with `"hidden_act": "gelu_erf"`, which this project
    reads back exactly but the original code refuses; a warning says so.

    A left-to-right model's checkpoint also holds the scalar `GOOGLE_CAUSAL_MARKER`, which the original code ignores
    (it loads the names its graph has).

    Args:
        model: a BertEncoder, BertPretrainer or task model.
        config: its `BertConfig`, written as `bert_config.json`.
        directory: created if needed.

    Returns:
        the checkpoint prefix.
    """
    if config.hidden_act == "gelu_erf":
        logging.warning("%s: the model computes exact (erf) GELU, which the original google-research/bert code "
                        "cannot: its modeling.py knows only tanh GELU and rejects hidden_act \"gelu_erf\" in "
                        "bert_config.json. official_bert reads the checkpoint exactly; with the original code, "
                        "setting \"gelu\" there loads it but computes slightly different outputs.", directory)
    tensors = {name: tf.constant(a, dtype=tf.float32) for name, a in names.model_to_google(model).items()}
    if config.causal_attention:
        tensors[GOOGLE_CAUSAL_MARKER] = tf.constant(True)
    tf.io.gfile.makedirs(directory)
    prefix = os.path.join(directory, CHECKPOINT_NAME)
    with atomic_bundle(prefix) as tmp:
        # SaveV2 writes a V2 bundle under plain names, with no object graph: what TF1's Saver writes.
        tf.raw_ops.SaveV2(prefix=tmp, tensor_names=list(tensors), shape_and_slices=[""] * len(tensors),
                          tensors=list(tensors.values()))
    config.to_json_file(os.path.join(directory, CONFIG_NAME))
    return prefix


def _first_line(error):
    text = getattr(error, "message", None) or str(error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__
