"""Sentence embeddings as a SavedModel for TF Serving: raw text in, one pooled (normalised) vector per text out.

With mean pooling over the last layer and normalisation, a sentence-transformers BERT (Transformer → Pooling(mean)
→ Normalize, e.g. all-MiniLM-L6-v2) gives its own embeddings.
"""

import keras
import tensorflow as tf

from official_bert.export.saved_model import ServingSpec, export_saved_model
from official_bert.export.text import TextPacker
from official_bert.features.pooling import SentencePooling
from official_bert.models.task_model import ENCODER_INPUTS


def embedding_model(encoder, layers=(-1,), pooling="mean", normalize=True):
    """A Keras model: the encoder's inputs → `embedding` [batch, len(layers) · H], the pooled vectors of
    `layers` (each normalised with `normalize`) side by side.

    Args:
        encoder: a `BertEncoder`.
        layers: indexes into its `encoder_outputs` (-1 the last layer).
        pooling: "cls", "mean" or "max" (see `SentencePooling`).
        normalize: L2-normalise each pooled vector.

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder
    >>> model = embedding_model(BertEncoder(BertConfig.from_preset("tiny", vocab_size=10)), layers=(-1, -2))
    >>> ids = np.array([[2, 5, 3, 0]])
    >>> embedding = model({"input_word_ids": ids, "input_mask": np.sign(ids), "input_type_ids": 0 * ids})
    >>> tuple(embedding.shape), [round(float(np.linalg.norm(v)), 4) for v in np.split(embedding[0], 2)]
    ((1, 256), [1.0, 1.0])
    """
    inputs = {name: keras.Input((None,), dtype="int32", name=name) for name in ENCODER_INPUTS}
    outputs = encoder(inputs)["encoder_outputs"]
    pooled = [SentencePooling(pooling, normalize, name=f"pooling_{i}")(outputs[layer], inputs["input_mask"])
              for i, layer in enumerate(layers)]
    embedding = pooled[0] if len(pooled) == 1 else keras.layers.Concatenate(name="embedding")(pooled)
    return keras.Model(inputs, embedding, name="sentence_embedding")


def embedding_serving_spec(tokenizer, seq_length, dimensions=None, normalize=False):
    """The `ServingSpec` of an `embedding_model`: `text` (string [batch]) → {"embedding": float32 [batch, D]}.

    Texts are packed as `[CLS] text [SEP]`, truncated to seq_length, and a batch is padded to its longest.

    Args:
        tokenizer: the model's `TokenizerSpec`.
        seq_length: the most tokens of a text ([CLS] and [SEP] included); 256 for all-MiniLM-L6-v2.
        dimensions: serve the first this many dimensions of each embedding (a Matryoshka model's smaller
            embedding); None serves them all.
        normalize: with `dimensions`, L2-normalise the shortened embedding (as the model normalises the whole).

    Example:
    >>> import os, tempfile
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
    >>> sorted(embedding_serving_spec(TokenizerSpec(vocab), 16).text_inputs)
    ['text']
    """
    tokenizer = tokenizer.layer()
    packer = TextPacker(tokenizer, seq_length, pad_to_longest=True)

    def outputs(embedding):
        if dimensions:
            embedding = embedding[:, :dimensions]
            if normalize:
                embedding = tf.math.l2_normalize(embedding, axis=-1, epsilon=1e-24)
        return {"embedding": embedding}

    def serve_text(call_model, text):
        return outputs(call_model(packer.pack(text)))

    return ServingSpec({"text": tf.TensorSpec([None], tf.string)}, serve_text, outputs, (seq_length,), (tokenizer,))


def export_embedding(export_dir, encoder, tokenizer, seq_length, layers=(-1,), pooling="mean", normalize=True,
                     dimensions=None):
    """Exports the sentence-embedding model of `encoder` (its layers pooled and normalised) as the next version in
    export_dir; returns its path.

    Signatures (see `export_saved_model`): serving_default takes raw `text`; serve_tensors and serve_examples
    take the encoder's inputs (padded to seq_length); each returns `embedding`.

    Args:
        export_dir: the directory of versions, as TF Serving's --model_base_path.
        encoder: a `BertEncoder` with its weights.
        tokenizer: the model's `TokenizerSpec`.
        seq_length: the most tokens of a text ([CLS] and [SEP] included); 256 for all-MiniLM-L6-v2.
        layers: indexes into the encoder's `encoder_outputs` (-1 the last layer), pooled and concatenated.
        pooling: "cls", "mean" or "max" over the real tokens.
        normalize: L2-normalise each pooled vector.
        dimensions: serve the first this many dimensions (renormalised with `normalize`); None: all.

    Example:
    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> from official_bert.export import export_embedding
    >>> from official_bert import BertConfig, BertEncoder
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> work = tempfile.mkdtemp()
    >>> vocab = os.path.join(work, "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
    >>> encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, num_hidden_layers=1))
    >>> path = export_embedding(os.path.join(work, "export"), encoder, TokenizerSpec(vocab), 16)
    >>> tf.saved_model.load(path).signatures["serving_default"](text=tf.constant(["hi", "hi hi"]))["embedding"].shape
    TensorShape([2, 128])
    """
    model = embedding_model(encoder, layers, pooling, normalize)
    return export_saved_model(export_dir, model, embedding_serving_spec(tokenizer, seq_length, dimensions, normalize))
