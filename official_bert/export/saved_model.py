"""A model over the encoder's inputs as a SavedModel for TF Serving: raw-text, tensor and tf.Example signatures.

Task-independent: the task supplies a `ServingSpec` (its raw-text inputs and how it answers them, and what the
tensor signatures output), and `export_saved_model` writes a new version under the export directory:

- `serving_default`: the raw-text inputs → the task's answer, tokenized (and post-processed) in the graph;
- `serve_tensors`: int32 input_word_ids, input_mask, input_type_ids → the outputs;
- `serve_examples`: serialized tf.Examples with the original's int64 features input_ids, input_mask and
  segment_ids (as run_classifier's and run_squad's TFRecords hold them) → the outputs;

plus `model.keras` and the spec's `extra_files` beside saved_model.pb. Only TensorFlow is needed
to serve it (and tensorflow-text's ops for a SentencePiece tokenizer, or `BertTokenizer(wordpiece="tf_text")`).
"""

import dataclasses
import math
import os
from typing import Callable

import tensorflow as tf

from official_bert.export.versions import write_new_version
from official_bert.models.task_model import ENCODER_INPUTS

KERAS_NAME = "model.keras"
SIGNATURES = ("serving_default", "serve_tensors", "serve_examples")
# The encoder's inputs under the original's tf.Example feature names.
EXAMPLE_FEATURES = {"input_word_ids": "input_ids", "input_mask": "input_mask", "input_type_ids": "segment_ids"}


@dataclasses.dataclass(frozen=True)
class ServingSpec:
    """How a model is served: its raw-text inputs and how they are answered, and the tensor signatures' outputs.

    Args:
        text_inputs: name → tf.TensorSpec (tf.string) of each input of the raw-text signature.
        serve_text: (call_model, **those inputs) → {name: tensor}, what serving_default returns; `call_model`
            maps the encoder inputs {"input_word_ids", "input_mask", "input_type_ids"} (int32 [batch,
            *input_shape]) to the model's output. A classifier packs the text and post-processes the logits;
            SQuAD cuts a context into several windows and chooses one answer over them.
        postprocess: the model's output → {name: tensor}, what serve_tensors and serve_examples return.
        input_shape: the encoder inputs' shape after the batch dimension: (seq_length,), or
            (num_choices, seq_length) for multiple choice.
        resources: what the preprocessing uses that must be saved too: tokenizer layers, which carry the
            vocabulary (or SentencePiece model) as an asset.
        extra_files: name → text of files the version holds beside saved_model.pb and model.keras, which the
            graph does not read, e.g. a classifier's labels.json.
    """

    text_inputs: dict
    serve_text: Callable
    postprocess: Callable
    input_shape: tuple
    resources: tuple = ()
    extra_files: dict = dataclasses.field(default_factory=dict)


def export_saved_model(export_dir, model, spec):
    """Writes `model` with the signatures of `spec` as the next version export_dir/<n>/ and returns its path.

    The version is written under a temporary name and renamed when complete, so that TF Serving, which watches
    the directory, never loads half a version.

    Args:
        export_dir: the directory of versions, as TF Serving's --model_base_path.
        model: a Keras model over the encoder's inputs.
        spec: a `ServingSpec`.

    Example:
    >>> import os
    >>> import tensorflow as tf
    >>> import tempfile, keras
    >>> from official_bert.export import ServingSpec, export_saved_model
    >>> inputs = {name: keras.Input((4,), dtype="int32", name=name) for name in
    ...           ("input_word_ids", "input_mask", "input_type_ids")}
    >>> total = keras.layers.Add()([keras.ops.cast(x, "float32") for x in inputs.values()])
    >>> model = keras.Model(inputs, keras.layers.Dense(1)(total))
    >>> def preprocess(text):  # a stand-in: characters as ids
    ...     ids = tf.strings.unicode_decode(text, "UTF-8").to_tensor(shape=[None, 4])
    ...     return {"input_word_ids": ids, "input_mask": tf.sign(ids), "input_type_ids": tf.zeros_like(ids)}
    >>> postprocess = lambda score: {"score": score[:, 0]}
    >>> spec = ServingSpec({"text": tf.TensorSpec([None], tf.string)},
    ...                    lambda call_model, text: postprocess(call_model(preprocess(text))), postprocess,
    ...                    input_shape=(4,))
    >>> path = export_saved_model(tempfile.mkdtemp(), model, spec)
    >>> os.path.basename(path), sorted(tf.saved_model.load(path).signatures)
    ('1', ['serve_examples', 'serve_tensors', 'serving_default'])
    """
    shape = tuple(spec.input_shape)

    def call_model(inputs):
        # Float32 out whatever the model computes in (a bf16 export's heads may answer in bfloat16).
        return tf.nest.map_structure(lambda t: tf.cast(t, tf.float32) if t.dtype.is_floating else t,
                                     model(inputs, training=False))

    def outputs(inputs):
        return spec.postprocess(call_model(inputs))

    def serve_text(**texts):
        return spec.serve_text(call_model, **texts)

    def serve_tensors(**inputs):
        return outputs(inputs)

    features = {EXAMPLE_FEATURES[name]: tf.io.FixedLenFeature([math.prod(shape)], tf.int64) for name in ENCODER_INPUTS}

    def serve_examples(examples):
        parsed = tf.io.parse_example(examples, features)
        return outputs({name: tf.reshape(tf.cast(parsed[EXAMPLE_FEATURES[name]], tf.int32), [-1, *shape])
                        for name in ENCODER_INPUTS})

    tensor_specs = {name: tf.TensorSpec([None, *shape], tf.int32, name=name) for name in ENCODER_INPUTS}
    signatures = {
        "serving_default": tf.function(serve_text).get_concrete_function(**spec.text_inputs),
        "serve_tensors": tf.function(serve_tensors).get_concrete_function(**tensor_specs),
        "serve_examples": tf.function(serve_examples).get_concrete_function(
            tf.TensorSpec([None], tf.string, name="examples")),
    }
    root = tf.Module()
    # The tf.Variables the signatures capture, not the Keras variables wrapping them: exporting those wrappers
    # makes copies that TF1-style loaders (saved_model_cli run, TF Serving) then cannot find.
    root.model_variables = list({id(v): v for fn in signatures.values() for v in fn.variables}.values())
    root.resources = list(spec.resources)

    def write(directory):
        tf.saved_model.save(root, directory, signatures=signatures)
        model.save(os.path.join(directory, KERAS_NAME))
        for name, text in spec.extra_files.items():
            with tf.io.gfile.GFile(os.path.join(directory, name), "w") as f:
                f.write(text)

    return write_new_version(export_dir, write)
