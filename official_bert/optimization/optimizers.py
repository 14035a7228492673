"""BERT's optimizers as Keras 3 optimizers: Google's AdamWeightDecay and LAMB.

Both clip the gradients to a global norm of 1.0 (`global_clipnorm`) before the update, as Google's and
NVIDIA's BERT code do, and skip weight decay for LayerNorm and bias variables. Under tf.distribute the
norm is that of the gradient summed over replicas, so the update does not depend on the replica count
(stock Keras clips each replica's share before the sum).

A variable is excluded when any pattern in `exclude_from_weight_decay` `re.search`-es its Keras path
(e.g. "bert/transformer_layer_0/attention_layer_norm/gamma") or its name. The default patterns are the
original's ("LayerNorm", "layer_norm", "bias") plus "gamma" and "beta", so a `keras.layers.LayerNormalization`
is excluded whatever its layer is called. Decisions are made once, in `build`, from the Keras variables,
because `update_step` may receive a backend variable (under tf.distribute, a per-replica copy) whose
name differs.

Gradient accumulation: pass Keras's `gradient_accumulation_steps=N`; the update then uses the mean of
N micro-batch gradients (clipped after averaging), and also works under tf.distribute strategies that
use merge_call (Mirrored, MultiWorkerMirrored), where stock Keras 3 fails to trace it. A learning-rate
schedule is evaluated at the number of updates (`optimizer.iterations`), not of micro-batches as in stock
Keras, so `num_train_steps` and `num_warmup_steps` count updates whether or not gradients are accumulated;
the checkpointed counter (`optimizer._iterations`) counts micro-batches.

These behaviours override private hooks of Keras 3's TensorFlow optimizer and call some of its private members,
listed with every other private API the library uses in `training/keras_compat.py` (`OPTIMIZER_HOOKS`,
`OPTIMIZER_MEMBERS`, `TF_INTERNALS`); tests/training/test_keras_compat.py checks that they exist in the Keras
version installed and tests/optimization/test_optimization.py checks each behaviour against a NumPy reference, so
a Keras upgrade that moves them fails loudly.
"""

import re

import keras
import tensorflow as tf
from keras import ops

DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias", "gamma", "beta")


def _matches(variable, patterns):
    names = [n for n in (getattr(variable, "path", None), variable.name) if n]
    return any(re.search(p, n) for p in patterns for n in names)


