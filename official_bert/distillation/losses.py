"""The distillation loss: Hinton et al.'s soft targets mixed with the hard labels, as DistilBERT trains its student.

For one example with student logits s and teacher logits t, at temperature T:

- single-label: soft = T² · −Σ_k softmax(t/T)_k · log softmax(s/T)_k (cross-entropy against the teacher's
  temperature-scaled probabilities; T² keeps its gradients' scale independent of T, Hinton et al. 2015 §2);
- multi-label: soft = T² · mean_k BCE(sigmoid(t_k/T), sigmoid(s_k/T)) (one binary soft target per label);
- regression: soft = (s − t)² (the teacher's score as the target; no temperature).

The hard loss is the task's own (softmax cross-entropy, the labels' mean binary cross-entropy, squared error), and an
example's loss is alpha · soft + (1 − alpha) · hard; an example without a label (unlabelled text the teacher
labelled) has the soft loss alone. DistilBERT's training script's defaults are T = 2 and alpha_ce = 0.5 beside its
hard (MLM) loss's 0.5, which `DEFAULT_TEMPERATURE` and `DEFAULT_ALPHA` follow.

The targets of a batch are one float tensor [B, K + H + 1]: the teacher's K logits, the H label columns (1 for a
class id or a score, K for a multi-hot row) and 1.0 where the example has a label (`pack_targets`), so that Keras'
`fit` feeds them to one loss beside the model's one output.
"""

import keras
from keras import ops

from official_bert.classification.own_files import MULTI_LABEL, REGRESSION, SINGLE_LABEL

KINDS = (SINGLE_LABEL, MULTI_LABEL, REGRESSION)
DEFAULT_TEMPERATURE = 2.0
DEFAULT_ALPHA = 0.5


def label_width(kind, num_outputs):
    """The columns a label takes in the packed targets: K for a multi-hot row, else 1.

    Example:
    >>> label_width("multi_label", 4), label_width("single_label", 4), label_width("regression", 1)
    (4, 1, 1)
    """
    return num_outputs if kind == MULTI_LABEL else 1


def pack_targets(teacher_logits, labels, has_label):
    """The packed targets [B, K + H + 1] of a batch (see the module's docstring).

    Args:
        teacher_logits: [B, K] the teacher's logits (its score [B, 1] for regression).
        labels: [B] class ids or scores, or [B, K] multi-hot rows.
        has_label: [B], 1.0 for a labelled example, 0.0 for one the teacher alone labelled.

    Example:
    >>> import numpy as np
    >>> ops.convert_to_numpy(pack_targets(np.array([[0.5, -1.0]]), np.array([1]), np.array([1.0]))).tolist()
    [[0.5, -1.0, 1.0, 1.0]]
    """
    teacher_logits = ops.cast(teacher_logits, "float32")
    labels = ops.cast(labels, "float32")
    if len(labels.shape) == 1:
        labels = ops.expand_dims(labels, -1)
    return ops.concatenate([teacher_logits, labels, ops.expand_dims(ops.cast(has_label, "float32"), -1)], axis=-1)


def soft_loss(kind, teacher_logits, student_logits, temperature):
    """Each example's soft loss [B] (see the module's docstring).

    Args:
        kind: one of KINDS.
        teacher_logits, student_logits: [B, K] (K = 1 for regression).
        temperature: T.

    Example:
    >>> import numpy as np
    >>> same = np.array([[2.0, 0.0]], "float32")
    >>> round(float(soft_loss("single_label", same, same, 1.0)[0]), 4)  # the teacher's entropy
    0.3653
    >>> float(soft_loss("regression", np.array([[1.0]]), np.array([[3.0]]), 2.0)[0])
    4.0
    """
    student_logits = ops.cast(student_logits, "float32")
    teacher_logits = ops.cast(teacher_logits, "float32")
    if kind == REGRESSION:
        return ops.mean(ops.square(student_logits - teacher_logits), axis=-1)
    t = float(temperature)
    if kind == MULTI_LABEL:
        targets = ops.sigmoid(teacher_logits / t)
        terms = targets * ops.log_sigmoid(student_logits / t) + (1.0 - targets) * ops.log_sigmoid(-student_logits / t)
        return -ops.mean(terms, axis=-1) * t * t
    targets = ops.softmax(teacher_logits / t, axis=-1)
    return -ops.sum(targets * ops.log_softmax(student_logits / t, axis=-1), axis=-1) * t * t


