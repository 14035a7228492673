"""The distillation loss against NumPy computations of Hinton et al.'s / DistilBERT's formulas on hand-made logits."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert.distillation.losses import DistillationLoss, pack_targets, soft_loss

STUDENT = np.array([[1.0, -0.5, 0.25], [0.0, 2.0, -1.0], [-1.5, 0.5, 0.5]], np.float32)
TEACHER = np.array([[2.0, 0.0, -1.0], [0.5, 1.0, 0.0], [-1.0, -1.0, 3.0]], np.float32)


def np_softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_soft(kind, teacher, student, t):
    if kind == "regression":
        return ((student - teacher) ** 2).mean(-1)
    if kind == "multi_label":
        p, q = np_sigmoid(teacher / t), np_sigmoid(student / t)
        return -(p * np.log(q) + (1 - p) * np.log(1 - q)).mean(-1) * t * t
    return -(np_softmax(teacher / t) * np.log(np_softmax(student / t))).sum(-1) * t * t


def np_hard(kind, labels, student):
    if kind == "regression":
        return ((student[:, 0] - labels) ** 2)
    if kind == "multi_label":
        q = np_sigmoid(student)
        return -(labels * np.log(q) + (1 - labels) * np.log(1 - q)).mean(-1)
    return -np.log(np_softmax(student)[np.arange(len(labels)), labels])


@pytest.mark.parametrize("temperature", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("kind", ["single_label", "multi_label", "regression"])
def test_the_soft_loss_is_the_formula(kind, temperature):
    student, teacher = (STUDENT[:, :1], TEACHER[:, :1]) if kind == "regression" else (STUDENT, TEACHER)
    got = keras.ops.convert_to_numpy(soft_loss(kind, teacher, student, temperature))
    np.testing.assert_allclose(got, np_soft(kind, teacher, student, temperature), rtol=1e-5)


@pytest.mark.parametrize("kind", ["single_label", "multi_label", "regression"])
def test_labelled_rows_mix_soft_and_hard_by_alpha_and_unlabelled_rows_are_soft_only(kind):
    alpha, t = 0.3, 2.5
    if kind == "regression":
        student, teacher, labels = STUDENT[:, :1], TEACHER[:, :1], np.array([0.5, 1.5, -2.0], np.float32)
    elif kind == "multi_label":
        student, teacher, labels = STUDENT, TEACHER, np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1]], np.float32)
    else:
        student, teacher, labels = STUDENT, TEACHER, np.array([0, 2, 1])
    has_label = np.array([1.0, 0.0, 1.0], np.float32)
    soft, hard = np_soft(kind, teacher, student, t), np_hard(kind, labels, student)
    per_row = np.where(has_label > 0, alpha * soft + (1 - alpha) * hard, soft)

    loss = DistillationLoss(kind, student.shape[1], alpha=alpha, temperature=t)
    got = float(loss(pack_targets(teacher, labels, has_label), student))
    np.testing.assert_allclose(got, per_row.mean(), rtol=1e-5)
    # Its config rebuilds the same loss (the .keras file of an export holds it).
    rebuilt = keras.losses.deserialize(keras.losses.serialize(loss))
    assert float(rebuilt(pack_targets(teacher, labels, has_label), student)) == pytest.approx(got, rel=1e-6)


def test_the_soft_gradient_does_not_shrink_with_the_temperature():
    # Hinton et al.'s reason for T²: the soft loss's gradient keeps its scale as T grows (≈ (s − t) / N for large T).
    student = keras.ops.convert_to_tensor(STUDENT)
    norms = []
    for t in (2.0, 8.0, 32.0):
        with tf.GradientTape() as tape:
            tape.watch(student)
            value = keras.ops.sum(soft_loss("single_label", TEACHER, student, t))
        norms.append(float(tf.norm(tape.gradient(value, student))))
    assert max(norms) / min(norms) < 1.3
