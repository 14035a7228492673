"""`BertClassifier`: sentence(-pair) classification or regression on the pooled [CLS] output."""

import keras
from keras import ops

from official_bert.configs import ConfigError
from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class BertClassifier(task_model.TaskModel):
    """Dropout + Dense(num_classes) on `pooled_output`, as the original `run_classifier.py`.

    With `feature_layers=n` it is the paper's feature-based approach instead (§5.3, Table 7: "concat last four
    hidden" layers of a frozen BERT): the encoder is frozen and runs without dropout, and the classifier
    reads the concatenation of its last n layers' outputs, averaged over the real tokens ([B, n·H]).

    Args:
        encoder: a `BertEncoder`.
        num_classes: number of labels; 1 for regression (STS-B).
        dropout_rate: dropout before the output layer (the original: 0.1).
        feature_layers: None to fine-tune the whole model on the pooled output, or the number of last layers
            whose frozen features the classifier reads.

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

    def __init__(self, encoder, num_classes, dropout_rate=0.1, feature_layers=None, **kwargs):
        inputs = task_model.encoder_inputs()
        if feature_layers is None:
            pooled = encoder(inputs)["pooled_output"]
        else:
            if not 1 <= feature_layers <= encoder.config.num_hidden_layers:
                raise ConfigError(f"feature_layers={feature_layers}: the encoder has "
                                 f"{encoder.config.num_hidden_layers} layers")
            encoder.trainable = False
            layers = encoder(inputs, training=False)["encoder_outputs"][-feature_layers:]
            features = ops.cast(ops.concatenate(layers, axis=-1), "float32")
            mask = ops.cast(inputs["input_mask"], "float32")[:, :, None]
            pooled = ops.sum(features * mask, axis=1) / ops.maximum(ops.sum(mask, axis=1), 1.0)
        pooled = keras.layers.Dropout(dropout_rate, name="dropout")(pooled)
        logits = keras.layers.Dense(num_classes, kernel_initializer=task_model.head_initializer(),
                                    dtype="float32", name="classifier")(pooled)
        super().__init__(inputs=inputs, outputs=logits, name=kwargs.pop("name", "bert_classifier"), **kwargs)
        self.encoder = encoder
        self.num_classes = num_classes
        self.dropout_rate = dropout_rate
        self.feature_layers = feature_layers

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "num_classes": self.num_classes,
                "dropout_rate": self.dropout_rate, "feature_layers": self.feature_layers, "name": self.name}
