"""Dropout from 16 random bits per element, applied in the compute dtype."""

import keras
import tensorflow as tf

# Random bits per element: a uint32 draw gives two elements. 8 bits would halve the draw again but round the keep
# probability to 1/256 (BERT's rate 0.1 would become 0.1016); with 16 bits it is 0.100006.
_BITS = 16
_LEVELS = 2**_BITS


def drop_threshold(rate):
    """k, the number of the 2**16 values of a 16-bit draw that drop an element: round(rate · 65536).

    Example:
    >>> drop_threshold(0.1), 1 - drop_threshold(0.1) / 65536  # BERT's rate and the keep probability it gives
    (6554, 0.899993896484375)
    """
    return round(rate * _LEVELS)


@keras.saving.register_keras_serializable(package="official_bert")
class Dropout(keras.layers.Dropout):
    """`keras.layers.Dropout` drawing 16 random bits per element instead of a float32 uniform.

    Each element gets 16 bits of a uint32 `tf.random.stateless_uniform` draw (one draw for two elements where
    Keras's Dropout draws a float uniform for each, and no float tensor of them); it is dropped when its
    16-bit value is below k = round(rate · 65536), so the keep probability is exactly 1 - k / 65536 (for rate 0.1:
    k = 6554, rate 0.100006). Kept elements are multiplied by 1 / (1 - k / 65536) as the compute dtype rounds it
    (in float32 the exact ratio to float32's precision; in bfloat16 1 / 0.899994 is 1.109375, as Keras's Dropout
    rounds its scale) in the compute dtype. The backward pass holds the mask as bools (`apply_keep_mask`): a
    quarter of the float32 mask autodiff of the product would hold for every dropout until its gradient.
    A rate of at most 1 / 131072 gives k = 0 (`round` takes halves to even): the layer then passes its input
    through; one of at least 1 - 1 / 131072 gives k = 65536 and zeros.

    The masks come from `seed_generator` as Keras's do (a state advanced by every draw and seeded from the
    `seed` argument, or from `keras.utils.set_random_seed`'s global seed), so a `TransformerBlock` under `remat`
    can put the state back and replay the same masks, and checkpoints that save the states resume the stream.
    A draw waits for the layer's input: it depends on nothing computed, so TensorFlow would otherwise run every
    layer's draw at the start of a pass and hold all the masks at once (a BERT-medium forward pass at seq 512:
    374 MiB held instead of 108).

    Args:
        rate: the fraction of elements to drop, in [0, 1]; rounded to a multiple of 1 / 65536 as above.
        noise_shape: as Keras's: the shape of the mask, broadcast over the input (None: the input's shape).
        seed: an int for the seed generator; None takes it from Python's `random` (what
            `keras.utils.set_random_seed` seeds).

    Call args:
        inputs: a float tensor.
        training: drops only when True; otherwise returns `inputs`.

    Example:
    >>> import numpy as np
    >>> layer = Dropout(0.5, seed=1)
    >>> out = layer(np.ones((2, 1000), "float32"), training=True).numpy()
    >>> sorted(set(out.ravel().tolist())), round(float((out == 0).mean()), 1)
    ([0.0, 2.0], 0.5)
    >>> bool((layer(np.ones((2, 3), "float32")).numpy() == 1).all())  # no dropout outside training
    True
    """

    def call(self, inputs, training=False):
        mask = self.keep_mask(inputs, training)
        return inputs if mask is None else apply_keep_mask(inputs, *mask)

    def keep_mask(self, inputs, training=False):
        """(keep, scale) for `inputs`: a bool tensor of the elements kept (the noise shape, broadcast over the
        input) and the multiplier of the kept ones in the compute dtype; None where nothing is dropped (not
        training, or a rate that rounds to 0). Advances the seed generator as `call` does: a layer that applies
        the mask itself (attention, fused with the product after it) draws the same masks as `call`."""
        threshold = drop_threshold(self.rate)
        if not training or threshold == 0:
            return None
        shape = tf.shape(inputs)
        if self.noise_shape is not None:
            shape = tf.stack([shape[i] if size is None else size for i, size in enumerate(self.noise_shape)])
        size = tf.reduce_prod(shape)
        seed = self.seed_generator.next()
        with tf.control_dependencies([inputs]):
            words = tf.random.stateless_uniform([(size + 1) // 2], seed=seed, minval=None, maxval=None,
                                                dtype=tf.uint32)
        # The slice is a no-op for an even size (TensorFlow forwards the buffer), a copy of the bits for an odd one.
        draws = tf.reshape(tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:size], shape)
        scale = 0.0 if threshold == _LEVELS else _LEVELS / (_LEVELS - threshold)
        return draws >= threshold, tf.constant(scale, self.compute_dtype)


def apply_keep_mask(inputs, keep, scale):
    """`inputs` · `scale` where `keep`, 0 elsewhere (as a `Dropout`'s `keep_mask` gives them), holding for the
    backward pass the bool mask (1 byte an element) where autodiff of the product would hold a float one.

    Example:
    >>> import numpy as np
    >>> apply_keep_mask(np.array([1.0, 2.0, 3.0], "float32"), np.array([True, False, True]), 2.0).numpy()
    array([2., 0., 6.], dtype=float32)
    """
    inputs = tf.convert_to_tensor(inputs)
    scale = tf.cast(scale, inputs.dtype)

    @tf.custom_gradient
    def dropped(x):
        # stop_gradient: an eager tape would otherwise record the op inside.
        return scale_kept(tf.stop_gradient(x), keep, scale), lambda grad: scale_kept(grad, keep, scale)

    return dropped(inputs)


def scale_kept(x, keep, scale, dtype=None):
    """x · `scale` where `keep`, 0 elsewhere, computed in scale's dtype and returned in `dtype` (scale's if None).

    One XLA kernel: one pass over x, where TensorFlow's ops take two or three (a float mask, the product, a cast).
    Only training calls it (dropout is off in inference and exports).

    Example:
    >>> import numpy as np
    >>> scale = tf.constant(2.0, tf.bfloat16)  # float32 in, computed in bfloat16, returned in float32
    >>> scale_kept(np.array([1.5, 2.5], "float32"), np.array([True, False]), scale, tf.float32).numpy()
    array([3., 0.], dtype=float32)
    """
    return _scale_kept(x, keep, scale, tf.as_dtype(dtype or scale.dtype))


@tf.function(jit_compile=True)
def _scale_kept(x, keep, scale, dtype):
    return tf.cast(tf.where(keep, tf.cast(x, scale.dtype) * scale, tf.zeros([], scale.dtype)), dtype)


def seed_generator_states(model):
    """The state variables of the random seed generators of `model` (its dropout layers'), in layer order.

    Example:
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dropout(0.5), keras.layers.Dense(1)])
    >>> [v.path.split("/")[-1] for v in seed_generator_states(model)]  # its name numbered if not the first
    ['seed_generator_state']
    """
    weights = {id(v) for v in model.weights}
    return [v for v in model.variables if id(v) not in weights]