class _BertOptimizer(keras.optimizers.Optimizer):
    """Adam moments, decoupled weight decay with exclusions, global-norm clipping, per-update schedules."""

    def __init__(self, learning_rate, weight_decay_rate, beta_1, beta_2, epsilon, exclude_from_weight_decay,
                 global_clipnorm, **kwargs):
        # Keras's own `weight_decay` would decay every variable a second time, before the update.
        if kwargs.pop("weight_decay", None) is not None:
            raise ValueError("use weight_decay_rate, not weight_decay")
        # Under tf.distribute, accumulation takes its own path (_backend_apply_gradients), which has no EMA.
        if kwargs.get("use_ema") and kwargs.get("gradient_accumulation_steps"):
            raise ValueError("use_ema cannot be combined with gradient_accumulation_steps")
        super().__init__(learning_rate=learning_rate, global_clipnorm=global_clipnorm, **kwargs)
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.exclude_from_weight_decay = list(exclude_from_weight_decay or [])

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m = [self.add_variable_from_reference(v, name="m") for v in var_list]
        self._v = [self.add_variable_from_reference(v, name="v") for v in var_list]
        self._decays = [bool(self.weight_decay_rate) and not _matches(v, self.exclude_from_weight_decay)
                        for v in var_list]

    def _get_current_learning_rate(self):
        # Stock Keras feeds schedules the micro-batch count, which runs them N times too fast under
        # gradient accumulation; BERT's step counts are optimizer updates.
        if isinstance(self._learning_rate, keras.optimizers.schedules.LearningRateSchedule):
            return self._learning_rate(self.iterations)
        return super()._get_current_learning_rate()

    def _clip_gradients(self, grads):
        if self.global_clipnorm:
            return grads  # clipped after the cross-replica sum, in _all_reduce_sum_gradients
        return super()._clip_gradients(grads)

    def _backend_apply_gradients(self, grads, trainable_variables):
        if not self.gradient_accumulation_steps or tf.__internal__.distribute.strategy_supports_no_merge_call():
            return super()._backend_apply_gradients(grads, trainable_variables)
        # Keras picks accumulation update steps with a tf.cond in replica context, and tf.distribute cannot
        # trace the merge_calls inside it (cross-replica sum, variable updates). As LossScaleOptimizer
        # does, the cond runs in cross-replica context here and each branch goes back to the replicas.
        def cross_replica(distribution, grads):
            def on_replicas(fn):
                return lambda: distribution.extended.call_for_each_replica(fn, args=(grads, trainable_variables))

            is_update_step = (self._iterations + 1) % self.gradient_accumulation_steps == 0
            ops.cond(is_update_step, on_replicas(self._apply_accumulated), on_replicas(self._accumulate))

        tf.distribute.get_replica_context().merge_call(cross_replica, args=(grads,))

    def _accumulators(self, trainable_variables):
        return [self._accumulated_gradients[self._get_variable_index(v)] for v in trainable_variables]

    def _accumulate(self, grads, trainable_variables):
        self._backend_increment_gradient_accumulators(grads, self._accumulators(trainable_variables))

    def _apply_accumulated(self, grads, trainable_variables):
        accumulators = self._accumulators(trainable_variables)
        grads = [(g + a) / self.gradient_accumulation_steps for g, a in zip(grads, accumulators)]
        self._backend_update_step(self._clip_gradients(grads), trainable_variables, self.learning_rate)
        self._backend_reset_gradient_accumulators()

    def _all_reduce_sum_gradients(self, grads_and_vars):
        grads_and_vars = super()._all_reduce_sum_gradients(grads_and_vars)
        if not self.global_clipnorm:
            return grads_and_vars
        grads, variables = zip(*grads_and_vars)
        grads, _ = tf.clip_by_global_norm(grads, self.global_clipnorm)
        return list(zip(grads, variables))

    def _update_moments(self, gradient, variable):
        """Updates the moments; returns (m, v, whether to decay, slot index)."""
        index = self._get_variable_index(variable)
        # Embedding gradients arrive as IndexedSlices; like the original, every row is updated.
        gradient = ops.cast(tf.convert_to_tensor(gradient), variable.dtype)
        m = self.beta_1 * self._m[index] + (1.0 - self.beta_1) * gradient
        v = self.beta_2 * self._v[index] + (1.0 - self.beta_2) * ops.square(gradient)
        self.assign(self._m[index], m)
        self.assign(self._v[index], v)
        return m, v, self._decays[index], index

    def get_config(self):
        config = super().get_config()
        del config["weight_decay"]
        config.update(weight_decay_rate=self.weight_decay_rate, beta_1=self.beta_1, beta_2=self.beta_2,
                      epsilon=self.epsilon, exclude_from_weight_decay=self.exclude_from_weight_decay)
        return config


