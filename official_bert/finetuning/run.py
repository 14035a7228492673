"""Fine-tuning a task model with Keras `fit`: evaluated after each epoch, resumable after a kill, exactly.

A run lives in its output directory: training checkpoints `ckpt-<step>` (model, optimizer — whose update
counter is the step and so the learning rate — and the dropout layers' random state; see
`training/checkpointing.py`), the best checkpoint by the dev metric (`best.py`) and TensorBoard events under
`train/` and `eval/`.

Resuming continues the same sequence of batches: the input is one stream of batches whose position is the
step (`stream.py`: `dataset_fn(s)` gives the batches from step s on), so a run restored from the checkpoint
of step s reads the batches an uninterrupted run reads after s, at the same learning rates and with the same
dropout masks: the resumed run's weights are those of an uninterrupted one. Each call into `fit` reads its
batches from a stream built at the step it starts from, so an uninterrupted run follows the same rule. An
epoch that ended but was not evaluated before the kill is evaluated first.
"""

import os

from absl import logging

from official_bert.optimization import create_optimizer
from official_bert.training import keras_compat
from official_bert.training.checkpointing import CheckpointSaver
from official_bert.training.monitor import TrainingMonitor, write_scalars
from official_bert.training.training_run import TrainingRun


class FineTuningRun(TrainingRun):
    """A compiled task model with its optimizer and checkpoints, resumed or warm-started, ready to train.

    Building it restores the newest training checkpoint of `options.output_dir`; without one it loads the weights
    of `options.init_checkpoint` (any format `load_checkpoint` reads), if given: the encoder, and the head too
    where the checkpoint has one of the same shape.

    Args:
        model: the task model, built under `strategy.scope()`.
        loss: its Keras loss (on logits); a dict of them for a model with several outputs.
        options: the `TrainingOptions` (train_batch_size, learning_rate, save_checkpoints_steps,
            iterations_per_loop, log_steps, mixed_precision, jit_compile, keep_checkpoint_max, weight_decay_rate,
            init_checkpoint; the step counts come from `schedule`).
        schedule: the `Schedule`.
        strategy: the `tf.distribute.Strategy`.
        metrics: Keras metrics to report while training (a list, or a dict by output).
        do_lower_case: checked against the init checkpoint's casing (a warning when they disagree).
        loss_weights: the weight of each output's loss, as for `keras.Model.compile`.
        optimizer_options: more arguments of `create_optimizer` (e.g. {"bias_correction": True}).

    Example:
    >>> import tempfile
    >>> import tensorflow as tf
    >>> from official_bert import BertClassifier, BertConfig, BertEncoder
    >>> from official_bert.finetuning.schedule import Schedule
    >>> from official_bert.training import TrainingOptions
    >>> config = BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                     intermediate_size=32)
    >>> strategy = tf.distribute.get_strategy()
    >>> run = FineTuningRun(BertClassifier(BertEncoder(config), 2), "sparse_categorical_crossentropy",
    ...                     TrainingOptions(tempfile.mkdtemp()), Schedule(10, 30, 3), strategy)
    >>> run.step, float(run.model.optimizer.learning_rate)
    (0, 0.0)
    """

    def __init__(self, model, loss, options, schedule, strategy, metrics=(), do_lower_case=None, loss_weights=None,
                 optimizer_options=None):
        self.schedule = schedule
        with strategy.scope():
            optimizer = create_optimizer(options.learning_rate, schedule.num_train_steps, schedule.num_warmup_steps,
                                         weight_decay_rate=options.weight_decay_rate, **(optimizer_options or {}))
        super().__init__(model, optimizer, options, strategy,
                         {"loss": loss, "loss_weights": loss_weights,
                          "metrics": metrics if isinstance(metrics, dict) else list(metrics)}, do_lower_case)

    def train(self, dataset_fn, evaluate=None, best=None, callbacks=()):
        """Trains from the current step to the schedule's end, epoch by epoch, saving a checkpoint at the end of
        each epoch (and every save_checkpoints_steps) and then, given `evaluate` and `best`, evaluating the model
        and keeping it if it is the best so far.

        On KeyboardInterrupt (run_classifier.py turns SIGTERM into one) a single-worker run saves a checkpoint at
        the step reached before re-raising it.

        Args:
            dataset_fn: step → a tf.data.Dataset of the (inputs, labels) batches of that global step and the
                following ones (enough to reach num_train_steps): the same batches for the same step, every time.
            evaluate: () → {metric: value} of the model as it is.
            best: the `BestCheckpoint` that records the evaluations.
            callbacks: more Keras callbacks for `fit`, called after the run's own (progress, checkpoints).
        """
        schedule = self.schedule
        logging.info("training steps %d to %d: %d epochs of %.4g steps, %d examples per step over %d replica(s), %s",
                     self.step, schedule.num_train_steps, schedule.num_epochs, schedule.steps_per_epoch,
                     self.options.train_batch_size, self.strategy.num_replicas_in_sync,
                     self.options.mixed_precision or "float32")
        with self.strategy.scope():
            # Keras builds the compiled losses' and metrics' state (e.g. one loss tracker per output) when it
            # first traces a step; under a Mirrored strategy that creates variables in replica context, which
            # tf.function guards with a cond the replicas cannot feed. Build it now, from the batches' spec.
            keras_compat.build_compiled_state(self.model, dataset_fn(self.step).element_spec)
        with self._saving_on_interrupt():
            self._end_epoch(evaluate, best)  # a run killed between an epoch's last step and its evaluation
            while self.step < schedule.num_train_steps:
                self._fit_loops(dataset_fn, schedule.epoch_end(self.step) - self.step, callbacks)
                if self.checkpoints.saved_step != self.step:
                    self.checkpoints.save()
                self._end_epoch(evaluate, best)

    def _end_epoch(self, evaluate, best):
        step = self.step
        if evaluate is None or best is None or not self.schedule.is_epoch_end(step) or best.evaluated(step):
            return
        results = evaluate()
        logging.info("step %d, epoch %d evaluation: %s", step, self.schedule.epoch(step),
                     ", ".join(f"{name} {value:.4g}" for name, value in results.items()))
        if self.is_chief:
            write_scalars(os.path.join(self.options.output_dir, "eval"), results, step)
            if best.record(step, results, self.model):
                logging.info("best %s so far: %.4g, kept in %s", best.metric, results[best.metric], best.path)

    def _fit_loops(self, dataset_fn, steps, extra_callbacks):
        """Trains `steps` updates on the batches of `dataset_fn`: whole loops of the compiled steps, then the rest
        as one loop, each `fit` reading from the step it starts at."""
        done = 0
        while done < steps:
            loop = min(self._loop_steps, steps - done)
            count = (steps - done) - (steps - done) % loop
            self._set_steps_per_execution(loop)
            # A TrainingMonitor closes its summary writer when `fit` ends: each call needs its own.
            callbacks = [TrainingMonitor(self.options.log_steps, self.schedule.num_train_steps,
                                         self.options.train_batch_size,
                                         os.path.join(self.options.output_dir, "train") if self.is_chief else None),
                         CheckpointSaver(self.checkpoints, self.options.save_checkpoints_steps), *extra_callbacks]
            self._fit(self.strategy.experimental_distribute_dataset(dataset_fn(self.step)), count, callbacks)
            done += count
