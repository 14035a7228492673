"""`BertClassifier`: sentence(-pair) classification or regression on the pooled [CLS] output."""

import keras

from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class BertClassifier(task_model.TaskModel):
    """Dropout + Dense(num_classes) on `pooled_output`, as the original `run_classifier.py`.

    Args:
        encoder: a `BertEncoder`.
        num_classes: number of labels; 1 for regression (STS-B).
        dropout_rate: dropout before the output layer (the original: 0.1).

    Returns float32 logits [B, num_classes] (scores [B, 1] for regression).

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder, BertClassifier
    >>> model = BertClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100)), num_classes=3)
    >>> logits = model({"input_word_ids": np.array([[2, 5, 3]]), "input_mask": np.ones((1, 3)),
    ...        "input_type_ids": np.zeros((1, 3))})
    >>> tuple(logits.shape)
    (1, 3)
    """

    def __init__(self, encoder, num_classes, dropout_rate=0.1, **kwargs):
        inputs = task_model.encoder_inputs()
        pooled = encoder(inputs)["pooled_output"]
        pooled = keras.layers.Dropout(dropout_rate, name="dropout")(pooled)
        logits = keras.layers.Dense(num_classes, kernel_initializer=task_model.initializer(encoder.config),
                                    dtype="float32", name="classifier")(pooled)
        super().__init__(inputs=inputs, outputs=logits, name=kwargs.pop("name", "bert_classifier"), **kwargs)
        self.encoder = encoder
        self.num_classes = num_classes
        self.dropout_rate = dropout_rate

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "num_classes": self.num_classes,
                "dropout_rate": self.dropout_rate, "name": self.name}
