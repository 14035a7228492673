"""Our own checkpoints: a `tf.train.Checkpoint` that holds the model under the name "model".

That is what training writes (`tf.train.CheckpointManager` over `tf.train.Checkpoint(model=...,
optimizer=...)`, files `ckpt-N.index`/`.data-*` beside a `checkpoint` state file) and what
`save_checkpoint(..., format="official_bert")` writes (`model.ckpt.*` + `bert_config.json`). Variables are
matched by their Keras paths (`transformer_layer_0/attention/qkv_kernel`, `next_sentence/kernel`, ...),
which the object graph records, not by object-graph position: so a pretraining checkpoint loads into a
classifier, and the optimizer's state is skipped. A `.keras` model file is read the same way.
"""

import os

import keras
import tensorflow as tf
from google.protobuf import message
from tensorflow.core.protobuf import trackable_object_graph_pb2

from official_bert.checkpoints import google, names
from official_bert.checkpoints.source import CAUSAL_MARKER, NATIVE_CAUSAL_MARKER, CheckpointError, Source, Tensor
from official_bert.io import atomic_bundle

CHECKPOINT_NAME = "model.ckpt"
CONFIG_NAME = "bert_config.json"
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
MODEL_KEY = "model"
_OPTIMIZER_EDGES = ("optimizer", "_optimizer")


def read(prefix):
    """Opens a `tf.train.Checkpoint(model=...)` prefix as a `Source`."""
    reader = google.open_reader(prefix)
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    try:
        graph.ParseFromString(google.read_tensor(reader, prefix, OBJECT_GRAPH_KEY))
    except message.DecodeError as e:
        raise CheckpointError(f"{prefix}: the checkpoint's object graph is damaged ({e})") from None
    roots = {child.local_name: child.node_id for child in graph.nodes[0].children}
    if MODEL_KEY not in roots:
        raise CheckpointError(f"{prefix}: an object-based TF checkpoint with no {MODEL_KEY!r} in it (it holds "
                              f"{sorted(roots)}); expected one written by tf.train.Checkpoint(model=...)")
    # A model variable may be stored under the optimizer's key (the first path to it wins), so walk the
    # model's subtree and take each variable's key from the graph. A compiled model links its optimizer:
    # that edge (and the checkpoint's other roots) lead to training state, not weights.
    keys, stack, seen = {}, [roots[MODEL_KEY]], {i for name, i in roots.items() if name != MODEL_KEY}
    while stack:
        node_id = stack.pop()
        if node_id in seen:
            continue
        seen.add(node_id)
        node = graph.nodes[node_id]
        keys.update((a.full_name, a.checkpoint_key) for a in node.attributes if a.name == "VARIABLE_VALUE")
        stack.extend(child.node_id for child in node.children if child.local_name not in _OPTIMIZER_EDGES)
    shapes = reader.get_variable_to_shape_map()
    variables = [(path, tuple(shapes[key]), lambda key=key: google.read_tensor(reader, prefix, key))
                 for path, key in sorted(keys.items())]
    source = from_variables("official_bert", prefix, variables)
    if NATIVE_CAUSAL_MARKER in shapes:
        source.causal_attention = bool(google.read_tensor(reader, prefix, NATIVE_CAUSAL_MARKER)) or None
    model_keys = set(keys.values())
    source.skipped = sorted(k for k in shapes if k not in model_keys and k != OBJECT_GRAPH_KEY)
    return source


def read_keras(path):
    """Opens a `.keras` model file (written by `model.save`) as a `Source`."""
    try:
        model = keras.saving.load_model(path, compile=False)
    except Exception as e:  # Keras raises anything from ValueError to zipfile.BadZipFile on a broken file.
        raise CheckpointError(f"{path}: cannot open the .keras file ({type(e).__name__}: {e})") from None
    source = from_variables("keras", path, [(w.path, tuple(w.shape), w.numpy) for w in model.weights])
    source.causal_attention = is_causal(model) or None
    return source


def from_variables(format, path, variables):
    """A `Source` over our own variables, given as (path, shape, read) triples.

    A fused q/k/v variable becomes its three Google-named parts.
    """
    source = Source(format=format, path=path, tensors={})
    for var_path, shape, read_value in variables:
        entry = names.entry(var_path)
        if entry is None:
            source.unknown.append(var_path)
            continue
        fused = len(entry.google_names) > 1
        for part, google_name in zip(names.QKV_PARTS, entry.google_names):
            source.tensors[google_name] = Tensor(
                f"{var_path} ({part} part)" if fused else var_path, entry.part_shape(shape), entry.transpose,
                lambda e=entry, r=read_value, g=google_name: e.split(r())[g])
    return source


def is_causal(model):
    """Whether `model` (a BertEncoder, or a model with one as `encoder`) computes left-only.

    Example:
    >>> from official_bert import BertConfig, BertEncoder
    >>> is_causal(BertEncoder(BertConfig.from_preset("tiny", vocab_size=50), causal_attention=True))
    True
    """
    return bool(getattr(getattr(model, "encoder", model), "causal_attention", False))


def causal_marker(causal):
    """The root objects that mark a `tf.train.Checkpoint` of a left-to-right model (`CAUSAL_MARKER`): none for a
    bidirectional one.

    Example:
    >>> causal_marker(False), list(causal_marker(True))
    ({}, ['causal_attention'])
    """
    return {CAUSAL_MARKER: tf.Variable(True, trainable=False)} if causal else {}


def write(model, config, directory):
    """Writes `directory/model.ckpt.*` (a `tf.train.Checkpoint(model=model)`, with the left-to-right marker for a
    causal model) + `bert_config.json`.

    Returns:
        the checkpoint prefix.
    """
    tf.io.gfile.makedirs(directory)
    prefix = os.path.join(directory, CHECKPOINT_NAME)
    with atomic_bundle(prefix) as tmp:
        tf.train.Checkpoint(**{MODEL_KEY: model}, **causal_marker(config.causal_attention)).write(tmp)
    config.to_json_file(os.path.join(directory, CONFIG_NAME))
    return prefix
