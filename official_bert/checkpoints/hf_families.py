"""The tensor names and config.json of BERT's family in Hugging Face's files: RoBERTa, XLM-RoBERTa, DistilBERT, ELECTRA.

Reading, every family name is spelled as BERT's Hugging Face name first (`bert_name`), and from there the Google
name as for BERT (`huggingface.google_name`): "roberta.encoder..." and "electra.encoder..." are BERT's names under
another prefix, DistilBERT's layers have names of their own, and each family names its heads its own way. A
classifier's dense layer on the first token (RoBERTa's and ELECTRA's `classifier.dense`, DistilBERT's
`pre_classifier`, ELECTRA's multiple-choice `sequence_summary.summary`) is the encoder's pooler.

Writing (`export`), the names and config.json are those transformers' own classes (`RobertaForMaskedLM`,
`DistilBertModel`, `ElectraForPreTraining`, ...) save, so that `from_pretrained` reads them with nothing missing or
unexpected.
"""

import re

from official_bert import models
from official_bert.checkpoints.source import CheckpointError

# Our hidden_act → Hugging Face's name of the same function ("gelu" there is exact erf).
HF_ACTIVATIONS = {
    "gelu_erf": "gelu", "gelu": "gelu_new", "gelu_new": "gelu_new", "gelu_tanh": "gelu_new",
    "gelu_pytorch_tanh": "gelu_new", "relu": "relu", "tanh": "tanh", "silu": "silu", "swish": "swish",
}

_CLASS_NAMES = {"roberta": "Roberta", "xlm-roberta": "XLMRoberta", "distilbert": "DistilBert", "electra": "Electra"}
_PREFIXES = {"roberta": "roberta.", "xlm-roberta": "roberta.", "distilbert": "distilbert.", "electra": "electra."}

# DistilBERT's layer parts → BERT's.
_DISTILBERT_LAYER = {
    "attention.q_lin": "attention.self.query", "attention.k_lin": "attention.self.key",
    "attention.v_lin": "attention.self.value", "attention.out_lin": "attention.output.dense",
    "sa_layer_norm": "attention.output.LayerNorm", "ffn.lin1": "intermediate.dense", "ffn.lin2": "output.dense",
    "output_layer_norm": "output.LayerNorm",
}
_BERT_LAYER = {bert: distil for distil, bert in _DISTILBERT_LAYER.items()}

# Each family's head names (a prefix of the tensor's name) → BERT's. The decoder weights are copies tied to the word
# embeddings (transformers 5 saves none of them; older files may hold them).
_HEADS = {
    "lm_head.dense.": "cls.predictions.transform.dense.",
    "lm_head.layer_norm.": "cls.predictions.transform.LayerNorm.",
    "lm_head.bias": "cls.predictions.bias",
    "lm_head.decoder.": "cls.predictions.decoder.",
    "vocab_transform.": "cls.predictions.transform.dense.",
    "vocab_layer_norm.": "cls.predictions.transform.LayerNorm.",
    "vocab_projector.bias": "cls.predictions.bias",
    "vocab_projector.weight": "cls.predictions.decoder.weight",
    "generator_predictions.dense.": "cls.predictions.transform.dense.",
    "generator_predictions.LayerNorm.": "cls.predictions.transform.LayerNorm.",
    "generator_lm_head.bias": "cls.predictions.bias",
    "generator_lm_head.weight": "cls.predictions.decoder.weight",
    "classifier.dense.": "bert.pooler.dense.",
    "classifier.out_proj.": "classifier.",
    "pre_classifier.": "bert.pooler.dense.",
    "sequence_summary.summary.": "bert.pooler.dense.",
}
_MASKED_LM = {
    "roberta": ("lm_head.dense.", "lm_head.layer_norm.", "lm_head.bias"),
    "xlm-roberta": ("lm_head.dense.", "lm_head.layer_norm.", "lm_head.bias"),
    "distilbert": ("vocab_transform.", "vocab_layer_norm.", "vocab_projector.bias"),
    "electra": ("generator_predictions.dense.", "generator_predictions.LayerNorm.", "generator_lm_head.bias"),
}
# Where each task model keeps the encoder's pooler (None: it has none and the pooler is not written).
_POOLERS = {
    ("roberta", "model"): "pooler.dense.", ("xlm-roberta", "model"): "pooler.dense.",
    ("roberta", "sequence_classification"): "classifier.dense.",
    ("xlm-roberta", "sequence_classification"): "classifier.dense.",
    ("electra", "sequence_classification"): "classifier.dense.",
    ("distilbert", "sequence_classification"): "pre_classifier.",
    ("roberta", "multiple_choice"): "roberta.pooler.dense.",
    ("xlm-roberta", "multiple_choice"): "roberta.pooler.dense.",
    ("electra", "multiple_choice"): "sequence_summary.summary.", ("distilbert", "multiple_choice"): "pre_classifier.",
}
_ARCHITECTURES = {"model": "Model", "masked_lm": "ForMaskedLM", "pretraining": "ForPreTraining",
                  "sequence_classification": "ForSequenceClassification",
                  "token_classification": "ForTokenClassification", "question_answering": "ForQuestionAnswering",
                  "multiple_choice": "ForMultipleChoice"}

