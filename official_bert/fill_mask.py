"""Fill-in-the-blank with a pretrained BERT's masked-LM head: text with [MASK]s → the likeliest tokens for each.

    model = load_masked_lm(BertConfig.from_json_file("run/bert_config.json"), "run")  # a run_pretraining output
    tokenizer = FullTokenizer("run/vocab.txt")
    top_k_fillers(model, tokenizer, [encode_masked_text(tokenizer, "The [MASK] of the Union is strong.")])
"""

import dataclasses

import numpy as np
import tensorflow as tf

from official_bert.checkpoints import CheckpointError, causal, load_checkpoint, resolve_causal_attention
from official_bert.errors import Error
from official_bert.models.bert_pretrainer import BertPretrainer
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.text.packing import packing_of

MASK = "[MASK]"


class FillMaskError(Error):
    """A text or vocabulary that cannot be filled in; the message says what is wrong."""


@dataclasses.dataclass(frozen=True)
class MaskedText:
    """A text as the model reads it.

    Args:
        token_ids: [CLS] text [SEP] as vocabulary ids, each [MASK] as the [MASK] id.
        mask_positions: the indices in `token_ids` of the [MASK]s, in order.
    """

    token_ids: tuple
    mask_positions: tuple


def encode_masked_text(tokenizer, text, max_seq_length=128):
    """Tokenizes a text that holds one or more literal `[MASK]`s (RoBERTa's and XLM-R's: `<mask>`).

    The tokenizer would split "[MASK]" into "[", "mask", "]", so the text is cut at each [MASK] and the pieces
    are tokenized separately, in the tokenizer's layout (`packing.Packing`: RoBERTa's mask takes the whitespace
    before it, as transformers' does).

    Args:
        tokenizer: a `tokenization.FullTokenizer` (or anything with `tokenize` and `vocab`).
        text: the text, e.g. "The [MASK] sat on the mat."
        max_seq_length: the most tokens the model reads, [CLS] and [SEP] included.

    Returns:
        a `MaskedText`.

    Raises:
        FillMaskError: no [MASK] in the text, none in the vocabulary, or the text is longer than max_seq_length.

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "."]))
    >>> encode_masked_text(FullTokenizer(vocab), "The [MASK] sat[MASK].")
    MaskedText(token_ids=(2, 5, 4, 1, 4, 7, 3), mask_positions=(2, 4))
    """
    layout = packing_of(tokenizer)
    mask = layout.mask_token
    pieces = text.split(mask)
    if len(pieces) == 1:
        raise FillMaskError(f"no {mask} in the text")
    if mask not in tokenizer.vocab:
        raise FillMaskError(f"the vocabulary has no {mask} token")
    tokens, positions = [layout.cls_token], []
    for i, piece in enumerate(pieces):
        if i:
            positions.append(len(tokens))
            tokens.append(mask)
        if layout.mask_takes_space and i < len(pieces) - 1:
            piece = piece.rstrip()
        tokens += tokenizer.tokenize(piece)
    tokens.append(layout.sep_token)
    if len(tokens) > max_seq_length:
        raise FillMaskError(f"the text is {len(tokens)} tokens long with {layout.cls_token} and {layout.sep_token}, "
                            f"more than max_seq_length={max_seq_length}")
    return MaskedText(tuple(tokenizer.convert_tokens_to_ids(tokens)), tuple(positions))


