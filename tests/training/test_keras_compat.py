"""The private Keras API the library relies on (official_bert/training/keras_compat.py) is still there, in the Keras
version it was checked against: an upgrade fails here first, naming what to re-check."""

import inspect

import keras
import numpy as np
import tensorflow as tf

from official_bert.training import keras_compat
from official_bert.training.step_functions import install_step_functions

RECHECK = "re-check official_bert/training/keras_compat.py against this Keras, then update CHECKED_KERAS_VERSION"


def test_keras_is_the_version_the_private_api_was_checked_against():
    assert keras.__version__ == keras_compat.CHECKED_KERAS_VERSION, f"Keras {keras.__version__}: {RECHECK}"


def test_the_optimizer_hooks_exist_with_the_signatures_overridden():
    optimizer = keras.optimizers.Adam()
    expected = {"_get_current_learning_rate": [], "_clip_gradients": ["grads"],
                "_all_reduce_sum_gradients": ["grads_and_vars"],
                "_backend_apply_gradients": ["grads", "trainable_variables"]}
    assert set(expected) == set(keras_compat.OPTIMIZER_HOOKS)
    for name, parameters in expected.items():
        method = getattr(optimizer, name, None)
        assert callable(method), f"keras.optimizers.Optimizer.{name} is gone: {RECHECK}"
        assert list(inspect.signature(method).parameters) == parameters, f"{name}'s signature changed: {RECHECK}"
    assert isinstance(getattr(optimizer, keras_compat.ITERATIONS_ATTRIBUTE), keras.Variable), RECHECK


def test_the_optimizer_members_the_overrides_call_exist():
    optimizer = keras.optimizers.Adam(gradient_accumulation_steps=2)
    variable = keras.Variable(np.zeros(2, "float32"))
    optimizer.build([variable])
    for name, parameters in keras_compat.OPTIMIZER_MEMBERS.items():
        assert hasattr(optimizer, name), f"keras.optimizers.Optimizer.{name} is gone: {RECHECK}"
        if parameters is not None:
            member = getattr(optimizer, name)
            assert list(inspect.signature(member).parameters) == parameters, f"{name}'s signature changed: {RECHECK}"
    assert optimizer._get_variable_index(variable) == 0 and len(optimizer._accumulated_gradients) == 1
    for path in keras_compat.TF_INTERNALS:
        target = tf
        for part in path.split(".")[1:]:
            target = getattr(target, part, None)
        assert callable(target), f"{path} is gone: {RECHECK}"
    assert tf.__internal__.distribute.strategy_supports_no_merge_call() in (True, False)


def test_the_model_hooks_do_what_the_library_needs(tmp_path):
    strategy = tf.distribute.get_strategy()
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    data = tf.data.Dataset.from_tensors((np.ones((3, 2), "float32"), np.ones((3, 1), "float32"))).repeat()
    keras_compat.build_compiled_state(model, data.element_spec)
    assert model.compiled  # the loss and metric state exist before any step
    assert hasattr(model, "_distribute_strategy"), RECHECK
    keras_compat.skip_build_under_strategy(model)
    install_step_functions(model, strategy, steps_per_execution=2)
    history = model.fit(data, steps_per_epoch=4, verbose=0, shuffle=False)
    assert int(model.optimizer.iterations) == 4 and set(history.history) == {"loss", "mae"}, RECHECK
    # The checkpoint key of the optimizer's counter, which resume reads to tell the optimizer apart.
    path = tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(str(tmp_path / "ckpt"))
    keys = {name for name, _ in tf.train.list_variables(path)}
    assert keras_compat.ITERATIONS_CHECKPOINT_KEYS[1] in keys, RECHECK
