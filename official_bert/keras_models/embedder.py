"""`TextEmbedder`: texts → sentence embeddings (the sentence-transformers recipe: BERT, mean or [CLS] pooling, L2
normalisation), with `from_checkpoint` (a sentence-transformers directory's own pooling), `.keras` and `export`."""

import keras
import numpy as np
import tensorflow as tf

from official_bert import families
from official_bert.checkpoints import load_checkpoint, save_checkpoint
from official_bert.checkpoints.sentence_transformers import sentence_transformers_settings, write_sentence_transformers
from official_bert.checkpoints.source import CheckpointError
from official_bert.classification import validation
from official_bert.export.embedding import export_embedding
from official_bert.features.pooling import SentencePooling
from official_bert.keras_models import text_model
from official_bert.models import task_model
from official_bert.prefetching import prefetched
from official_bert.retrieval.contrastive_model import ContrastiveModel, stack_columns
from official_bert.retrieval.losses import batch_text_ids, row_targets

_BUCKET_WIDTH = 8  # a batch's columns padded to a multiple of this (see `batch_padding`)


@keras.saving.register_keras_serializable(package="official_bert")
class TextEmbedder(text_model.TextModelMixin, task_model.TaskModel):
    """One vector per text: the last layer's token vectors pooled over the real tokens (the [CLS] vector, their
    mean or their maximum), optionally L2-normalised — sentence-transformers' Transformer → Pooling → Normalize.

    `predict` takes texts (a list of strings, a pair of lists, a `tf.data.Dataset`) and returns float32
    [N, hidden_size]. The default training loss is the cosine distance to target vectors (distilling a teacher's
    embeddings); pass your own to `compile` for other recipes. Compiled with one of sentence-transformers' losses
    (`official_bert.retrieval.losses`), `fit` takes rows of texts as columns: `fit((anchors, positives[, negatives,
    ...]))` for `MultipleNegativesRankingLoss` (in-batch negatives; its cached form embeds `mini_batch_size` texts at
    a time), `fit((texts_a, texts_b), scores)` for `CoSENTLoss` and `CosineSimilarityLoss`, and either inside a
    `MatryoshkaLoss`.

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

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """Configures training as `TextClassifier.compile` does; with a loss of `official_bert.retrieval.losses`,
        the "auto" optimizer corrects Adam's moments for their bias as torch's AdamW (sentence-transformers'
        optimizer) does, where BERT's does not.

        Args:
            optimizer (str | keras.optimizers.Optimizer): "auto": AdamWeightDecay with a warm-up then linear decay
                over each `fit`; or any Keras optimizer.
            loss (str | keras.losses.Loss | None): "auto": the cosine distance to target vectors; or one of
                `official_bert.retrieval.losses` (`MultipleNegativesRankingLoss`, ...) to train on rows of texts.
            metrics (str | list): "auto": none; or Keras metrics.
            **kwargs: the "auto" optimizer's `learning_rate`, `warmup_proportion`, `weight_decay_rate`, and
                keras.Model.compile's arguments.

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextEmbedder, TextPreprocessor
        >>> from official_bert.retrieval.losses import MultipleNegativesRankingLoss
        >>> model = TextEmbedder(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, num_hidden_layers=1)),
        ...                      TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hi"], sequence_length=8))
        >>> model.compile(loss=MultipleNegativesRankingLoss(), learning_rate=2e-5)
        """
        super().compile(optimizer, loss, metrics, **kwargs)
        if self._paper_optimizer and self._row_loss():
            self._paper_optimizer["bias_correction"] = True

    def fit(self, x=None, y=None, batch_size=None, epochs=1, shuffle=True, sample_weight=None, validation_data=None,
            **kwargs):
        """Keras's `fit`; compiled with a loss of `official_bert.retrieval.losses`, on rows of texts given as columns
        (see the class's docstring): each batch's texts are embedded column by column and the loss computed on the
        batch's embeddings; `validation_data` is then `(columns,)` or `(columns, scores)`.

        Args:
            x (tuple | list | tf.data.Dataset): with a retrieval loss, the columns of texts: `(anchors, positives,
                negatives...)` or `(texts_a, texts_b)`; otherwise texts as `TextClassifier.fit` takes them.
            y (list | numpy.ndarray | None): a scored pair's scores (CoSENT, cosine similarity); the target vectors
                of the default loss; None for the ranking losses.
            batch_size (int | None): rows a batch (in-batch negatives need at least 2); default 32.
            epochs (int): passes over the rows.
            shuffle (bool): shuffle the rows before each pass.
            sample_weight (numpy.ndarray | None): the default loss's weights; none with a retrieval loss.
            validation_data (tuple | None): evaluated after each epoch, as `x` (and `y`) are given.
            **kwargs: keras.Model.fit's other arguments.

        Returns:
            keras.callbacks.History: the losses of each epoch.

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextEmbedder
        >>> from official_bert.keras_models import TextPreprocessor
        >>> from official_bert.retrieval.losses import MultipleNegativesRankingLoss
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "cat", "dog", "sat", "ran"]
        >>> model = TextEmbedder(BertEncoder(BertConfig.from_preset("tiny", vocab_size=9, num_hidden_layers=1)),
        ...                      TextPreprocessor(vocab, sequence_length=8))
        >>> model.compile(loss=MultipleNegativesRankingLoss(), learning_rate=1e-3)
        >>> history = model.fit((["a cat", "a dog"] * 4, ["cat sat", "dog ran"] * 4), batch_size=2, verbose=0)
        >>> len(history.history["loss"])
        1
        """
        loss = self._row_loss()
        if loss is None:
            return super().fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=shuffle,
                               sample_weight=sample_weight, validation_data=validation_data, **kwargs)
        if sample_weight is not None:
            raise validation.ValidationError(f"sample_weight: {type(loss).__name__} weighs no rows")
        data = self._rows_dataset(loss, x, y, batch_size, shuffle)
        if validation_data is not None:
            validation_data = self._rows_dataset(loss, *validation_data, batch_size=batch_size)
        if getattr(self, "_paper_optimizer", None):
            self._schedule(data, epochs, kwargs.get("steps_per_epoch"))
        return self._trainer(loss).fit(data, epochs=epochs, shuffle=False, validation_data=validation_data,
                                       **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, sample_weight=None, **kwargs):
        """`keras.Model.evaluate` on texts; compiled with a loss of `official_bert.retrieval.losses`, on rows of
        texts given as columns, as `fit` takes them.

        Args:
            x (tuple | list | tf.data.Dataset): the columns of texts (a retrieval loss), or texts.
            y (list | numpy.ndarray | None): the scores of scored pairs, or the default loss's target vectors.
            batch_size (int | None): rows a batch; default 32.
            sample_weight (numpy.ndarray | None): the default loss's weights; none with a retrieval loss.
            **kwargs: `keras.Model.evaluate`'s other arguments (`verbose`, `return_dict`, ...).

        Returns:
            float | list[float] | dict[str, float]: the loss (and metrics), as Keras returns them.

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextEmbedder, TextPreprocessor
        >>> from official_bert.retrieval.losses import CoSENTLoss
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "cat", "dog"]
        >>> model = TextEmbedder(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                      TextPreprocessor(vocab, sequence_length=8))
        >>> model.compile(loss=CoSENTLoss())
        >>> loss = model.evaluate((["a cat", "a dog"], ["a cat", "a cat"]), [1.0, 0.5], verbose=0)
        >>> loss >= 0
        True
        """
        loss = self._row_loss()
        if loss is None:
            return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)
        return self._trainer(loss).evaluate(self._rows_dataset(loss, x, y, batch_size), **kwargs)

    def _row_loss(self):
        """The compiled loss if it is one on rows of texts (`retrieval.losses`), else None."""
        loss = getattr(self, "_compile_arguments", {}).get("loss")
        return loss if row_targets(loss) else None

    def _trainer(self, loss):
        """A `ContrastiveModel` over this model (its weights and optimizer), compiled with `loss`. Made per call,
        not kept: an attribute would make Keras track a model that holds this one."""
        trainer = ContrastiveModel(self, mini_batch_size=getattr(loss, "mini_batch_size", None),
                                   bucket_width=_BUCKET_WIDTH)
        trainer.compile(optimizer=self.optimizer, loss=loss)
        return trainer

    def _rows_dataset(self, loss, x, y=None, batch_size=None, shuffle=False):
        """Batches of (rows of encoder inputs [B, C, L], targets): the batch's text ids, or the pairs' scores."""
        columns = text_model.text_columns(x)
        count, batch_size = int(columns[0].shape[0]), batch_size or text_model.BATCH_SIZE
        if row_targets(loss) == "scores":
            if len(columns) != 2:
                raise validation.ValidationError(f"{type(loss).__name__} takes scored pairs: (texts_a, texts_b), "
                                                 f"not {len(columns)} columns")
            if y is None or len(y) != count:
                raise validation.ValidationError(f"{count} pairs, {'no' if y is None else len(y)} scores: expected "
                                                 "one score a pair")
            targets = np.array([validation.score(v, f"y[{i}]") for i, v in enumerate(y)], "float32")
        else:
            if y is not None:
                raise validation.ValidationError(f"y: {type(loss).__name__} takes no labels (each anchor's "
                                                 "positive is the target)")
            if batch_size < 2 and len(columns) == 2:
                raise validation.ValidationError(f"batch_size={batch_size}: in-batch negatives need at least 2 "
                                                 "rows a batch (or hard-negative columns)")
            index = {}
            targets = np.array([[index.setdefault(text, len(index)) for text in column.numpy().tolist()]
                                for column in columns], np.int64).T
        # All columns packed in one call: each call of the preprocessor traces the tokenizer's graph anew.
        packed = self._packed_rows(tf.concat(columns, axis=0))
        rows = tuple({name: value[c * count:(c + 1) * count] for name, value in packed.items()}
                     for c in range(len(columns)))
        data = tf.data.Dataset.from_tensor_slices((rows, targets))
        if shuffle:
            data = data.shuffle(count, reshuffle_each_iteration=True)
        scores = row_targets(loss) == "scores"

        def batch(columns, targets):
            padded = [{name: value.to_tensor() for name, value in column.items()} for column in columns]
            return stack_columns(padded), targets if scores else batch_text_ids(targets)

        return prefetched(data.ragged_batch(batch_size).map(batch))

    def export(self, export_dir, dimensions=None):
        """Writes the raw-text embedding SavedModel (`text` → `embedding`, core TensorFlow ops for WordPiece) as the
        next version in export_dir; returns its path.

        Args:
            export_dir (str): the directory of versions, as TF Serving's --model_base_path.
            dimensions (int | None): serve each embedding's first this many dimensions (renormalised if the model
                normalises): a Matryoshka-trained model's smaller embedding; None serves them all.

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
        width = self.encoder.config.hidden_size
        if dimensions is not None and not (isinstance(dimensions, int) and 0 < dimensions <= width):
            raise ValueError(f"dimensions={dimensions!r}: expected a width from 1 to the embeddings' {width}")
        return export_embedding(export_dir, self.encoder, self.preprocessor.spec, self.preprocessor.sequence_length,
                                pooling=self.pooling, normalize=self.normalize, dimensions=dimensions)

    def save_sentence_transformers(self, directory):
        """Writes the model as a sentence-transformers directory (`SentenceTransformer(directory)` loads it and
        gives the same embeddings; so does `TextEmbedder.from_checkpoint(directory)`): the weights as Hugging Face
        safetensors, the tokenizer, and the pooling and normalisation as modules. Returns `directory`.

        Args:
            directory (str): created if needed; files of the same names are replaced.

        Returns:
            str: `directory`.

        Raises:
            CheckpointError: a model of BERT's family (RoBERTa, XLM-R, DistilBERT, ELECTRA) or with a tokenizer
                other than WordPiece: only BERT's sentence-transformers form is written here.

        Example:
        >>> import os, tempfile
        >>> from official_bert import BertConfig, BertEncoder, TextEmbedder, TextPreprocessor
        >>> model = TextEmbedder(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, num_hidden_layers=1)),
        ...                      TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hi"], sequence_length=16))
        >>> directory = model.save_sentence_transformers(tempfile.mkdtemp())
        >>> again = TextEmbedder.from_checkpoint(directory)
        >>> settings = (again.pooling, again.normalize, again.preprocessor.sequence_length)
        >>> settings, "modules.json" in os.listdir(directory)
        (('mean', True, 16), True)
        """
        spec, family = self.preprocessor.spec, self.encoder.config.family
        if family or spec.kind != families.WORDPIECE:
            raise CheckpointError(f"save_sentence_transformers: a {family or spec.kind} model has no "
                                  "sentence-transformers form here (BERT with a WordPiece vocabulary only)")
        save_checkpoint(self.encoder, directory, "huggingface")
        write_sentence_transformers(directory, spec.vocab_file, self.pooling, self.normalize,
                                    self.preprocessor.sequence_length, self.preprocessor.do_lower_case,
                                    self.encoder.config.hidden_size)
        return directory

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder),
                "preprocessor": keras.saving.serialize_keras_object(self.preprocessor), "pooling": self.pooling,
                "normalize": self.normalize, "name": self.name}
