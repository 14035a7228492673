"""Pretraining BERT (masked LM + next sentence) with Keras `fit`, resumable after a crash or kill -9.

A run lives in its output directory: checkpoints `ckpt-<step>` (model + optimizer, whose update counter is
the step), TensorBoard events under `train/` and `eval/`, and the files of `outputs.py`.

Resuming: building a `PretrainingRun` on a directory that holds checkpoints restores the newest one, and
`train` continues from its step to num_train_steps, so steps after the last save are redone and none
before it. The input resumes at its position: the stream of records is a function of --seed, and a run
resumed at step s passes over the records of its first s steps (reading, not parsing them) before its first
batch, so it trains on the batches an uninterrupted run trains on; with the dropout state in the checkpoint
too, its weights are those of an uninterrupted run.
"""

import math
import os

import keras
import tensorflow as tf
from absl import logging

from official_bert import distribution
from official_bert.training import input_pipeline
from official_bert.models.bert_language_model import BertLanguageModel
from official_bert.models.bert_pretrainer import BertPretrainer
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.optimization import create_optimizer
from official_bert.training.checkpointing import CheckpointSaver
from official_bert.training.monitor import TrainingMonitor, write_scalars
from official_bert.training.options import MIXED_PRECISION_POLICIES, TrainingError
from official_bert.training.training_run import TrainingRun


class PretrainingRun(TrainingRun):
    """A `BertPretrainer` (or, left to right, a `BertLanguageModel`) with its optimizer and checkpoints, resumed
    or warm-started, ready to train.

    Building it restores the newest checkpoint of `options.output_dir`; without one it loads the weights of
    `options.init_checkpoint` (any format `load_checkpoint` reads), if given; otherwise the model starts
    from its seeded initialization.

    Args:
        config: the model's `BertConfig`.
        options: the `TrainingOptions`.
        strategy: a `tf.distribute.Strategy` (see `official_bert.distribution.get_strategy`).
        left_to_right: train the paper's LTR baseline instead of the masked LM: a causal encoder predicting
            every next token of the records' text (`unmasked_inputs`); options.use_nsp must be False.

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

    def __init__(self, config, options, strategy, left_to_right=False):
        self.config = config
        self.options = options.validate()
        if left_to_right and options.use_nsp:
            raise TrainingError("the left-to-right LM trains no next-sentence prediction: pass use_nsp=False")
        self.left_to_right = left_to_right
        replicas, accumulation = strategy.num_replicas_in_sync, options.gradient_accumulation_steps
        # Batches of one step of `fit` across all replicas: an update's batch split into micro-batches.
        self._train_batch = replicas * distribution.per_replica_batch_size(
            options.train_batch_size, replicas, "--train_batch_size", accumulation)
        self._eval_batch = replicas * distribution.per_replica_batch_size(
            options.eval_batch_size, replicas, "--eval_batch_size")
        keras.utils.set_random_seed(options.seed)
        with strategy.scope():
            encoder = BertEncoder(config, dtype=MIXED_PRECISION_POLICIES.get(options.mixed_precision),
                                  causal_attention=left_to_right, remat=options.remat)
            model = (BertLanguageModel(encoder) if left_to_right
                     else BertPretrainer(encoder, use_nsp=options.use_nsp))
            optimizer = create_optimizer(
                options.learning_rate, options.num_train_steps, options.num_warmup_steps,
                optimizer_type=options.optimizer, weight_decay_rate=options.weight_decay_rate,
                gradient_accumulation_steps=accumulation if accumulation > 1 else None)
        super().__init__(model, optimizer, options, strategy, {})

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
        with self._saving_on_interrupt(), input_pipeline.reading_records():
            while self.step < options.num_train_steps:
                self._fit_loops(data, options.num_train_steps - self.step, callbacks)
        if self.checkpoints.saved_step != self.step:
            self.checkpoints.save()

    def _fit_loops(self, data, remaining, callbacks):
        """Trains the whole loops of `remaining` updates or, if less than one loop remains, the rest as one loop.

        Every call into the compiled loop runs all its steps, so `fit` may only be asked for a multiple of them.
        """
        loop = min(self._loop_steps, remaining)
        accumulation = self.options.gradient_accumulation_steps
        self._set_steps_per_execution(loop * accumulation)
        # Each fit starts a new iterator, at the stream's position of the current step.
        dataset = self._distributed_dataset(data, self._train_batch, True, self.options.seed,
                                            self.step * accumulation)
        self._fit(dataset, (remaining - remaining % loop) * accumulation, callbacks)

    def evaluate(self, data):
        """Evaluates on max_eval_steps batches read in order; on the chief also writes eval/ summaries.

        Args:
            data: the `input_pipeline.PretrainingFiles` to read (from the start; repeated if too short).

        Returns:
            {"global_step", "loss", "masked_lm_accuracy", "masked_lm_loss", and with NSP
            "next_sentence_accuracy", "next_sentence_loss"}; left to right {"global_step", "loss",
            "lm_accuracy", "lm_loss"} (the next-token accuracy and cross-entropy, pooled over every real
            position: the perplexity is exp(lm_loss)).
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

    def _distributed_dataset(self, data, global_batch_size, is_training, seed, skip_batches=0):
        def dataset_fn(context):
            # A pipeline feeds num_replicas_in_sync / num_input_pipelines replicas a batch each per step.
            dataset = input_pipeline.pretraining_dataset(
                data, context.get_per_replica_batch_size(global_batch_size), is_training, seed, context,
                self.options.use_nsp,
                skip_records=skip_batches * global_batch_size // context.num_input_pipelines)
            if self.left_to_right:
                dataset = dataset.map(unmasked_inputs, num_parallel_calls=tf.data.AUTOTUNE)
            return dataset

        return self.strategy.distribute_datasets_from_function(dataset_fn)


def unmasked_inputs(features, labels):
    """A pretraining batch's encoder inputs with the text as it was before masking, for the left-to-right LM.

    create_pretraining_data.py replaced the tokens at masked_lm_positions (with [MASK], a random token or the
    same one); masked_lm_ids holds the originals. Writing them back at the positions of weight 1 gives the
    LM the original text, with nothing to predict at [MASK] tokens the masking put there.

    Args:
        features: a batch's features from `input_pipeline.pretraining_dataset`.
        labels: its labels (masked_lm_ids, masked_lm_weights).

    Returns:
        {"input_word_ids", "input_mask", "input_type_ids"}.

    Example:
    >>> features = {"input_word_ids": tf.constant([[2, 4, 7, 3]]), "input_mask": tf.constant([[1, 1, 1, 1]]),
    ...             "input_type_ids": tf.constant([[0, 0, 0, 0]]), "masked_lm_positions": tf.constant([[2, 0]])}
    >>> labels = {"masked_lm_ids": tf.constant([[9, 0]]), "masked_lm_weights": tf.constant([[1.0, 0.0]])}
    >>> unmasked_inputs(features, labels)["input_word_ids"].numpy().tolist()
    [[2, 4, 9, 3]]
    """
    ids, positions = features["input_word_ids"], features["masked_lm_positions"]
    rows = tf.broadcast_to(tf.range(tf.shape(positions)[0])[:, None], tf.shape(positions))
    real = labels["masked_lm_weights"] > 0
    indices = tf.boolean_mask(tf.stack([rows, tf.cast(positions, rows.dtype)], axis=-1), real)
    ids = tf.tensor_scatter_nd_update(ids, indices, tf.boolean_mask(tf.cast(labels["masked_lm_ids"], ids.dtype), real))
    return {"input_word_ids": ids, "input_mask": features["input_mask"], "input_type_ids": features["input_type_ids"]}
