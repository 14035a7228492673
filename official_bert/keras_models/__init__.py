"""Keras models that take text: `TextClassifier`, `TextEmbedder` and `MaskedLM`, each behind a `TextPreprocessor`
(strings → the encoder's inputs, its vocabulary inside the `.keras` file), with `from_checkpoint` (Google TF1,
Hugging Face, official_bert), the paper's `compile`, `fit` / `evaluate` / `predict` on strings, `save` and `export`.

Importing this package registers them with Keras, so that `keras.saving.load_model` reads their `.keras` files
(`import official_bert` alone imports nothing, to keep the data tools free of TensorFlow).
"""

from official_bert.keras_models.classifier import TextClassifier
from official_bert.keras_models.embedder import TextEmbedder
from official_bert.keras_models.masked_lm import MaskedLM
from official_bert.keras_models.preprocessor import TextPreprocessor

__all__ = ["MaskedLM", "TextClassifier", "TextEmbedder", "TextPreprocessor"]
