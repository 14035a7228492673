"""`TrainingRun`: what a pretraining run and a fine-tuning run share — a compiled model under a strategy, its
checkpoints restored or warm-started, the compiled multi-step loops, and `fit` calls that save on Ctrl-C."""

import contextlib
import math
import warnings

import keras
import tensorflow as tf

from official_bert import distribution
from official_bert.training import keras_compat
from official_bert.training.checkpointing import TrainingCheckpoints, global_step, non_finite_message
from official_bert.training.options import TrainingError
from official_bert.training.step_functions import compiled_loops, install_step_functions


class TrainingRun:
    """A model compiled with its optimizer under `strategy`, resumed from `options.output_dir`'s newest
    checkpoint or warm-started from `options.init_checkpoint`.

    Subclasses (`PretrainingRun`, `FineTuningRun`) build the model and the optimizer under `strategy.scope()`, then
    call this constructor, and train with `_fit` inside `_saving_on_interrupt`.

    Args:
        model: a built Keras model, made under `strategy.scope()`.
        optimizer: its optimizer, made under `strategy.scope()` (wrapped for loss scaling under fp16).
        options: the `TrainingOptions` (output_dir, mixed_precision, jit_compile, iterations_per_loop, log_steps,
            save_checkpoints_steps, keep_checkpoint_max, init_checkpoint).
        strategy: the `tf.distribute.Strategy`.
        compile_args: more arguments of `model.compile` (loss, metrics, loss_weights).
        do_lower_case: checked against the init checkpoint's casing (a warning when they disagree).

    Example:
    >>> import tempfile
    >>> from official_bert.training import TrainingOptions
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> run = TrainingRun(model, keras.optimizers.SGD(), TrainingOptions(tempfile.mkdtemp()),
    ...                   tf.distribute.get_strategy(), {"loss": "mse"})
    >>> run.step, run.checkpoints.saved_step is None
    (0, True)
    """

    def __init__(self, model, optimizer, options, strategy, compile_args, do_lower_case=None):
        self.model = model
        self.options = options
        self.strategy = strategy
        self.is_chief = distribution.is_chief(strategy)
        # Steps per call into the compiled loop: at most iterations_per_loop, and calls end on the steps of
        # progress reports and checkpoints (they happen between calls).
        self._loop_steps = math.gcd(options.iterations_per_loop, options.log_steps, options.save_checkpoints_steps)
        with strategy.scope():
            if options.mixed_precision == "fp16":
                optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
            model.compile(optimizer=optimizer, jit_compile=options.jit_compile, **compile_args)
            optimizer.build(model.trainable_variables)  # slots must exist before a restore fills them
        keras_compat.skip_build_under_strategy(model)
        self._loops = compiled_loops(model, strategy, options.jit_compile)
        self.checkpoints = TrainingCheckpoints(model, optimizer, options.output_dir, strategy,
                                               max_to_keep=options.keep_checkpoint_max or None)
        self.checkpoints.restore_or_warm_start(options.init_checkpoint, do_lower_case)

    @property
    def step(self):
        """Optimizer updates made so far: the global step."""
        return global_step(self.model.optimizer)

    @contextlib.contextmanager
    def _saving_on_interrupt(self):
        """On KeyboardInterrupt (the CLIs turn SIGTERM into one) a single-worker run saves a checkpoint at the step
        reached before re-raising it; other workers are not interrupted with this one, and a multi-worker save
        needs them all."""
        try:
            yield
        except KeyboardInterrupt:
            if not isinstance(self.strategy, tf.distribute.MultiWorkerMirroredStrategy):
                self.checkpoints.save()
            raise

    def _fit(self, dataset, steps, callbacks):
        """One `fit` call of `steps` steps (a multiple of the compiled loop's) on `dataset`."""
        with self.strategy.scope(), warnings.catch_warnings():
            # Span and token heads, and pretraining without NSP, leave the pooler unused; its weights stay, so that
            # checkpoints keep them, and are not updated (the original skipped them silently, too).
            warnings.filterwarnings("ignore", message=r"Gradients do not exist for variables \['pooler/")
            self.model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0, shuffle=False,
                           callbacks=[_StopOnNonFiniteLoss(self.checkpoints), *callbacks])

    def _set_steps_per_execution(self, steps):
        # Loops of different lengths alternate (whole loops and a shorter last one, training and evaluation): they
        # share one trace of each compiled loop.
        install_step_functions(self.model, self.strategy, steps, loops=self._loops)


class _StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Stops training with one line at the first loop whose loss is NaN or infinite, before any later callback
    (a checkpoint, an evaluation) sees the diverged weights."""

    def __init__(self, checkpoints):
        super().__init__()
        self._checkpoints = checkpoints

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            raise TrainingError(non_finite_message(global_step(self.model.optimizer), self._checkpoints.latest))
