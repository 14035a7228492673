"""What a checkpoint is a model of: a sentence classifier, a token tagger, a span labeler, a pretrained BERT, ...

The heads of run_classifier.py and run_ner.py are both a Dense layer named `classifier`, so a checkpoint's tensors
cannot tell a 3-class classifier from a 3-tag tagger. So the writers record it: a training run's directory
(`run_task`, run_pretraining) and `save_checkpoint` write `model_kind.json` with the task model's class; a Hugging
Face directory's config.json names it as `architectures`. Loaders that need one kind (a distillation teacher,
`TextClassifier.from_checkpoint`) refuse another in one line, and `load_checkpoint` loads another task's head into
no model (the encoder alone is taken over). A checkpoint that records nothing (Google's, an older run's) is
taken as it is.
"""

import json
import os

import tensorflow as tf

from official_bert.checkpoints.source import CheckpointError
from official_bert.io import write_text

RECORD_NAME = "model_kind.json"
# Each task model's class, as the user knows it.
DESCRIPTIONS = {
    "BertClassifier": "a sentence classifier (run_classifier.py, TextClassifier)",
    "BertTokenClassifier": "a token tagger (run_ner.py)",
    "BertSpanLabeler": "a span labeler (run_squad.py)",
    "BertMultipleChoice": "a multiple-choice model (run_classifier.py --task_name=swag)",
    "BertPretrainer": "a pretrained BERT with its masked-LM and next-sentence heads (run_pretraining.py)",
    "BertLanguageModel": "a masked language model",
    "BertEncoder": "an encoder without a task head",
}
# Hugging Face's classes for the same models (config.json's "architectures").
_HUGGING_FACE = {"BertForSequenceClassification": "BertClassifier", "BertForTokenClassification": "BertTokenClassifier",
                 "BertForQuestionAnswering": "BertSpanLabeler", "BertForMultipleChoice": "BertMultipleChoice",
                 "BertForPreTraining": "BertPretrainer", "BertForMaskedLM": "BertLanguageModel",
                 "BertModel": "BertEncoder"}


def kind_of(model):
    """The kind of a Keras model: the task model class it is or derives from (`TextClassifier` is a
    `BertClassifier`), an embedding model's is `BertEncoder`'s; another class, its own name.

    Example:
    >>> from official_bert import BertConfig, BertEncoder, BertPretrainer
    >>> kind_of(BertPretrainer(BertEncoder(BertConfig.from_preset("tiny", vocab_size=9, num_hidden_layers=1))))
    'BertPretrainer'
    """
    for cls in type(model).__mro__:
        if cls.__name__ in DESCRIPTIONS:
            return cls.__name__
    return "BertEncoder" if type(model).__name__ == "TextEmbedder" else type(model).__name__


def record(directory, model):
    """Writes `directory`/model_kind.json for `model` (a task model, or its kind's name)."""
    kind = model if isinstance(model, str) else kind_of(model)
    write_text(os.path.join(directory, RECORD_NAME), json.dumps({"model": kind}) + "\n")


def recorded(located):
    """The kind a located checkpoint records (beside it, or in the run directory above a best-<step>/), or None.

    Args:
        located: a `detect.Located`.

    Example:
    >>> import tempfile
    >>> from official_bert import BertConfig, BertEncoder, BertTokenClassifier
    >>> from official_bert.checkpoints import detect, save_checkpoint
    >>> work = tempfile.TemporaryDirectory()
    >>> model = BertTokenClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=9, num_hidden_layers=1)), 3)
    >>> _ = save_checkpoint(model, work.name)
    >>> recorded(detect.locate(work.name))
    'BertTokenClassifier'
    """
    directory = located.directory
    for candidate in (directory, os.path.dirname(directory.rstrip("/"))):
        path = os.path.join(candidate, RECORD_NAME)
        if candidate and tf.io.gfile.exists(path):
            try:
                with tf.io.gfile.GFile(path, "rb") as f:
                    return json.loads(f.read().decode("utf-8")).get("model")
            except (ValueError, AttributeError, tf.errors.OpError):
                raise CheckpointError(f"{path}: unreadable (expected {{\"model\": <class>}})") from None
    if located.config_file and os.path.basename(located.config_file) == "config.json":
        with tf.io.gfile.GFile(located.config_file, "rb") as f:
            architectures = json.loads(f.read().decode("utf-8")).get("architectures") or []
        return next((_HUGGING_FACE[a] for a in architectures if a in _HUGGING_FACE), None)
    return None


# Kinds whose heads are the same layers: a pretraining checkpoint's masked-LM head serves a masked language model.
_SHARED_HEADS = ({"BertPretrainer", "BertLanguageModel"},)


def same_heads(checkpoint_kind, model_kind):
    """Whether a checkpoint of `checkpoint_kind` (None: not recorded) may load its heads into a `model_kind`.

    Example:
    >>> same_heads("BertTokenClassifier", "BertClassifier"), same_heads(None, "BertClassifier")
    (False, True)
    """
    return (checkpoint_kind in (None, model_kind)
            or any({checkpoint_kind, model_kind} <= group for group in _SHARED_HEADS))


def describe(kind):
    """The kind in words.

    Example:
    >>> describe("BertTokenClassifier")
    'a token tagger (run_ner.py)'
    """
    return DESCRIPTIONS.get(kind, f"a {kind}")


def check(located, expected, name):
    """Refuses a checkpoint that records another kind than `expected` (a class name or a tuple of them).

    Args:
        located: the `detect.Located` checkpoint.
        expected: the kinds the caller can use.
        name: how the user named the checkpoint (`--teacher=runs/era`, `path`), for the message.

    Raises:
        CheckpointError: naming both kinds.
    """
    kind = recorded(located)
    expected = (expected,) if isinstance(expected, str) else tuple(expected)
    if kind is not None and kind not in expected:
        raise CheckpointError(f"{name} is {describe(kind)}, not {describe(expected[0])}")
