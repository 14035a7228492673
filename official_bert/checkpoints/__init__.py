"""Load and save BERT checkpoints in every format people have.

Formats, detected from the path by `load_checkpoint`:
- "google": Google's original TF1 checkpoints (`bert_model.ckpt.*` + `bert_config.json` + `vocab.txt`),
  under the original variable names (see `names.py`); also fine-tuned ones from run_classifier/run_squad.
- "huggingface": a Hugging Face model directory (`config.json` + `model.safetensors`) or a `.safetensors`
  file, read with NumPy (no torch): with or without the "bert." prefix, LayerNorm weight/bias or
  gamma/beta, with or without the pooler, with the pretraining, classifier or QA heads.
- "official_bert": our own, a `tf.train.Checkpoint(model=...)` (what training writes; see `native.py`),
  and "keras": a `.keras` model file.
"""

import os
import warnings

from absl import logging

from official_bert.checkpoints import case, causal, detect, google, huggingface, kinds, loading, native
from official_bert.checkpoints.causal import resolve_causal_attention
from official_bert.checkpoints.loading import LoadReport
from official_bert.checkpoints.source import CheckpointError
from official_bert.configs import BertConfig
from official_bert.io import copy_atomically

SAVE_FORMATS = ("official_bert", "huggingface", "google")
_WRITERS = {"official_bert": native.write, "huggingface": huggingface.write, "google": google.write}


def load_checkpoint(model, path, do_lower_case=None):
    """Loads a checkpoint of any supported format into `model`.

    The encoder's weights always load (the checkpoint must hold the whole encoder; the pooler may be
    absent); heads load where the model has them and the checkpoint too: MLM/NSP into a `BertPretrainer`,
    the classifier or span head into the matching task model — never a head of another kind of model than the
    checkpoint records as its own (a token tagger's into a sentence classifier). A config beside the checkpoint
    (`bert_config.json` / `config.json`) must agree with the model's, and a left-to-right checkpoint (its config or
    the marker `run_pretraining.py --objective=ltr` writes inside it says so) loads only into a left-to-right
    model. Nothing is assigned unless all
    checks pass.

    Args:
        model: a `BertEncoder`, `BertPretrainer` or task model.
        path: a checkpoint directory, a TF checkpoint prefix (or one of its files), a `.safetensors` file or
            a `.keras` file.
        do_lower_case: if given, warn (UserWarning) when it contradicts the checkpoint: the original's
            rule on Google's release names, the vocab.txt beside it, a tokenizer_config.json.

    Returns:
        LoadReport: the loaded, missing and unexpected variables and the skipped training state (also logged).

    Raises:
        CheckpointError: no readable checkpoint at `path`; a shape mismatch (naming the variable and both
            shapes); a config or an encoder that does not match the model's; a left-to-right checkpoint and a
            bidirectional model, or the reverse.

    Example:
    >>> import tempfile
    >>> from official_bert import BertClassifier, BertConfig, BertEncoder, load_checkpoint, save_checkpoint
    >>> config = BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=1)
    >>> work = tempfile.TemporaryDirectory()
    >>> directory = work.name
    >>> _ = save_checkpoint(BertEncoder(config), directory, format="google")
    >>> report = load_checkpoint(BertClassifier(BertEncoder(config), num_classes=2), directory)
    >>> len(report.loaded), report.missing
    (19, ['classifier/kernel', 'classifier/bias'])
    """
    located = detect.locate(path)
    source = detect.open_source(located)
    if located.config_file:
        loading.check_config(model, BertConfig.from_json_file(located.config_file), located.config_file)
    causal.check_model(native.is_causal(model), causal.recorded(located, source))
    report = loading.assign(model, source, heads=kinds.same_heads(kinds.recorded(located), kinds.kind_of(model)))
    report.family = loading.model_config(model).family
    if do_lower_case is not None:
        report.warnings = case.case_mismatches(do_lower_case, located)
    for message in report.warnings:
        warnings.warn(message, UserWarning, stacklevel=2)
    logging.info("%s", report)
    return report


def save_checkpoint(model, path, format="official_bert", vocab_file=None):
    """Writes `model` into the directory `path` in one of `SAVE_FORMATS`.

    - "official_bert": `model.ckpt.*` (a `tf.train.Checkpoint(model=model)`) + `bert_config.json`.
    - "huggingface": `model.safetensors` + `config.json`, loadable by transformers' `from_pretrained`.
    - "google": `bert_model.ckpt.*` under the original TF1 names + `bert_config.json`.
    Each file is written under a temporary name and renamed, so none is ever half-written.

    Args:
        model: a `BertEncoder`, `BertPretrainer` or task model.
        path: the output directory (created if needed).
        format: one of `SAVE_FORMATS`.
        vocab_file: optional vocabulary to copy in as `vocab.txt`, so the directory is self-contained.

    Returns:
        the checkpoint prefix or weights file written.

    Example:
    >>> import os, tempfile
    >>> from official_bert import BertConfig, BertEncoder, save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> directory = work.name
    >>> _ = save_checkpoint(BertEncoder(BertConfig.from_preset("tiny", vocab_size=100)), directory, "huggingface")
    >>> sorted(os.listdir(directory))
    ['config.json', 'model.safetensors']
    """
    if format not in _WRITERS:
        raise ValueError(f"unknown checkpoint format {format!r}; expected one of {list(SAVE_FORMATS)}")
    written = _WRITERS[format](model, loading.model_config(model), path)
    if format != "huggingface":  # its config.json names the model's class ("architectures")
        kinds.record(path, model)
    if vocab_file:
        copy_atomically(vocab_file, os.path.join(path, "vocab.txt"))
    return written
