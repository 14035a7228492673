"""Training checkpoints: model + optimizer (whose update counter is the global step), saved and resumed.

The files are `output_dir/ckpt-<step>.{index,data-*}` and the `checkpoint` state file of a
`tf.train.CheckpointManager` over `tf.train.Checkpoint(model=..., optimizer=..., seed_generators=...)`: the
model's weights, the optimizer's slots and step, and the state of the model's random seed generators (its dropout
layers' `keras.random.SeedGenerator`s, which `keras.Model.weights` leaves out), so that a resumed run draws the
dropout masks an uninterrupted one draws; a left-to-right model's also hold the marker of `checkpoints/causal.py`. It is "our own checkpoint"
(official_bert/checkpoints/native.py), so `load_checkpoint(BertClassifier(...), output_dir)` reads the
newest one. TensorFlow writes each checkpoint under temporary names and updates the state file last, so
a run killed at any moment leaves the previous checkpoint intact and the state file pointing at it.
"""

import os
import re

import keras
import tensorflow as tf
from absl import logging
from tensorflow.core.protobuf import trackable_object_graph_pb2

from official_bert import distribution
from official_bert.checkpoints import CheckpointError, google, load_checkpoint
from official_bert.checkpoints.native import MODEL_KEY, OBJECT_GRAPH_KEY, causal_marker, is_causal
from official_bert.io import files, remove_tree
from official_bert.io.atomic import WRITE_ERRORS, reason
from official_bert.layers.dropout import seed_generator_states
from official_bert.training.keras_compat import ITERATIONS_CHECKPOINT_KEYS
from official_bert.training.options import TrainingError

CHECKPOINT_PREFIX = "ckpt"
SEED_GENERATORS_KEY = "seed_generators"


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
        # A left-to-right model's checkpoints carry the marker that keeps it left-only in every later tool.
        self._objects = {MODEL_KEY: model, "optimizer": optimizer, SEED_GENERATORS_KEY: seed_generator_states(model),
                         **causal_marker(is_causal(model))}
        self._checkpoint = tf.train.Checkpoint(**self._objects)
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
        saved, ours = saved_optimizer_name(path), optimizer_name(self._optimizer)
        if saved not in (None, ours):
            # Adam and LAMB have the same slots: the restore below would succeed and train on with the other one.
            raise TrainingError(f"{path}: cannot resume from this checkpoint: it was written by the {saved} "
                                f"optimizer and this run has {ours} (--optimizer); pass the run's --optimizer, or "
                                "use a new --output_dir")
        checkpoint = self._checkpoint
        saved = {name.split("/")[0] for name, _ in tf.train.list_variables(path)}
        if not saved.issuperset(self._objects):
            # Written before the seed generators (dropout then draws anew) or the left-to-right marker were saved:
            # what it holds resumes.
            checkpoint = tf.train.Checkpoint(**{key: value for key, value in self._objects.items()
                                                if key in saved or key in (MODEL_KEY, "optimizer")})
        try:
            checkpoint.restore(path).assert_existing_objects_matched()
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
        """Saves the current state as ckpt-<step>; every worker must call it under multi_worker_mirrored.

        Raises:
            TrainingError: a weight is no longer a finite number (the loss diverged): nothing is saved, so that
                the last checkpoint stays the last good one.
        """
        step = global_step(self._optimizer)
        check_finite_weights(self._model, step, self.latest)
        with distribution.WorkerDirectory(self._output_dir, self._strategy) as directory:
            # Every worker saves through a manager: the save's collective ops must match across workers.
            manager = self._manager if directory == self._output_dir else tf.train.CheckpointManager(
                self._checkpoint, directory, max_to_keep=1, checkpoint_name=CHECKPOINT_PREFIX)
            try:
                path = manager.save(checkpoint_number=step)
            except WRITE_ERRORS as e:
                # TensorFlow leaves the shards it wrote in ckpt-<step>_temp/; the state file still names the
                # last good checkpoint.
                name = f"{CHECKPOINT_PREFIX}-{step}"
                prefix = os.path.join(directory, name)
                for leftover in files.glob(f"{name}_temp*", directory) + files.glob(f"{name}.*", directory):
                    remove_tree(leftover)
                raise TrainingError(f"{prefix}: cannot write the checkpoint ({reason(e)}); the last good one is "
                                    f"{manager.latest_checkpoint or 'none'}") from None
        if directory == self._output_dir:
            logging.info("saved checkpoint %s", path)
        self.saved_step = step


def check_finite_weights(model, step, last_good=None):
    """Raises `TrainingError` if a float weight of `model` is NaN or infinite: a diverged run stops with one line
    instead of saving, evaluating or exporting NaN weights.

    Example:
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> check_finite_weights(model, 3)
    >>> _ = model.layers[0].kernel.assign([[float("nan")], [0.0]])
    >>> check_finite_weights(model, 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.training.options.TrainingError: at step 3 the weights are no longer finite numbers (the loss ...
    """
    floats = [v for v in model.weights if tf.as_dtype(v.dtype).is_floating]
    if floats and not bool(tf.reduce_all([tf.reduce_all(tf.math.is_finite(v)) for v in floats])):
        raise TrainingError(non_finite_message(step, last_good))


def non_finite_message(step, last_good=None):
    """What a run that diverged says: where, that nothing was saved, and what to change."""
    return (f"at step {step} the weights are no longer finite numbers (the loss became NaN or infinite): nothing "
            f"was saved, the last good checkpoint is {last_good or 'none'}; lower --learning_rate, or check the "
            "data and the loss's settings")


def optimizer_name(optimizer):
    """The name of an optimizer's kind, as a checkpoint records it: its class in snake case, the optimizer a
    LossScaleOptimizer wraps, without the counter Keras appends to repeated names.

    Example:
    >>> optimizer_name(keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(name="adam_3")))
    'adam'
    """
    while hasattr(optimizer, "inner_optimizer"):
        optimizer = optimizer.inner_optimizer
    return re.sub(r"_\d+$", "", optimizer.name)


def saved_optimizer_name(path):
    """The `optimizer_name` of the optimizer whose state the training checkpoint at `path` holds, or None.

    Example:
    >>> import tempfile
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> optimizer = keras.optimizers.SGD()
    >>> optimizer.build(model.trainable_variables)
    >>> path = tf.train.Checkpoint(model=model, optimizer=optimizer).write(tempfile.mkdtemp() + "/ckpt")
    >>> saved_optimizer_name(path)
    'sgd'
    """
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    try:
        graph.ParseFromString(google.open_reader(path).get_tensor(OBJECT_GRAPH_KEY))
    except (CheckpointError, tf.errors.OpError, ValueError):
        return None  # not an object-based checkpoint: the restore says what is wrong
    names = {a.checkpoint_key: a.full_name for node in graph.nodes for a in node.attributes}
    for key in ITERATIONS_CHECKPOINT_KEYS:
        if key in names:
            return re.sub(r"_\d+$", "", names[key].split("/")[0])
    return None


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
