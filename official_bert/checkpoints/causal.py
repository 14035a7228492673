"""The left-only constraint follows the weights: what a checkpoint records of it, and a model's config resolved from
the config file, the flag and the checkpoints together.

A left-to-right model (run_pretraining.py --objective=ltr) records `"causal_attention": true` in the
bert_config.json beside its checkpoints and a marker inside them (`source.CAUSAL_MARKER`), which fine-tuning,
`save_checkpoint` and convert_checkpoint keep. A checkpoint copied without its config, or fine-tuned with the config
first given to run_pretraining (no such key), is therefore still computed left-only; a flag or config that says
otherwise is refused, since the same weights computed bidirectionally give other, quietly wrong, numbers.
"""

from absl import logging

from official_bert import configs
from official_bert.checkpoints import detect
from official_bert.checkpoints.source import CheckpointError

FLAG_NAMES = ("--causal_attention", "--nocausal_attention")


def describe(causal):
    """How messages name a model with (or without) the left-only constraint.

    Example:
    >>> describe(True)
    'a left-to-right model (causal_attention: true)'
    """
    return ("a left-to-right model (causal_attention: true)" if causal else
            "a bidirectional model (causal_attention: false)")


def recorded(located, source):
    """What a checkpoint records of the constraint: (value, where) for its config's "causal_attention" key and for
    its marker, each only where present.

    Args:
        located: the `detect.Located` checkpoint.
        source: its opened `Source`.
    """
    records = []
    if located.config_file:
        value = configs.BertConfig.from_json_file(located.config_file).causal_attention
        if value is not None:
            records.append((value, located.config_file))
    if source.causal_attention is not None:
        records.append((source.causal_attention, f"the checkpoint {source.path}"))
    return records


def checkpoint_records(path):
    """`recorded` for the checkpoint at `path`; none where no checkpoint is readable there (the loading that follows
    says why).

    Example:
    >>> import os, tempfile
    >>> from official_bert import BertConfig, BertEncoder, save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> config = BertConfig.from_preset("tiny", vocab_size=50, num_hidden_layers=1, causal_attention=True)
    >>> _ = save_checkpoint(BertEncoder(config), work.name, format="google")
    >>> os.remove(os.path.join(work.name, "bert_config.json"))  # a copy without its config
    >>> [(value, os.path.basename(where)) for value, where in checkpoint_records(work.name)]
    [(True, 'bert_model.ckpt')]
    >>> checkpoint_records(os.path.join(work.name, "nothing here"))
    []
    """
    try:
        located = detect.locate(path)
        return recorded(located, detect.open_source(located))
    except (CheckpointError, configs.ConfigError):
        return []


def resolve_causal_attention(config, flag=None, config_file="the config", checkpoints=(), flag_names=FLAG_NAMES):
    """`config` with the left-only constraint decided by everything that records it: `config` (--bert_config_file),
    `flag` (--causal_attention) and each checkpoint the run reads its weights from (its bert_config.json and the
    marker inside it). They must agree; the constraint holds where any records it.

    Args:
        config: the `BertConfig` of --bert_config_file.
        flag: --causal_attention: True, False or None (not given).
        config_file: the config's file, for messages.
        checkpoints: paths of checkpoints the weights may come from (--init_checkpoint, the output directory); None
            and paths with no checkpoint are passed over.
        flag_names: how messages name the flag set to True and to False.

    Returns:
        `config` with `causal_attention` True (left-to-right) or None (bidirectional).

    Raises:
        ConfigError: two of them disagree; the message names both.

    Example:
    >>> import tempfile
    >>> from official_bert import BertConfig, BertEncoder, save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> bidirectional = BertConfig.from_preset("tiny", vocab_size=50, num_hidden_layers=1)
    >>> _ = save_checkpoint(BertEncoder(bidirectional.replace(causal_attention=True)), work.name)
    >>> resolve_causal_attention(bidirectional, checkpoints=[work.name]).causal_attention
    True
    >>> resolve_causal_attention(bidirectional, False, checkpoints=[work.name])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.configs.ConfigError: --nocausal_attention contradicts .../bert_config.json, which records a ...
    """
    given = [] if flag is None else [(bool(flag), flag_names[0] if flag else flag_names[1])]
    if config.causal_attention is not None:
        given.append((config.causal_attention, config_file))
    found = [record for path in checkpoints if path for record in checkpoint_records(path)]
    records = given + found
    for i, (value, where) in enumerate(records):
        for other, other_where in records[:i]:
            if other != value:
                raise configs.ConfigError(_contradiction(other_where, value, where, flag is not None and
                                                         other_where in flag_names, flag_names))
    causal = any(value for value, _ in records)
    if causal and not config.causal_attention and flag is None:
        logging.info("%s records a left-to-right model: computing it left-only (causal attention), as it was "
                     "pretrained", next(where for value, where in found if value))
    return config.replace(causal_attention=causal or None)


def refuse_left_to_right(config, path):
    """Raises CheckpointError when `config` (resolved with `resolve_causal_attention`) is a left-to-right model's:
    its head predicts the token after each position from the left only, so it fills no blank from both sides.
    The one check of fill_mask.py and `MaskedLM.from_checkpoint`.

    Args:
        config: the model's resolved `BertConfig`.
        path: the checkpoint, for the message.

    Example:
    >>> refuse_left_to_right(configs.BertConfig.from_preset("tiny", causal_attention=True), "ltr/")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.checkpoints.source.CheckpointError: ltr/: a left-to-right model (...--objective=ltr): fill-in-...
    """
    if config.causal_attention:
        raise CheckpointError(f"{path}: a left-to-right model (run_pretraining.py --objective=ltr): fill-in-the-blank "
                              "needs a masked LM's checkpoint (--objective=mlm_nsp or mlm)")


def check_model(model_causal, records):
    """Raises CheckpointError when a checkpoint's `records` contradict the model it is being loaded into.

    Args:
        model_causal: whether the model computes left-only.
        records: from `recorded`.
    """
    for value, where in records:
        if value != bool(model_causal):
            raise CheckpointError(f"{where} records {describe(value)}, but the model being loaded is "
                                  f"{describe(bool(model_causal)).split(' (')[0]}: build it with "
                                  f"causal_attention={value} (the tools follow the checkpoint)")


def _contradiction(first, value, where, first_is_flag, flag_names):
    if first_is_flag:
        advice = ("leave the flag out to fine-tune the model" if first in FLAG_NAMES else
                  f"pass {flag_names[0]} to train the model" if value else "train the model with the objective")
        return f"{first} contradicts {where}, which records {describe(value)}: {advice} as it was pretrained"
    return (f"{first} records {describe(not value)}, but {where} records {describe(value)}: the weights decide how "
            "they compute; pass the checkpoint's own bert_config.json")
