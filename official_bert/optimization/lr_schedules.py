"""The learning-rate schedule of Google's BERT: linear warmup, then polynomial decay."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="official_bert")
class WarmupPolynomialDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup to `initial_learning_rate`, then polynomial decay to `end_learning_rate`.

    This is the schedule the original `optimization.create_optimizer` builds, quirks included:
    while `step < warmup_steps` the rate is `initial_learning_rate * step / warmup_steps`; from then on
    it is `tf.compat.v1.train.polynomial_decay` evaluated at the global step (not at
    `step - warmup_steps`), so the rate at the end of warmup is already
    `initial_learning_rate * (1 - warmup_steps / decay_steps) ** power`, and past `decay_steps` it stays
    at `end_learning_rate`.

    Args:
        initial_learning_rate: the peak rate (the original's `init_lr`).
        decay_steps: the step at which the rate reaches `end_learning_rate` (`num_train_steps`).
        warmup_steps: length of the linear warmup (`num_warmup_steps`); 0 for none.
        end_learning_rate: the rate at and after `decay_steps`.
        power: exponent of the decay; 1.0 is linear.

    Example:
    >>> from official_bert.optimization import WarmupPolynomialDecay
    >>> schedule = WarmupPolynomialDecay(1.0, decay_steps=100, warmup_steps=10)
    >>> [round(float(schedule(step)), 4) for step in (0, 5, 10, 55, 100, 150)]
    [0.0, 0.5, 0.9, 0.45, 0.0, 0.0]
    """

    def __init__(self, initial_learning_rate, decay_steps, warmup_steps=0, end_learning_rate=0.0, power=1.0):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be positive, got {decay_steps}")
        if warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0, got {warmup_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.warmup_steps = warmup_steps
        self.end_learning_rate = end_learning_rate
        self.power = power

    def __call__(self, step):
        step = ops.cast(step, "float32")
        done = ops.minimum(step, float(self.decay_steps)) / float(self.decay_steps)
        span = self.initial_learning_rate - self.end_learning_rate
        decayed = span * ops.power(1.0 - done, self.power) + self.end_learning_rate
        if not self.warmup_steps:
            return decayed
        warmup = self.initial_learning_rate * step / float(self.warmup_steps)
        return ops.where(step < float(self.warmup_steps), warmup, decayed)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "warmup_steps": self.warmup_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
        }
