"""What every Keras model that takes text shares: strings in `fit` / `evaluate` / `predict` (through its
`TextPreprocessor`, padded per batch), the paper's optimizer as `compile`'s default, and finding a checkpoint's
config, vocabulary and casing for `from_checkpoint`."""

import collections.abc
import json
import os
import types

import keras
import numpy as np
import tensorflow as tf

from official_bert.checkpoints import causal, detect
from official_bert.checkpoints.case import check_case, own_casing
from official_bert.checkpoints.sentence_transformers import vocab_from_tokenizer_json
from official_bert.checkpoints.source import CheckpointError
from official_bert.classification import validation
from official_bert.configs import BertConfig
from official_bert.keras_models.preprocessor import TextPreprocessor
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.optimization import create_optimizer
from official_bert.prefetching import prefetched
from official_bert.text.tokenizer_spec import TokenizerSpec, for_checkpoint

# What `fit`, `evaluate` and `predict` take as x, for the messages that refuse anything else.
EXPECTED = "a list or 1-D array of strings, a pair of them, or a batched tf.data.Dataset"

# The paper's fine-tuning (Appendix A.3) and the original run_classifier.py's defaults.
LEARNING_RATE = 5e-5
WARMUP_PROPORTION = 0.1
WEIGHT_DECAY_RATE = 0.01
BATCH_SIZE = 32


