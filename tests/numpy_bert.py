"""An independent NumPy BERT forward pass, written from the paper and the original modeling.py.

It takes weights as a dict keyed by the original Google TF1 checkpoint names (bert/embeddings/..., cls/...)
and never imports official_bert, so tests can hold the library against it.
"""

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x, approximate):
    x = x.astype(np.float64)
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def random_weights(rng, vocab_size, hidden, layers, intermediate, max_positions=64, type_vocab=2, scale=0.2):
    """Random float32 weights under the original names, for an encoder plus MLM and NSP heads."""
    def w(*shape):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    weights = {
        "bert/embeddings/word_embeddings": w(vocab_size, hidden),
        "bert/embeddings/token_type_embeddings": w(type_vocab, hidden),
        "bert/embeddings/position_embeddings": w(max_positions, hidden),
        "bert/embeddings/LayerNorm/gamma": 1 + w(hidden),
        "bert/embeddings/LayerNorm/beta": w(hidden),
        "bert/pooler/dense/kernel": w(hidden, hidden),
        "bert/pooler/dense/bias": w(hidden),
        "cls/predictions/transform/dense/kernel": w(hidden, hidden),
        "cls/predictions/transform/dense/bias": w(hidden),
        "cls/predictions/transform/LayerNorm/gamma": 1 + w(hidden),
        "cls/predictions/transform/LayerNorm/beta": w(hidden),
        "cls/predictions/output_bias": w(vocab_size),
        "cls/seq_relationship/output_weights": w(2, hidden),
        "cls/seq_relationship/output_bias": w(2),
    }
    for i in range(layers):
        p = f"bert/encoder/layer_{i}/"
        for name in ("query", "key", "value"):
            weights[p + f"attention/self/{name}/kernel"] = w(hidden, hidden)
            weights[p + f"attention/self/{name}/bias"] = w(hidden)
        weights[p + "attention/output/dense/kernel"] = w(hidden, hidden)
        weights[p + "attention/output/dense/bias"] = w(hidden)
        weights[p + "attention/output/LayerNorm/gamma"] = 1 + w(hidden)
        weights[p + "attention/output/LayerNorm/beta"] = w(hidden)
        weights[p + "intermediate/dense/kernel"] = w(hidden, intermediate)
        weights[p + "intermediate/dense/bias"] = w(intermediate)
        weights[p + "output/dense/kernel"] = w(intermediate, hidden)
        weights[p + "output/dense/bias"] = w(hidden)
        weights[p + "output/LayerNorm/gamma"] = 1 + w(hidden)
        weights[p + "output/LayerNorm/beta"] = w(hidden)
    return weights


def encoder_forward(weights, input_ids, input_mask, segment_ids, num_heads, approximate_gelu, eps=1e-12,
                    causal=False):
    """Returns (list of every layer's output [B,T,H], pooled_output [B,H]) in float64.

    causal: each query attends to keys at its own position and before only (the paper's LTR), and the pooled
    output is read at the last real token instead of [CLS].
    """
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    batch, length = input_ids.shape
    x = (w["bert/embeddings/word_embeddings"][input_ids]
         + w["bert/embeddings/token_type_embeddings"][segment_ids]
         + w["bert/embeddings/position_embeddings"][:length][None])
    x = layer_norm(x, w["bert/embeddings/LayerNorm/gamma"], w["bert/embeddings/LayerNorm/beta"], eps)
    hidden = x.shape[-1]
    head = hidden // num_heads
    bias = (1.0 - input_mask.astype(np.float64))[:, None, None, :] * -10000.0
    if causal:
        bias = bias + np.triu(np.ones((length, length)), k=1)[None, None] * -10000.0
    layers = []
    i = 0
    while f"bert/encoder/layer_{i}/output/dense/kernel" in w:
        p = f"bert/encoder/layer_{i}/"

        def proj(name, t):
            return t @ w[p + f"attention/self/{name}/kernel"] + w[p + f"attention/self/{name}/bias"]

        def split(t):
            return t.reshape(batch, length, num_heads, head).transpose(0, 2, 1, 3)

        q, k, v = (split(proj(n, x)) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
        context = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        attn = context @ w[p + "attention/output/dense/kernel"] + w[p + "attention/output/dense/bias"]
        x = layer_norm(x + attn, w[p + "attention/output/LayerNorm/gamma"],
                       w[p + "attention/output/LayerNorm/beta"], eps)
        inter = gelu(x @ w[p + "intermediate/dense/kernel"] + w[p + "intermediate/dense/bias"], approximate_gelu)
        out = inter @ w[p + "output/dense/kernel"] + w[p + "output/dense/bias"]
        x = layer_norm(x + out, w[p + "output/LayerNorm/gamma"], w[p + "output/LayerNorm/beta"], eps)
        layers.append(x)
        i += 1
    first = x[np.arange(batch), input_mask.sum(1) - 1] if causal else x[:, 0]
    pooled = np.tanh(first @ w["bert/pooler/dense/kernel"] + w["bert/pooler/dense/bias"])
    return layers, pooled


def pretraining_heads(weights, sequence_output, pooled, masked_positions, approximate_gelu, eps=1e-12):
    """MLM logits at masked_positions [B,P,V] and NSP logits [B,2], in float64."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    gathered = np.take_along_axis(sequence_output, masked_positions[:, :, None], axis=1)
    t = gelu(gathered @ w["cls/predictions/transform/dense/kernel"] + w["cls/predictions/transform/dense/bias"],
             approximate_gelu)
    t = layer_norm(t, w["cls/predictions/transform/LayerNorm/gamma"], w["cls/predictions/transform/LayerNorm/beta"],
                   eps)
    mlm = t @ w["bert/embeddings/word_embeddings"].T + w["cls/predictions/output_bias"]
    nsp = pooled @ w["cls/seq_relationship/output_weights"].T + w["cls/seq_relationship/output_bias"]
    return mlm, nsp


def next_token_loss(weights, sequence_output, input_ids, input_mask, approximate_gelu, eps=1e-12):
    """The left-to-right LM loss: mean cross-entropy of predicting token t+1 from position t (the masked-LM
    head at every position), over the t whose token t+1 is real."""
    batch, length = input_ids.shape
    positions = np.broadcast_to(np.arange(length - 1), (batch, length - 1))
    logits, _ = pretraining_heads(weights, sequence_output, sequence_output[:, 0], positions, approximate_gelu, eps)
    logits = logits - logits.max(-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, input_ids[:, 1:, None], axis=-1)[..., 0]
    real = input_mask[:, 1:].astype(np.float64)
    return (nll * real).sum() / real.sum()
