"""Fine-tuning a task model epoch by epoch with Keras `fit`: evaluated after each epoch, resumable after a kill.

A run lives in its output directory: training checkpoints `ckpt-<step>` (model + optimizer, whose update
counter is the step; see `training/checkpointing.py`), the best checkpoint by the dev metric (`best.py`) and
TensorBoard events under `train/` and `eval/`.

Resuming continues the same sequence of batches: epoch e reads the training set in the order `dataset_fn(e)`
gives (seeded with the epoch), so a run restored at step s skips the batches of its epoch before s and goes on
with those an uninterrupted run would have read, at the same learning rates. (Only dropout's random state is
not in the checkpoint: with dropout, the masks after a resume differ.) An epoch that ended but was not
evaluated before the kill is evaluated first.
"""

import math
import os
import warnings

import keras
import tensorflow as tf
from absl import logging

from official_bert import distribution
from official_bert.optimization import create_optimizer
from official_bert.training.checkpointing import CheckpointSaver, TrainingCheckpoints, global_step
from official_bert.training.monitor import TrainingMonitor, write_scalars
from official_bert.training.step_functions import install_step_functions


class FineTuningRun:
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

    Example:
    >>> import tempfile
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

    def __init__(self, model, loss, options, schedule, strategy, metrics=(), do_lower_case=None, loss_weights=None):
        self.model = model
        self.options = options
        self.schedule = schedule
        self.strategy = strategy
        self.is_chief = distribution.is_chief(strategy)
        # Steps per call into the compiled loop: at most iterations_per_loop, and calls end on the steps of
        # progress reports and checkpoints (they happen between calls).
        self._loop_steps = math.gcd(options.iterations_per_loop, options.log_steps, options.save_checkpoints_steps)
        self._step_functions = {}
        with strategy.scope():
            optimizer = create_optimizer(options.learning_rate, schedule.num_train_steps, schedule.num_warmup_steps,
                                         weight_decay_rate=options.weight_decay_rate)
            if options.mixed_precision == "fp16":
                optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
            model.compile(optimizer=optimizer, loss=loss, loss_weights=loss_weights,
                          metrics=metrics if isinstance(metrics, dict) else list(metrics),
                          jit_compile=options.jit_compile)
            optimizer.build(model.trainable_variables)  # slots must exist before a restore fills them
        # As in PretrainingRun: the model is built, and Keras must not read a batch to build it under the
        # strategy (keras-team/keras#20329); fit, run within strategy.scope(), still uses the strategy.
        model._distribute_strategy = None
        self.checkpoints = TrainingCheckpoints(model, optimizer, options.output_dir, strategy,
                                               max_to_keep=options.keep_checkpoint_max or None)
        self.checkpoints.restore_or_warm_start(options.init_checkpoint, do_lower_case)

    @property
    def step(self):
        """Optimizer updates made so far: the global step."""
        return global_step(self.model.optimizer)

    def train(self, dataset_fn, evaluate=None, best=None, callbacks=()):
        """Trains from the current step to the schedule's end, epoch by epoch, saving a checkpoint at the end of
        each epoch (and every save_checkpoints_steps) and then, given `evaluate` and `best`, evaluating the model
        and keeping it if it is the best so far.

        On KeyboardInterrupt (run_classifier.py turns SIGTERM into one) a single-worker run saves a checkpoint at
        the step reached before re-raising it.

        Args:
            dataset_fn: epoch → a tf.data.Dataset of that epoch's (inputs, labels) batches: the same batches in the
                same order each time it is asked for the same epoch.
            evaluate: () → {metric: value} of the model as it is.
            best: the `BestCheckpoint` that records the evaluations.
            callbacks: more Keras callbacks for `fit`, called after the run's own (progress, checkpoints).
        """
        schedule = self.schedule
        logging.info("training steps %d to %d: %d epochs of %d steps, %d examples per step over %d replica(s), %s",
                     self.step, schedule.num_train_steps, schedule.num_epochs, schedule.steps_per_epoch,
                     self.options.train_batch_size, self.strategy.num_replicas_in_sync,
                     self.options.mixed_precision or "float32")
        with self.strategy.scope():
            # Keras builds the compiled losses' and metrics' state (e.g. one loss tracker per output) when it
            # first traces a step; under a Mirrored strategy that creates variables in replica context, which
            # tf.function guards with a cond the replicas cannot feed. Build it now, from the batches' spec.
            self.model._symbolic_build(data_batch=dataset_fn(0).element_spec)
        try:
            self._end_epoch(evaluate, best)  # a run killed between an epoch's last step and its evaluation
            while self.step < schedule.num_train_steps:
                epoch, done = divmod(self.step, schedule.steps_per_epoch)
                self._fit(dataset_fn(epoch).skip(done), schedule.epoch_end(self.step) - self.step, callbacks)
                if self.checkpoints.saved_step != self.step:
                    self.checkpoints.save()
                self._end_epoch(evaluate, best)
        except KeyboardInterrupt:
            # Other workers are not interrupted with this one, and a multi-worker save needs them all.
            if not isinstance(self.strategy, tf.distribute.MultiWorkerMirroredStrategy):
                self.checkpoints.save()
            raise

    def _end_epoch(self, evaluate, best):
        step = self.step
        if evaluate is None or best is None or not self.schedule.is_epoch_end(step) or best.evaluated(step):
            return
        results = evaluate()
        logging.info("step %d, epoch %d evaluation: %s", step, math.ceil(step / self.schedule.steps_per_epoch),
                     ", ".join(f"{name} {value:.4g}" for name, value in results.items()))
        if self.is_chief:
            write_scalars(os.path.join(self.options.output_dir, "eval"), results, step)
            if best.record(step, results, self.model):
                logging.info("best %s so far: %.4g, kept in %s", best.metric, results[best.metric], best.path)

    def _fit(self, dataset, steps, extra_callbacks):
        """Trains `steps` updates on `dataset`: whole loops of the compiled steps, then the rest as one loop."""
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
            distributed = self.strategy.experimental_distribute_dataset(dataset.skip(done))
            with self.strategy.scope(), warnings.catch_warnings():
                # Span and token heads leave the pooler unused; its weights stay, so that checkpoints keep them,
                # and are not updated (the original skipped them silently, too).
                warnings.filterwarnings("ignore", message=r"Gradients do not exist for variables \['pooler/")
                self.model.fit(distributed, steps_per_epoch=count, epochs=1, verbose=0, shuffle=False,
                               callbacks=callbacks)
            done += count

    def _set_steps_per_execution(self, steps):
        # An epoch of whole loops and a shorter last one alternate: keep each compiled loop, not retrace it.
        if steps not in self._step_functions:
            install_step_functions(self.model, self.strategy, steps, self.options.jit_compile)
            self._step_functions[steps] = (self.model.train_function, self.model.test_function)
        self.model.train_function, self.model.test_function = self._step_functions[steps]
        self.model.steps_per_execution = steps
