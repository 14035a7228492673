"""`ElectraDiscriminator`: ELECTRA's replaced-token detection head, the task ELECTRA's discriminator is trained on."""

import keras

from official_bert.layers import activations
from official_bert.layers.dense import TokenDense
from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class ElectraDiscriminator(task_model.TaskModel):
    """A logit per token: has the token been replaced (by ELECTRA's generator) rather than kept from the text?

    The head is transformers' `ElectraDiscriminatorPredictions`: Dense(H, hidden_act) then Dense(1) on every position;
    an ELECTRA discriminator's Hugging Face directory (`ElectraForPreTraining`) loads into it whole, and
    `save_checkpoint(..., "huggingface")` writes it back as one.

    Args:
        encoder: a `BertEncoder` (of an ELECTRA config, as the discriminator's checkpoints are).

    Returns float32 logits [B, T] (positive: replaced).

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder
    >>> from official_bert.models.electra_discriminator import ElectraDiscriminator
    >>> config = BertConfig.from_preset("tiny", vocab_size=50, family="electra", embedding_size=64)
    >>> model = ElectraDiscriminator(BertEncoder(config))
    >>> tuple(model({"input_word_ids": np.array([[2, 5, 3]]), "input_mask": np.ones((1, 3)),
    ...              "input_type_ids": np.zeros((1, 3))}).shape)
    (1, 3)
    """

    def __init__(self, encoder, **kwargs):
        config = encoder.config
        inputs = task_model.encoder_inputs()
        sequence_output = encoder(inputs)["sequence_output"]
        dense = TokenDense(config.hidden_size, activation=activations.get(config.hidden_act),
                           kernel_initializer=task_model.initializer(config), dtype=encoder.layer_dtype,
                           name="discriminator_dense")
        prediction = TokenDense(1, kernel_initializer=task_model.initializer(config), dtype="float32",
                                name="discriminator_prediction")
        logits = keras.ops.squeeze(prediction(keras.ops.cast(dense(sequence_output), "float32")), -1)
        super().__init__(inputs=inputs, outputs=logits, name=kwargs.pop("name", "electra_discriminator"), **kwargs)
        self.encoder = encoder

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "name": self.name}
