"""`BertTokenClassifier`: a label per token, for NER."""

import keras

from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class BertTokenClassifier(task_model.TaskModel):
    """Dropout + Dense(num_classes) on every position of `sequence_output`.

    Args:
        encoder: a `BertEncoder`.
        num_classes: number of token labels.
        dropout_rate: dropout before the output layer.

    Returns float32 logits [B, T, num_classes].

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder, BertTokenClassifier
    >>> model = BertTokenClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100)), num_classes=9)
    >>> logits = model({"input_word_ids": np.array([[2, 5, 3]]), "input_mask": np.ones((1, 3)),
    ...        "input_type_ids": np.zeros((1, 3))})
    >>> tuple(logits.shape)
    (1, 3, 9)
    """

    def __init__(self, encoder, num_classes, dropout_rate=0.1, **kwargs):
        inputs = task_model.encoder_inputs()
        sequence_output = encoder(inputs)["sequence_output"]
        sequence_output = keras.layers.Dropout(dropout_rate, name="dropout")(sequence_output)
        logits = keras.layers.Dense(num_classes, kernel_initializer=task_model.head_initializer(),
                                    dtype="float32", name="classifier")(sequence_output)
        super().__init__(inputs=inputs, outputs=logits, name=kwargs.pop("name", "bert_token_classifier"),
                         **kwargs)
        self.encoder = encoder
        self.num_classes = num_classes
        self.dropout_rate = dropout_rate

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "num_classes": self.num_classes,
                "dropout_rate": self.dropout_rate, "name": self.name}
