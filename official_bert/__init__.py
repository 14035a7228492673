"""official_bert: BERT for TensorFlow 2 / Keras 3.

The public names below are imported on first use (PEP 562), so tools that only need a submodule — the
tokenizer, the pretraining-data generator — don't pay for importing TensorFlow and Keras up front.

After `import official_bert`, `keras.saving.load_model` reads the `.keras` files of `keras_models` in any process,
whichever of `import keras` and `import official_bert` came first: their classes' registered names stand in Keras's
registry for them, and the first file that needs one imports `official_bert.keras_models`. Importing official_bert
imports neither Keras nor TensorFlow.

Imported before TensorFlow (as every tool, console script and `python <tool>.py` does), official_bert turns on
TensorFlow's oneDNN CPU path where TensorFlow would leave it off — AVX2-only CPUs, on which its matmuls are 1.2-1.9x
faster than Eigen's and BERT-base inference 1.25x (the Benchmarks page) — unless TF_ENABLE_ONEDNN_OPTS is set:
`TF_ENABLE_ONEDNN_OPTS=0` keeps Eigen's kernels. A TensorFlow already imported is left as it started.
"""

import importlib
import importlib.util
import os
import sys

if "tensorflow" not in sys.modules:
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

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
    "ElectraDiscriminator": "official_bert.models",
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


# keras_models' Keras classes, registered by keras.saving.register_keras_serializable(package="official_bert").
_KERAS_CLASSES = ("MaskedLM", "TextClassifier", "TextEmbedder", "TextPreprocessor")


class _DeferredKerasClass:
    """Stands in Keras's registry for a class of `keras_models` until a file holds one: `from_config` imports
    keras_models (whose classes then register themselves, replacing these) and builds the object. keras_models is
    imported at that moment, not when Keras is, so that a module of official_bert that imports Keras never imports,
    half-initialized, the modules keras_models depends on."""

    def __init__(self, name):
        self.name = name

    def from_config(self, config):
        return getattr(importlib.import_module("official_bert.keras_models"), self.name).from_config(config)


def _register_keras_classes(keras):
    objects = keras.saving.get_custom_objects()
    for name in _KERAS_CLASSES:
        objects.setdefault(f"official_bert>{name}", _DeferredKerasClass(name))


class _RegisteringLoader:
    """Keras's own loader, registering `_KERAS_CLASSES` once Keras has run."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _register_keras_classes(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _KerasImportHook:
    """A `sys.meta_path` finder that waits for the first `import keras` (the user's, or TensorFlow's own), wraps its
    loader in `_RegisteringLoader`, and leaves `sys.meta_path` as it found it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "keras":
            return None
        sys.meta_path.remove(self)  # before finding Keras's spec: the search must not come back here
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


if "keras" not in sys.modules:
    sys.meta_path.insert(0, _KerasImportHook())
elif hasattr(sys.modules["keras"], "saving"):
    _register_keras_classes(sys.modules["keras"])
