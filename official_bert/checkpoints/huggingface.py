"""Hugging Face BERT checkpoints: `config.json` + `model.safetensors`, read and written with NumPy (no torch).

The rest of BERT's family (RoBERTa, XLM-RoBERTa, DistilBERT, ELECTRA) is read and written through BERT's names, by
`hf_families`."""

import json
import os
import re

import numpy as np
import tensorflow as tf
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from official_bert import models
from official_bert.checkpoints import hf_families, names
from official_bert.checkpoints.hf_families import HF_ACTIVATIONS as _HF_ACTIVATIONS
from official_bert.checkpoints.source import CAUSAL_MARKER, CheckpointError, Source, Tensor
from official_bert.io import atomic_local_path, local_copy, write_text

WEIGHTS_NAME = "model.safetensors"
CONFIG_NAME = "config.json"

# Heads whose Hugging Face names do not follow from the Google names by the rules of `hf_name`.
_HEADS = {
    "cls/predictions/output_bias": "cls.predictions.bias",
    "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
    "cls/seq_relationship/output_bias": "cls.seq_relationship.bias",
    "output_weights": "classifier.weight",
    "output_bias": "classifier.bias",
    "cls/squad/output_weights": "qa_outputs.weight",
    "cls/squad/output_bias": "qa_outputs.bias",
}
_HEADS_BY_HF = {hf: google for google, hf in _HEADS.items()}

# Tensors a Hugging Face file may hold that are no weights of ours: buffers, and copies tied to the word
# embeddings and to cls.predictions.bias.
_NOT_WEIGHTS = {"bert.embeddings.position_ids", "bert.embeddings.token_type_ids", "cls.predictions.decoder.weight",
                "cls.predictions.decoder.bias"}
# Heads of BERT's family that have no other spelling in BERT's names (ELECTRA's discriminator).
_FAMILY_HEADS = ("discriminator_predictions.",)

_CONFIG_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                  "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
                  "type_vocab_size", "initializer_range", "layer_norm_eps")


def hf_name(google_name):
    """Google TF1 name → (Hugging Face name, with the "bert." prefix; whether HF stores it transposed).

    Example:
    >>> hf_name("bert/encoder/layer_2/attention/output/LayerNorm/gamma")
    ('bert.encoder.layer.2.attention.output.LayerNorm.weight', False)
    >>> hf_name("bert/encoder/layer_0/intermediate/dense/kernel")
    ('bert.encoder.layer.0.intermediate.dense.weight', True)
    """
    if google_name in _HEADS:
        return _HEADS[google_name], False
    name = re.sub(r"layer_(\d+)", r"layer.\1", google_name).replace("/", ".")
    if name.endswith("_embeddings"):
        return name + ".weight", False
    name = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", name))
    if name.endswith(".kernel"):
        return name[:-len("kernel")] + "weight", True
    return name, False


def google_name(name):
    """The Google name of a Hugging Face name (as `canonical` spells it), or None when it is no BERT weight.

    Example:
    >>> google_name("bert.encoder.layer.11.attention.self.query.weight")
    'bert/encoder/layer_11/attention/self/query/kernel'
    >>> google_name("qa_outputs.bias"), google_name("lm_head.weight")
    ('cls/squad/output_bias', None)
    """
    if name in _HEADS_BY_HF:
        return _HEADS_BY_HF[name]
    if not name.startswith(("bert.", "cls.") + _FAMILY_HEADS):
        return None
    google = re.sub(r"layer/(\d+)", r"layer_\1", name.replace(".", "/"))
    if google.endswith("_embeddings/weight"):
        google = google[:-len("/weight")]
    elif google.endswith("LayerNorm/weight"):
        google = google[:-len("weight")] + "gamma"
    elif google.endswith("LayerNorm/bias"):
        google = google[:-len("bias")] + "beta"
    elif google.endswith("/weight"):
        google = google[:-len("weight")] + "kernel"
    # Only names that `hf_name` would write back identically are ours; the rest are foreign weights.
    return google if hf_name(google)[0] == name else None


def canonical(name):
    """A file's tensor name with the "bert." prefix and LayerNorm weight/bias (old files say gamma/beta).

    Example:
    >>> canonical("encoder.layer.0.output.LayerNorm.gamma")
    'bert.encoder.layer.0.output.LayerNorm.weight'
    """
    name = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", name))
    if name.startswith(("embeddings.", "encoder.", "pooler.")):
        name = "bert." + name
    return name


