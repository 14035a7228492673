"""`BertConfig`: the model hyperparameters, under Google's `bert_config.json` names."""

import copy
import dataclasses
import json
from typing import Optional

import tensorflow as tf

from official_bert import families
from official_bert.errors import Error
from official_bert.io import write_text
from official_bert.io.files import check_input_file

# hidden_act values accepted in a config, mapped to the function they mean. Google's configs say "gelu"
# and mean the tanh approximation their code computes; Hugging Face configs say "gelu" and mean exact erf.
# A config read from Hugging Face is therefore rewritten to "gelu_erf"; Google's stays "gelu" = tanh.
ACTIVATIONS = ("gelu", "gelu_new", "gelu_tanh", "gelu_pytorch_tanh", "gelu_erf", "relu", "tanh", "swish", "silu")

# Hugging Face hidden_act → our name for the same function.
_HF_ACTIVATIONS = {
    "gelu": "gelu_erf",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu_fast": "gelu_tanh",
    "relu": "relu",
    "tanh": "tanh",
    "silu": "silu",
    "swish": "swish",
}

# Hugging Face config keys that have no meaning for our model but are harmless to find in a config.json.
_HF_ONLY_KEYS = {
    "architectures", "model_type", "transformers_version", "pad_token_id", "position_embedding_type",
    "use_cache", "classifier_dropout", "gradient_checkpointing", "torch_dtype", "dtype", "layer_norm_eps",
    "_name_or_path", "id2label", "label2id", "is_decoder", "add_cross_attention", "bos_token_id",
    "eos_token_id", "chunk_size_feed_forward", "output_attentions", "output_hidden_states", "return_dict",
    "problem_type", "tie_word_embeddings", "finetuning_task", "tokenizer_class", "prefix",
    "directionality", "pooler_fc_size", "pooler_num_attention_heads", "pooler_num_fc_layers",
    "pooler_size_per_head", "pooler_type",
}

# The architecture fields every config of Google's states: a file must state them too, since a default would
# silently train another model (a config without hidden_size is a 768-wide one). The other fields have defaults:
# type_vocab_size (Google's configs state it, derived configs may not) and our layer_norm_eps.
REQUIRED_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                   "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
                   "initializer_range")

# What transformers' BertConfig defaults to for the non-shape fields, which a Hugging Face config.json may
# therefore omit (transformers itself writes them all).
_HF_DEFAULTS = {"hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
                "initializer_range": 0.02}

# A family's Hugging Face config keys under BERT's names (DistilBERT names its fields its own way).
_HF_RENAMES = {"distilbert": {"dim": "hidden_size", "n_layers": "num_hidden_layers", "n_heads": "num_attention_heads",
                              "hidden_dim": "intermediate_size", "activation": "hidden_act",
                              "dropout": "hidden_dropout_prob", "attention_dropout": "attention_probs_dropout_prob"}}
# A family's Hugging Face config keys that only its task heads read (their dropout rates, ELECTRA's multiple-choice
# summary), harmless in a config.json.
_HF_HEAD_KEYS = {"distilbert": {"qa_dropout", "seq_classif_dropout", "tie_weights_"},
                 "electra": {"summary_type", "summary_use_proj", "summary_activation", "summary_last_dropout",
                             "summary_first_dropout"}}

_PRESETS = {
    # name: (layers, hidden, heads, intermediate), the paper's and Google's released shapes; all use the released 30,522-token vocab.
    "tiny": (2, 128, 2, 512),
    "mini": (4, 256, 4, 1024),
    "small": (4, 512, 8, 2048),
    "medium": (8, 512, 8, 2048),
    "base": (12, 768, 12, 3072),
    "large": (24, 1024, 16, 4096),
}


class ConfigError(Error):
    """A BERT configuration that cannot describe a valid model."""


