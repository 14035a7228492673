"""The training losses of your own tasks beyond Keras' stock ones: softmax cross-entropy weighted by class, and the
binary cross-entropy of multi-label logits with per-label positive and negative weights (class imbalance)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="official_bert")
class ClassWeightedCrossentropy(keras.losses.Loss):
    """Softmax cross-entropy of logits against label ids, each example's term times its class's weight; the batch's
    mean (as Keras' `class_weight` does: the sum divided by the batch size, not by the weights' sum).

    Args:
        class_weights: one weight per class, in label order.
        name: the loss's name.

    Example:
    >>> import numpy as np
    >>> loss = ClassWeightedCrossentropy([1.0, 3.0])
    >>> round(float(loss(np.array([0, 1]), np.zeros((2, 2), "float32"))), 6)  # (1 + 3) / 2 * log 2
    1.386294
    """

    def __init__(self, class_weights, name="class_weighted_crossentropy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.class_weights = [float(w) for w in class_weights]

    def call(self, y_true, y_pred):
        y_true = ops.cast(ops.reshape(y_true, [-1]), "int32")
        losses = keras.losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)
        return losses * ops.take(ops.convert_to_tensor(self.class_weights, losses.dtype), y_true)

    def get_config(self):
        return {**super().get_config(), "class_weights": self.class_weights}


@keras.saving.register_keras_serializable(package="official_bert")
class MultiLabelCrossentropy(keras.losses.Loss):
    """Binary cross-entropy of multi-hot labels [B, L] and logits [B, L] (sigmoid outputs), each label's positive
    and negative terms weighted; each example's loss is the mean over its labels.

    Args:
        positive_weights: [L] weights of the positive terms, or None for 1.
        negative_weights: [L] weights of the negative terms, or None for 1.
        name: the loss's name.

    Example:
    >>> import numpy as np
    >>> loss = MultiLabelCrossentropy([3.0, 1.0])
    >>> round(float(loss(np.array([[1.0, 0.0]]), np.zeros((1, 2), "float32"))), 6)  # (3 + 1) / 2 * log 2
    1.386294
    """

    def __init__(self, positive_weights=None, negative_weights=None, name="multi_label_crossentropy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.positive_weights = None if positive_weights is None else [float(w) for w in positive_weights]
        self.negative_weights = None if negative_weights is None else [float(w) for w in negative_weights]

    def call(self, y_true, y_pred):
        y_pred = ops.convert_to_tensor(y_pred)
        y_true = ops.cast(y_true, y_pred.dtype)
        positive = 1.0 if self.positive_weights is None else ops.convert_to_tensor(self.positive_weights, y_pred.dtype)
        negative = 1.0 if self.negative_weights is None else ops.convert_to_tensor(self.negative_weights, y_pred.dtype)
        terms = positive * y_true * ops.log_sigmoid(y_pred) + negative * (1.0 - y_true) * ops.log_sigmoid(-y_pred)
        return -ops.mean(terms, axis=-1)

    def get_config(self):
        return {**super().get_config(), "positive_weights": self.positive_weights,
                "negative_weights": self.negative_weights}
