"""`BertPretrainer`: the encoder with the masked-LM and next-sentence heads, and their losses."""

import keras
import tensorflow as tf

from official_bert.models import pretraining_losses as losses
from official_bert.layers.masked_lm_head import MaskedLMHead
from official_bert.models import task_model


@keras.saving.register_keras_serializable(package="official_bert")
class BertPretrainer(task_model.TaskModel):
    """BERT pretraining: masked LM (+ next-sentence prediction unless `use_nsp=False`).

    Inputs: the encoder's three inputs plus `masked_lm_positions` (int [B, P]).
    Outputs: `{"mlm_logits": [B, P, V]}` and, with NSP, `"nsp_logits": [B, 2]` (float32).
    Training targets for `fit`/`evaluate` are a dict `{"masked_lm_ids", "masked_lm_weights",
    "next_sentence_labels"}`; the loss is mean MLM cross-entropy over positions with weight 1 plus mean
    NSP cross-entropy, and the metrics are the original's masked_lm_accuracy, masked_lm_loss,
    next_sentence_accuracy and next_sentence_loss. As the original's tf.metrics, the masked-LM metrics pool
    every real masked position since they were last reset (an evaluation: all its batches), rather than
    averaging per-batch means: batches with more predictions count for more.

    Args:
        encoder: a `BertEncoder`.
        use_nsp: include the next-sentence head and loss (False for the paper's "No NSP" ablation).

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder, BertPretrainer
    >>> model = BertPretrainer(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100)))
    >>> out = model({"input_word_ids": np.array([[2, 4, 4, 3]]), "input_mask": np.ones((1, 4)),
    ...              "input_type_ids": np.zeros((1, 4)), "masked_lm_positions": np.array([[1, 2]])})
    >>> tuple(out["mlm_logits"].shape), tuple(out["nsp_logits"].shape)
    ((1, 2, 100), (1, 2))
    """

    def __init__(self, encoder, use_nsp=True, **kwargs):
        config = encoder.config
        inputs = task_model.encoder_inputs()
        inputs["masked_lm_positions"] = keras.Input(shape=(None,), dtype="int32", name="masked_lm_positions")
        masked_output, pooled_output = encoder.masked_outputs(inputs, inputs["masked_lm_positions"])
        mlm_head = MaskedLMHead(
            encoder.embeddings, activation=task_model.masked_lm_activation(config),
            initializer_range=config.initializer_range, layer_norm_eps=config.layer_norm_eps,
            dtype=encoder.layer_dtype, name="masked_lm")
        outputs = {"mlm_logits": mlm_head(masked_output)}
        if use_nsp:
            nsp = keras.layers.Dense(2, kernel_initializer=task_model.initializer(config), dtype="float32",
                                     name="next_sentence")
            outputs["nsp_logits"] = nsp(pooled_output)
        super().__init__(inputs=inputs, outputs=outputs, name=kwargs.pop("name", "bert_pretrainer"), **kwargs)
        self.encoder = encoder
        self.use_nsp = use_nsp
        self.masked_lm = mlm_head
        self.trackers = {name: keras.metrics.Mean(name=name) for name in (
            "masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy", "next_sentence_loss")
            if use_nsp or name.startswith("masked_lm")}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        weights = y["masked_lm_weights"]
        total = losses.masked_lm_loss_and_metrics(self.trackers, y["masked_lm_ids"], y_pred["mlm_logits"], weights)
        if self.use_nsp:
            nsp_loss = losses.next_sentence_loss(y["next_sentence_labels"], y_pred["nsp_logits"])
            total = total + nsp_loss
            self.trackers["next_sentence_loss"].update_state(nsp_loss)
            self.trackers["next_sentence_accuracy"].update_state(
                losses.next_sentence_accuracy(y["next_sentence_labels"], y_pred["nsp_logits"]))
        for extra in self.losses:
            total = total + extra
        # Keras sums the replicas' gradients and multiplies the logged loss by the replica count, so each
        # replica returns its share of the global mean (as Keras's own compiled losses do).
        return total / tf.distribute.get_strategy().num_replicas_in_sync

    def get_config(self):
        return {"encoder": keras.saving.serialize_keras_object(self.encoder), "use_nsp": self.use_nsp,
                "name": self.name}
