"""Assigning a checkpoint's tensors to a model's variables: all checks first, then every assignment."""

import dataclasses

from official_bert.layers import activations
from official_bert.checkpoints import names
from official_bert.checkpoints.source import CheckpointError
from official_bert.networks.bert_encoder import BertEncoder

# Config fields that change the weights' shapes or the function they compute.
_COMPARED_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                    "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "family", "embedding_size",
                    "pad_token_id", "sinusoidal_pos_embds")
_SHOWN = 8  # names listed in a message before "..."


@dataclasses.dataclass
class LoadReport:
    """What `load_checkpoint` did.

    Args:
        format: the checkpoint's format.
        path: the file or prefix read.
        loaded: our variable paths that were assigned.
        missing: our variable paths the checkpoint does not have (left as they were, e.g. a new task head).
        unexpected: names in the checkpoint that no variable of the model took (e.g. the MLM head when
            loading into a classifier).
        skipped: names in the checkpoint that are no model weights (optimizer slots, step counters, buffers).
        warnings: messages about settings that contradict the checkpoint (do_lower_case).
        family: the member of BERT's family its config records (`BertConfig.family`: "roberta", ...), None for
            BERT.
    """

    format: str
    path: str
    loaded: list
    missing: list
    unexpected: list
    skipped: list
    warnings: list = dataclasses.field(default_factory=list)
    family: str = None

    def __str__(self):
        kind = f"{self.format} {self.family}" if self.family else self.format
        lines = [f"loaded {len(self.loaded)} variables from the {kind} checkpoint {self.path}"]
        if self.missing:
            lines.append(f"missing, left as initialized: {_listing(self.missing)}")
        if self.unexpected:
            lines.append(f"in the checkpoint but not in the model: {_listing(self.unexpected)}")
        if self.skipped:
            lines.append(f"skipped {len(self.skipped)} non-weight tensors (optimizer state, counters, buffers)")
        return "\n".join(lines + self.warnings)


def model_config(model):
    """The `BertConfig` of a BertEncoder or of the encoder inside a task model."""
    return model.config if isinstance(model, BertEncoder) else model.encoder.config


def check_config(model, checkpoint_config, config_file):
    """Raises CheckpointError listing every field where the checkpoint's config contradicts the model's.

    Args:
        model: the model being loaded.
        checkpoint_config: the `BertConfig` read from beside the checkpoint.
        config_file: its path, for the message.
    """
    ours = model_config(model)
    diffs = [f"{name}: model {getattr(ours, name)!r}, checkpoint {getattr(checkpoint_config, name)!r}"
             for name in _COMPARED_FIELDS if getattr(ours, name) != getattr(checkpoint_config, name)]
    if activations.get(ours.hidden_act) is not activations.get(checkpoint_config.hidden_act):
        diffs.append(f"hidden_act: model {ours.hidden_act!r} ({activations.get(ours.hidden_act).__name__}), "
                     f"checkpoint {checkpoint_config.hidden_act!r} "
                     f"({activations.get(checkpoint_config.hidden_act).__name__})")
    if diffs:
        raise CheckpointError(f"{config_file} does not describe the model being loaded: " + "; ".join(diffs))


def assign(model, source, heads=True):
    """Loads `source` (a `Source`) into `model`'s variables and returns a `LoadReport`.

    Nothing is assigned unless everything checks out: every shape matches; the encoder is complete (the
    pooler may be absent); the checkpoint's encoder has no parts the model lacks (more layers); at least
    one variable matches. Task and pretraining heads the checkpoint lacks are reported as missing.

    Args:
        model: a BertEncoder, BertPretrainer or task model.
        source: the opened checkpoint.
        heads: False loads the encoder alone (the checkpoint's heads are another model's).
    """
    plan, missing, mismatches, consumed = [], [], [], set()
    for variable in model.weights:
        entry = names.entry(variable.path)
        if entry and not heads and not all(names.is_encoder_name(g) for g in entry.google_names):
            entry = None
        tensors = [source.tensors.get(g) for g in entry.google_names] if entry else [None]
        if None in tensors:
            missing.append((variable.path, entry))
            continue
        expected = entry.part_shape(tuple(variable.shape))
        consumed.update(entry.google_names)
        mismatches += [f"{t.name}: checkpoint {t.file_shape}, model variable {variable.path!r} needs "
                       f"{t.file_layout(expected)}" for t in tensors if tuple(t.shape) != expected]
        plan.append((variable, entry, tensors))
    if mismatches:
        raise CheckpointError(f"{source.path}: {len(mismatches)} shape mismatch(es) with the model (does its "
                              f"config match the checkpoint's?): " + "; ".join(mismatches[:_SHOWN]))
    lacking = [f"{source.name_in_file(g)} (model variable {path!r})" for path, entry in missing if entry
               for g in entry.google_names if g not in source.tensors and names.is_encoder_name(g)
               and g not in names.OPTIONAL_ENCODER_NAMES]
    if lacking:
        raise CheckpointError(f"{source.path}: the checkpoint lacks {len(lacking)} encoder variable(s) of the "
                              f"model (a model with more layers than the checkpoint, or not a BERT checkpoint?): "
                              + _listing(lacking))
    unexpected = [g for g in source.tensors if g not in consumed]
    extra = [source.tensors[g].name for g in unexpected if names.is_encoder_name(g)]
    if extra:
        raise CheckpointError(f"{source.path}: the checkpoint's encoder has variables the model lacks (more "
                              f"layers than the model's config?): " + _listing(extra))
    if not plan:
        raise CheckpointError(f"{source.path}: no variable of the model is in the checkpoint")
    # Read everything before assigning anything, so a truncated file leaves the model untouched.
    values = [(variable, entry.join([t.read() for t in tensors])) for variable, entry, tensors in plan]
    for variable, value in values:
        variable.assign(value.astype(variable.dtype))
    return LoadReport(format=source.format, path=source.path, loaded=[v.path for v, _ in values],
                      missing=[path for path, _ in missing],
                      unexpected=[source.tensors[g].name for g in unexpected] + source.unknown,
                      skipped=list(source.skipped))


def _listing(items):
    return ", ".join(items[:_SHOWN]) + (f", ... ({len(items)} in all)" if len(items) > _SHOWN else "")
