"""`FineTuningTask`: what a fine-tuning task is to `run_task` — its data, head, loss, evaluation, outputs and serving.

Model Garden's `Task` idea without its registry and config system: a task is one class in `official_bert/tasks/`
(classification, SQuAD, NER), constructed with its own settings. `run_task` owns everything they share and hands the
task what it builds once: the `TokenizerSpec` (the Python tokenizer for its features, the in-graph one for its
serving), the encoder (config, precision, left-only constraint), the training stream (batching, per-batch padding,
length buckets, shuffling, resuming) and the export; a task never reads those flags, so it cannot drop one.
"""

import abc


class FineTuningTask(abc.ABC):
    """One fine-tuning task, driven by `finetuning.run_task`. Subclasses set `name` and `metric` and implement the
    methods below; `run_task` calls them in this order: `check`, `load`, `build_model`, `training_model` / `loss` /
    `metrics` / `num_train_examples` / `train_records` (with --do_train), `evaluate` (after each epoch with
    --keep_best), `write_outputs`, `serving_spec` (with --export_dir).

    Attributes:
        name: the task's name in messages and the log.
        metric: the dev results key (higher is better) that --keep_best and a sweep choose by (None for a task
            without a dev set).
        loss_weights: each output's loss weight, for a model with several outputs (else None).
        optimizer_options: more arguments of the optimizer (`create_optimizer`'s), e.g. {"bias_correction": True}.
        per_token_outputs: the model's outputs are per position ([batch, seq_length, ...]): evaluation batches are
            then kept at their features' length instead of padded to their longest sequence.

    Example:
    >>> sorted(FineTuningTask.__abstractmethods__)  # doctest: +NORMALIZE_WHITESPACE
    ['build_model', 'evaluate', 'load', 'loss', 'num_train_examples', 'serving_spec', 'train_records',
     'write_outputs']
    """

    name = "task"
    metric = "accuracy"
    loss_weights = None
    optimizer_options = {}
    per_token_outputs = False

    def check(self, settings):
        """Raises an `official_bert.errors.Error` for settings this task cannot run with, before anything is
        written (the default accepts everything)."""

    @abc.abstractmethod
    def load(self, settings, tokenizer):
        """Reads, checks and converts every split the settings ask for (training features cached in
        `settings.cache_dir`) with `tokenizer.python_tokenizer()` (`tokenizer`: the run's `TokenizerSpec`), before
        any model is built; keeps them for the methods below."""

    @abc.abstractmethod
    def build_model(self, encoder):
        """The task's Keras model: its head on `encoder`, the `BertEncoder` `run_task` built (precision and
        left-only constraint included)."""

    def training_model(self, model):
        """The Keras model `fit` trains: `model` itself (the default), or a model around it that adds losses of its
        own (distillation's intermediate layers), whose checkpoints hold `model`'s weights under their Keras paths
        so that they load into `model`."""
        return model

    @abc.abstractmethod
    def loss(self):
        """The Keras loss on the model's logits (a dict by output for several outputs)."""

    def metrics(self):
        """Keras metrics reported while training (a list, or a dict by output)."""
        return []

    @abc.abstractmethod
    def num_train_examples(self):
        """The count the original's step count is computed from (SQuAD: questions, not their windows)."""

    @abc.abstractmethod
    def train_records(self):
        """The training set as `finetuning.stream.TrainingRecords`; `run_task` shuffles, batches and pads them."""

    @abc.abstractmethod
    def evaluate(self, predictor, settings):
        """The dev set's metrics ({name: value}, `metric` among them) of the model `predictor` (a
        `finetuning.Predictor`) runs."""

    @abc.abstractmethod
    def write_outputs(self, predictor, settings, directory):
        """Writes the task's prediction files for --do_eval / --do_predict into `directory`; returns the result
        tables to write beside them, {basename: {metric: value}} (e.g. {"eval_results": ...}), which `run_task`
        completes with the global step and writes as <basename>.txt and .json."""

    @abc.abstractmethod
    def serving_spec(self, tokenizer, seq_length):
        """The `export.ServingSpec` of the trained model: raw text tokenized in the graph with `tokenizer` (the
        run's `TokenizerSpec`) into sequences of `seq_length`; `run_task` writes the SavedModel."""
