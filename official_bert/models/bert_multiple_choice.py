"""`BertMultipleChoice`: one score per (context, choice) sequence, softmax over choices (SWAG)."""

import keras
from keras import ops

from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class BertMultipleChoice(task_model.TaskModel):
    """Runs the encoder on each of the C sequences of an example and scores each [CLS] with a shared Dense(1).

    Inputs are the encoder's three inputs shaped [B, C, T]. Returns float32 logits [B, C] (softmax over
    choices gives the prediction).

    Args:
        encoder: a `BertEncoder`.
        num_choices: C (SWAG: 4).
        dropout_rate: dropout before the scoring layer.

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder, BertMultipleChoice
    >>> model = BertMultipleChoice(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100)), num_choices=4)
    >>> ids = np.full((2, 4, 6), 5)
    >>> logits = model({"input_word_ids": ids, "input_mask": np.ones_like(ids), "input_type_ids": np.zeros_like(ids)})
    >>> tuple(logits.shape)
    (2, 4)
    """

    def __init__(self, encoder, num_choices, dropout_rate=0.1, **kwargs):
        inputs = task_model.encoder_inputs(shape=(num_choices, None))
        merge = FoldChoices(name="fold_choices")
        flat = {name: merge(t) for name, t in inputs.items()}
        pooled = encoder(flat)["pooled_output"]
        pooled = keras.layers.Dropout(dropout_rate, name="dropout")(pooled)
        scores = keras.layers.Dense(1, kernel_initializer=task_model.head_initializer(),
                                    dtype="float32", name="classifier")(pooled)
        logits = ops.reshape(scores, (-1, num_choices))
        super().__init__(inputs=inputs, outputs=logits, name=kwargs.pop("name", "bert_multiple_choice"),
                         **kwargs)
        self.encoder = encoder
        self.num_choices = num_choices
        self.dropout_rate = dropout_rate

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "num_choices": self.num_choices,
                "dropout_rate": self.dropout_rate, "name": self.name}


@keras.saving.register_keras_serializable(package="official_bert")
class FoldChoices(keras.layers.Layer):
    """[B, C, T] → [B·C, T], so the encoder sees each choice as its own sequence.

    Example:
    >>> import numpy as np
    >>> tuple(FoldChoices()(np.zeros((2, 4, 6), "int32")).shape)
    (8, 6)
    """

    def call(self, x):
        shape = ops.shape(x)
        return ops.reshape(x, (-1, shape[-1]))

    def compute_output_shape(self, x_shape):
        return (None, x_shape[-1])
