"""Does `do_lower_case` agree with the checkpoint? The original's rule plus the evidence beside the weights.

Every tool that starts from a checkpoint's weights (--init_checkpoint, --teacher, `from_checkpoint(...,
do_lower_case=...)`) calls `check_case` before any work: a casing the checkpoint's own record contradicts is refused
in one line, never trained on with a warning after the fact.
"""

import json
import os

import tensorflow as tf

from official_bert import tokenization
from official_bert.checkpoints import detect
from official_bert.checkpoints.source import CheckpointError
from official_bert.io import is_file

_TOKENIZER_CONFIG_NAME = "tokenizer_config.json"


def vocab_casing(tokens):
    """What a vocabulary says of its model's casing: "cased" when an entry has an uppercase letter, "uncased" when
    none has but entries have lowercase ones, None when no entry has a cased letter at all (a script without case:
    no evidence). Bracketed entries ([CLS], [unused0]) are special tokens, uppercase in every vocabulary.

    Example:
    >>> vocab_casing(["[CLS]", "the", "##ing"]), vocab_casing(["[CLS]", "The"]), vocab_casing(["[CLS]", "नमस्ते"])
    ('uncased', 'cased', None)
    """
    words = [t for t in tokens if not (t.startswith("[") and t.endswith("]"))]
    if any(t != t.lower() for t in words):
        return "cased"
    return "uncased" if any(t != t.upper() for t in words) else None


def check_case(do_lower_case, checkpoint, where):
    """Raises CheckpointError, in one line that begins with `where`, when `do_lower_case` contradicts the
    checkpoint's own record (`case_mismatches`: the first sign given).

    Args:
        do_lower_case: what the caller will tokenize with; None (not given: the checkpoint's own casing, see
            `own_casing`) contradicts nothing.
        checkpoint: a path `detect.locate` reads, or a `detect.Located` (its vocab_file: the vocabulary the
            checkpoint was trained with).
        where: what names the checkpoint, e.g. "--init_checkpoint=runs/era" or "--teacher=runs/era".

    Example:
    >>> import os, tempfile
    >>> from official_bert.checkpoints.detect import Located
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nthe\\n")
    >>> check_case(True, Located("official_bert", "run/ckpt-9", None, vocab), "--teacher=run")
    >>> check_case(False, Located("official_bert", "run/ckpt-9", None, vocab), "--teacher=run")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.checkpoints.source.CheckpointError: --teacher=run: do_lower_case=False, but .../vocab.txt has no \
entry with an uppercase letter: the checkpoint is uncased, ...; pass do_lower_case=True
    """
    if do_lower_case is None:
        return
    located = checkpoint if isinstance(checkpoint, detect.Located) else detect.locate(checkpoint)
    mismatches = case_mismatches(do_lower_case, located)
    if mismatches:
        first = mismatches[0]
        raise CheckpointError(first if first.startswith("You passed in") else f"{where}: {first}")


def own_casing(checkpoint):
    """The do_lower_case a WordPiece checkpoint's own record gives: False where lowercasing contradicts it
    (`case_mismatches`), else True (the original's default).

    Args:
        checkpoint: a path `detect.locate` reads, or a `detect.Located`.

    Example:
    >>> from official_bert.checkpoints.detect import Located
    >>> own_casing(Located("google", "/models/cased_L-12_H-768_A-12/bert_model.ckpt"))
    False
    """
    located = checkpoint if isinstance(checkpoint, detect.Located) else detect.locate(checkpoint)
    return not case_mismatches(True, located)


def case_mismatches(do_lower_case, located):
    """Messages for each sign that `do_lower_case` contradicts the checkpoint (empty when none).

    The signs: the original `validate_case_matches_checkpoint` rule on the released model's directory name;
    the vocabulary beside the checkpoint (`vocab_casing`); a Hugging Face `tokenizer_config.json` that states
    `do_lower_case`.

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
        casing = vocab_casing(vocab)
        if do_lower_case and casing == "cased":
            upper = [t for t in vocab if t != t.lower() and not (t.startswith("[") and t.endswith("]"))]
            messages.append(f"do_lower_case=True, but {located.vocab_file} has {len(upper)} entries with "
                            f"uppercase letters (e.g. {upper[:3]}): the checkpoint is cased; pass "
                            "do_lower_case=False")
        elif not do_lower_case and casing == "uncased":
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
