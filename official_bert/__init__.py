"""official_bert: BERT for TensorFlow 2 / Keras 3.

The public names below are imported on first use (PEP 562), so tools that only need a submodule — the
tokenizer, the pretraining-data generator — don't pay for importing TensorFlow and Keras up front.
"""

import importlib

_EXPORTS = {
    "BertConfig": "official_bert.configs",
    "ConfigError": "official_bert.configs",
    "BertEncoder": "official_bert.networks.bert_encoder",
    "BertClassifier": "official_bert.models",
    "BertLanguageModel": "official_bert.models",
    "BertMultipleChoice": "official_bert.models",
    "BertPretrainer": "official_bert.models",
    "BertSpanLabeler": "official_bert.models",
    "BertTokenClassifier": "official_bert.models",
    "load_checkpoint": "official_bert.checkpoints",
    "save_checkpoint": "official_bert.checkpoints",
    "create_optimizer": "official_bert.optimization",
    "MaskedLM": "official_bert.keras_models",
    "TextClassifier": "official_bert.keras_models",
    "TextEmbedder": "official_bert.keras_models",
    "TextPreprocessor": "official_bert.keras_models",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'official_bert' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
