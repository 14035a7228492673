"""run_ner's model, loss and training metric: `BertTokenClassifier` trained on the labelled pieces only."""

import keras
from keras import ops

from official_bert.models import BertTokenClassifier
from official_bert.ner.features import IGNORE
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.training.options import MIXED_PRECISION_POLICIES


def token_classifier_model(config, num_labels, mixed_precision=None):
    """A `BertTokenClassifier` with `num_labels` outputs on a new encoder (computing in `mixed_precision`; the
    logits are float32).

    Example:
    >>> from official_bert import BertConfig
    >>> model = token_classifier_model(BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1,
    ...                                           num_attention_heads=2, intermediate_size=32), 9)
    >>> model.num_classes
    9
    """
    return BertTokenClassifier(BertEncoder(config, dtype=MIXED_PRECISION_POLICIES.get(mixed_precision)), num_labels)


def token_loss():
    """Softmax cross-entropy averaged over the labelled positions (first pieces of words); `IGNORE` is skipped.

    Example:
    >>> import numpy as np
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]]], "float32"))
    >>> loss = float(token_loss()(np.array([[IGNORE, 0, 1]]), logits))
    >>> round(loss, 4), round(float(-np.log(0.9 * 0.8) / 2), 4)
    (0.1643, 0.1643)
    """
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=IGNORE)


@keras.saving.register_keras_serializable(package="official_bert")
class TokenAccuracy(keras.metrics.Metric):
    """How many labelled positions (label ≠ `IGNORE`) the arg-max predicts right.

    Args:
        name: the metric's name.

    Example:
    >>> import numpy as np
    >>> metric = TokenAccuracy()
    >>> metric.update_state(np.array([[IGNORE, 0, 1]]), np.array([[[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]]))
    >>> float(metric.result())
    0.5
    """

    def __init__(self, name="accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.correct = self.add_variable(shape=(), initializer="zeros", dtype="float32", name="correct")
        self.total = self.add_variable(shape=(), initializer="zeros", dtype="float32", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labelled = ops.cast(ops.not_equal(y_true, IGNORE), "float32")
        right = ops.cast(ops.equal(ops.argmax(y_pred, axis=-1), ops.cast(y_true, "int64")), "float32")
        self.correct.assign_add(ops.sum(right * labelled))
        self.total.assign_add(ops.sum(labelled))

    def result(self):
        return ops.divide_no_nan(self.correct, self.total)

    def reset_state(self):
        self.correct.assign(0.0)
        self.total.assign(0.0)

    def get_config(self):
        return {"name": self.name}
