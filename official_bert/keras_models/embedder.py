"""`TextEmbedder`: texts → sentence embeddings (the sentence-transformers recipe: BERT, mean or [CLS] pooling, L2
normalisation), with `from_checkpoint` (a sentence-transformers directory's own pooling), `.keras` and `export`."""

import json
import os

import keras
import tensorflow as tf

from official_bert.checkpoints import load_checkpoint
from official_bert.export.embedding import export_embedding
from official_bert.features.pooling import SentencePooling
from official_bert.keras_models import text_model
from official_bert.models import task_model

# sentence-transformers' files beside the weights: the module list and the pooling module's config.
_MODULES = "modules.json"
_NORMALIZE_MODULE = "sentence_transformers.models.Normalize"
_POOLING_MODES = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean",
                  "pooling_mode_max_tokens": "max"}


@keras.saving.register_keras_serializable(package="official_bert")
class TextEmbedder(text_model.TextModelMixin, task_model.TaskModel):
    """One vector per text: the last layer's token vectors pooled over the real tokens (the [CLS] vector, their
    mean or their maximum), optionally L2-normalised — sentence-transformers' Transformer → Pooling → Normalize.

    `predict` takes texts (a list of strings, a pair of lists, a `tf.data.Dataset`) and returns float32
    [N, hidden_size]. The default training loss is the cosine distance to target vectors (distilling a teacher's
    embeddings); pass your own to `compile` for other recipes.

    Args:
        encoder (BertEncoder): the encoder, new or with a checkpoint's weights.
        preprocessor (TextPreprocessor | dict): the tokenizer and packer (or its config).
        pooling (str): "mean", "cls" or "max".
        normalize (bool): L2-normalise each embedding.
        **kwargs: passed to keras.Model (e.g. `name`).

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder, TextEmbedder, TextPreprocessor
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "cat", "dog"]
    >>> model = TextEmbedder(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
    ...                      TextPreprocessor(vocab, sequence_length=16))
    >>> vectors = model.predict(["a cat", "a dog"], verbose=0)
    >>> vectors.shape, np.round(np.linalg.norm(vectors, axis=-1), 5).tolist()
    ((2, 128), [1.0, 1.0])
    """

    def __init__(self, encoder, preprocessor, pooling="mean", normalize=True, **kwargs):
        inputs = task_model.encoder_inputs()
        sequence = encoder(inputs)["sequence_output"]
        embedding = SentencePooling(pooling, normalize, dtype="float32", name="pooling")(
            keras.ops.cast(sequence, "float32"), inputs["input_mask"])
        super().__init__(inputs=inputs, outputs=embedding, name=kwargs.pop("name", "text_embedder"), **kwargs)
        if isinstance(preprocessor, dict):
            preprocessor = keras.saving.deserialize_keras_object(preprocessor)
        text_model.check_sequence_length(encoder, preprocessor)
        self.encoder = encoder
        self.preprocessor = preprocessor
        self.pooling = pooling
        self.normalize = normalize
        self.compile()

    @classmethod
    def from_checkpoint(cls, path, pooling=None, normalize=None, *, config=None, vocab_file=None,
                        spm_model_file=None, do_lower_case=None, preserve_unused_tokens=False, sequence_length=None,
                        dtype=None, **kwargs):
        """A `TextEmbedder` with a checkpoint's encoder. A sentence-transformers directory (modules.json) gives its
        pooling, normalisation and max_seq_length; otherwise mean pooling, normalised, 128 tokens.

        Args:
            path (str): a Google TF1, Hugging Face (or sentence-transformers) or official_bert checkpoint: a
                directory, a checkpoint prefix or a weights file (see `load_checkpoint`).
            pooling (str | None): "mean", "cls" or "max"; default: the sentence-transformers directory's, or
                "mean".
            normalize (bool | None): L2-normalise; default: the directory's, or True.
            config (BertConfig | str | None): the model's config or its file; default: the bert_config.json or
                config.json beside the weights.
            vocab_file (str | None): the WordPiece vocabulary; default: the vocab.txt beside the weights.
            spm_model_file (str | None): a SentencePiece model, instead of vocab_file.
            do_lower_case (bool | None): default: what the checkpoint suggests (a tokenizer_config.json, the casing
                of its vocabulary, Google's release names), uncased without evidence.
            preserve_unused_tokens (bool): keep `[unused<n>]` tokens whole.
            sequence_length (int | None): the longest packed row; default: the directory's max_seq_length, or 128.
            dtype (str | None): the encoder's dtype policy (e.g. "mixed_bfloat16"); default float32.
            **kwargs: passed to the constructor.

        Returns:
            TextEmbedder: with the checkpoint's encoder weights.

        Raises:
            CheckpointError: unreadable or mismatched, or without a config or vocabulary beside it (pass them).

        Example:
        >>> import tempfile
        >>> from official_bert import BertConfig, BertEncoder, TextEmbedder, save_checkpoint
        >>> work = tempfile.TemporaryDirectory()
        >>> vocab = work.name + "/words.txt"
        >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhi\\n")
        >>> _ = save_checkpoint(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5)), work.name,
        ...                     "huggingface", vocab_file=vocab)
        >>> embedder = TextEmbedder.from_checkpoint(work.name, pooling="cls")
        >>> embedder.pooling, embedder.normalize, embedder.preprocessor.sequence_length
        ('cls', True, 128)
        """
        found = sentence_transformers_settings(path)
        pooling = pooling or found.get("pooling", "mean")
        normalize = found.get("normalize", True) if normalize is None else normalize
        sequence_length = sequence_length or found.get("sequence_length", 128)
        encoder, preprocessor, _ = text_model.from_checkpoint_parts(
            path, config, vocab_file, spm_model_file, do_lower_case, preserve_unused_tokens, sequence_length, dtype)
        model = cls(encoder, preprocessor, pooling, normalize, **kwargs)
        load_checkpoint(model.encoder, path, do_lower_case=preprocessor.do_lower_case)
        return model

    def default_loss(self):
        return keras.losses.CosineSimilarity()

    def export(self, export_dir):
        """Writes the raw-text embedding SavedModel (`text` → `embedding`, core TensorFlow ops for WordPiece) as the
        next version in export_dir; returns its path.

        Args:
            export_dir (str): the directory of versions, as TF Serving's --model_base_path.

        Returns:
            str: the version written, `export_dir/<n>`.

        Example:
        >>> import tempfile
        >>> import tensorflow as tf
        >>> from official_bert import BertConfig, BertEncoder, TextEmbedder, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "cat", "dog"]
        >>> model = TextEmbedder(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                      TextPreprocessor(vocab, sequence_length=16))
        >>> served = tf.saved_model.load(model.export(tempfile.mkdtemp()))
        >>> served.signatures["serving_default"](text=tf.constant(["a cat"]))["embedding"].shape
        TensorShape([1, 128])
        """
        return export_embedding(export_dir, self.encoder, self.preprocessor.spec, self.preprocessor.sequence_length,
                                pooling=self.pooling, normalize=self.normalize)

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder),
                "preprocessor": keras.saving.serialize_keras_object(self.preprocessor), "pooling": self.pooling,
                "normalize": self.normalize, "name": self.name}


