"""BERT's family: the encoders that are BERT with small changes, and what each one does differently.

A config records its family (`BertConfig.model_type`, Hugging Face's `model_type`; None is BERT), and every part of
the library reads the family's differences from here, so that none of them is guessed twice:

- roberta, xlm-roberta: position ids start after the padding id (`pad_token_id + 1`), one token type, byte-level BPE
  (roberta) or a SentencePiece model with fairseq's ids (xlm-roberta), `<s> A </s></s> B </s>` packing;
- distilbert: no token types, no pooler in the base model (its classifier's `pre_classifier` + ReLU takes the
  pooler's place), other tensor names, sinusoidal or learned positions;
- electra: an embedding width of its own (`embedding_size`) projected to the hidden width, a discriminator head, and
  its classifier's dense + GELU in the pooler's place.
"""

import dataclasses

from official_bert.errors import Error

WORDPIECE = "wordpiece"
BYTE_LEVEL_BPE = "byte_level_bpe"
SENTENCEPIECE = "sentencepiece"


@dataclasses.dataclass(frozen=True)
class Family:
    """One member of BERT's family.

    Args:
        model_type: Hugging Face's `model_type` ("bert", "roberta", ...).
        hf_prefix: the base model's name in a task model's tensor names ("roberta." in "roberta.encoder...").
        tokenizer: how its checkpoints tokenize: `WORDPIECE`, `BYTE_LEVEL_BPE` or `SENTENCEPIECE` (fairseq's ids).
        pooler_activation: the activation of the dense layer on the first token that feeds a classifier: BERT's
            pooler (tanh), RoBERTa's classification head (tanh), ELECTRA's (GELU), DistilBERT's pre_classifier (ReLU).
        masked_lm_activation: the masked-LM transform's activation, where the family fixes it (RoBERTa's and
            ELECTRA's heads compute exact GELU whatever `hidden_act` says); None: `hidden_act`.
        positions_after_padding: position ids start at `pad_token_id + 1` (fairseq's `make_positions`).
        max_chars_per_word: WordPiece's longest word before it becomes [UNK] (the original's 200; Hugging Face's
            tokenizers, which DistilBERT's and ELECTRA's checkpoints ship with, 100).

    Example:
    >>> from official_bert.families import get
    >>> get("roberta").hf_prefix, get(None).model_type
    ('roberta', 'bert')
    """

    model_type: str
    hf_prefix: str
    tokenizer: str
    pooler_activation: str = "tanh"
    masked_lm_activation: str = None
    positions_after_padding: bool = False
    max_chars_per_word: int = 200


FAMILIES = {family.model_type: family for family in (
    Family("bert", "bert", WORDPIECE),
    Family("roberta", "roberta", BYTE_LEVEL_BPE, masked_lm_activation="gelu_erf", positions_after_padding=True),
    Family("xlm-roberta", "roberta", SENTENCEPIECE, masked_lm_activation="gelu_erf", positions_after_padding=True),
    Family("distilbert", "distilbert", WORDPIECE, pooler_activation="relu", max_chars_per_word=100),
    Family("electra", "electra", WORDPIECE, pooler_activation="gelu_erf", masked_lm_activation="gelu_erf",
           max_chars_per_word=100),
)}


class UnknownFamilyError(Error):
    """A `model_type` that is not one of `FAMILIES`."""


def get(model_type):
    """The `Family` of a config's `model_type` (None: BERT).

    Raises:
        UnknownFamilyError: naming the model_type and the ones there are.

    Example:
    >>> get("albert")
    Traceback (most recent call last):
    ...
    official_bert.families.UnknownFamilyError: model_type 'albert' is not supported; expected one of bert, roberta, xlm-roberta, distilbert, electra
    """
    family = FAMILIES.get("bert" if model_type is None else model_type)
    if family is None:
        raise UnknownFamilyError(f"model_type {model_type!r} is not supported; expected one of {', '.join(FAMILIES)}")
    return family