def hard_loss(kind, labels, student_logits):
    """Each example's loss against its label [B]: softmax cross-entropy of a class id, the mean binary cross-entropy
    of a multi-hot row, the squared error of a score.

    Args:
        kind: one of KINDS.
        labels: [B, H] (H = 1: a class id or a score; H = K: a multi-hot row).
        student_logits: [B, K].

    Example:
    >>> import numpy as np
    >>> round(float(hard_loss("single_label", np.array([[1.0]]), np.array([[0.0, 0.0]], "float32"))[0]), 4)
    0.6931
    """
    student_logits = ops.cast(student_logits, "float32")
    labels = ops.cast(labels, "float32")
    if kind == REGRESSION:
        return ops.mean(ops.square(student_logits - labels), axis=-1)
    if kind == MULTI_LABEL:
        terms = labels * ops.log_sigmoid(student_logits) + (1.0 - labels) * ops.log_sigmoid(-student_logits)
        return -ops.mean(terms, axis=-1)
    ids = ops.cast(labels[:, 0], "int32")
    return keras.losses.sparse_categorical_crossentropy(ids, student_logits, from_logits=True)


@keras.saving.register_keras_serializable(package="official_bert")
class DistillationLoss(keras.losses.Loss):
    """alpha · soft + (1 − alpha) · hard per labelled example, soft alone per unlabelled one; the batch's mean.

    Args:
        kind: "single_label", "multi_label" or "regression".
        num_outputs: K, the model's outputs (1 for regression).
        alpha: the soft loss's share for a labelled example (`DEFAULT_ALPHA`).
        temperature: T (`DEFAULT_TEMPERATURE`); not used for regression.
        name: the loss's name.

    Example:
    >>> import numpy as np
    >>> loss = DistillationLoss("single_label", 2, alpha=1.0, temperature=1.0)
    >>> targets = pack_targets(np.array([[0.0, 0.0]]), np.array([0]), np.array([1.0]))
    >>> round(float(loss(targets, np.array([[0.0, 0.0]], "float32"))), 4)  # log 2
    0.6931
    """

    def __init__(self, kind, num_outputs, alpha=DEFAULT_ALPHA, temperature=DEFAULT_TEMPERATURE,
                 name="distillation", **kwargs):
        super().__init__(name=name, **kwargs)
        if kind not in KINDS:
            raise ValueError(f"kind={kind!r}: expected one of {', '.join(KINDS)}")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha={alpha}: expected a share between 0 and 1")
        if not temperature > 0:
            raise ValueError(f"temperature={temperature}: expected a positive number")
        self.kind, self.num_outputs = kind, int(num_outputs)
        self.alpha, self.temperature = float(alpha), float(temperature)

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "float32")
        k, width = self.num_outputs, label_width(self.kind, self.num_outputs)
        teacher, labels, has_label = y_true[:, :k], y_true[:, k:k + width], y_true[:, k + width]
        soft = soft_loss(self.kind, teacher, y_pred, self.temperature)
        mixed = self.alpha * soft + (1.0 - self.alpha) * hard_loss(self.kind, labels, y_pred)
        return ops.where(has_label > 0, mixed, soft)

    def get_config(self):
        return {**super().get_config(), "kind": self.kind, "num_outputs": self.num_outputs, "alpha": self.alpha,
                "temperature": self.temperature}
