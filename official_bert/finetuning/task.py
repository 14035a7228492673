"""`FineTuningTask`: what a fine-tuning task is to `run_task` — its data, model, loss, evaluation, outputs and export.

Model Garden's `Task` idea without its registry and config system: a task is one class in `official_bert/tasks/`
(classification, SQuAD, NER), constructed with its own settings; `run_task` owns everything they share (the sweep,
the strategy, the output lock, training with keep-best, loading the checkpoint, result files, the export).
"""

import abc


class FineTuningTask(abc.ABC):
    """One fine-tuning task, driven by `finetuning.run_task`. Subclasses set `name` and `metric` and implement the
    methods below; `run_task` calls them in this order: `check`, `load`, `build_model`, `loss` / `metrics` /
    `num_train_examples` / `train_dataset_fn` (with --do_train), `evaluate` (after each epoch with --keep_best),
    `write_outputs`, `export`.

    Attributes:
        name: the task's name in messages and the log.
        metric: the dev results key (higher is better) that --keep_best and a sweep choose by (None for a task
            without a dev set).
        loss_weights: each output's loss weight, for a model with several outputs (else None).

    Example:
    >>> sorted(FineTuningTask.__abstractmethods__)  # doctest: +NORMALIZE_WHITESPACE
    ['build_model', 'evaluate', 'export', 'load', 'loss', 'num_train_examples', 'train_dataset_fn',
     'write_outputs']
    """

    name = "task"
    metric = "accuracy"
    loss_weights = None

    def check(self, settings):
        """Raises an `official_bert.errors.Error` for settings this task cannot run with, before anything is
        written (the default accepts everything)."""

    @abc.abstractmethod
    def load(self, settings, tokenizer, bucket_width):
        """Reads, checks and converts every split the settings ask for (training features cached in
        `settings.cache_dir`), before any model is built; keeps them for the methods below, which pad each
        batch to its longest sequence rounded up to a multiple of `bucket_width` (None: to max_seq_length)."""

    @abc.abstractmethod
    def build_model(self, config, mixed_precision, causal_attention):
        """The task's Keras model on a new `BertEncoder` of `config` computing in `mixed_precision` (None,
        "bf16" or "fp16"), with the left-only constraint where `causal_attention`."""

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
    def train_dataset_fn(self, settings):
        """step → the training batches from that global step on (`finetuning.stream.training_batches`)."""

    @abc.abstractmethod
    def evaluate(self, predictor, settings):
        """The dev set's metrics ({name: value}, `metric` among them) of the model `predictor` runs."""

    @abc.abstractmethod
    def write_outputs(self, predictor, settings, directory):
        """Writes the task's prediction files for --do_eval / --do_predict into `directory`; returns the result
        tables to write beside them, {basename: {metric: value}} (e.g. {"eval_results": ...}), which `run_task`
        completes with the global step and writes as <basename>.txt and .json."""

    @abc.abstractmethod
    def export(self, model, settings):
        """Exports the trained model as a new SavedModel version under settings.export_dir; returns its path."""