def load_masked_lm(config, init_checkpoint, do_lower_case=None):
    """A `BertPretrainer` (masked LM only) with the weights of a pretraining checkpoint.

    Args:
        config: the model's `BertConfig`.
        init_checkpoint: anything `load_checkpoint` reads that holds the masked-LM head: a run_pretraining
            output directory, Google's release, a Hugging Face BertForPreTraining / BertForMaskedLM, ...
        do_lower_case: if given, warn when it contradicts the checkpoint (see `load_checkpoint`).

    Raises:
        CheckpointError: unreadable or mismatched, or without the masked-LM head (an encoder-only or
            fine-tuned checkpoint), or a left-to-right model (its config or checkpoint says so).

    Example:
    >>> import tempfile
    >>> from official_bert import BertConfig, save_checkpoint
    >>> config = BertConfig.from_preset("tiny", vocab_size=10, num_hidden_layers=1)
    >>> pretrained, encoder_only = tempfile.TemporaryDirectory(), tempfile.TemporaryDirectory()
    >>> _ = save_checkpoint(BertPretrainer(BertEncoder(config)), pretrained.name)
    >>> type(load_masked_lm(config, pretrained.name)).__name__
    'BertPretrainer'
    >>> _ = save_checkpoint(BertEncoder(config), encoder_only.name)
    >>> load_masked_lm(config, encoder_only.name)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.checkpoints.source.CheckpointError: ...: the checkpoint has no masked-LM head: ...
    """
    causal.refuse_left_to_right(resolve_causal_attention(config, checkpoints=[init_checkpoint]), init_checkpoint)
    model = BertPretrainer(BertEncoder(config), use_nsp=False)
    report = load_checkpoint(model, init_checkpoint, do_lower_case)
    if any("masked_lm" in path.split("/") for path in report.missing):
        raise CheckpointError(f"{init_checkpoint}: the checkpoint has no masked-LM head: fill-in-the-blank needs "
                              "a pretraining checkpoint (e.g. run_pretraining's --output_dir), not an encoder-only "
                              "or fine-tuned one")
    return model


def top_k_fillers(model, tokenizer, texts, top_k=5):
    """The `top_k` likeliest tokens, with their probabilities, at every [MASK] of every text.

    Args:
        model: a `BertPretrainer` (see `load_masked_lm`).
        tokenizer: the tokenizer the texts were encoded with, to turn ids back into tokens.
        texts: `MaskedText`s (see `encode_masked_text`), read as one batch.
        top_k: how many tokens per [MASK].

    Returns:
        per text, per [MASK], a list of (token, probability) pairs, likeliest first; the probabilities are
        the softmax over the whole vocabulary.

    Example:
    >>> import os, tempfile
    >>> from official_bert import BertConfig
    >>> from official_bert.tokenization import FullTokenizer
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat"]))
    >>> tokenizer = FullTokenizer(vocab)
    >>> model = BertPretrainer(BertEncoder(BertConfig.from_preset("tiny", vocab_size=7)), use_nsp=False)
    >>> _ = model.masked_lm.output_bias.assign([0, 0, 0, 0, 0, 0, 20])  # "cat", whatever the input
    >>> texts = [encode_masked_text(tokenizer, "the [MASK]"), encode_masked_text(tokenizer, "[MASK] the [MASK]")]
    >>> [[[(token, round(p, 2)) for token, p in mask] for mask in text]
    ...  for text in top_k_fillers(model, tokenizer, texts, top_k=1)]
    [[[('cat', 1.0)]], [[('cat', 1.0)], [('cat', 1.0)]]]
    """
    length = max(len(t.token_ids) for t in texts)
    masks = max(len(t.mask_positions) for t in texts)
    ids, input_mask = np.zeros((len(texts), length), np.int32), np.zeros((len(texts), length), np.int32)
    positions = np.zeros((len(texts), masks), np.int32)  # padding predicts at [CLS], and is dropped below
    for i, text in enumerate(texts):
        ids[i, :len(text.token_ids)] = text.token_ids
        input_mask[i, :len(text.token_ids)] = 1
        positions[i, :len(text.mask_positions)] = text.mask_positions
    logits = model({"input_word_ids": ids, "input_mask": input_mask,
                    "input_type_ids": np.zeros_like(ids), "masked_lm_positions": positions},
                   training=False)["mlm_logits"]
    probabilities, token_ids = tf.math.top_k(tf.nn.softmax(logits, axis=-1), k=min(top_k, logits.shape[-1]))
    probabilities, token_ids = probabilities.numpy().tolist(), token_ids.numpy().tolist()
    return [[list(zip(tokenizer.convert_ids_to_tokens(token_ids[i][m]), probabilities[i][m]))
             for m in range(len(text.mask_positions))] for i, text in enumerate(texts)]
