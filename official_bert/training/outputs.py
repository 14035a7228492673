"""What a pretraining run leaves for fine-tuning and for comparison with the original: config, vocab, eval results.

The checkpoints themselves are written by `checkpointing.py`; with `bert_config.json` and `vocab.txt` beside
them the output directory is what `load_checkpoint(model, output_dir)` and the fine-tuning scripts read.
"""

import os

import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.checkpoints import detect, files
from official_bert.configs import BertConfig
from official_bert.training.options import TrainingError

CONFIG_NAME = "bert_config.json"
VOCAB_NAME = "vocab.txt"
EVAL_RESULTS_NAME = "eval_results.txt"


def prepare_output_dir(output_dir, config, vocab_file=None, init_checkpoint=None):
    """Puts `bert_config.json` and `vocab.txt` into the run's directory (call it on the chief only).

    The vocabulary is --vocab_file or, without it, the vocab.txt beside --init_checkpoint; with neither,
    a warning says the directory will lack one. A directory that already holds a run must hold the same
    config, so that a resumed run is the same model.

    Args:
        output_dir: the run's directory (created if needed).
        config: the model's `BertConfig`.
        vocab_file: the vocabulary the data was made with.
        init_checkpoint: the warm-start checkpoint, whose vocab.txt is taken if `vocab_file` is None.
    """
    tf.io.gfile.makedirs(output_dir)
    config_path = os.path.join(output_dir, CONFIG_NAME)
    if tf.io.gfile.exists(config_path):
        existing = BertConfig.from_json_file(config_path)
        diffs = [f"{k} {v!r} there, {getattr(config, k)!r} now" for k, v in existing.to_dict().items()
                 if getattr(config, k) != v]
        if diffs:
            raise TrainingError(f"--output_dir={output_dir} holds a run of another model ({'; '.join(diffs)}): "
                                "use a new --output_dir, or the --bert_config_file of that run")
    config.to_json_file(config_path)
    if vocab_file is None and init_checkpoint:
        vocab_file = detect.locate(init_checkpoint).vocab_file
    if vocab_file is None:
        logging.warning("no --vocab_file: %s will hold no %s for fine-tuning", output_dir, VOCAB_NAME)
        return
    try:
        with open(vocab_file, encoding="utf-8") as f:
            size = sum(1 for _ in f)
    except (OSError, UnicodeDecodeError) as e:
        raise TrainingError(f"--vocab_file={vocab_file}: cannot read it ({e})") from None
    if size > config.vocab_size:
        raise TrainingError(f"--vocab_file={vocab_file} has {size} tokens, more than the vocab_size "
                            f"{config.vocab_size} of --bert_config_file")
    if os.path.abspath(vocab_file) != os.path.abspath(os.path.join(output_dir, VOCAB_NAME)):
        files.copy_atomically(vocab_file, os.path.join(output_dir, VOCAB_NAME))


def write_eval_results(results, output_dir):
    """Writes `eval_results.txt` as the original does: one "key = value" line per result, keys sorted.

    Example:
    >>> import tempfile
    >>> directory = tempfile.mkdtemp()
    >>> write_eval_results({"loss": 2.5, "global_step": 10, "masked_lm_accuracy": 0.25}, directory)
    >>> print(open(os.path.join(directory, "eval_results.txt")).read(), end="")
    global_step = 10
    loss = 2.5
    masked_lm_accuracy = 0.25
    """
    path = os.path.join(output_dir, EVAL_RESULTS_NAME)
    with files.atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for key in sorted(results):
            value = results[key]  # floats as the original printed them: float32, shortest repr
            f.write(f"{key} = {value if isinstance(value, int) else str(np.float32(value))}\n")
