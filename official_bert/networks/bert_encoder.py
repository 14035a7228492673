"""`BertEncoder`: the BERT transformer stack as a Keras functional model with TF Hub input names."""

import keras
from keras import ops

from official_bert.configs import BertConfig
from official_bert.layers import activations
from official_bert.layers.embeddings import BertEmbeddings
from official_bert.layers.initializers import truncated_normal
from official_bert.layers.transformer_block import TransformerBlock

# The additive bias on scores of padded keys, as in the original (exp(-10000) underflows to 0 in float32).
MASK_BIAS = -10000.0


@keras.saving.register_keras_serializable(package="official_bert")
class BertEncoder(keras.Model):
    """The BERT encoder: embeddings, `num_hidden_layers` transformer blocks and the [CLS] pooler.

    Inputs follow the TF Hub / Model Garden convention, a dict of int32 or int64 [batch, seq_length]
    tensors (any seq_length up to max_position_embeddings):
    `input_word_ids` (WordPiece ids), `input_mask` (1 real token, 0 padding), `input_type_ids` (segment).

    Outputs, a dict: `sequence_output` [B, T, H] (last layer), `pooled_output` [B, H]
    (tanh(Dense) of the [CLS] vector), `encoder_outputs` (list of every layer's [B, T, H] output, in order).

    With `causal_attention` each position attends to itself and the positions before it only, as in the paper's
    left-to-right baseline ("LTR & No NSP"); [CLS] then sees nothing of the text, so `pooled_output` is taken
    from the last real token (the final [SEP]) instead, the only one that sees the whole sequence. The weights
    and their names are the same either way.

    The config's family (`official_bert.families`) sets what differs from BERT: RoBERTa's and XLM-R's positions after
    the padding id, DistilBERT's missing segment embeddings (`input_type_ids` is then not read), ELECTRA's embedding
    projection, and the pooler's activation: it is the dense layer on the first token that their classifiers have
    (RoBERTa's classification head: tanh as BERT's pooler; ELECTRA's: GELU; DistilBERT's pre_classifier: ReLU).

    Args:
        config: a `BertConfig` (or a dict of its fields).
        dtype: optional dtype policy, e.g. "mixed_bfloat16"; defaults to the global policy.
        causal_attention: the left-to-right (causal) attention mask, and pooling of the last real token;
            None: as `config.causal_attention` records (the bert_config.json of an LTR pretraining run).
        remat: recompute each transformer block's activations in the backward pass instead of keeping them
            (run_pretraining.py's --remat): less memory for large models and long sequences, same numbers, about
            three quarters of one more forward pass of time.

    Example:
    >>> import numpy as np
    >>> from official_bert import BertConfig, BertEncoder
    >>> encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=100))
    >>> ids = np.array([[2, 15, 27, 3, 0]])
    >>> out = encoder({"input_word_ids": ids, "input_mask": np.array([[1, 1, 1, 1, 0]]),
    ...                "input_type_ids": np.zeros_like(ids)})
    >>> tuple(out["sequence_output"].shape), tuple(out["pooled_output"].shape), len(out["encoder_outputs"])
    ((1, 5, 128), (1, 128), 2)
    """

    def __init__(self, config, dtype=None, causal_attention=None, remat=False, **kwargs):
        if isinstance(config, dict):
            config = BertConfig(**config)
        if causal_attention is None:
            causal_attention = bool(config.causal_attention)
        elif causal_attention != bool(config.causal_attention):
            config = config.replace(causal_attention=causal_attention or None)  # what a saved config records
        name = kwargs.pop("name", "bert_encoder")
        inputs = {
            "input_word_ids": keras.Input(shape=(None,), dtype="int32", name="input_word_ids"),
            "input_mask": keras.Input(shape=(None,), dtype="int32", name="input_mask"),
            "input_type_ids": keras.Input(shape=(None,), dtype="int32", name="input_type_ids"),
        }
        embeddings = BertEmbeddings(
            vocab_size=config.vocab_size, hidden_size=config.hidden_size,
            max_position_embeddings=config.max_position_embeddings, type_vocab_size=config.type_vocab_size,
            initializer_range=config.initializer_range, dropout_rate=config.hidden_dropout_prob,
            layer_norm_eps=config.layer_norm_eps, embedding_size=config.embedding_size,
            position_offset=config.position_offset, sinusoidal_positions=bool(config.sinusoidal_pos_embds),
            dtype=dtype, name="embeddings")
        blocks = [TransformerBlock(
            num_heads=config.num_attention_heads, hidden_size=config.hidden_size,
            intermediate_size=config.intermediate_size, activation=config.hidden_act,
            dropout_rate=config.hidden_dropout_prob, attention_dropout_rate=config.attention_probs_dropout_prob,
            initializer_range=config.initializer_range, layer_norm_eps=config.layer_norm_eps, remat=remat,
            dtype=dtype, name=f"transformer_layer_{i}") for i in range(config.num_hidden_layers)]
        pooler = keras.layers.Dense(
            config.hidden_size, activation=activations.get(config.family_traits.pooler_activation),
            kernel_initializer=truncated_normal(config.initializer_range),
            dtype=dtype, name="pooler")
        encoder_outputs, pooled = _forward(embeddings, blocks, pooler, inputs, causal_attention)
        x = encoder_outputs[-1]
        outputs = {"sequence_output": x, "pooled_output": pooled, "encoder_outputs": encoder_outputs}
        super().__init__(inputs=inputs, outputs=outputs, name=name, **kwargs)
        self.config = config
        self.embeddings = embeddings
        self._blocks = blocks
        self._pooler = pooler
        self.layer_dtype = dtype
        self.causal_attention = causal_attention
        self.remat = remat

    @property
    def transformer_layers(self):
        return list(self._blocks)

    @property
    def pooler(self):
        return self._pooler

    def masked_outputs(self, inputs, masked_positions):
        """The final hidden states at `masked_positions` ([B, P, H]) and the pooled output ([B, H]).

        Equal to gathering `sequence_output` at the positions, but the last layer computes only the rows
        that pretraining reads ([CLS] and the P masked positions) instead of all T: for BERT-mini at
        length 128 that skips most of a quarter of the encoder's work.
        """
        pooled_and_masked = ops.concatenate(
            [_pooled_position(inputs["input_mask"], masked_positions, self.causal_attention), masked_positions],
            axis=1)
        encoder_outputs, pooled = _forward(self.embeddings, self._blocks, self._pooler, inputs,
                                           self.causal_attention, pooled_and_masked)
        return encoder_outputs[-1][:, 1:], pooled

    def layer_states(self, inputs, training=None):
        """What each layer computes, for losses on them (TinyBERT's distillation): a dict of `embedding_output`
        [B, T, H], `encoder_outputs` (every layer's output, as `call`'s), `attention_scores` (every layer's scores
        before the softmax, float32 [B, num_heads, T, T], the padded keys' biased by -10000) and `pooled_output`.
        The outputs are `call`'s; the scores cost each layer its query and key projections once more."""
        x = self.embeddings(inputs["input_word_ids"], inputs["input_type_ids"], training=training)
        attention_bias = _attention_bias(inputs["input_mask"], self.causal_attention)
        states = {"embedding_output": x, "encoder_outputs": [], "attention_scores": []}
        for block in self._blocks:
            states["attention_scores"].append(block.attention.scores(x, attention_bias))
            x = block(x, attention_bias, training=training)
            states["encoder_outputs"].append(x)
        states["pooled_output"] = _pool(self._pooler, x, inputs["input_mask"], self.causal_attention)
        return states

    def get_config(self):
        config = {"config": self.config.to_dict(), "name": self.name, "causal_attention": self.causal_attention,
                  "remat": self.remat}
        if self.layer_dtype is not None:
            config["dtype"] = keras.dtype_policies.serialize(keras.dtype_policies.get(self.layer_dtype))
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)


