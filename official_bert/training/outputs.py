"""What a training run leaves for fine-tuning: its config and vocabulary beside the checkpoints.

The checkpoints themselves are written by `checkpointing.py`; with `bert_config.json` and `vocab.txt` beside
them the output directory is what `load_checkpoint(model, output_dir)` and the fine-tuning scripts read.
"""

import os

import tensorflow as tf
from absl import logging

from official_bert import tokenization
from official_bert.checkpoints import detect
from official_bert.configs import BertConfig
from official_bert.families import WORDPIECE
from official_bert.io import copy_atomically
from official_bert.training.options import TrainingError

CONFIG_NAME = "bert_config.json"
VOCAB_NAME = "vocab.txt"


def prepare_output_dir(output_dir, config, vocab_file=None, init_checkpoint=None, tokenizer=None):
    """Puts `bert_config.json` and `vocab.txt` into the run's directory (call it on the chief only).

    The vocabulary is --vocab_file or, without it, the vocab.txt beside --init_checkpoint; with neither,
    a warning says the directory will lack one. It must be a BERT vocabulary: UTF-8, no duplicate entry,
    [UNK], [CLS] and [SEP] in it, no more tokens than the config's vocab_size. A directory that already holds a
    run (a checkpoint) must hold the same config, so that a resumed run is the same model; one without a
    checkpoint holds no run yet (say, a first attempt that stopped on bad input), and its files are replaced.

    Args:
        output_dir: the run's directory (created if needed), local or on any tf.io.gfile filesystem.
        config: the model's `BertConfig`.
        vocab_file: the vocabulary the data was made with.
        init_checkpoint: the warm-start checkpoint, whose vocab.txt is taken if `vocab_file` is None.
        tokenizer: the run's `TokenizerSpec`: a byte-level BPE's vocab.json and merges.txt, or XLM-R's
            sentencepiece.bpe.model (BERT's family), are copied too, under those names.

    Example:
    >>> import tempfile
    >>> from official_bert.configs import BertConfig
    >>> run = tempfile.mkdtemp()
    >>> vocab = os.path.join(run, "words.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[CLS]\\n[SEP]\\nthe\\n")
    >>> prepare_output_dir(run, BertConfig.from_preset("tiny", vocab_size=8), vocab)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.training.options.TrainingError: --vocab_file=.../words.txt: no [UNK] in it: not a BERT vocabulary
    """
    if vocab_file is None and tokenizer is not None and tokenizer.kind == WORDPIECE:
        vocab_file = tokenizer.vocab_file  # a family's, found beside its checkpoint
    if vocab_file is None and init_checkpoint:
        vocab_file = detect.locate(init_checkpoint).vocab_file
    if vocab_file is not None:
        _check_vocab(vocab_file, config)
    tf.io.gfile.makedirs(output_dir)
    config_path = os.path.join(output_dir, CONFIG_NAME)
    if tf.io.gfile.exists(config_path) and tf.train.latest_checkpoint(output_dir):
        existing = BertConfig.from_json_file(config_path)
        diffs = [f"{k} {v!r} there, {getattr(config, k)!r} now" for k, v in existing.to_dict().items()
                 if getattr(config, k) != v]
        if diffs:
            raise TrainingError(f"--output_dir={output_dir} holds a run of another model ({'; '.join(diffs)}): "
                                "use a new --output_dir, or the --bert_config_file of that run")
    config.to_json_file(config_path)
    if tokenizer is not None and tokenizer.kind != WORDPIECE:
        for name, path in tokenizer.files().items():
            if os.path.normpath(path) != os.path.normpath(os.path.join(output_dir, name)):
                copy_atomically(path, os.path.join(output_dir, name))
        return
    if vocab_file is None:
        logging.warning("no --vocab_file: %s will hold no %s for fine-tuning", output_dir, VOCAB_NAME)
        return
    target = os.path.join(output_dir, VOCAB_NAME)
    if os.path.normpath(vocab_file) != os.path.normpath(target):
        copy_atomically(vocab_file, target)


def _check_vocab(vocab_file, config):
    try:
        vocab = tokenization.load_vocab(vocab_file)
        tokenization.check_special_tokens(vocab, vocab_file)
    except tokenization.VocabError as e:
        raise TrainingError(f"--vocab_file={e}") from None
    # A repeated token keeps the id of its last line, so the earlier lines are ids no token maps to.
    unused = sorted(set(range(max(vocab.values()) + 1)) - set(vocab.values()))
    if unused:
        raise TrainingError(f"--vocab_file={vocab_file}:{unused[0] + 1}: this line's token is listed again "
                            f"further down ({len(unused)} such lines): a run's vocabulary needs one line per token")
    if len(vocab) > config.vocab_size:
        raise TrainingError(f"--vocab_file={vocab_file} has {len(vocab)} tokens, more than the vocab_size "
                            f"{config.vocab_size} of --bert_config_file")
