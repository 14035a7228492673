"""Keras models that take text: `TextClassifier`, `TextEmbedder` and `MaskedLM`, each behind a `TextPreprocessor`
(strings → the encoder's inputs, its vocabulary inside the `.keras` file), with `from_checkpoint` (Google TF1,
Hugging Face, official_bert), the paper's `compile`, `fit` / `evaluate` / `predict` on strings, `save` and `export`.

`import official_bert` is enough for `keras.saving.load_model` to read their `.keras` files, before or after
`import keras`: the package stands in Keras's registry for these classes and imports this one when a file needs it
(it imports neither Keras nor TensorFlow itself, to keep the data tools free of them).
"""

from official_bert.keras_models.classifier import TextClassifier
from official_bert.keras_models.embedder import TextEmbedder
from official_bert.keras_models.masked_lm import MaskedLM
from official_bert.keras_models.preprocessor import TextPreprocessor

__all__ = ["MaskedLM", "TextClassifier", "TextEmbedder", "TextPreprocessor"]