def sentence_transformers_settings(path):
    """What a sentence-transformers directory says of its pooling: {"pooling", "normalize", "sequence_length"}
    (those it states; empty for any other path).

    Example:
    >>> import tempfile
    >>> directory = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(directory, "1_Pooling"))
    >>> _ = open(os.path.join(directory, "modules.json"), "w").write(json.dumps([
    ...     {"path": "", "type": "sentence_transformers.models.Transformer"},
    ...     {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ...     {"path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    >>> _ = open(os.path.join(directory, "1_Pooling", "config.json"), "w").write(
    ...     '{"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true}')
    >>> sentence_transformers_settings(directory)
    {'normalize': True, 'pooling': 'mean'}
    """
    path = os.fspath(path)
    modules_file = os.path.join(path, _MODULES)
    if not tf.io.gfile.exists(modules_file):
        return {}
    modules = _read_json(modules_file)
    found = {"normalize": any(m.get("type") == _NORMALIZE_MODULE for m in modules)}
    for module in modules:
        pooling_config = os.path.join(path, module.get("path", ""), "config.json")
        if module.get("type", "").endswith(".Pooling") and tf.io.gfile.exists(pooling_config):
            modes = [mode for key, mode in _POOLING_MODES.items() if _read_json(pooling_config).get(key)]
            if len(modes) == 1:
                found["pooling"] = modes[0]
    settings_file = os.path.join(path, "sentence_bert_config.json")
    if tf.io.gfile.exists(settings_file) and _read_json(settings_file).get("max_seq_length"):
        found["sequence_length"] = int(_read_json(settings_file)["max_seq_length"])
    return dict(sorted(found.items()))


def _read_json(path):
    with tf.io.gfile.GFile(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))
