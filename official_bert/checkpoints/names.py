"""The one table between our variable paths and the original Google TF1 checkpoint names.

Every format goes through these names, for loading and saving alike: Google's checkpoints use them as
they are, Hugging Face's names are derived from them (`huggingface.py`), and our own checkpoints store
our variable paths, which this table splits into them.
"""

import dataclasses
import re

import numpy as np

from official_bert.checkpoints.source import CheckpointError

# The parts of our fused attention projection, in the order of its columns.
QKV_PARTS = ("query", "key", "value")

# (our variable path, Google name templates, transpose). `{0}`, `{1}` are the path's regex groups. A path
# with three templates is our fused attention projection: the equal thirds of its last axis, in order.
# transpose: Google stores the kernel [out, in] where our Dense holds [in, out].
_TABLE = (
    (r"embeddings/(word|position|token_type)_embeddings", ("bert/embeddings/{0}_embeddings",), False),
    (r"embeddings/layer_norm/(gamma|beta)", ("bert/embeddings/LayerNorm/{0}",), False),
    # ELECTRA's projection of its narrower embeddings (the original ELECTRA's "embeddings_project").
    (r"embeddings/projection/(kernel|bias)", ("bert/embeddings_project/{0}",), False),
    (r"transformer_layer_(\d+)/attention/qkv_(kernel|bias)",
     tuple(f"bert/encoder/layer_{{0}}/attention/self/{part}/{{1}}" for part in QKV_PARTS), False),
    (r"transformer_layer_(\d+)/attention/output_(kernel|bias)",
     ("bert/encoder/layer_{0}/attention/output/dense/{1}",), False),
    (r"transformer_layer_(\d+)/attention_layer_norm/(gamma|beta)",
     ("bert/encoder/layer_{0}/attention/output/LayerNorm/{1}",), False),
    (r"transformer_layer_(\d+)/intermediate/(kernel|bias)", ("bert/encoder/layer_{0}/intermediate/dense/{1}",), False),
    (r"transformer_layer_(\d+)/output/(kernel|bias)", ("bert/encoder/layer_{0}/output/dense/{1}",), False),
    (r"transformer_layer_(\d+)/output_layer_norm/(gamma|beta)", ("bert/encoder/layer_{0}/output/LayerNorm/{1}",),
     False),
    (r"pooler/(kernel|bias)", ("bert/pooler/dense/{0}",), False),
    (r"masked_lm/transform/(kernel|bias)", ("cls/predictions/transform/dense/{0}",), False),
    (r"masked_lm/layer_norm/(gamma|beta)", ("cls/predictions/transform/LayerNorm/{0}",), False),
    (r"masked_lm/output_bias", ("cls/predictions/output_bias",), False),
    (r"next_sentence/kernel", ("cls/seq_relationship/output_weights",), True),
    (r"next_sentence/bias", ("cls/seq_relationship/output_bias",), False),
    # The original run_classifier.py creates its head unscoped; run_squad.py under cls/squad.
    (r"classifier/kernel", ("output_weights",), True),
    (r"classifier/bias", ("output_bias",), False),
    (r"span_logits/kernel", ("cls/squad/output_weights",), True),
    (r"span_logits/bias", ("cls/squad/output_bias",), False),
    # ELECTRA's discriminator: is each token the original or a replacement?
    (r"discriminator_dense/(kernel|bias)", ("discriminator_predictions/dense/{0}",), False),
    (r"discriminator_prediction/(kernel|bias)", ("discriminator_predictions/dense_prediction/{0}",), False),
)

# Google names of encoder variables a checkpoint may lack without being a different model: Hugging Face's
# BertForMaskedLM and many sentence-embedding models are saved without the pooler.
OPTIONAL_ENCODER_NAMES = ("bert/pooler/dense/kernel", "bert/pooler/dense/bias")


@dataclasses.dataclass(frozen=True)
class Entry:
    """How one of our variables is stored under Google names.

    Args:
        path: our variable's path, e.g. "transformer_layer_0/attention/qkv_kernel".
        google_names: one name per equal part of the variable's last axis (three for fused q/k/v).
        transpose: Google stores the 2-D kernel transposed.

    Example:
    >>> import numpy as np
    >>> e = entry("transformer_layer_3/attention/qkv_bias")
    >>> e.google_names[1]
    'bert/encoder/layer_3/attention/self/key/bias'
    >>> parts = e.split(np.arange(6.0))
    >>> parts["bert/encoder/layer_3/attention/self/value/bias"]
    array([4., 5.])
    >>> e.join(list(parts.values())).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """

    path: str
    google_names: tuple
    transpose: bool

    def part_shape(self, shape):
        """The Google-layout shape of each part of a variable of `shape`."""
        shape = tuple(shape[:-1]) + (shape[-1] // len(self.google_names),)
        return shape[::-1] if self.transpose else shape

    def split(self, value):
        """Our array → {Google name: array in Google's layout}."""
        parts = np.split(np.asarray(value), len(self.google_names), axis=-1)
        return {name: np.ascontiguousarray(part.T if self.transpose else part)
                for name, part in zip(self.google_names, parts)}

    def join(self, parts):
        """Arrays in Google's layout, in `google_names` order → our array."""
        parts = [part.T if self.transpose else part for part in parts]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)


def entry(path):
    """The `Entry` for one of our variable paths, or None when the path has no Google name.

    Args:
        path: a Keras variable path as `model.weights` lists it, e.g. "pooler/kernel".
    """
    for pattern, templates, transpose in _TABLE:
        match = re.fullmatch(pattern, path)
        if match:
            return Entry(path, tuple(t.format(*match.groups()) for t in templates), transpose)
    return None


def is_encoder_name(google_name):
    """Whether a Google name belongs to the encoder (as opposed to a pretraining or task head)."""
    return google_name.startswith("bert/")


def model_to_google(model):
    """Every weight of `model` as {Google name: float32 array in Google's layout}.

    Args:
        model: a BertEncoder, BertPretrainer or task model.

    Raises CheckpointError naming a variable that has no Google name (a layer this table does not know).

    Example:
    >>> from official_bert import BertConfig, BertEncoder
    >>> arrays = model_to_google(BertEncoder(BertConfig.from_preset("tiny", vocab_size=50)))
    >>> arrays["bert/encoder/layer_1/attention/self/query/kernel"].shape, len(arrays)
    ((128, 128), 39)
    """
    arrays = {}
    for variable in model.weights:
        e = entry(variable.path)
        if e is None:
            raise CheckpointError(f"model variable {variable.path!r} {tuple(variable.shape)} has no name in "
                                  "the Google/Hugging Face layout; save it in the official_bert format instead")
        arrays.update(e.split(np.asarray(variable.numpy(), dtype=np.float32)))
    return arrays