def read(path):
    """Opens a `.safetensors` file of a Hugging Face BERT (any head, with or without "bert."), or of another member
    of BERT's family (`hf_families`), as a `Source`."""
    try:
        # safetensors maps only local files; a remote one is copied, and its mapping outlives the copy.
        with local_copy(path) as local:
            handle = safe_open(local, framework="np")
        keys = sorted(handle.keys())
        metadata = handle.metadata() or {}
        shapes = {key: tuple(handle.get_slice(key).get_shape()) for key in keys}
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{path}: not a readable safetensors file ({e}); it may be truncated") from None
    family = hf_families.family_of_names(keys)
    prefixed = any(key.startswith(("bert.", "roberta.", "distilbert.", "electra.")) for key in keys)
    source = Source(format="huggingface", path=path, tensors={},
                    name_in_file=lambda g: _name_in_file(g, family, prefixed),
                    causal_attention=metadata.get(CAUSAL_MARKER) == "true" or None)
    for key in keys:
        name = canonical(hf_families.bert_name(key))
        google = google_name(name)
        if name in _NOT_WEIGHTS:
            source.skipped.append(key)
        elif google is None:
            source.unknown.append(key)
        elif google in source.tensors:
            raise CheckpointError(f"{path}: holds both {source.tensors[google].name!r} and {key!r}, "
                                  "two names for the same weight")
        else:
            transposed = hf_name(google)[1]
            shape = shapes[key][::-1] if transposed else shapes[key]
            source.tensors[google] = Tensor(key, shape, transposed,
                                            lambda key=key, t=transposed: _read_tensor(handle, path, key, t))
    return source


def _name_in_file(google, family, prefixed):
    """How a file of `family` (None: BERT's names) names the weight `google`, for messages about what it lacks."""
    name = hf_name(google)[0]
    if family is None or not name.startswith("bert."):
        return name if prefixed else name.removeprefix("bert.")
    return hf_families.file_name(family, name, prefixed)


def write(model, config, directory):
    """Writes `directory/model.safetensors` + `config.json` that transformers' `from_pretrained` loads.

    An encoder is written as `BertModel` writes itself (no "bert." prefix); a model with heads as
    `BertForPreTraining`, `BertForSequenceClassification`, ... do (prefixed), with `architectures` to match. A
    left-to-right model's file carries the marker in its metadata, its config.json "causal_attention": true and
    "is_decoder": true (transformers' causal mask; its pooler still reads [CLS], ours the last real token). A model of
    another member of BERT's family is written as its own classes write it (`hf_families.export`).

    Args:
        model: a BertEncoder, BertPretrainer or task model.
        config: its `BertConfig`.
        directory: created if needed.

    Returns:
        the path of the weights file.
    """
    arrays = names.model_to_google(model)
    if config.family:
        tensors, values = hf_families.export(model, config, arrays, hf_name)
        tensors = {name: np.ascontiguousarray(array) for name, array in tensors.items()}
    else:
        has_heads = any(not names.is_encoder_name(g) for g in arrays)
        tensors = {}
        for google, array in arrays.items():
            name, transpose = hf_name(google)
            tensors[name if has_heads else name.removeprefix("bert.")] = np.ascontiguousarray(
                array.T if transpose else array)
        values = hf_config(model, config, arrays)
    tf.io.gfile.makedirs(directory)
    weights_path = os.path.join(directory, WEIGHTS_NAME)
    with atomic_local_path(weights_path) as tmp:
        # transformers refuses safetensors files whose metadata does not name a framework.
        save_file(tensors, tmp, metadata={"format": "pt", **({CAUSAL_MARKER: "true"} if config.causal_attention
                                                              else {})})
    write_text(os.path.join(directory, CONFIG_NAME), json.dumps(values, indent=2, sort_keys=True) + "\n")
    return weights_path


def hf_config(model, config, arrays):
    """The `config.json` transformers reads for `model` (whose Google-named weights are `arrays`)."""
    values = {name: getattr(config, name) for name in _CONFIG_FIELDS}
    values.update(model_type="bert", hidden_act=_HF_ACTIVATIONS[config.hidden_act], pad_token_id=0,
                  position_embedding_type="absolute", architectures=[_architecture(model, arrays)])
    if config.causal_attention:
        values.update(causal_attention=True, is_decoder=True)
    if values["architectures"][0] in ("BertForSequenceClassification", "BertForTokenClassification"):
        labels = [f"LABEL_{i}" for i in range(arrays["output_weights"].shape[0])]
        values.update(id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)})
    return values


# transformers' BERT class of each kind of model (`hf_families.kind_of`).
_BERT_CLASSES = {"next_sentence": "BertForPreTraining", "masked_lm": "BertForMaskedLM",
                 "question_answering": "BertForQuestionAnswering", "token_classification": "BertForTokenClassification",
                 "multiple_choice": "BertForMultipleChoice", "sequence_classification": "BertForSequenceClassification",
                 "model": "BertModel"}


def _architecture(model, arrays):
    return _BERT_CLASSES[hf_families.kind_of(model, arrays)]


def _read_tensor(handle, path, key, transposed):
    try:
        array = handle.get_tensor(key)
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{path}: cannot read tensor {key!r} ({e}); the file may be truncated") from None
    return array.T if transposed else array
