"""The TF Hub pair, as Model Garden publishes BERT: a `preprocess` SavedModel and an `encoder` SavedModel.

Code written for TF Hub's `bert_en_uncased_preprocess/3` and its encoders runs on them unchanged:

    preprocess = hub.load("hub/preprocess")              # or tf.saved_model.load
    encoder = hub.load("hub/encoder")
    outputs = encoder(preprocess(tf.constant(["hello world"])))    # pooled_output, sequence_output, ...
    pair = preprocess.bert_pack_inputs([preprocess.tokenize(a), preprocess.tokenize(b)], seq_length=64)
    special = preprocess.tokenize.get_special_tokens_dict()        # vocab_size, mask_id, padding_id, ...

and so do `hub.KerasLayer(preprocess)`, `hub.KerasLayer(preprocess.tokenize)`,
`hub.KerasLayer(preprocess.bert_pack_inputs, arguments=dict(seq_length=64))` and
`hub.KerasLayer(encoder, trainable=True)` in tf_keras (tests/export/test_tfhub_preprocessor_api.py fine-tunes a
classifier over them).

- preprocess (see `text.preprocessing.BertPreprocessor`): `__call__` (and signature serving_default): string
  [batch] → int32 [batch, seq_length] input_word_ids, input_mask, input_type_ids; `tokenize`: string [batch] →
  int32 RaggedTensor [batch, (words), (pieces)], with `tokenize.get_special_tokens_dict()`: vocab_size and the
  ids of [CLS], [SEP], [PAD], [MASK] as int32 scalars; `tokenize_with_offsets` (WordPiece only, not
  SentencePiece): also each token's start and limit byte offsets in the input; `bert_pack_inputs(segments,
  seq_length=None)`: one or two tokenized segments, [batch, (words), (pieces)] or [batch, (tokens)], → the
  three inputs, packed to seq_length (by default the export's). The vocabulary (or SentencePiece model) is an
  asset of the SavedModel.
- encoder: `__call__(inputs, training=False)`: those three inputs (int32 [batch, T], any T up to
  max_position_embeddings) → {"pooled_output" [B, H], "sequence_output" [B, T, H], "encoder_outputs": every
  layer's [B, T, H], "default": pooled_output}; signature serving_default has the same outputs with
  encoder_outputs flattened to encoder_outputs_0 ... encoder_outputs_{L-1}. It has `variables`,
  `trainable_variables` and `regularization_losses`, the attributes TF Hub's reusable SavedModels have.

Loading needs TensorFlow alone, plus `import tensorflow_text` where the tokenizer uses its ops (SentencePiece,
or `wordpiece="tf_text"`).
"""

import os

import tensorflow as tf

from official_bert.io import atomic_directory
from official_bert.models.task_model import ENCODER_INPUTS
from official_bert.text.preprocessing import BertPreprocessor

_INPUT_SPECS = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in ENCODER_INPUTS}
PREPROCESS_DIR = "preprocess"
ENCODER_DIR = "encoder"


class EncoderModule(tf.Module):
    """The encoder SavedModel's root: `__call__(inputs, training=False)` and the variable lists of TF Hub's
    reusable SavedModels, saved as plain attributes (tf.saved_model.load does not restore tf.Module's
    properties).

    Args:
        encoder: a `BertEncoder`.

    Example:
    >>> from official_bert import BertConfig, BertEncoder
    >>> module = EncoderModule(BertEncoder(BertConfig.from_preset("tiny", vocab_size=10)))
    >>> ids = tf.constant([[2, 5, 3]])
    >>> outputs = module({"input_word_ids": ids, "input_mask": tf.ones_like(ids), "input_type_ids": 0 * ids})
    >>> sorted(outputs), len(outputs["encoder_outputs"]), len(module.trainable_variables)
    (['default', 'encoder_outputs', 'pooled_output', 'sequence_output'], 2, 31)
    >>> sorted(module.serving_signature().structured_outputs)[:3]
    ['default', 'encoder_outputs_0', 'encoder_outputs_1']
    """

    variables = None
    trainable_variables = None

    def __init__(self, encoder):
        super().__init__()
        # A function, which the SavedModel does not track: only the tf.Variables below are saved, not the Keras
        # variables wrapping them (see saved_model.py).
        self._outputs = lambda inputs, training: _outputs(encoder, inputs, training)
        for training in (False, True):
            traced = self.__call__.get_concrete_function(_INPUT_SPECS, training=training)
        self.variables = list(traced.variables)
        self.trainable_variables = list(traced.trainable_variables)
        self.regularization_losses = []

    @tf.function
    def __call__(self, inputs, training=False):
        return self._outputs(inputs, training)

    def serving_signature(self):
        """The serving_default signature: the encoder inputs → the outputs, encoder_outputs_<i> for each layer."""
        return self._serve.get_concrete_function(**_INPUT_SPECS)

    @tf.function
    def _serve(self, **inputs):
        outputs = self._outputs(inputs, False)
        layers = outputs.pop("encoder_outputs")
        return {**outputs, **{f"encoder_outputs_{i}": layer for i, layer in enumerate(layers)}}


def _outputs(encoder, inputs, training):
    outputs = encoder(inputs, training=training)
    return {"default": outputs["pooled_output"], "pooled_output": outputs["pooled_output"],
            "sequence_output": outputs["sequence_output"], "encoder_outputs": list(outputs["encoder_outputs"])}


def export_tfhub(export_dir, encoder, tokenizer, seq_length=128):
    """Writes export_dir/preprocess and export_dir/encoder (see the module docstring); returns their paths.

    Each directory is written under a temporary name and renamed when complete, replacing an older one.

    Args:
        export_dir: the directory of the pair (created if needed).
        encoder: a `BertEncoder` with its weights.
        tokenizer: its `TokenizerSpec`.
        seq_length: the length `preprocess(text)` packs to, and `bert_pack_inputs`' default (it takes any).

    Example:
    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> from official_bert.export import export_tfhub
    >>> from official_bert import BertConfig, BertEncoder
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> work = tempfile.mkdtemp()
    >>> vocab = os.path.join(work, "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[MASK]\\nhi\\n")
    >>> encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=6, num_hidden_layers=1))
    >>> preprocess_dir, encoder_dir = export_tfhub(os.path.join(work, "hub"), encoder, TokenizerSpec(vocab), 8)
    >>> preprocess, loaded = tf.saved_model.load(preprocess_dir), tf.saved_model.load(encoder_dir)
    >>> loaded(preprocess(tf.constant(["hi hi"])))["sequence_output"].shape
    TensorShape([1, 8, 128])
    """
    preprocessor = BertPreprocessor(tokenizer.layer(), seq_length)
    module = EncoderModule(encoder)
    preprocess_signatures = {"serving_default": preprocessor.__call__.get_concrete_function()}
    encoder_signatures = {"serving_default": module.serving_signature()}
    preprocess_dir, encoder_dir = os.path.join(export_dir, PREPROCESS_DIR), os.path.join(export_dir, ENCODER_DIR)
    with atomic_directory(preprocess_dir) as tmp:
        tf.saved_model.save(preprocessor, tmp, signatures=preprocess_signatures)
    with atomic_directory(encoder_dir) as tmp:
        tf.saved_model.save(module, tmp, signatures=encoder_signatures)
    return preprocess_dir, encoder_dir
