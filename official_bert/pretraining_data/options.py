"""The settings that decide what instances look like: the original's flags plus Model Garden's and the paper's."""

import dataclasses

from official_bert.pretraining_data.errors import PretrainingDataError


def num_to_predict(num_tokens, masked_lm_prob, max_predictions_per_seq):
    """How many positions a sequence of `num_tokens` tokens ([CLS] and [SEP] included) gets masked.

    The original's formula, with Python 3's round (half to even: 4.5 → 4).

    >>> num_to_predict(128, 0.15, 20), num_to_predict(30, 0.15, 20), num_to_predict(3, 0.15, 20)
    (19, 4, 1)
    """
    return min(max_predictions_per_seq, max(1, round(num_tokens * masked_lm_prob)))


@dataclasses.dataclass(frozen=True)
class PretrainingOptions:
    """How sequences are cut and masked; field names are the command-line flag names.

    Args:
        max_seq_length: tokens per example, [CLS] and [SEP] included (T).
        max_predictions_per_seq: masked positions stored per example (P). Below what `masked_lm_prob`
            asks of a full-length sequence, it caps the masking, as in the original (`prediction_cap_warning`).
        dupe_factor: passes over each document, each with fresh random cuts and masks.
        masked_lm_prob: share of tokens to predict.
        short_seq_prob: chance that a document's target length is drawn from randint(2, max) instead of max.
        do_whole_word_mask: mask every WordPiece of a word together.
        max_ngram_size: mask runs of up to this many whole words, shorter runs weighted 1/n (Model
            Garden's scheme); needs `do_whole_word_mask`. None or 1: single words.
        mask_token_prob: share of predicted positions replaced by [MASK] (0.8).
        random_token_prob: share replaced by a random vocabulary id (0.1); the rest keep their token.
        no_nsp: single-segment examples ([CLS] text [SEP]) packed to full length, for the paper's
            "No NSP" ablation; next_sentence_labels is then always 0.

    Example:
    >>> PretrainingOptions().max_num_tokens
    125
    >>> PretrainingOptions(max_seq_length=512).prediction_cap_warning()  # doctest: +ELLIPSIS
    'max_predictions_per_seq=20 is below the 77 predictions that masked_lm_prob=0.15 asks of a 512-token ...'
    """

    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    dupe_factor: int = 10
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    do_whole_word_mask: bool = False
    max_ngram_size: int | None = None
    mask_token_prob: float = 0.8
    random_token_prob: float = 0.1
    no_nsp: bool = False

    def __post_init__(self):
        _check(self.max_seq_length >= 5, f"max_seq_length={self.max_seq_length}: expected at least 5 "
               "([CLS], [SEP], [SEP] and two tokens of text)")
        _check(self.dupe_factor >= 1, f"dupe_factor={self.dupe_factor}: expected at least 1")
        _check(0 < self.masked_lm_prob <= 1, f"masked_lm_prob={self.masked_lm_prob}: expected a value in (0, 1]")
        for name in ("short_seq_prob", "mask_token_prob", "random_token_prob"):
            value = getattr(self, name)
            _check(0 <= value <= 1, f"{name}={value}: expected a probability in [0, 1]")
        _check(self.mask_token_prob + self.random_token_prob <= 1 + 1e-9,
               f"mask_token_prob={self.mask_token_prob} + random_token_prob={self.random_token_prob} exceeds 1")
        _check(self.max_ngram_size is None or self.max_ngram_size >= 1,
               f"max_ngram_size={self.max_ngram_size}: expected at least 1")
        _check((self.max_ngram_size or 1) == 1 or self.do_whole_word_mask,
               f"max_ngram_size={self.max_ngram_size} masks runs of whole words: also pass --do_whole_word_mask")
        _check(self.max_predictions_per_seq >= 1,
               f"max_predictions_per_seq={self.max_predictions_per_seq}: expected at least 1")

    def prediction_cap_warning(self):
        """A warning when max_predictions_per_seq caps what masked_lm_prob asks of a full sequence, else None."""
        needed = max(1, round(self.max_seq_length * self.masked_lm_prob))
        if self.max_predictions_per_seq >= needed:
            return None
        return (f"max_predictions_per_seq={self.max_predictions_per_seq} is below the {needed} predictions that "
                f"masked_lm_prob={self.masked_lm_prob} asks of a {self.max_seq_length}-token sequence: longer "
                f"sequences get {self.max_predictions_per_seq} masked positions, as in the original; pass "
                f"--max_predictions_per_seq={needed} to mask {self.masked_lm_prob:.0%} of every sequence")

    @property
    def max_num_tokens(self):
        """Text tokens per example: T minus [CLS] [SEP] [SEP] (minus [CLS] [SEP] without NSP)."""
        return self.max_seq_length - (2 if self.no_nsp else 3)


def _check(condition, message):
    if not condition:
        raise PretrainingDataError(message)