@dataclasses.dataclass
class BertConfig:
    """BERT hyperparameters, with the field names of Google's `bert_config.json`.

    Args:
        vocab_size: size of the WordPiece vocabulary.
        hidden_size: width H of every layer.
        num_hidden_layers: number of transformer blocks L.
        num_attention_heads: attention heads A; must divide hidden_size.
        intermediate_size: width of the feed-forward layer inside each block.
        hidden_act: activation of the feed-forward and MLM-transform layers. "gelu" is Google's tanh
            approximation (what the original code computes); "gelu_erf" is exact erf GELU (what Hugging Face
            calls "gelu"); also "gelu_new"/"gelu_tanh"/"gelu_pytorch_tanh" (tanh), "relu", "tanh", "swish".
        hidden_dropout_prob: dropout on embeddings, attention output and feed-forward output.
        attention_probs_dropout_prob: dropout on the attention probabilities.
        max_position_embeddings: longest sequence the position table covers.
        type_vocab_size: number of segment ids (released checkpoints use 2).
        initializer_range: stddev of the truncated-normal initializer.
        layer_norm_eps: LayerNorm epsilon (Google's code: 1e-12).
        causal_attention: the paper's left-to-right model: each position attends to the ones before it only,
            and fine-tuning keeps that constraint. `run_pretraining.py --objective=ltr` writes it as true in
            the bert_config.json beside its checkpoints; None (the key absent, as in Google's and Hugging
            Face's configs) is a bidirectional model, and so is False.
        family: the member of BERT's family (`official_bert.families`): None (BERT, the key absent), "roberta",
            "xlm-roberta", "distilbert" or "electra"; a Hugging Face config's `model_type` sets it.
        embedding_size: ELECTRA's embedding width, projected to hidden_size after the embeddings' LayerNorm (None:
            hidden_size, no projection).
        pad_token_id: RoBERTa's and XLM-R's padding id: their position ids start at pad_token_id + 1.
        sinusoidal_pos_embds: DistilBERT's fixed sinusoidal position table (not trained) instead of a learned one.

    Example:
    >>> from official_bert import BertConfig
    >>> config = BertConfig.from_preset("tiny", vocab_size=1000)
    >>> config.hidden_size, config.num_hidden_layers
    (128, 2)
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 16
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    causal_attention: Optional[bool] = None
    family: Optional[str] = None
    embedding_size: Optional[int] = None
    pad_token_id: Optional[int] = None
    sinusoidal_pos_embds: Optional[bool] = None

    def __post_init__(self):
        if self.family == "bert":
            self.family = None  # BERT's config records no family, as Google's configs
        # What transformers' configs always state, stated here too, so that configs of one model compare equal.
        if self.family == "distilbert" and self.sinusoidal_pos_embds is None:
            self.sinusoidal_pos_embds = False
        if self.family == "electra" and self.embedding_size is None:
            self.embedding_size = self.hidden_size
        self.validate()

    def validate(self):
        """Raises ConfigError with a message naming the offending field."""
        try:
            family = families.get(self.family)
        except families.UnknownFamilyError as e:
            raise ConfigError(f"BertConfig.family: {e}") from None
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "intermediate_size", "max_position_embeddings", "type_vocab_size"):
            value = getattr(self, name)
            if name == "type_vocab_size" and family.model_type == "distilbert":
                if value != 0:
                    raise ConfigError(f"BertConfig.type_vocab_size must be 0 for DistilBERT (it has no token types), "
                                      f"got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"BertConfig.{name} must be a positive integer, got {value!r}")
        self._validate_family(family)
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"BertConfig.hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                f"({self.num_attention_heads})")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ConfigError(f"BertConfig.{name} must be in [0, 1), got {value!r}")
        for name in ("initializer_range", "layer_norm_eps"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"BertConfig.{name} must be positive, got {getattr(self, name)!r}")
        if self.causal_attention not in (None, True, False):
            raise ConfigError(f"BertConfig.causal_attention must be true or false, got {self.causal_attention!r}")
        if self.hidden_act not in ACTIVATIONS:
            raise ConfigError(
                f"BertConfig.hidden_act {self.hidden_act!r} is not supported; expected one of {list(ACTIVATIONS)}")

    def _validate_family(self, family):
        """The fields that belong to one family: present only there (and pad_token_id always there)."""
        owners = {"embedding_size": "electra", "sinusoidal_pos_embds": "distilbert"}
        for name, owner in owners.items():
            if getattr(self, name) is not None and family.model_type != owner:
                raise ConfigError(f"BertConfig.{name} is {owner}'s; this config's family is {family.model_type}")
        size = self.embedding_size
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
            raise ConfigError(f"BertConfig.embedding_size must be a positive integer, got {self.embedding_size!r}")
        if self.sinusoidal_pos_embds not in (None, True, False):
            raise ConfigError(f"BertConfig.sinusoidal_pos_embds must be true or false, got "
                              f"{self.sinusoidal_pos_embds!r}")
        if family.positions_after_padding:
            if isinstance(self.pad_token_id, bool) or not isinstance(self.pad_token_id, int) or self.pad_token_id < 0:
                raise ConfigError(f"BertConfig.pad_token_id must be a non-negative integer for {family.model_type} "
                                  f"(its positions start after it), got {self.pad_token_id!r}")
            if self.position_offset >= self.max_position_embeddings:
                raise ConfigError(f"BertConfig.max_position_embeddings ({self.max_position_embeddings}) leaves no "
                                  f"position after pad_token_id ({self.pad_token_id})")
        elif self.pad_token_id is not None:
            raise ConfigError(f"BertConfig.pad_token_id is RoBERTa's and XLM-R's (their positions start after it); "
                              f"this config's family is {family.model_type}")

    @property
    def family_traits(self):
        """The `families.Family` of this config: what its family does differently from BERT."""
        return families.get(self.family)

    @property
    def position_offset(self):
        """The position id of the first token: pad_token_id + 1 for RoBERTa and XLM-R, else 0."""
        return self.pad_token_id + 1 if self.family_traits.positions_after_padding else 0

    @property
    def embedding_width(self):
        """The width of the embedding tables: embedding_size (ELECTRA) or hidden_size."""
        return self.embedding_size or self.hidden_size

    def check_seq_length(self, max_seq_length, source="the config", name="--max_seq_length"):
        """Raises ConfigError unless sequences of `max_seq_length` fit the position table; `name` is how the
        message names the length (the Python API's `sequence_length`, say).

        Example:
        >>> from official_bert import BertConfig
        >>> BertConfig.from_preset("tiny").check_seq_length(1024, "--bert_config_file=c.json")
        Traceback (most recent call last):
        ...
        official_bert.configs.ConfigError: --max_seq_length=1024 exceeds max_position_embeddings=512 of --bert_config_file=c.json: the model has no positions beyond it
        """
        if self.position_offset and max_seq_length + self.position_offset > self.max_position_embeddings:
            positions = self.max_position_embeddings - self.position_offset
            raise ConfigError(f"{name}={max_seq_length} exceeds the {positions} positions of {source} "
                              f"(max_position_embeddings={self.max_position_embeddings}, of which {self.family}'s "
                              f"first {self.position_offset} precede its first token)")
        if max_seq_length > self.max_position_embeddings:
            raise ConfigError(f"{name}={max_seq_length} exceeds max_position_embeddings="
                              f"{self.max_position_embeddings} of {source}: the model has no positions beyond it")

    @property
    def head_size(self):
        return self.hidden_size // self.num_attention_heads

    def to_dict(self):
        """The config's fields; causal_attention and the family's fields only when set, so that a bidirectional
        BERT's config has Google's keys alone."""
        values = dataclasses.asdict(self)
        for name in ("causal_attention", "family", "embedding_size", "pad_token_id", "sinusoidal_pos_embds"):
            if values[name] is None:
                del values[name]
        return values

    def to_json_string(self):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path):
        """Writes Google's bert_config.json layout (atomically: a temporary name, then rename; any gfile path)."""
        write_text(path, self.to_json_string())

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, values, source="config"):
        """Builds a config from Google's or Hugging Face's key names; `source` names the origin in errors.

        Every field of `REQUIRED_FIELDS` must be given; a Hugging Face config may omit those transformers
        gives a default that does not change the model's shape: hidden_act ((erf) "gelu"), the dropout rates
        (0.1) and initializer_range (0.02).

        Example:
        >>> from official_bert import BertConfig
        >>> BertConfig.from_dict({"vocab_size": 100, "num_hidden_layers": 2}, "c.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        official_bert.configs.ConfigError: c.json: missing required keys ['attention_probs_dropout_prob', ...
        """
        values = copy.deepcopy(dict(values))
        is_hf = "model_type" in values or "transformers_version" in values or "architectures" in values
        if is_hf:
            values = _family_values(values, source)
            values = {**_HF_DEFAULTS, **values}
            act = values["hidden_act"]
            if act not in _HF_ACTIVATIONS:
                raise ConfigError(f"{source}: hidden_act {act!r} is not supported; expected one of "
                                  f"{sorted(_HF_ACTIVATIONS)}")
            values["hidden_act"] = _HF_ACTIVATIONS[act]
            if values.get("is_decoder") and "causal_attention" not in values:
                values["causal_attention"] = True  # transformers' BERT decoder: a causal mask
            if values.get("position_embedding_type", "absolute") != "absolute":
                raise ConfigError(f"{source}: position_embedding_type {values['position_embedding_type']!r} "
                                  "is not supported (only 'absolute', as in BERT)")
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(values) - fields - _HF_ONLY_KEYS
        if unknown:
            raise ConfigError(f"{source}: unknown BERT config keys {sorted(unknown)}")
        kwargs = {k: v for k, v in values.items() if k in fields}
        missing = sorted(set(REQUIRED_FIELDS) - set(kwargs))
        if missing:
            raise ConfigError(f"{source}: missing required keys {missing}: a BERT config states the whole "
                              "architecture (see Google's bert_config.json)")
        try:
            return cls(**kwargs)
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None

    @classmethod
    def from_json_file(cls, path):
        """Reads Google's `bert_config.json` or a Hugging Face `config.json`."""
        if not tf.io.gfile.exists(path):
            raise ConfigError(f"{path}: BERT config file not found")
        check_input_file(path, "a BERT config file such as bert_config.json", error=ConfigError)
        try:
            with tf.io.gfile.GFile(path, "rb") as f:
                values = json.loads(f.read().decode("utf-8-sig"))  # a leading BOM dropped, which json refuses
        except tf.errors.OpError as e:
            raise ConfigError(f"{path}: cannot read the BERT config file ({e.message})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path}: not a valid JSON file ({e})") from None
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: expected a JSON object of config fields")
        return cls.from_dict(values, source=str(path))

    @classmethod
    def from_preset(cls, name, **overrides):
        """One of the released shapes: tiny, mini, small, medium, base, large (vocab 30,522, 2 segments)."""
        if name not in _PRESETS:
            raise ConfigError(f"unknown BERT preset {name!r}; expected one of {list(_PRESETS)}")
        layers, hidden, heads, inter = _PRESETS[name]
        values = dict(vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers,
                      num_attention_heads=heads, intermediate_size=inter, type_vocab_size=2)
        values.update(overrides)
        return cls(**values)

    @staticmethod
    def preset_names():
        return list(_PRESETS)