# What transformers' config classes write beside the model's own fields (their defaults; the heads' dropout rates
# are training settings our models take from the config's hidden_dropout_prob).
_ROBERTA_CONFIG = {"add_cross_attention": False, "bos_token_id": 0, "classifier_dropout": None, "dtype": "float32",
                   "eos_token_id": 2, "is_decoder": False, "tie_word_embeddings": True, "use_cache": True}
_EXTRA_CONFIG = {
    "roberta": _ROBERTA_CONFIG, "xlm-roberta": _ROBERTA_CONFIG,
    "distilbert": {"bos_token_id": None, "dtype": "float32", "eos_token_id": None, "pad_token_id": 0,
                   "qa_dropout": 0.1, "seq_classif_dropout": 0.2, "tie_word_embeddings": True},
    "electra": {"add_cross_attention": False, "bos_token_id": None, "classifier_dropout": None, "dtype": "float32",
                "eos_token_id": None, "is_decoder": False, "pad_token_id": 0, "summary_activation": "gelu",
                "summary_last_dropout": 0.1, "summary_type": "first", "summary_use_proj": True,
                "tie_word_embeddings": True, "use_cache": True},
}
_DISTILBERT_CONFIG = {"hidden_size": "dim", "num_hidden_layers": "n_layers", "num_attention_heads": "n_heads",
                      "intermediate_size": "hidden_dim", "hidden_act": "activation",
                      "hidden_dropout_prob": "dropout", "attention_probs_dropout_prob": "attention_dropout"}
_BERT_CONFIG_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                       "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
                       "initializer_range")


def bert_name(key):
    """A tensor name of a family's file as BERT's Hugging Face name (base-model names without the "bert." prefix stay
    so, as `huggingface.canonical` expects them); a BERT name, or one no family has, is returned unchanged.

    Example:
    >>> bert_name("distilbert.transformer.layer.1.ffn.lin2.weight")
    'bert.encoder.layer.1.output.dense.weight'
    >>> bert_name("roberta.embeddings.word_embeddings.weight"), bert_name("lm_head.layer_norm.bias")
    ('bert.embeddings.word_embeddings.weight', 'cls.predictions.transform.LayerNorm.bias')
    >>> bert_name("embeddings_project.weight"), bert_name("classifier.out_proj.bias")
    ('bert.embeddings_project.weight', 'classifier.bias')
    """
    for head, bert in _HEADS.items():
        if key == head or (head.endswith(".") and key.startswith(head)):
            return bert + key[len(head):]
    prefixed = key.startswith(tuple(_PREFIXES.values()))
    name = key.split(".", 1)[1] if prefixed else key
    match = re.fullmatch(r"transformer\.layer\.(\d+)\.(.+)\.(weight|bias)", name)
    if match and match.group(2) in _DISTILBERT_LAYER:
        return f"bert.encoder.layer.{match.group(1)}.{_DISTILBERT_LAYER[match.group(2)]}.{match.group(3)}"
    if name.startswith("embeddings_project."):
        return "bert." + name
    return "bert." + name if prefixed else key


def family_of_names(keys):
    """The family whose names a file's tensors have (None: BERT's names, which RoBERTa's and ELECTRA's base models
    share), for messages in the file's own terms.

    Example:
    >>> family_of_names(["distilbert.embeddings.word_embeddings.weight"]), family_of_names(["pooler.dense.bias"])
    ('distilbert', None)
    """
    for key in keys:
        if key.startswith(("distilbert.", "transformer.layer.")):
            return "distilbert"
        if key.startswith(("electra.", "embeddings_project.", "generator_", "discriminator_")):
            return "electra"
        if key.startswith(("roberta.", "lm_head.")):
            return "roberta"
    return None


