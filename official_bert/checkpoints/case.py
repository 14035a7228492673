"""Does `do_lower_case` agree with the checkpoint? The original's rule plus the evidence beside the weights."""

import json
import os

import tensorflow as tf

from official_bert import tokenization
from official_bert.io import is_file

_TOKENIZER_CONFIG_NAME = "tokenizer_config.json"


def case_mismatches(do_lower_case, located):
    """Messages for each sign that `do_lower_case` contradicts the checkpoint (empty when none).

    The signs: the original `validate_case_matches_checkpoint` rule on the released model's directory name;
    the vocabulary beside the checkpoint (an entry with an uppercase letter means a cased model, none at all
    an uncased one); a Hugging Face `tokenizer_config.json` that states `do_lower_case`.

    Args:
        do_lower_case: what the caller will tokenize with.
        located: a `detect.Located` checkpoint.

    Example:
    >>> from official_bert.checkpoints.detect import Located
    >>> case_mismatches(False, Located("google", "/models/uncased_L-12_H-768_A-12/bert_model.ckpt"))[0][:40]
    'You passed in `--do_lower_case=False` wi'
    """
    messages = []
    try:
        tokenization.validate_case_matches_checkpoint(do_lower_case, located.path)
    except ValueError as e:
        messages.append(str(e))
    if located.vocab_file:
        vocab = tokenization.load_vocab(located.vocab_file)
        # Bracketed entries ([CLS], [unused0]) are special tokens, uppercase in every vocabulary.
        upper = [t for t in vocab if t != t.lower() and not (t.startswith("[") and t.endswith("]"))]
        if do_lower_case and upper:
            messages.append(f"do_lower_case=True, but {located.vocab_file} has {len(upper)} entries with "
                            f"uppercase letters (e.g. {upper[:3]}): the checkpoint is cased; pass "
                            "do_lower_case=False")
        elif not do_lower_case and not upper:
            messages.append(f"do_lower_case=False, but {located.vocab_file} has no entry with an uppercase "
                            "letter: the checkpoint is uncased, and cased words would split into pieces or "
                            "[UNK]; pass do_lower_case=True")
    tokenizer_config = os.path.join(located.directory, _TOKENIZER_CONFIG_NAME)
    if is_file(tokenizer_config):
        try:
            with tf.io.gfile.GFile(tokenizer_config, "rb") as f:
                stated = json.loads(f.read().decode("utf-8")).get("do_lower_case")
        except (tf.errors.OpError, ValueError, AttributeError):
            stated = None  # an unreadable tokenizer config is no evidence either way
        if stated is not None and bool(stated) != bool(do_lower_case):
            messages.append(f"do_lower_case={do_lower_case}, but {tokenizer_config} says do_lower_case={stated}")
    return messages
