"""`Packing`: a tokenizer's special tokens and how it lays out one or two segments — BERT's `[CLS] A [SEP] B [SEP]`
(segment ids 0 then 1) or RoBERTa's `<s> A </s></s> B </s>` (all 0), which XLM-R shares.

The Python features (classification, SQuAD, NER, feature extraction, fill-mask) and the in-graph packer
(`BertPackInputs`) both read it from the tokenizer (`packing_of`), so that a RoBERTa run packs as RoBERTa was
pretrained in training and in its export alike.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Packing:
    """The special tokens of a vocabulary and the layout of a packed sequence.

    Args:
        cls_token: the token that opens a sequence ([CLS], <s>).
        sep_token: the token that ends a segment ([SEP], </s>).
        pad_token: padding ([PAD], <pad>).
        mask_token: the masked LM's mask ([MASK], <mask>).
        unk_token: the unknown token ([UNK], <unk>).
        pair_separators: sep tokens between the two segments of a pair (BERT 1, RoBERTa 2).
        second_segment_type: the segment id of B and what follows it (BERT 1; RoBERTa 0: it has one token type).
        mask_takes_space: a literal mask token in text takes the whitespace before it (transformers' `<mask>` is
            `AddedToken(lstrip=True)`), so that "The <mask> sat" has the same tokens as "The sat" around it.

    Example:
    >>> from official_bert.text.packing import BERT, ROBERTA
    >>> ROBERTA.pack(["a"], ["b"])
    (['<s>', 'a', '</s>', '</s>', 'b', '</s>'], [0, 0, 0, 0, 0, 0])
    >>> BERT.pack(["a"], ["b"]), BERT.special_count(pair=True)
    ((['[CLS]', 'a', '[SEP]', 'b', '[SEP]'], [0, 0, 0, 1, 1]), 3)
    """

    cls_token: str
    sep_token: str
    pad_token: str
    mask_token: str
    unk_token: str
    pair_separators: int = 1
    second_segment_type: int = 1
    mask_takes_space: bool = False

    def pack(self, tokens_a, tokens_b=None):
        """(tokens, segment ids) of `cls A sep` or, with a non-empty B, of the pair."""
        tokens = [self.cls_token, *tokens_a, self.sep_token]
        segment_ids = [0] * len(tokens)
        if tokens_b:
            second = [self.sep_token] * (self.pair_separators - 1) + [*tokens_b, self.sep_token]
            tokens += second
            segment_ids += [self.second_segment_type] * len(second)
        return tokens, segment_ids

    def special_count(self, pair):
        """How many special tokens a single segment (2) or a pair (BERT 3, RoBERTa 4) takes."""
        return 2 + (self.pair_separators if pair else 0)

    def special_ids(self, vocab):
        """The ids, in `vocab` (token → id), of the special tokens it has, under the names of TF Hub's
        `get_special_tokens_dict` (with `vocab_size`)."""
        ids = {"vocab_size": len(vocab)}
        for key, token in (("start_of_sequence_id", self.cls_token), ("end_of_segment_id", self.sep_token),
                           ("padding_id", self.pad_token), ("mask_id", self.mask_token)):
            if token in vocab:
                ids[key] = vocab[token]
        return ids


BERT = Packing("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")
ROBERTA = Packing("<s>", "</s>", "<pad>", "<mask>", "<unk>", pair_separators=2, second_segment_type=0,
                  mask_takes_space=True)


def packing_of(tokenizer):
    """A tokenizer's `Packing`: its `packing` attribute (the byte-level BPE and XLM-R's SentencePiece have RoBERTa's),
    else BERT's (WordPiece, and SentencePiece models trained here, whose special tokens are BERT's).

    Example:
    >>> packing_of(object()) is BERT
    True
    """
    return getattr(tokenizer, "packing", BERT)
