"""The compiled functions Keras `fit` and `evaluate` call: several train (or test) steps per call.

Keras 3's own functions (TensorFlow backend) fail under tf.distribute's Mirrored and MultiWorkerMirrored
strategies: looping over several steps traces a tf.cond around the gradient all-reduce's merge_call
(keras-team/keras#19246: "You must feed a value for placeholder tensor"), and across workers the replicas'
scalar metric results are all-reduced along an axis they lack (tensorflow/tensorflow#72388). These loop
with tf.range, as tf.keras 2 did, and return the metrics read in cross-replica context, where they are
already aggregated over every replica and worker. Every strategy uses them, so there is one code path.

Batches padded per batch (`official_bert.batch_padding`) come from a dataset whose element spec leaves the
sequence length unknown, so one trace serves every length; with XLA (jit_compile) they are never used.
"""

import tensorflow as tf

from official_bert.training.keras_compat import set_step_functions


def install_step_functions(model, strategy, steps_per_execution, jit_compile=False, loops=None):
    """Makes `model.fit` and `model.evaluate` run `steps_per_execution` steps per call under `strategy`.

    Call it after `model.compile` (which resets them), and call fit/evaluate within `strategy.scope()` with
    a dataset of at least steps_per_execution × the steps asked for batches.

    Args:
        model: a compiled Keras model.
        strategy: the `tf.distribute.Strategy` its variables were made under.
        steps_per_execution: train (or test) steps per call; fit and evaluate must be asked for multiples.
        jit_compile: compile each step with XLA.
        loops: the model's `compiled_loops`, to reuse their traces for another step count (default: new ones).

    Example:
    >>> import keras, numpy as np
    >>> strategy = tf.distribute.get_strategy()
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> install_step_functions(model, strategy, steps_per_execution=4)
    >>> data = tf.data.Dataset.from_tensors((np.ones((3, 2)), np.ones((3, 1)))).repeat()
    >>> _ = model.fit(data, steps_per_epoch=8, verbose=0, shuffle=False)
    >>> int(model.optimizer.iterations)
    8
    """
    train_loop, test_loop = loops or compiled_loops(model, strategy, jit_compile)
    steps = tf.constant(steps_per_execution, tf.int32)
    set_step_functions(model, lambda iterator: train_loop(iterator, steps),
                       lambda iterator: test_loop(iterator, steps), steps_per_execution)


def compiled_loops(model, strategy, jit_compile=False):
    """(train loop, test loop) of a compiled `model`: tf.functions of (iterator, steps) that run `steps` (an int32
    tensor) train or test steps and return the metrics. The count is an input, so one trace serves every loop
    length: an epoch's shorter last loop costs no second trace of the model (seconds, on a CPU). Make them once
    per compile, and pass them to `install_step_functions`."""
    return (_loop(model, model.train_step, strategy, jit_compile),
            _loop(model, model.test_step, strategy, jit_compile))


def _loop(model, step, strategy, jit_compile):
    @tf.function(jit_compile=jit_compile, reduce_retracing=True)
    def one_step(data):
        strategy.run(step, args=(data,))

    @tf.function
    def multi_step(iterator, steps):
        for _ in tf.range(steps):
            one_step(next(iterator))
        return model.get_metrics_result()

    return multi_step