def file_name(family, name, prefixed):
    """BERT's Hugging Face name of an encoder weight (with "bert.") as the family's file spells it: for messages about
    what a file lacks, and for writing.

    Example:
    >>> file_name("distilbert", "bert.encoder.layer.0.attention.self.key.weight", prefixed=True)
    'distilbert.transformer.layer.0.attention.k_lin.weight'
    >>> file_name("electra", "bert.embeddings.LayerNorm.bias", prefixed=False)
    'embeddings.LayerNorm.bias'
    """
    rest = name.removeprefix("bert.")
    if family == "distilbert":
        match = re.fullmatch(r"encoder\.layer\.(\d+)\.(.+)\.(weight|bias)", rest)
        if match:
            rest = f"transformer.layer.{match.group(1)}.{_BERT_LAYER[match.group(2)]}.{match.group(3)}"
    return _PREFIXES[family] + rest if prefixed else rest


def kind_of(model, arrays):
    """Which of transformers' task classes `model` (whose Google-named weights are `arrays`) is saved as."""
    if "cls/seq_relationship/output_weights" in arrays:
        return "next_sentence"
    if "cls/predictions/output_bias" in arrays:
        return "masked_lm"
    if "discriminator_predictions/dense_prediction/kernel" in arrays:
        return "pretraining"
    if "cls/squad/output_weights" in arrays:
        return "question_answering"
    if "output_weights" in arrays:
        if isinstance(model, models.BertTokenClassifier):
            return "token_classification"
        if isinstance(model, models.BertMultipleChoice):
            return "multiple_choice"
        return "sequence_classification"
    return "model"


def export(model, config, arrays, hf_name):
    """The tensors and config.json with which transformers' class of the family reads `model`.

    Args:
        model: a BertEncoder, BertPretrainer without NSP, ElectraDiscriminator or task model of a family config.
        config: its `BertConfig`.
        arrays: its weights under Google names (`names.model_to_google`).
        hf_name: `huggingface.hf_name`, Google name → (BERT's Hugging Face name, transposed).

    Returns:
        ({name: array}, config.json's values).

    Raises:
        CheckpointError: a head the family's classes do not have (next-sentence prediction; ELECTRA's discriminator
            on another family).
    """
    family = config.family
    kind = kind_of(model, arrays)
    if kind == "next_sentence":
        raise CheckpointError(f"{family} has no next-sentence head in transformers: save this model in the "
                              "official_bert format, or build it with BertPretrainer(use_nsp=False)")
    if kind == "pretraining" and family != "electra":
        raise CheckpointError(f"the replaced-token (discriminator) head is ELECTRA's; this model's family is {family}")
    prefixed = kind != "model"
    tensors = {}
    for google, array in arrays.items():
        name, transpose = hf_name(google)
        name = _family_name(family, kind, name, prefixed)
        if name is not None:
            tensors[name] = array.T if transpose else array
    return tensors, _config(config, kind, arrays)


def _family_name(family, kind, name, prefixed):
    """BERT's Hugging Face name (with "bert.") of one of our weights as the family's `kind` of model saves it, or
    None where that model has no such weight (a pooler it lacks)."""
    if name.startswith("bert.pooler.dense."):
        pooler = _POOLERS.get((family, kind))
        return None if pooler is None else pooler + name[len("bert.pooler.dense."):]
    if name.startswith("bert."):
        return file_name(family, name, prefixed)
    if name.startswith("classifier."):
        plain = kind == "sequence_classification" and family != "distilbert"
        return ("classifier.out_proj." if plain else "classifier.") + name[len("classifier."):]
    transform, layer_norm, bias = _MASKED_LM[family]
    for bert, theirs in (("cls.predictions.transform.dense.", transform),
                         ("cls.predictions.transform.LayerNorm.", layer_norm)):
        if name.startswith(bert):
            return theirs + name[len(bert):]
    return bias if name == "cls.predictions.bias" else name


def _config(config, kind, arrays):
    """config.json as transformers' config class of the family writes it (its version number left out)."""
    family = config.family
    values = {name: getattr(config, name) for name in _BERT_CONFIG_FIELDS}
    values["hidden_act"] = HF_ACTIVATIONS[config.hidden_act]
    values.update(_EXTRA_CONFIG[family])
    if family == "distilbert":
        values = {_DISTILBERT_CONFIG.get(name, name): value for name, value in values.items()}
        values["sinusoidal_pos_embds"] = bool(config.sinusoidal_pos_embds)
    else:
        values.update(type_vocab_size=config.type_vocab_size, layer_norm_eps=config.layer_norm_eps)
    if config.pad_token_id is not None:
        values["pad_token_id"] = config.pad_token_id
    if config.embedding_size is not None:
        values["embedding_size"] = config.embedding_size
    values.update(model_type=family, architectures=[_CLASS_NAMES[family] + _ARCHITECTURES[kind]])
    if kind in ("sequence_classification", "token_classification") and arrays["output_weights"].shape[0] != 2:
        labels = [f"LABEL_{i}" for i in range(arrays["output_weights"].shape[0])]
        values.update(id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)})
    return values
