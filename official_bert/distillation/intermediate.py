"""TinyBERT's intermediate-layer losses (Jiao et al. 2020): the student's embeddings, hidden states and attention
scores pulled toward the teacher's while it learns the teacher's answers.

Student layer m (1..M) learns teacher layer g(m) = m·N // M of N (TinyBERT's uniform mapping: layers 3, 6, 9, 12 of
BERT-base for a 4-layer student), and the embeddings the teacher's embeddings. Each term is a mean squared error:

- embeddings and hidden states: ‖H_S W − H_T‖², W one learned [H_S, H_T] projection shared by the embeddings and
  every layer (TinyBERT's `fit_dense`), none when the widths agree;
- attention: the scores before the softmax, per head (when the head counts differ, the maps averaged over the heads).

The means run over the real tokens (and pairs of real tokens) only: TinyBERT's also average over the padding of its
fixed-length batches, which with our per-batch padding would make the loss depend on the batch's longest text. The
sum of the terms, times --intermediate_loss_weight, is added to the prediction-layer loss (`DistillationLoss`): one
stage, where TinyBERT trains the two in turn.

The teacher runs beside the student at every step (its layer states are too large to cache, unlike its outputs), in
inference mode and without gradients: a step costs the teacher's forward pass too.
"""

import keras
from keras import ops

from official_bert.distillation.errors import DistillationError


FROZEN_STUDENT = ("--intermediate_loss_weight: the student's encoder is frozen (--freeze_encoder); its layers cannot "
                  "learn the teacher's")


def layer_map(student_layers, teacher_layers):
    """TinyBERT's uniform mapping: the teacher layer (0-based) each student layer learns.

    Example:
    >>> layer_map(4, 12), layer_map(2, 4), layer_map(3, 3)
    ([2, 5, 8, 11], [1, 3], [0, 1, 2])
    """
    return [(m + 1) * teacher_layers // student_layers - 1 for m in range(student_layers)]


@keras.saving.register_keras_serializable(package="official_bert")
class IntermediateLayerDistillation(keras.Model):
    """Trains `student` (a `BertClassifier`) with TinyBERT's intermediate losses toward `teacher`'s layers added to
    its compiled loss; returns the student's logits. `fit` trains this model, everything else uses the student:
    its weights keep their Keras paths, so a checkpoint of this model loads into the student (the projection's
    weights, `distillation_projection/...`, beside them are skipped).

    Args:
        student: the student `BertClassifier` (on the pooled output; not the feature-based one).
        teacher: the teacher `BertClassifier`; neither trained nor checkpointed here.
        weight: the intermediate losses' weight.

    Example:
    >>> import numpy as np
    >>> from official_bert import BertClassifier, BertConfig, BertEncoder
    >>> config = BertConfig.from_preset("tiny", vocab_size=20, intermediate_size=32)
    >>> student = BertClassifier(BertEncoder(config.replace(num_hidden_layers=1)), 2)
    >>> teacher = BertClassifier(BertEncoder(config.replace(hidden_size=64, num_attention_heads=4)), 2)
    >>> model = IntermediateLayerDistillation(student, teacher, weight=1.0)
    >>> inputs = {"input_word_ids": np.array([[2, 5, 3, 0]]), "input_mask": np.array([[1, 1, 1, 0]]),
    ...           "input_type_ids": np.zeros((1, 4), "int32")}
    >>> tuple(model(inputs).shape), len(model.losses), model.layer_map, tuple(model.projection.kernel.shape)
    ((1, 2), 1, [1], (128, 64))
    >>> IntermediateLayerDistillation.from_config(model.get_config()).layer_map
    [1]
    """

    def __init__(self, student, teacher, weight, **kwargs):
        super().__init__(name=kwargs.pop("name", "intermediate_layer_distillation"), **kwargs)
        if getattr(student, "feature_layers", None):
            raise DistillationError(FROZEN_STUDENT)
        self.student = student
        self._teacher = _Untracked(teacher)
        self.weight = weight
        student_config, teacher_config = student.encoder.config, teacher.encoder.config
        self.layer_map = layer_map(student_config.num_hidden_layers, teacher_config.num_hidden_layers)
        self.projection = None
        if student_config.hidden_size != teacher_config.hidden_size:
            self.projection = keras.layers.Dense(teacher_config.hidden_size, dtype="float32",
                                                 name="distillation_projection")
            self.projection.build((None, None, student_config.hidden_size))
        self.built = True  # every weight exists: the student's, the teacher's and the projection's

    @property
    def encoder(self):
        """The student's encoder (what `save_checkpoint` reads the config of)."""
        return self.student.encoder

    def call(self, inputs, training=None):
        student = self.student.encoder.layer_states(inputs, training=training)
        pooled = self.student.get_layer("dropout")(student["pooled_output"], training=training)
        logits = self.student.get_layer("classifier")(pooled)
        teacher = self._teacher.model.encoder.layer_states(inputs, training=False)
        self.add_loss(self.weight * intermediate_loss(student, teacher, inputs["input_mask"], self.layer_map,
                                                      self.projection))
        return logits

    def get_config(self):
        return {"student": keras.saving.serialize_keras_object(self.student),
                "teacher": keras.saving.serialize_keras_object(self._teacher.model), "weight": self.weight,
                "name": self.name}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("student", "teacher"):
            config[key] = keras.saving.deserialize_keras_object(config[key])
        return cls(**config)


def intermediate_loss(student, teacher, input_mask, mapping, projection=None):
    """The sum of the embedding, hidden-state and attention terms (see the module's docstring).

    Args:
        student, teacher: `BertEncoder.layer_states` of the same batch.
        input_mask: [B, T], 1 on the real tokens.
        mapping: the teacher layer of each student layer (`layer_map`).
        projection: the student's states' [H_S, H_T] projection, or None for equal widths.
    """
    mask = ops.cast(input_mask, "float32")
    tokens = ops.sum(mask)
    pairs = mask[:, None, :, None] * mask[:, None, None, :]

    def states(s, t):
        s, t = ops.cast(s, "float32"), ops.stop_gradient(ops.cast(t, "float32"))
        if projection is not None:
            s = projection(s)
        return ops.sum(ops.square(s - t) * mask[:, :, None]) / (tokens * ops.cast(ops.shape(t)[-1], "float32"))

    def scores(s, t):
        t = ops.stop_gradient(t)
        if s.shape[1] != t.shape[1]:
            s, t = ops.mean(s, axis=1, keepdims=True), ops.mean(t, axis=1, keepdims=True)
        return ops.sum(ops.square(s - t) * pairs) / (ops.sum(pairs) * s.shape[1])

    loss = states(student["embedding_output"], teacher["embedding_output"])
    for m, g in enumerate(mapping):
        loss += states(student["encoder_outputs"][m], teacher["encoder_outputs"][g])
        loss += scores(student["attention_scores"][m], teacher["attention_scores"][g])
    return loss


class _Untracked:
    """Holds the teacher out of Keras's and tf.train's tracking: not the wrapper's weights, not in checkpoints."""

    def __init__(self, model):
        self.model = model
