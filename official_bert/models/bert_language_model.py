"""`BertLanguageModel`: the encoder with causal attention, trained to predict every next token (the paper's LTR)."""

import keras
import tensorflow as tf

from official_bert.models import pretraining_losses as losses
from official_bert.configs import ConfigError
from official_bert.layers.masked_lm_head import MaskedLMHead
from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class BertLanguageModel(task_model.TaskModel):
    """A left-to-right language model: the paper's "LTR & No NSP" baseline ("a standard Left-to-Right LM,
    rather than an MLM", without next-sentence prediction).

    Position t of the causal encoder predicts token t + 1 through the masked-LM head (transform, LayerNorm,
    logits tied to the word embeddings), so the model has exactly the variables, under the same names, of a
    `BertPretrainer(encoder, use_nsp=False)`: its checkpoints load wherever that one's do. Fine-tune it with
    the left-only constraint kept (`BertEncoder(causal_attention=True)`), as the paper does.

    Inputs: the encoder's three inputs. Outputs: `{"lm_logits": [B, T-1, V]}` (float32); row t predicts
    token t + 1. The loss is the mean cross-entropy over the positions whose next token is real
    (input_mask 1); its metrics are `lm_accuracy` and `lm_loss`, pooled over those positions. `fit` and
    `evaluate` need no targets: they come from the inputs.

    Args:
        encoder: a `BertEncoder` with `causal_attention=True`.

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder, BertLanguageModel
    >>> model = BertLanguageModel(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100), causal_attention=True))
    >>> out = model({"input_word_ids": np.array([[2, 4, 9, 3]]), "input_mask": np.ones((1, 4)),
    ...              "input_type_ids": np.zeros((1, 4))})
    >>> tuple(out["lm_logits"].shape)
    (1, 3, 100)
    """

    def __init__(self, encoder, **kwargs):
        if not encoder.causal_attention:
            raise ConfigError("BertLanguageModel needs a BertEncoder(..., causal_attention=True): with "
                              "bidirectional attention every position sees the token it is to predict")
        config = encoder.config
        inputs = task_model.encoder_inputs()
        sequence_output = encoder(inputs)["sequence_output"]
        head = MaskedLMHead(
            encoder.embeddings, activation=task_model.masked_lm_activation(config),
            initializer_range=config.initializer_range, layer_norm_eps=config.layer_norm_eps,
            dtype=encoder.layer_dtype, name="masked_lm")
        # The last position has no next token to predict.
        outputs = {"lm_logits": head(sequence_output[:, :-1])}
        super().__init__(inputs=inputs, outputs=outputs, name=kwargs.pop("name", "bert_language_model"), **kwargs)
        self.encoder = encoder
        self.masked_lm = head
        self.trackers = {name: keras.metrics.Mean(name=name) for name in ("lm_accuracy", "lm_loss")}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        labels, weights = x["input_word_ids"][:, 1:], x["input_mask"][:, 1:]
        total = losses.masked_lm_loss_and_metrics(self.trackers, labels, y_pred["lm_logits"], weights, prefix="lm")
        for extra in self.losses:
            total = total + extra
        # As BertPretrainer: each replica returns its share of the global mean.
        return total / tf.distribute.get_strategy().num_replicas_in_sync

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "name": self.name}