class TextModelMixin:
    """`fit`, `evaluate` and `predict` on texts, and `compile` with the paper's optimizer, for a Keras model over the
    encoder's inputs that has a `preprocessor` (a `TextPreprocessor`).

    x may be a list or NumPy array of strings, a pair `(texts_a, texts_b)` of them (or an [N, 2] array), or a
    batched `tf.data.Dataset` whose elements are Keras's `x`, `(x, y)` or `(x, y, sample_weight)` with x a string
    batch or a pair of them (`((a, b), y)`). Texts in memory are tokenized once, before the first step (not again
    each epoch); a dataset's batch as it comes. Each batch is padded to its own longest row. A dict of the encoder's
    inputs passes straight to Keras.

    Example:
    >>> from official_bert.keras_models import MaskedLM, TextClassifier, TextEmbedder
    >>> all(issubclass(model, TextModelMixin) for model in (MaskedLM, TextClassifier, TextEmbedder))
    True
    """

    def compile(self, optimizer="auto", loss="auto", metrics="auto", *, learning_rate=LEARNING_RATE,
                warmup_proportion=WARMUP_PROPORTION, weight_decay_rate=WEIGHT_DECAY_RATE, jit_compile=False,
                **kwargs):
        """`keras.Model.compile` with the paper's defaults: "auto" is the original's AdamWeightDecay whose rate warms
        up linearly over `warmup_proportion` of each `fit`'s updates to `learning_rate`, then decays linearly to 0
        at its last update; and the task's loss and metrics. Any argument may be given as Keras takes it instead.
        The constructor calls `compile()` already: call it again to change the learning rate or the loss.

        Batches vary in length, so XLA (which compiles one program per shape) is off unless `jit_compile=True`.

        Args:
            optimizer (str | keras.optimizers.Optimizer): "auto": AdamWeightDecay with the schedule above; or any
                optimizer Keras takes.
            loss (str | keras.losses.Loss | None): "auto": the model's own (softmax or binary cross-entropy, mean
                squared error, the cosine distance, the masked-LM loss); or any loss Keras takes.
            metrics (str | list): "auto": the model's own (accuracy, Pearson correlation, the masked-LM accuracy);
                or a list Keras takes.
            learning_rate (float): the peak learning rate of "auto" (the paper's fine-tuning: 5e-5).
            warmup_proportion (float): the share of each `fit`'s updates the learning rate warms up over.
            weight_decay_rate (float): AdamWeightDecay's decoupled weight decay (biases and LayerNorm excluded).
            jit_compile (bool): compile the steps with XLA.
            **kwargs: `keras.Model.compile`'s other arguments (e.g. `steps_per_execution`, `run_eagerly`).

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> model.compile(learning_rate=1e-4)
        >>> history = model.fit(["good film", "bad film"] * 8, ["pos", "neg"] * 8, epochs=2, verbose=0)
        >>> float(model.optimizer.learning_rate)  # decayed to 0 at the last of the 2 x 1 updates
        0.0
        """
        self._paper_optimizer = None
        if isinstance(optimizer, str) and optimizer == "auto":
            self._paper_optimizer = {"init_lr": learning_rate, "warmup_proportion": warmup_proportion,
                                     "weight_decay_rate": weight_decay_rate}
            # Replaced in `fit`, which knows the number of updates the schedule spans.
            optimizer = create_optimizer(learning_rate, 1, 0, weight_decay_rate=weight_decay_rate)
        if isinstance(loss, str) and loss == "auto":
            loss = self.default_loss()
        if isinstance(metrics, str) and metrics == "auto":
            metrics = self.default_metrics()
        self._compile_arguments = {"loss": loss, "metrics": metrics, "jit_compile": jit_compile, **kwargs}
        super().compile(optimizer=optimizer, **self._compile_arguments)

    def get_compile_config(self):
        """Keras's compile config (the optimizer as `fit` scheduled it) and the paper optimizer's settings, so that a
        `.keras` file restores the optimizer and its state (`compile_from_config`)."""
        config = super().get_compile_config()
        if config:
            # Whether the file holds the optimizer's moments (it has them once it has trained) or its step alone.
            config["optimizer_built"] = bool(self.optimizer.built)
            if getattr(self, "_paper_optimizer", None):
                config["paper_optimizer"] = dict(self._paper_optimizer)
        return config

    def compile_from_config(self, config):
        """Compiles as the saved model was (see `get_compile_config`) and builds the optimizer as it was saved, so
        that the `.keras` file restores its variables (its step, and its moments once it has trained)."""
        config = dict(config)
        paper_optimizer = config.pop("paper_optimizer", None)
        optimizer_built = config.pop("optimizer_built", True)
        arguments = keras.saving.deserialize_keras_object(config)
        keras.Model.compile(self, **arguments)
        self._paper_optimizer = paper_optimizer
        self._compile_arguments = {name: value for name, value in arguments.items() if name != "optimizer"}
        if self.built and optimizer_built:
            self.optimizer.build(self.trainable_variables)

    def load_own_variables(self, store):
        super().load_own_variables(store)
        # Keras calls load_assets next, on this model and then on its layers, only when the .keras file has assets.
        self.preprocessor.expect_assets(False)

    def load_assets(self, dir_path):
        self.preprocessor.expect_assets(True)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, shuffle=True, sample_weight=None, validation_data=None,
            **kwargs):
        """`keras.Model.fit` on texts: trains for `epochs` passes over them, each batch padded to its longest row.

        With the paper's optimizer (`compile()`'s "auto"), the learning rate's warm-up and linear decay span this
        call's updates (epochs × batches), as run_classifier.py's span its run.

        Args:
            x (list[str] | tuple | numpy.ndarray | tf.data.Dataset | dict): the texts: a list or NumPy array of
                strings; a pair `(texts_a, texts_b)` of them (or an [N, 2] array) for sentence-pair tasks; a
                batched `tf.data.Dataset` of `x`, `(x, y)` or `(x, y, sample_weight)` elements (x a batch of
                strings or a pair of them); or a dict of the encoder's inputs, which passes straight to Keras.
                Texts in memory are tokenized once, before the first step.
            y (list | numpy.ndarray | None): the targets, one per text: label ids or names for `TextClassifier`
                ([N, num_classes] 0/1 rows for multi-label, numbers for regression), vectors for `TextEmbedder`;
                none for `MaskedLM` (it masks the texts itself) or with a dataset (y is inside it).
            batch_size (int | None): texts per batch; default 32.
            epochs (int): passes over the texts.
            shuffle (bool): shuffle the texts anew each epoch (a dataset is taken as it comes).
            sample_weight (list | numpy.ndarray | None): a weight per text for the loss.
            validation_data (tuple | tf.data.Dataset | None): `(x_val, y_val)` in the forms x and y take, or a
                dataset; evaluated at the end of each epoch.
            **kwargs: `keras.Model.fit`'s other arguments (`verbose`, `callbacks`, `steps_per_epoch`,
                `initial_epoch`, ...).

        Returns:
            keras.callbacks.History: the loss and metrics of each epoch (`history.history`).

        Raises:
            ValidationError: a text or label that is not one (None, NaN, a class outside `label_list`), or x and y
                of different lengths, naming its position (`texts[3]`, `y[3]`).

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film", "plot"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=8, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> texts, labels = ["good film", "bad film", "good plot", "bad plot"] * 4, ["pos", "neg"] * 8
        >>> history = model.fit(texts, labels, batch_size=4, epochs=2, verbose=0,
        ...                     validation_data=(["good film", "bad plot"], ["pos", "neg"]))
        >>> sorted(history.history), len(history.history["val_loss"])
        (['accuracy', 'loss', 'val_accuracy', 'val_loss'], 2)
        """
        data = self._dataset(x, y, sample_weight, batch_size, shuffle)
        if validation_data is not None:
            validation_data = self._dataset(*_unpack(validation_data), batch_size=batch_size)
        if getattr(self, "_paper_optimizer", None):
            self._schedule(data, epochs, kwargs.get("steps_per_epoch"))
        return super().fit(data, epochs=epochs, shuffle=False, validation_data=validation_data, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, sample_weight=None, **kwargs):
        """`keras.Model.evaluate` on texts: the loss and metrics over them.

        Args:
            x (list[str] | tuple | numpy.ndarray | tf.data.Dataset | dict): the texts, in the forms `fit` takes.
            y (list | numpy.ndarray | None): the targets, as for `fit`.
            batch_size (int | None): texts per batch; default 32.
            sample_weight (list | numpy.ndarray | None): a weight per text.
            **kwargs: `keras.Model.evaluate`'s other arguments (`verbose`, `return_dict`, `callbacks`, ...).

        Returns:
            float | list[float] | dict[str, float]: the loss, or the loss and metrics (a dict with
                `return_dict=True`), as Keras returns them.

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> sorted(model.evaluate(["good film", "bad film"], ["pos", "neg"], return_dict=True, verbose=0))
        ['accuracy', 'loss']
        """
        if kwargs.get("_use_cached_eval_dataset"):  # fit's validation: the dataset fit made of validation_data
            return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)
        return super().evaluate(self._dataset(x, y, sample_weight, batch_size), **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        """`keras.Model.predict` on texts: the model's outputs, one row per text, in order.

        Args:
            x (list[str] | tuple | numpy.ndarray | tf.data.Dataset | dict): the texts, in the forms `fit` takes
                (a dataset of texts alone).
            batch_size (int | None): texts per batch; default 32.
            **kwargs: `keras.Model.predict`'s other arguments (`verbose`, `callbacks`, ...).

        Returns:
            numpy.ndarray: `TextClassifier`: the logits, float32 [N, num_classes] (`classify` gives the labels,
                `probabilities` the softmax); `TextEmbedder`: the embeddings, float32 [N, hidden_size];
                `MaskedLM` (given a dict of the encoder's inputs with `masked_lm_positions`): {"mlm_logits": the
                logits over the vocabulary at those positions} (for texts with `[MASK]`s, `fill_mask`).

        Example:
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 3)
        >>> model.predict(["good film", "a bad film", "film"], batch_size=2, verbose=0).shape
        (3, 3)
        """
        return super().predict(self._dataset(x, batch_size=batch_size), **kwargs)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """`keras.Model.save`: the model in one `.keras` file — its weights, its `TextPreprocessor` with the
        vocabulary inside (not a path to it), the labels and thresholds, and the optimizer with its state, so that
        `fit` continues where it stopped. `keras.saving.load_model(filepath)` reads it back in any process that has
        run `import official_bert` (before or after `import keras`).

        Args:
            filepath (str | os.PathLike): where to write; ends in `.keras`.
            overwrite (bool): replace an existing file (else Keras asks first).
            zipped (bool | None): a zipped `.keras` file (the default), or an unzipped directory with `False`.
            **kwargs: passed to `keras.Model.save`.

        Example:
        >>> import os, tempfile
        >>> import keras
        >>> from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad", "film"]
        >>> model = TextClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7, num_hidden_layers=1)),
        ...                        TextPreprocessor(vocab, sequence_length=16), 2, label_list=["neg", "pos"])
        >>> path = os.path.join(tempfile.mkdtemp(), "films.keras")
        >>> model.save(path)
        >>> reloaded = keras.saving.load_model(path)
        >>> reloaded.label_list, reloaded.classify(["good film"]) == model.classify(["good film"])
        (['neg', 'pos'], True)
        """
        return super().save(filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def default_loss(self):
        raise NotImplementedError

    def default_metrics(self):
        return []

    def targets(self, y):
        """y as the loss takes it (a subclass maps label names to ids)."""
        return np.asarray(y)

    def _schedule(self, data, epochs, steps_per_epoch):
        steps = steps_per_epoch or int(data.cardinality())
        if steps < 1:
            raise ValueError("fit: the dataset's length is unknown; pass steps_per_epoch, so that the learning rate's "
                             "warm-up and decay can span the run")
        settings = dict(self._paper_optimizer)
        total = steps * epochs
        warmup = int(total * settings.pop("warmup_proportion"))
        optimizer = create_optimizer(settings.pop("init_lr"), total, warmup, **settings)
        keras.Model.compile(self, optimizer=optimizer, **self._compile_arguments)

    def _dataset(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False):
        if isinstance(x, dict):
            # The encoder's inputs already: Keras batches them.
            inputs = sorted(self.input) if isinstance(self.input, dict) else None
            if inputs is not None and sorted(x) != inputs:
                raise validation.ValidationError(
                    f"x: a dict with the keys {', '.join(map(repr, sorted(x, key=str)))}; a dict is taken as the "
                    f"encoder's inputs ({', '.join(inputs)}): give texts as {EXPECTED}")
            return tf.data.Dataset.from_tensor_slices(keras.utils.pack_x_y_sample_weight(
                x, *[v for v in (None if y is None else self.targets(y), sample_weight)])).batch(
                    batch_size or BATCH_SIZE)
        if isinstance(x, tf.data.Dataset):
            if y is not None or sample_weight is not None:
                raise ValueError("pass the labels inside the tf.data.Dataset, as (x, y) elements, not as y")
            return prefetched(x.map(self._preprocess_element, num_parallel_calls=tf.data.AUTOTUNE))
        # Texts in memory are tokenized once, here: a dataset that tokenized in its map would instantiate the
        # tokenizer's graph (hundreds of functions) again for each epoch's iterator, seconds each.
        texts = texts_tensor(x)
        count = int(tf.nest.flatten(texts)[0].shape[0])
        for values, name in ((y, "labels"), (sample_weight, "sample weights")):
            if values is not None and _length(values) != count:
                raise validation.ValidationError(f"{count} texts, {_length(values)} {name}: expected one per text")
        # Checked before the (slower) tokenizing, so that a bad label is reported at once.
        extra = [] if y is None else [self.targets(y)]
        if sample_weight is not None:
            extra.append(np.asarray(sample_weight, "float32"))
        parts = [self._packed_rows(texts), *extra]
        # Keras's (x,), (x, y) or (x, y, sample_weight) elements.
        data = tf.data.Dataset.from_tensor_slices(tuple(parts))
        if shuffle:
            data = data.shuffle(int(data.cardinality()), reshuffle_each_iteration=True)
        return prefetched(data.ragged_batch(batch_size or BATCH_SIZE).map(
            lambda *element: self._packed_batch(*_padded(element))))

    def _packed_rows(self, texts):
        return packed_rows(self.preprocessor, texts)

    def _preprocess_element(self, *element):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(element)
        return self._packed_batch(self.preprocessor(x), y, sample_weight)

    def _packed_batch(self, inputs, y=None, sample_weight=None):
        """A batch of the preprocessor's outputs as Keras takes it (`MaskedLM` masks it here)."""
        return keras.utils.pack_x_y_sample_weight(inputs, y, sample_weight)


def packed_rows(preprocessor, texts, chunk=1024):
    """The preprocessor's inputs for `texts` (a string tensor or a pair), each row unpadded (RaggedTensors): padded
    again per batch, to the batch's longest row, as the preprocessor pads.

    Args:
        preprocessor: a `TextPreprocessor`, or a `tf.function` of one (made once, it traces the tokenizer's graph
            once: a caller packing again and again passes that).
        texts: string tensor [N], or a pair of them.
        chunk: texts packed at once.

    Example:
    >>> layer = TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"], sequence_length=8)
    >>> packed_rows(layer, tf.constant(["a", "a b a"]))["input_word_ids"].to_list()
    [[2, 4, 3], [2, 4, 5, 4, 3]]
    """
    pack = tf.function(preprocessor) if isinstance(preprocessor, TextPreprocessor) else preprocessor
    size = int(tf.nest.flatten(texts)[0].shape[0])
    rows = []
    for start in range(0, size, chunk):
        packed = pack(tf.nest.map_structure(lambda t: t[start:start + chunk], texts))
        lengths = tf.reduce_sum(packed["input_mask"], axis=1)
        rows.append({name: tf.RaggedTensor.from_tensor(value, lengths=lengths) for name, value in packed.items()})
    return {name: tf.concat([part[name] for part in rows], axis=0) for name in rows[0]}


def _padded(element):
    """A batch's ragged rows zero-padded to its longest row."""
    return tf.nest.map_structure(lambda t: t.to_tensor() if isinstance(t, tf.RaggedTensor) else t, element)


def _length(values):
    """How many rows `values` (labels or weights: a list, an array, a Series, a tensor) has."""
    return len(values) if isinstance(values, (list, tuple)) else int(np.shape(values)[0]) if np.ndim(values) else 1


def _unpack(data):
    if isinstance(data, tf.data.Dataset):
        return (data,)
    return keras.utils.unpack_x_y_sample_weight(tuple(data))


def texts_tensor(x):
    """Texts (a list or array of strings, a pair of them, or an [N, 2] array) as a string tensor [N], or a pair.

    Each text must be a str, or bytes in UTF-8; anything else (None, a number, NaN, a list) is refused in one line
    naming its position, rather than read as "None", "7" or "nan".

    Args:
        x: the texts.

    Returns:
        a string tensor [N] (UTF-8), or a pair of them.

    Raises:
        ValidationError: no texts, a text that is not one, a pair of unequal lengths, or not a sequence (a
            generator, an iterator, a set, a number: `not_texts`).

    Example:
    >>> [t.numpy().tolist() for t in texts_tensor(np.array([["a", "b"], ["c", "d"]]))]
    [[b'a', b'c'], [b'b', b'd']]
    >>> texts_tensor(["a good film", None])
    Traceback (most recent call last):
    ...
    official_bert.classification.validation.ValidationError: texts[1] is None, not a text
    """
    problem = not_texts(x, "x")
    if problem:
        raise validation.ValidationError(problem)
    if isinstance(x, tuple) and len(x) == 2 and not isinstance(x[0], (str, bytes)):
        texts_a, texts_b = _texts(x[0], "texts_a"), _texts(x[1], "texts_b")
        if len(texts_a) != len(texts_b):
            raise validation.ValidationError(f"a pair of unequal lengths: {len(texts_a)} texts_a, {len(texts_b)} "
                                             "texts_b")
        return _string_tensor(texts_a), _string_tensor(texts_b)
    if isinstance(x, (str, bytes)):
        raise validation.ValidationError(f"expected a list of texts, got one text {x[:40]!r}: pass [text]")
    rows = list(x) if isinstance(x, (list, tuple)) else np.asarray(x, dtype=object)
    pairs = rows.ndim == 2 and rows.shape[1] == 2 if isinstance(rows, np.ndarray) else bool(rows) and all(
        isinstance(row, (list, tuple, np.ndarray)) and len(row) == 2 for row in rows)
    if pairs:  # [N, 2]: a pair per row
        if not len(rows):
            raise validation.ValidationError("expected texts, got none")
        texts_a = [validation.text(row[0], f"texts[{i}][0]") for i, row in enumerate(rows)]
        texts_b = [validation.text(row[1], f"texts[{i}][1]") for i, row in enumerate(rows)]
        return _string_tensor(texts_a), _string_tensor(texts_b)
    return _string_tensor(_texts(rows, "texts"))


def not_texts(x, name):
    """Why `x` cannot be a model's texts although it may hold some (a generator, an iterator, a set, a scalar), in one
    line that begins with `name`; None for a sequence (whose items are checked one by one).

    Args:
        x: what was given.
        name: what names it, e.g. "x" or "texts_a".

    Example:
    >>> not_texts(["a", "b"], "x") is None
    True
    >>> print(not_texts(iter(["a", "b"]), "x"))
    x: got an iterator (list_iterator), whose texts cannot be counted nor read twice; expected a list or 1-D array \
of strings, a pair of them, or a batched tf.data.Dataset (list(...) the texts, or make batches a Dataset: \
tf.data.Dataset.from_generator)
    """
    if isinstance(x, (list, tuple, np.ndarray, str, bytes)) or hasattr(x, "__array__"):
        return None  # a sequence, an array or a pandas Series; one text is refused by the caller
    fix = "(list(...) the texts, or make batches a Dataset: tf.data.Dataset.from_generator)"
    if isinstance(x, types.GeneratorType):
        return f"{name}: got a generator, whose texts cannot be counted nor read twice; expected {EXPECTED} {fix}"
    if isinstance(x, collections.abc.Iterator):
        return (f"{name}: got an iterator ({type(x).__name__}), whose texts cannot be counted nor read twice; "
                f"expected {EXPECTED} {fix}")
    if isinstance(x, collections.abc.Set):
        return (f"{name}: got a {type(x).__name__}, whose order is not the outputs' order; expected {EXPECTED} (pass "
                "sorted(...) or list(...) of it)")
    if isinstance(x, collections.abc.Mapping):
        return f"{name}: got a {type(x).__name__}; expected {EXPECTED}"
    if not isinstance(x, collections.abc.Sequence):
        return f"{name}: got {type(x).__name__} {x!r:.40}; expected {EXPECTED}"
    return None


def text_columns(x):
    """Rows of texts given as columns — a tuple or list of two or more sequences of texts of one length (anchors,
    positives, negatives...; or a scored pair's two texts) — as string tensors [N], one a column. Each text is
    checked as `texts_tensor` checks it, and must hold more than spaces.

    Args:
        x: the columns.

    Returns:
        a list of string tensors [N] (UTF-8).

    Raises:
        ValidationError: fewer than two columns, columns of unequal lengths, or a text that is not one or is empty.

    Example:
    >>> [t.numpy().tolist() for t in text_columns((["a query"], ["its passage"]))]
    [[b'a query'], [b'its passage']]
    >>> text_columns((["a query", "another"], ["its passage", " "]))
    Traceback (most recent call last):
    ...
    official_bert.classification.validation.ValidationError: texts[1][1] is empty: expected a text
    """
    if not isinstance(x, (tuple, list)) or len(x) < 2 or any(isinstance(c, (str, bytes)) for c in x):
        raise validation.ValidationError("expected rows of texts as columns: a tuple (anchors, positives, "
                                         "negatives...) or (texts_a, texts_b) of lists of texts")
    columns = [_texts(column, f"texts[{c}]") for c, column in enumerate(x)]
    lengths = sorted({len(column) for column in columns})
    if len(lengths) > 1:
        raise validation.ValidationError(f"columns of unequal lengths ({', '.join(map(str, lengths))} texts): "
                                         "expected one text of each column a row")
    for c, column in enumerate(columns):
        for i, text in enumerate(column):
            if not text.strip():
                raise validation.ValidationError(f"texts[{c}][{i}] is empty: expected a text")
    return [_string_tensor(column) for column in columns]


def _texts(x, name):
    """The texts of the sequence `x` as strs, each checked; `name` names them in errors."""
    problem = not_texts(x, name)
    if problem:
        raise validation.ValidationError(problem)
    if isinstance(x, (str, bytes)):
        raise validation.ValidationError(f"{name}: expected a list of texts, got one text {x[:40]!r}")
    rows = x if isinstance(x, list) else np.asarray(x, dtype=object)
    if isinstance(rows, np.ndarray) and rows.ndim != 1:
        raise validation.ValidationError(f"{name}: expected a list or 1-D array of strings, or a pair of them; got "
                                         f"shape {rows.shape}")
    texts = [validation.text(text, f"{name}[{i}]") for i, text in enumerate(rows)]
    if not texts:
        raise validation.ValidationError("expected texts, got none")
    return texts


def _string_tensor(texts):
    return tf.constant([text.encode("utf-8") for text in texts], tf.string)


def from_checkpoint_parts(path, config=None, vocab_file=None, spm_model_file=None, do_lower_case=None,
                          preserve_unused_tokens=False, sequence_length=128, dtype=None):
    """The encoder and preprocessor a checkpoint needs: its config, vocabulary and casing found beside it (or
    given), the left-only constraint kept where the config or the checkpoint records it.

    Args:
        path: anything `load_checkpoint` reads: a Google TF1, Hugging Face or official_bert checkpoint (directory,
            prefix or file).
        config: a `BertConfig` or config file; default: the bert_config.json / config.json beside the weights.
        vocab_file, spm_model_file: the tokenizer's file; default: the vocab.txt beside the weights (for RoBERTa,
            XLM-R, DistilBERT and ELECTRA, the family's tokenizer files beside them: `tokenizer_spec.for_checkpoint`).
        do_lower_case: default: what the checkpoint suggests (a tokenizer_config.json, the casing of its
            vocabulary, Google's release names), uncased without evidence; a byte-level BPE never lowercases; a value
            that evidence contradicts raises CheckpointError (`checkpoints.case.check_case`).
        preserve_unused_tokens: keep `[unused<n>]` whole.
        sequence_length: the preprocessor's longest row.
        dtype: the encoder's dtype policy (e.g. "mixed_bfloat16"), default float32.

    Returns:
        (encoder, preprocessor, located checkpoint).

    Example:
    >>> import tempfile
    >>> from official_bert.checkpoints import save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> vocab = os.path.join(work.name, "words.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nHi\\n")
    >>> _ = save_checkpoint(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5)), work.name, vocab_file=vocab)
    >>> encoder, preprocessor, located = from_checkpoint_parts(work.name, sequence_length=16)
    >>> preprocessor.do_lower_case, preprocessor.vocabulary[-1], located.format  # "Hi": a cased vocabulary
    (False, 'Hi', 'official_bert')
    """
    located = detect.locate(path)
    if config is None:
        if located.config_file is None:
            raise CheckpointError(f"{path}: no bert_config.json or config.json beside the checkpoint; pass config=")
        config, config_file = BertConfig.from_json_file(located.config_file), located.config_file
    elif isinstance(config, BertConfig):
        config_file = "the config passed"
    else:
        config, config_file = BertConfig.from_json_file(config), config
    config = causal.resolve_causal_attention(config, None, config_file, checkpoints=[path])
    config.check_seq_length(sequence_length, config_file, name="sequence_length")
    if config.family and not (vocab_file or spm_model_file):
        spec = for_checkpoint(located.directory, config, do_lower_case=do_lower_case)
        return (BertEncoder(config, dtype=dtype), TextPreprocessor.from_spec(spec, sequence_length), located)
    if not (vocab_file or spm_model_file):
        # sentence-transformers 6 saves a tokenizer.json and no vocab.txt.
        vocab_file = located.vocab_file or vocab_from_tokenizer_json(located.directory)
        if vocab_file is None:
            raise CheckpointError(f"{path}: no vocab.txt beside the checkpoint; pass vocab_file= (or spm_model_file=)")
    if do_lower_case is None:  # the checkpoint's own casing
        do_lower_case = own_casing(located) if vocab_file else True
    else:  # one the checkpoint's record contradicts is refused, as the command-line tools refuse it
        check_case(do_lower_case, located, os.fspath(path))
    spec = TokenizerSpec(vocab_file, spm_model_file, do_lower_case=do_lower_case,
                         preserve_unused_tokens=preserve_unused_tokens).check()
    return (BertEncoder(config, dtype=dtype), TextPreprocessor.from_spec(spec, sequence_length), located)


def check_sequence_length(encoder, preprocessor):
    """Raises ConfigError unless the preprocessor's rows fit the encoder's position table.

    Args:
        encoder: a `BertEncoder`.
        preprocessor: a `TextPreprocessor`.

    Example:
    >>> encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, max_position_embeddings=64))
    >>> check_sequence_length(encoder, TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]"], sequence_length=128))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.configs.ConfigError: sequence_length=128 exceeds max_position_embeddings=64 of the encoder's ...
    """
    encoder.config.check_seq_length(preprocessor.sequence_length, "the encoder's config", name="sequence_length")


def checkpoint_labels(located):
    """The label names recorded beside a checkpoint (a Hugging Face config.json's id2label), or None.

    Example:
    >>> import tempfile
    >>> work = tempfile.TemporaryDirectory()
    >>> _ = open(os.path.join(work.name, "config.json"), "w").write('{"id2label": {"0": "neg", "1": "pos"}}')
    >>> checkpoint_labels(detect.Located("huggingface", os.path.join(work.name, "model.safetensors"),
    ...                                  os.path.join(work.name, "config.json")))
    ['neg', 'pos']
    """
    if located.config_file and os.path.basename(located.config_file) == "config.json":
        with tf.io.gfile.GFile(located.config_file, "rb") as f:
            id2label = json.loads(f.read().decode("utf-8")).get("id2label")
        if id2label:
            return [id2label[str(i)] for i in range(len(id2label))]
    return None


def head_size(located, name):
    """The first dimension of the checkpoint tensor `name` (a Google name, e.g. the classifier's output_weights),
    or None where the checkpoint has no such tensor.

    Example:
    >>> import tempfile
    >>> from official_bert import BertClassifier
    >>> from official_bert.checkpoints import save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, num_hidden_layers=1))
    >>> _ = save_checkpoint(BertClassifier(encoder, 4), work.name, "google")
    >>> located = detect.locate(work.name)
    >>> head_size(located, "output_weights"), head_size(located, "cls/squad/output_weights")
    (4, None)
    """
    tensor = detect.open_source(located).tensors.get(name)
    return None if tensor is None else int(tensor.shape[0])
