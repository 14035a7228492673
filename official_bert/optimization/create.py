"""`create_optimizer`: BERT's optimizer with its warmup-then-decay schedule, from a few numbers."""

from official_bert.optimization.lr_schedules import WarmupPolynomialDecay
from official_bert.optimization.optimizers import AdamWeightDecay, Lamb


_OPTIMIZERS = {"adamw": AdamWeightDecay, "lamb": Lamb}


def create_optimizer(init_lr, num_train_steps, num_warmup_steps, optimizer_type="adamw", weight_decay_rate=0.01,
                     end_lr=0.0, poly_power=1.0, **optimizer_kwargs):
    """The optimizer Google's `create_optimizer` builds, as a Keras optimizer (Model Garden's signature).

    The learning rate warms up linearly to `init_lr` over `num_warmup_steps`, then decays polynomially
    to `end_lr` at `num_train_steps` (see `WarmupPolynomialDecay`); both count optimizer updates, also
    under gradient accumulation.

    Args:
        init_lr: peak learning rate.
        num_train_steps: step at which the rate reaches `end_lr`.
        num_warmup_steps: length of the linear warmup; 0 for none.
        optimizer_type: "adamw" (the original AdamWeightDecay, no bias correction) or "lamb".
        weight_decay_rate: decoupled weight decay, skipped for LayerNorm and bias variables.
        end_lr: final learning rate.
        poly_power: exponent of the decay; 1.0 is linear.
        **optimizer_kwargs: passed to the optimizer, e.g. `beta_1`, `epsilon`, `global_clipnorm`,
            `exclude_from_weight_decay`, `gradient_accumulation_steps`.

    Returns:
        An `AdamWeightDecay` or `Lamb` optimizer.

    Example:
    >>> from official_bert import create_optimizer
    >>> optimizer = create_optimizer(1e-4, num_train_steps=1000, num_warmup_steps=100)
    >>> type(optimizer).__name__, optimizer.epsilon, optimizer.global_clipnorm
    ('AdamWeightDecay', 1e-06, 1.0)
    >>> round(float(optimizer.learning_rate), 8)  # step 0 of the warmup
    0.0
    """
    try:
        optimizer_class = _OPTIMIZERS[optimizer_type.lower()]
    except KeyError:
        raise ValueError(f"unknown optimizer_type {optimizer_type!r}; expected one of {sorted(_OPTIMIZERS)}") from None
    schedule = WarmupPolynomialDecay(init_lr, decay_steps=num_train_steps, warmup_steps=num_warmup_steps,
                                     end_learning_rate=end_lr, power=poly_power)
    return optimizer_class(learning_rate=schedule, weight_decay_rate=weight_decay_rate, **optimizer_kwargs)