@keras.saving.register_keras_serializable(package="official_bert")
class AdamWeightDecay(_BertOptimizer):
    """Google BERT's AdamWeightDecayOptimizer: Adam without bias correction, plus decoupled weight decay.

    Per variable: `m = b1*m + (1-b1)*g`, `v = b2*v + (1-b2)*g²`, `u = m / (sqrt(v) + eps)`,
    `u += weight_decay_rate * param` unless excluded, `param -= lr * u`. With `bias_correction`, m and v are divided
    by 1 - b1^t and 1 - b2^t at update t (from 1) first: torch's AdamW, which sentence-transformers trains with (BERT's
    omits it, so its first few hundred updates are up to several times larger).

    Args:
        learning_rate: a float or a `LearningRateSchedule` (see `create_optimizer`).
        weight_decay_rate: decoupled weight decay; 0 disables it.
        beta_1: decay of the first moment.
        beta_2: decay of the second moment.
        epsilon: added to sqrt(v); 1e-6 as in the original.
        exclude_from_weight_decay: regex patterns; a variable whose path or name matches one is not decayed.
        global_clipnorm: gradients are scaled so their global norm is at most this; None disables.
        bias_correction: correct the moments' bias toward 0, as Adam (Kingma and Ba 2015) and torch's AdamW do.
        **kwargs: other `keras.optimizers.Optimizer` arguments, e.g. `gradient_accumulation_steps`.

    Example:
    >>> import keras
    >>> import numpy as np
    >>> from official_bert.optimization import AdamWeightDecay
    >>> kernel = keras.Variable(np.ones(2, "float32"), name="kernel")
    >>> bias = keras.Variable(np.ones(2, "float32"), name="bias")
    >>> grad = np.array([0.5, -0.5], "float32")
    >>> AdamWeightDecay(learning_rate=0.1).apply([grad, grad], [kernel, bias])
    >>> print(np.round(kernel.numpy(), 4), np.round(bias.numpy(), 4))
    [0.6828 1.3152] [0.6838 1.3162]
    >>> corrected = keras.Variable(np.ones(2, "float32"), name="kernel")
    >>> AdamWeightDecay(learning_rate=0.1, weight_decay_rate=0.0, bias_correction=True).apply([grad], [corrected])
    >>> np.round(corrected.numpy(), 4)  # the first corrected update: lr · g / (|g| + eps), 0.1 each way
    array([0.9, 1.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 exclude_from_weight_decay=DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY, global_clipnorm=1.0,
                 bias_correction=False, **kwargs):
        super().__init__(learning_rate, weight_decay_rate, beta_1, beta_2, epsilon, exclude_from_weight_decay,
                         global_clipnorm, **kwargs)
        self.bias_correction = bool(bias_correction)

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        dtype = variable.dtype
        # Embedding gradients arrive as IndexedSlices; like the original, every row is updated.
        gradient = ops.cast(tf.convert_to_tensor(gradient), dtype)
        # 1 - beta is taken in Python's double precision, as the original's `(1.0 - self.beta_2) * ...` is.
        constants = (self.beta_1, 1.0 - self.beta_1, self.beta_2, 1.0 - self.beta_2, self.epsilon,
                     self.weight_decay_rate if self._decays[index] else 0.0)
        corrections = [tf.constant(1.0, dtype)] * 2  # x · 1.0 is x exactly: BERT's update, bit for bit
        if self.bias_correction:
            # In double precision, as 1 - beta above: float32's 1 - 0.999 is 1.3e-5 off.
            step = tf.cast(self.iterations + 1, tf.float64)
            corrections = [tf.cast(1.0 / (1.0 - tf.pow(tf.constant(beta, tf.float64), step)), dtype)
                           for beta in (self.beta_1, self.beta_2)]
        _adam_weight_decay(variable.handle, self._m[index].handle, self._v[index].handle, gradient,
                           ops.cast(learning_rate, dtype), *(tf.constant(c, dtype) for c in constants), *corrections)

    def get_config(self):
        return {**super().get_config(), "bias_correction": self.bias_correction}


# The original's update, compiled by XLA into one pass over the variable and its moments: run op by op it was
# about fifteen passes (a BERT-base update 348-455 -> 196 ms on 2 AMX cores). TensorFlow's fused ResourceApplyAdam
# would be as fast but computes 1 - beta_2 in float32 (0.99998713e-3 for 0.999): every v 1.3e-5 too small. The
# variables come as resource handles, tensors like any other: a tf.function traced with variables for arguments
# would keep the first caller's.
@tf.function(jit_compile=True)
def _adam_weight_decay(variable, m, v, gradient, learning_rate, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2,
                       epsilon, weight_decay_rate, m_correction, v_correction):
    dtype = gradient.dtype
    m_value = beta_1 * tf.raw_ops.ReadVariableOp(resource=m, dtype=dtype) + one_minus_beta_1 * gradient
    v_value = beta_2 * tf.raw_ops.ReadVariableOp(resource=v, dtype=dtype) + one_minus_beta_2 * tf.square(gradient)
    value = tf.raw_ops.ReadVariableOp(resource=variable, dtype=dtype)
    update = m_value * m_correction / (tf.sqrt(v_value * v_correction) + epsilon) + weight_decay_rate * value
    tf.raw_ops.AssignVariableOp(resource=m, value=m_value)
    tf.raw_ops.AssignVariableOp(resource=v, value=v_value)
    tf.raw_ops.AssignVariableOp(resource=variable, value=value - learning_rate * update)


@keras.saving.register_keras_serializable(package="official_bert")
class Lamb(_BertOptimizer):
    """LAMB (You et al., 2019) as in tensorflow-addons and NVIDIA's BERT: Adam with a per-layer trust ratio.

    Per variable: bias-corrected Adam direction `r = m_hat / (sqrt(v_hat) + eps)`,
    `r += weight_decay_rate * param` unless excluded from decay, trust ratio `||param|| / ||r||` (1 when
    either norm is 0, or when the variable is excluded from layer adaptation), `param -= lr * ratio * r`.

    Args:
        learning_rate: a float or a `LearningRateSchedule` (see `create_optimizer`).
        weight_decay_rate: decoupled weight decay; 0 disables it.
        beta_1: decay of the first moment.
        beta_2: decay of the second moment.
        epsilon: added to sqrt(v_hat).
        exclude_from_weight_decay: regex patterns; a variable whose path or name matches one is not decayed.
        exclude_from_layer_adaptation: regex patterns for variables updated without the trust ratio;
            None means the same as `exclude_from_weight_decay`.
        global_clipnorm: gradients are scaled so their global norm is at most this; None disables.
        **kwargs: other `keras.optimizers.Optimizer` arguments, e.g. `gradient_accumulation_steps`.

    Example:
    >>> import keras
    >>> import numpy as np
    >>> from official_bert.optimization import Lamb
    >>> kernel = keras.Variable(np.full(2, 3.0, "float32"), name="kernel")
    >>> bias = keras.Variable(np.full(2, 3.0, "float32"), name="bias")
    >>> grad = np.array([0.5, -0.5], "float32")
    >>> Lamb(learning_rate=0.1).apply([grad, grad], [kernel, bias])
    >>> print(np.round(kernel.numpy(), 4), np.round(bias.numpy(), 4))
    [2.6911 3.2909] [2.9 3.1]
    """

    def __init__(self, learning_rate=0.001, weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 exclude_from_weight_decay=DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY, exclude_from_layer_adaptation=None,
                 global_clipnorm=1.0, **kwargs):
        super().__init__(learning_rate, weight_decay_rate, beta_1, beta_2, epsilon, exclude_from_weight_decay,
                         global_clipnorm, **kwargs)
        self.exclude_from_layer_adaptation = (
            None if exclude_from_layer_adaptation is None else list(exclude_from_layer_adaptation))

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        patterns = self.exclude_from_layer_adaptation
        if patterns is None:
            patterns = self.exclude_from_weight_decay
        self._adapts = [not _matches(v, patterns) for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        m, v, decay, index = self._update_moments(gradient, variable)
        step = ops.cast(self.iterations + 1, variable.dtype)
        m_hat = m / (1.0 - ops.power(ops.cast(self.beta_1, variable.dtype), step))
        v_hat = v / (1.0 - ops.power(ops.cast(self.beta_2, variable.dtype), step))
        update = m_hat / (ops.sqrt(v_hat) + self.epsilon)
        if decay:
            update = update + self.weight_decay_rate * variable
        lr = ops.cast(learning_rate, variable.dtype)
        if self._adapts[index]:
            param_norm = ops.sqrt(ops.sum(ops.square(variable)))
            update_norm = ops.sqrt(ops.sum(ops.square(update)))
            positive = ops.logical_and(param_norm > 0, update_norm > 0)
            lr = lr * ops.where(positive, param_norm / ops.where(positive, update_norm, 1.0), 1.0)
        self.assign_sub(variable, lr * update)

    def get_config(self):
        config = super().get_config()
        config.update(exclude_from_layer_adaptation=self.exclude_from_layer_adaptation)
        return config
