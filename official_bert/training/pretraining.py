"""Pretraining BERT (masked LM + next sentence) with Keras `fit`, resumable after a crash or kill -9.

A run lives in its output directory: checkpoints `ckpt-<step>` (model + optimizer, whose update counter is
the step), TensorBoard events under `train/` and `eval/`, and the files of `outputs.py`.

Resuming: building a `PretrainingRun` on a directory that holds checkpoints restores the newest one, and
`train` continues from its step to num_train_steps, so steps after the last save are redone and none
before it. The input position is not restored: the resumed run reads the files in a new random order,
seeded with --seed + step, instead of replaying the order the first run began with. (Pretraining data is
large and read far less than once per epoch, so it is the order, not the position, that matters.)
"""

import math
import os

import keras
import tensorflow as tf
from absl import logging

from official_bert import distribution, input_pipeline
from official_bert.models.bert_pretrainer import BertPretrainer
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.optimization import create_optimizer
from official_bert.training.checkpointing import CheckpointSaver, TrainingCheckpoints, global_step
from official_bert.training.monitor import TrainingMonitor, write_scalars
from official_bert.training.options import MIXED_PRECISION_POLICIES
from official_bert.training.step_functions import install_step_functions


class PretrainingRun:
    """A `BertPretrainer` with its optimizer and checkpoints, resumed or warm-started, ready to train.

    Building it restores the newest checkpoint of `options.output_dir`; without one it loads the weights of
    `options.init_checkpoint` (any format `load_checkpoint` reads), if given; otherwise the model starts
    from its seeded initialization.

    Args:
        config: the model's `BertConfig`.
        options: the `TrainingOptions`.
        strategy: a `tf.distribute.Strategy` (see `official_bert.distribution.get_strategy`).

    Example:
    >>> import tempfile
    >>> from official_bert import BertConfig, distribution
    >>> from official_bert.training import TrainingOptions
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                     intermediate_size=32)
    >>> options = TrainingOptions(tempfile.mkdtemp(), num_train_steps=100, num_warmup_steps=10)
    >>> run = PretrainingRun(config, options, distribution.get_strategy("one_device"))
    >>> run.step, type(run.model.optimizer).__name__
    (0, 'AdamWeightDecay')
    """

    def __init__(self, config, options, strategy):
        self.config = config
        self.options = options.validate()
        self.strategy = strategy
        self.is_chief = distribution.is_chief(strategy)
        replicas, accumulation = strategy.num_replicas_in_sync, options.gradient_accumulation_steps
        # Batches of one step of `fit` across all replicas: an update's batch split into micro-batches.
        self._train_batch = replicas * distribution.per_replica_batch_size(
            options.train_batch_size, replicas, "--train_batch_size", accumulation)
        self._eval_batch = replicas * distribution.per_replica_batch_size(
            options.eval_batch_size, replicas, "--eval_batch_size")
        # Steps per call into the compiled loop: at most iterations_per_loop, and calls end on the steps of
        # progress reports and checkpoints (they happen between calls).
        self._loop_steps = math.gcd(options.iterations_per_loop, options.log_steps, options.save_checkpoints_steps)
        keras.utils.set_random_seed(options.seed)
        with strategy.scope():
            encoder = BertEncoder(config, dtype=MIXED_PRECISION_POLICIES.get(options.mixed_precision))
            self.model = BertPretrainer(encoder, use_nsp=options.use_nsp)
            optimizer = create_optimizer(
                options.learning_rate, options.num_train_steps, options.num_warmup_steps,
                optimizer_type=options.optimizer, weight_decay_rate=options.weight_decay_rate,
                gradient_accumulation_steps=accumulation if accumulation > 1 else None)
            if options.mixed_precision == "fp16":
                optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
            self.model.compile(optimizer=optimizer, jit_compile=options.jit_compile)
            optimizer.build(self.model.trainable_variables)  # slots must exist before a restore fills them
        # To build a model before its first fit or evaluate, Keras 3 reads one batch and all-reduces it, which
        # MultiWorkerMirroredStrategy cannot do for dict inputs (keras-team/keras#20329). The model is built;
        # with no strategy recorded Keras skips that, and fit and evaluate, run within strategy.scope(), still
        # run under this strategy.
        self.model._distribute_strategy = None
        self._steps_per_execution = None
        self.checkpoints = TrainingCheckpoints(self.model, optimizer, options.output_dir, strategy,
                                               max_to_keep=options.keep_checkpoint_max or None)
        self.checkpoints.restore_or_warm_start(options.init_checkpoint)

    @property
    def step(self):
        """Optimizer updates made so far: the global step."""
        return global_step(self.model.optimizer)

    def train(self, data):
        """Trains from the current step to num_train_steps, saving checkpoints on the way and at the end.

        On KeyboardInterrupt (Ctrl-C; run_pretraining.py turns SIGTERM into one) a single-worker run saves a
        checkpoint at the step reached before re-raising it.

        Args:
            data: the `input_pipeline.PretrainingFiles` to read.
        """
        options = self.options
        if self.step >= options.num_train_steps:
            logging.info("step %d: --num_train_steps=%d already reached, nothing to train", self.step,
                         options.num_train_steps)
            return
        accumulation = options.gradient_accumulation_steps
        logging.info("training steps %d to %d: %d sequences per update over %d replica(s)%s, %s", self.step,
                     options.num_train_steps, options.train_batch_size, self.strategy.num_replicas_in_sync,
                     f" in {accumulation} micro-batches" * (accumulation > 1), options.mixed_precision or "float32")
        summary_dir = os.path.join(options.output_dir, "train") if self.is_chief else None
        callbacks = [TrainingMonitor(options.log_steps, options.num_train_steps, options.train_batch_size, summary_dir),
                     CheckpointSaver(self.checkpoints, options.save_checkpoints_steps)]
        try:
            with input_pipeline.reading_records():
                while self.step < options.num_train_steps:
                    self._fit(data, options.num_train_steps - self.step, callbacks)
        except KeyboardInterrupt:
            # Other workers are not interrupted with this one, and a multi-worker save needs them all.
            if not isinstance(self.strategy, tf.distribute.MultiWorkerMirroredStrategy):
                self.checkpoints.save()
            raise
        if self.checkpoints.saved_step != self.step:
            self.checkpoints.save()

    def _fit(self, data, remaining, callbacks):
        """Trains the whole loops of `remaining` updates or, if less than one loop remains, the rest as one loop.

        Every call into the compiled loop runs all its steps, so `fit` may only be asked for a multiple of them.
        """
        loop = min(self._loop_steps, remaining)
        accumulation = self.options.gradient_accumulation_steps
        self._set_steps_per_execution(loop * accumulation)
        # Each fit starts a new iterator: seeding it with the step keeps it from replaying an earlier order.
        dataset = self._distributed_dataset(data, self._train_batch, True, self.options.seed + self.step)
        with self.strategy.scope():
            self.model.fit(dataset, steps_per_epoch=(remaining - remaining % loop) * accumulation, epochs=1,
                           verbose=0, shuffle=False, callbacks=callbacks)

    def evaluate(self, data):
        """Evaluates on max_eval_steps batches read in order; on the chief also writes eval/ summaries.

        Args:
            data: the `input_pipeline.PretrainingFiles` to read (from the start; repeated if too short).

        Returns:
            {"global_step", "loss", "masked_lm_accuracy", "masked_lm_loss", and with NSP
            "next_sentence_accuracy", "next_sentence_loss"}.
        """
        steps = self.options.max_eval_steps
        self._set_steps_per_execution(math.gcd(self.options.iterations_per_loop, steps))
        dataset = self._distributed_dataset(data, self._eval_batch, False, None)
        with self.strategy.scope(), input_pipeline.reading_records():
            results = self.model.evaluate(dataset, steps=steps, verbose=0, return_dict=True)
        results = {"global_step": self.step, **results}
        if self.is_chief:
            write_scalars(os.path.join(self.options.output_dir, "eval"),
                          {k: v for k, v in results.items() if k != "global_step"}, self.step)
        return results

    def _set_steps_per_execution(self, steps):
        if self._steps_per_execution != steps:
            install_step_functions(self.model, self.strategy, steps, self.options.jit_compile)
            self._steps_per_execution = steps

    def _distributed_dataset(self, data, global_batch_size, is_training, seed):
        def dataset_fn(context):
            return input_pipeline.pretraining_dataset(
                data, context.get_per_replica_batch_size(global_batch_size), is_training, seed, context,
                self.options.use_nsp)

        return self.strategy.distribute_datasets_from_function(dataset_fn)
