"""A Dense layer over the last axis that runs as one 2-D MatMul, whatever the rank of its input."""

import keras
import tensorflow as tf

from official_bert.layers import activations


def project(x, kernel, bias=None, activation=None):
    """activation(x[..., D] · kernel[D, F] + bias) as a single 2-D MatMul.

    Keras's matmul of a [B, T, D] tensor with a [D, F] kernel runs a broadcast batch-matmul, whose kernel
    gradient is B separate matmuls and a Sum: profiled at 10–15 % of a BERT training step on CPU.
    MatMul, BiasAdd and the activation follow each other on the 2-D tensor with nothing in between (the reshape
    comes last), the pattern grappler's remapper fuses into one `_FusedMatMul` kernel (the GELUs of
    `layers/activations.py` too, under oneDNN).

    Args:
        x: [..., D] input.
        kernel: [D, F] weights.
        bias: optional [F] bias.
        activation: optional element-wise function applied last.

    Example:
    >>> import numpy as np
    >>> project(np.ones((2, 3, 4), "float32"), np.ones((4, 5), "float32"), np.ones(5, "float32")).shape
    TensorShape([2, 3, 5])
    """
    out = tf.matmul(tf.reshape(x, [-1, tf.shape(x)[-1]]), kernel)
    if bias is not None:
        out = tf.nn.bias_add(out, bias)
    if activation is not None:
        out = activation(out)
    return tf.reshape(out, tf.concat([tf.shape(x)[:-1], tf.shape(kernel)[-1:]], axis=0))


@keras.saving.register_keras_serializable(package="official_bert")
class TokenDense(keras.layers.Layer):
    """Dense(units) applied to every position of a [..., D] input, computed as one 2-D MatMul.

    Its weights are `kernel` [D, units] and `bias` [units], like `keras.layers.Dense`.

    Args:
        units: output width.
        activation: optional activation function.
        kernel_initializer: initializer of the kernel.

    Call args:
        x: [..., D] input.
        training: when True, the activation is `activations.for_training`'s form (GELU and its gradient as one
            compiled kernel each); otherwise the plain one, which oneDNN fuses into the matmul.

    Example:
    >>> import numpy as np
    >>> tuple(TokenDense(3)(np.ones((2, 5, 4), "float32")).shape)
    (2, 5, 3)
    """

    def __init__(self, units, activation=None, kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.activation = keras.activations.get(activation)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer=self.kernel_initializer,
                                      name="kernel")
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    def call(self, x, training=None):
        return project(x, self.kernel, self.bias, self.activation_for(training))

    def activation_for(self, training):
        """The activation `call` applies: the compiled training form when `training`, else the plain one."""
        return activations.for_training(self.activation) if training else self.activation

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, activation=keras.activations.serialize(self.activation),
                      kernel_initializer=keras.initializers.serialize(self.kernel_initializer))
        return config
