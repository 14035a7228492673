"""`BertSpanLabeler`: start/end logits over the sequence, for SQuAD."""

import keras

from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class BertSpanLabeler(task_model.TaskModel):
    """Dense(2) on every position of `sequence_output` → start and end logits, as the original SQuAD head.

    Args:
        encoder: a `BertEncoder`.

    Returns `{"start_logits": [B, T], "end_logits": [B, T]}` (float32).

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder, BertSpanLabeler
    >>> model = BertSpanLabeler(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100)))
    >>> out = model({"input_word_ids": np.array([[2, 5, 3, 6, 3]]), "input_mask": np.ones((1, 5)),
    ...              "input_type_ids": np.array([[0, 0, 0, 1, 1]])})
    >>> tuple(out["start_logits"].shape)
    (1, 5)
    """

    def __init__(self, encoder, **kwargs):
        inputs = task_model.encoder_inputs()
        sequence_output = encoder(inputs)["sequence_output"]
        logits = keras.layers.Dense(2, kernel_initializer=task_model.head_initializer(),
                                    dtype="float32", name="span_logits")(sequence_output)
        outputs = {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}
        super().__init__(inputs=inputs, outputs=outputs, name=kwargs.pop("name", "bert_span_labeler"), **kwargs)
        self.encoder = encoder

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "name": self.name}
