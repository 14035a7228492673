"""Training checkpoints: model + optimizer (whose update counter is the global step), saved and resumed.

The files are `output_dir/ckpt-<step>.{index,data-*}` and the `checkpoint` state file of a
`tf.train.CheckpointManager` over `tf.train.Checkpoint(model=..., optimizer=...)`: "our own checkpoint"
(official_bert/checkpoints/native.py), so `load_checkpoint(BertClassifier(...), output_dir)` reads the
newest one. TensorFlow writes each checkpoint under temporary names and updates the state file last, so
a run killed at any moment leaves the previous checkpoint intact and the state file pointing at it.
"""

import keras
import tensorflow as tf
from absl import logging

from official_bert import distribution
from official_bert.checkpoints import load_checkpoint
from official_bert.checkpoints.native import MODEL_KEY
from official_bert.training.options import TrainingError

CHECKPOINT_PREFIX = "ckpt"


def global_step(optimizer):
    """Optimizer updates made so far (with gradient accumulation, not micro-batches)."""
    # int() of a Keras variable fails when it wraps a tf.distribute MirroredVariable.
    return int(keras.ops.convert_to_numpy(optimizer.iterations))


class TrainingCheckpoints:
    """Saves and restores the training state of one run.

    Args:
        model: the model being trained.
        optimizer: its optimizer, built (so its slots exist before a restore).
        output_dir: the run's directory; every worker resumes from the newest checkpoint there.
        strategy: the distribution strategy; non-chief workers save to a temporary directory.
        max_to_keep: checkpoints kept; None keeps all.
    """

    def __init__(self, model, optimizer, output_dir, strategy, max_to_keep=5):
        self._checkpoint = tf.train.Checkpoint(**{MODEL_KEY: model}, optimizer=optimizer)
        self._model = model
        self._optimizer = optimizer
        self._output_dir = output_dir
        self._strategy = strategy
        self._manager = tf.train.CheckpointManager(self._checkpoint, output_dir, max_to_keep=max_to_keep,
                                                   checkpoint_name=CHECKPOINT_PREFIX)
        self.saved_step = None

    @property
    def latest(self):
        return tf.train.latest_checkpoint(self._output_dir)

    def restore_latest(self):
        """Restores the newest checkpoint of output_dir, if any; returns its path or None."""
        path = self.latest
        if path is None:
            return None
        try:
            self._checkpoint.restore(path).assert_existing_objects_matched()
        except (AssertionError, ValueError, tf.errors.OpError) as e:
            raise TrainingError(
                f"{path}: cannot resume from this checkpoint (written with another --optimizer, --mixed_precision, "
                f"--gradient_accumulation_steps or --bert_config_file? Use a new --output_dir): "
                f"{str(e).strip().splitlines()[0]}") from None
        self.saved_step = global_step(self._optimizer)
        return path

    def restore_or_warm_start(self, init_checkpoint=None, do_lower_case=None):
        """Resumes from the newest checkpoint of output_dir; without one, loads `init_checkpoint`'s weights (any
        format `load_checkpoint` reads), if given, into the model.

        Args:
            init_checkpoint: --init_checkpoint, only for a new run.
            do_lower_case: checked against the init checkpoint's casing (a warning when they disagree).
        """
        resumed = self.restore_latest()
        if resumed:
            logging.info("resuming from %s at step %d%s", resumed, self.saved_step,
                         " (--init_checkpoint is only for a new run: ignored)" if init_checkpoint else "")
        elif init_checkpoint:
            load_checkpoint(self._model, init_checkpoint, do_lower_case=do_lower_case)

    def save(self):
        """Saves the current state as ckpt-<step>; every worker must call it under multi_worker_mirrored."""
        step = global_step(self._optimizer)
        with distribution.WorkerDirectory(self._output_dir, self._strategy) as directory:
            # Every worker saves through a manager: the save's collective ops must match across workers.
            manager = self._manager if directory == self._output_dir else tf.train.CheckpointManager(
                self._checkpoint, directory, max_to_keep=1, checkpoint_name=CHECKPOINT_PREFIX)
            path = manager.save(checkpoint_number=step)
        if directory == self._output_dir:
            logging.info("saved checkpoint %s", path)
        self.saved_step = step


class CheckpointSaver(keras.callbacks.Callback):
    """Saves at the end of each training loop that reaches a multiple of `every_steps`.

    Args:
        checkpoints: a `TrainingCheckpoints`.
        every_steps: --save_checkpoints_steps.
    """

    def __init__(self, checkpoints, every_steps):
        super().__init__()
        self._checkpoints = checkpoints
        self._every = every_steps

    def on_train_batch_end(self, batch, logs=None):
        saved = self._checkpoints.saved_step or 0
        if global_step(self.model.optimizer) // self._every > saved // self._every:
            self._checkpoints.save()