def _forward(embeddings, blocks, pooler, inputs, causal_attention, last_layer_positions=None):
    """Runs the layers; returns (every block's output, pooled output).

    The pooled row is the first of `last_layer_positions` when given (the caller puts the pooled position
    there), else [CLS] or, with causal attention, the last real token.
    """
    x = embeddings(inputs["input_word_ids"], inputs["input_type_ids"])
    attention_bias = _attention_bias(inputs["input_mask"], causal_attention)
    encoder_outputs = []
    for i, block in enumerate(blocks):
        positions = last_layer_positions if i == len(blocks) - 1 else None
        x = block(x, attention_bias, output_positions=positions)
        encoder_outputs.append(x)
    if last_layer_positions is not None:
        return encoder_outputs, pooler(x[:, 0, :])
    return encoder_outputs, _pool(pooler, x, inputs["input_mask"], causal_attention)


def _pool(pooler, x, input_mask, causal_attention):
    """The pooled output of the last layer's `x`: the pooler on [CLS], or with causal attention on the last real
    token."""
    if not causal_attention:
        return pooler(x[:, 0, :])
    last = _pooled_position(input_mask, None, causal_attention)
    return pooler(ops.take_along_axis(x, last[:, :, None], axis=1)[:, 0, :])


def _pooled_position(input_mask, like, causal_attention):
    """int32 [B, 1]: the position `pooled_output` reads: 0 ([CLS]), or the last real token's if causal."""
    if not causal_attention:
        return ops.zeros_like(like[:, :1])
    return ops.cast(ops.sum(ops.cast(input_mask, "int32"), axis=1, keepdims=True) - 1, "int32")


def _attention_bias(input_mask, causal_attention=False):
    """[B, T] 1/0 mask → float32 additive bias for the attention scores: [B, 1, 1, T] on the padded keys, or
    [B, 1, T, T] with causal attention, where it also masks every key after its query."""
    mask = ops.cast(input_mask, "float32")
    bias = (1.0 - mask)[:, None, None, :] * MASK_BIAS
    if not causal_attention:
        return bias
    positions = ops.cumsum(ops.ones_like(mask), axis=1)  # 1, 2, ..., T in every row
    later = ops.cast(ops.greater(positions[:, None, :], positions[:, :, None]), "float32")  # [B, query, key]
    return bias + later[:, None, :, :] * MASK_BIAS
