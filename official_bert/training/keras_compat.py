"""Every private Keras 3 API the library relies on, in one place, with the Keras version it was checked against.

Keras 3 has no public way to do these, and each works around a limitation that makes a BERT run fail or compute
the wrong thing; tests/training/test_keras_compat.py fails loudly, naming this module, when Keras changes any of them:

- `skip_build_under_strategy`: to build a model before its first `fit`/`evaluate`, Keras reads one batch and
  all-reduces it, which MultiWorkerMirroredStrategy cannot do for dict inputs (keras-team/keras#20329). Our
  models are built already; with no strategy recorded Keras skips that step, and `fit`/`evaluate` run within
  `strategy.scope()` still run under the strategy.
- `build_compiled_state`: Keras builds the compiled losses' and metrics' state (one loss tracker per output)
  when it first traces a step; under a Mirrored strategy that creates variables in replica context, which
  tf.function guards with a cond the replicas cannot feed. Built beforehand from the batches' spec, it is not.
- `set_step_functions`: `fit` and `evaluate` call `model.train_function` / `test_function`; the library
  replaces them (`step_functions.py`) because Keras 3's own fail under tf.distribute (keras-team/keras#19246).
- `OPTIMIZER_HOOKS`: the methods of Keras's TensorFlow optimizer that `optimization/optimizers.py` overrides
  (global-norm clipping after the cross-replica sum, gradient accumulation under merge_call, a schedule counted
  in updates), and `ITERATIONS_ATTRIBUTE`, the counter they and the training checkpoints read.
- `OPTIMIZER_MEMBERS`: the other private members of that optimizer which those overrides call or read (the
  accumulation buffers and their updates, the variable index, the learning rate as given), and
  `TF_INTERNALS`: the private TensorFlow function they call (whether a strategy needs merge_call).
"""

CHECKED_KERAS_VERSION = "3.15.1"

OPTIMIZER_HOOKS = ("_get_current_learning_rate", "_clip_gradients", "_all_reduce_sum_gradients",
                   "_backend_apply_gradients")
ITERATIONS_ATTRIBUTE = "_iterations"
# name → the parameters of a method (None: an attribute), after the optimizer is built with gradient accumulation.
OPTIMIZER_MEMBERS = {"_learning_rate": None, "_accumulated_gradients": None,
                     "_get_variable_index": ["variable"],
                     "_backend_update_step": ["grads", "trainable_variables", "learning_rate"],
                     "_backend_increment_gradient_accumulators": ["grads", "acc_grads"],
                     "_backend_reset_gradient_accumulators": []}
TF_INTERNALS = ("tf.__internal__.distribute.strategy_supports_no_merge_call",)
# Where a training checkpoint's object graph keeps the optimizer's counter (a fp16 run's optimizer is wrapped).
ITERATIONS_CHECKPOINT_KEYS = (f"optimizer/inner_optimizer/{ITERATIONS_ATTRIBUTE}/.ATTRIBUTES/VARIABLE_VALUE",
                              f"optimizer/{ITERATIONS_ATTRIBUTE}/.ATTRIBUTES/VARIABLE_VALUE")


def skip_build_under_strategy(model):
    """Stops Keras from reading a batch under the strategy to build the (already built) `model`.

    Example:
    >>> import keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> skip_build_under_strategy(model)
    """
    model._distribute_strategy = None


def build_compiled_state(model, element_spec):
    """Builds a compiled `model`'s loss and metric state from the spec of its batches, before any step."""
    model._symbolic_build(data_batch=element_spec)


def set_step_functions(model, train_function, test_function, steps_per_execution):
    """Makes `fit`/`evaluate` call `train_function`/`test_function`, each running `steps_per_execution` steps."""
    model.train_function, model.test_function = train_function, test_function
    # Keras's epoch loop reads this to number the steps of each call.
    model.steps_per_execution = steps_per_execution
