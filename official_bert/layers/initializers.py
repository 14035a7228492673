"""BERT's weight initializer, one instance per weight."""

import keras


def truncated_normal(stddev):
    """A new truncated-normal initializer (stddev `stddev`, redrawn beyond 2σ), for exactly one weight.

    The original's `modeling.create_initializer` gives every variable its own draw. A Keras initializer made
    with seed=None fixes its seed when it is constructed, so one instance called for two weights gives them
    the same values (the second holds a prefix of the first's): call this once per weight. The seed each new
    instance takes comes from Python's `random`, which `keras.utils.set_random_seed` seeds, so the same seed
    still gives the same model.

    Args:
        stddev: the standard deviation before truncation (`BertConfig.initializer_range`).

    Example:
    >>> import numpy as np
    >>> a, b = truncated_normal(0.02)((4, 4)), truncated_normal(0.02)((4, 4))
    >>> bool(np.array_equal(a, b)), float(np.abs(a).max()) <= 0.04
    (False, True)
    """
    return keras.initializers.TruncatedNormal(stddev=stddev)
