"""SavedModels for TF Serving: versioned, with raw-text (tokenized in the graph), tensor and tf.Example signatures.

    path = export_classifier(export_dir, model, TokenizerSpec(vocab_file), 128, ["0", "1"], text_b=True)

`export_saved_model` with a task's `ServingSpec` does the same for any model over the encoder's inputs;
`export_embedding` serves sentence embeddings, `export_tfhub` writes the TF Hub preprocess + encoder pair.
"""

from official_bert.export.classifier import classifier_outputs, classifier_serving_spec, export_classifier
from official_bert.export.embedding import embedding_model, embedding_serving_spec, export_embedding
from official_bert.export.tfhub import EncoderModule, export_tfhub
from official_bert.export.saved_model import EXAMPLE_FEATURES, KERAS_NAME, SIGNATURES, ServingSpec, export_saved_model
from official_bert.export.text import TextPacker
from official_bert.export.versions import versions, write_new_version