def _family_values(values, source):
    """A Hugging Face config's values under BERT's names, with the family's fields: the family from its model_type
    (refused in one line when it is not one of `families.FAMILIES`), DistilBERT's keys renamed, pad_token_id kept
    where positions start after it."""
    model_type = values.pop("model_type", "bert")
    try:
        family = families.get(model_type)
    except families.UnknownFamilyError as e:
        raise ConfigError(f"{source}: {e}") from None
    if family.model_type == "bert":
        values.pop("pad_token_id", None)
        return values
    values["family"] = family.model_type
    for theirs, ours in _HF_RENAMES.get(family.model_type, {}).items():
        if theirs in values:
            values[ours] = values.pop(theirs)
    for key in _HF_HEAD_KEYS.get(family.model_type, ()):
        values.pop(key, None)
    if family.model_type == "distilbert":
        values.update(type_vocab_size=0, layer_norm_eps=1e-12)  # no token types; its LayerNorms' fixed epsilon
        values.setdefault("sinusoidal_pos_embds", False)
    if family.model_type == "electra":
        values.setdefault("embedding_size", 128)  # transformers' ElectraConfig default
    if family.positions_after_padding:
        values.setdefault("pad_token_id", 1)  # transformers' RobertaConfig default
    else:
        values.pop("pad_token_id", None)
    return values
