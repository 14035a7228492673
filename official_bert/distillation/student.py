"""The student: its shape (a preset, a config file, a pretrained small checkpoint's, or the teacher's with half its
layers) and where its weights start (random, that checkpoint, or every other layer of the teacher, as DistilBERT
initialises its student).

DistilBERT's initialisation takes the teacher's embeddings and one layer out of two; the shapes must be the
teacher's but for the depth. Here the student's layer i is the teacher's layer 2i, its embeddings and pooler are
the teacher's, and its classifier head starts new (as a task's head does on a pretrained encoder).
"""

import dataclasses
import math
import re

from official_bert.checkpoints import detect, save_checkpoint
from official_bert.configs import BertConfig, ConfigError
from official_bert.distillation.errors import DistillationError
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.text.tokenization import load_vocab

# What must be the teacher's for its weights to fit the student, but for the depth.
_COPY_SHAPES = ("hidden_size", "intermediate_size", "num_attention_heads", "vocab_size", "type_vocab_size",
                "max_position_embeddings")
_LAYER = re.compile(r"^transformer_layer_(\d+)/")


@dataclasses.dataclass(frozen=True)
class Student:
    """Where the student's shape and first weights come from (the flags of the same names).

    Args:
        preset: --student_preset: a `BertConfig.from_preset` shape (tiny, mini, small, ...), with the teacher's
            vocabulary size, segments and positions.
        config_file: --bert_config_file: the student's config.
        init_checkpoint: --student_init_checkpoint: a pretrained checkpoint (its config beside it, unless
            config_file) that the student starts from; its vocabulary must be the teacher's.
        layers_from_teacher: --student_layers_from_teacher: start from the teacher's embeddings, pooler and layers
            0, 2, 4, ...; the shape is the preset's or config file's, else the teacher's with half its layers.

    Example:
    >>> teacher = BertConfig.from_preset("small", vocab_size=100)
    >>> Student(preset="tiny").config(teacher).num_hidden_layers, Student(layers_from_teacher=True).config(
    ...     teacher).num_hidden_layers
    (2, 2)
    >>> Student(preset="tiny", layers_from_teacher=True).config(teacher)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.distillation.errors.DistillationError: --student_layers_from_teacher: the student's hidden size 128 ...
    """

    preset: str = None
    config_file: str = None
    init_checkpoint: str = None
    layers_from_teacher: bool = False

    def config(self, teacher_config):
        """The student's `BertConfig`, checked against the teacher's `teacher_config` for layer copying.

        Raises:
            DistillationError: no shape given, two sources of one, or shapes that cannot copy layers.
        """
        if self.preset and (self.config_file or self.init_checkpoint):
            other = "--bert_config_file" if self.config_file else "--student_init_checkpoint"
            raise DistillationError(f"--student_preset={self.preset} and {other}: give the student's shape once")
        if self.init_checkpoint and self.layers_from_teacher:
            raise DistillationError("--student_init_checkpoint and --student_layers_from_teacher: the student starts "
                                    "from one or the other")
        try:
            if self.config_file:
                config = BertConfig.from_json_file(self.config_file)
            elif self.init_checkpoint:
                located = detect.locate(self.init_checkpoint)
                if located.config_file is None:
                    raise DistillationError(f"--student_init_checkpoint={self.init_checkpoint}: no bert_config.json "
                                            "beside it; give --bert_config_file")
                config = BertConfig.from_json_file(located.config_file)
            elif self.preset:
                config = BertConfig.from_preset(
                    self.preset, vocab_size=teacher_config.vocab_size, type_vocab_size=teacher_config.type_vocab_size,
                    max_position_embeddings=teacher_config.max_position_embeddings,
                    causal_attention=teacher_config.causal_attention)
            elif self.layers_from_teacher:
                config = teacher_config.replace(num_hidden_layers=math.ceil(teacher_config.num_hidden_layers / 2))
            else:
                raise DistillationError("the student's shape is missing: give --student_preset (tiny, mini, small, "
                                        "...), --bert_config_file, --student_init_checkpoint or "
                                        "--student_layers_from_teacher")
        except ConfigError as e:
            raise DistillationError(str(e)) from None
        if self.layers_from_teacher:
            check_layer_copy(teacher_config, config)
        return config


def check_layer_copy(teacher_config, student_config):
    """Raises DistillationError unless the student can start from every other layer of the teacher: the same widths,
    heads, vocabulary, segments and positions, and at most half the teacher's layers (rounded up).

    Example:
    >>> teacher = BertConfig.from_preset("tiny", vocab_size=10, num_hidden_layers=4)
    >>> check_layer_copy(teacher, teacher.replace(num_hidden_layers=3))
    Traceback (most recent call last):
    ...
    official_bert.distillation.errors.DistillationError: --student_layers_from_teacher: a student of 3 layers, but \
every other layer of the teacher's 4 gives 2 at most
    """
    if student_config.hidden_size != teacher_config.hidden_size:
        raise DistillationError(f"--student_layers_from_teacher: the student's hidden size {student_config.hidden_size}"
                                f" differs from the teacher's {teacher_config.hidden_size}: layers are copied between "
                                "models of one width (a wider or narrower student starts from a preset or "
                                "--student_init_checkpoint instead)")
    differences = [f"{name} {getattr(student_config, name)} (the teacher's {getattr(teacher_config, name)})"
                   for name in _COPY_SHAPES if getattr(student_config, name) != getattr(teacher_config, name)]
    if differences:
        raise DistillationError(f"--student_layers_from_teacher: the student's {', '.join(differences)}: its weights "
                                "would not fit; only the number of layers may differ")
    most = math.ceil(teacher_config.num_hidden_layers / 2)
    if student_config.num_hidden_layers > most:
        raise DistillationError(f"--student_layers_from_teacher: a student of {student_config.num_hidden_layers} "
                                f"layers, but every other layer of the teacher's {teacher_config.num_hidden_layers} "
                                f"gives {most} at most")


def copy_every_other_layer(teacher_encoder, student_encoder):
    """Assigns the teacher's embeddings, pooler and layers 0, 2, 4, ... to the student's embeddings, pooler and
    layers 0, 1, 2, ... (`check_layer_copy` first).

    Args:
        teacher_encoder, student_encoder: `BertEncoder`s.

    Example:
    >>> import numpy as np
    >>> teacher = BertEncoder(BertConfig.from_preset("tiny", vocab_size=10, num_hidden_layers=4))
    >>> student = BertEncoder(BertConfig.from_preset("tiny", vocab_size=10, num_hidden_layers=2))
    >>> copy_every_other_layer(teacher, student)
    >>> bool(np.array_equal(student.transformer_layers[1].weights[0].numpy(),
    ...                     teacher.transformer_layers[2].weights[0].numpy()))
    True
    """
    check_layer_copy(teacher_encoder.config, student_encoder.config)
    sources = {weight.path: weight for weight in teacher_encoder.weights}
    for weight in student_encoder.weights:
        source = _LAYER.sub(lambda match: f"transformer_layer_{2 * int(match[1])}/", weight.path)
        weight.assign(sources[source])


def write_layers_from_teacher(teacher, config, directory):
    """Saves a student encoder of `config` holding every other layer of `teacher` (a `distillation.Teacher`) as an
    official_bert checkpoint in `directory`, with the teacher's vocabulary; returns the directory."""
    student = BertEncoder(config)
    copy_every_other_layer(teacher.model().encoder, student)
    save_checkpoint(student, directory, vocab_file=teacher.vocab_file)
    return directory


def check_same_vocabulary(vocab_file, teacher_vocab_file, what):
    """Raises DistillationError unless `vocab_file` lists the teacher's tokens in the teacher's order.

    Args:
        vocab_file: the student's vocabulary.
        teacher_vocab_file: the teacher's.
        what: how the message names `vocab_file` (e.g. "--vocab_file=v.txt").

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> for name, words in (("a.txt", "[UNK]\\nhi\\n"), ("b.txt", "[UNK]\\nho\\n")):
    ...     _ = open(os.path.join(work, name), "w").write(words)
    >>> check_same_vocabulary(os.path.join(work, "b.txt"), os.path.join(work, "a.txt"), "--vocab_file=b.txt")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.distillation.errors.DistillationError: --vocab_file=b.txt is not the teacher's vocabulary (...a.txt): \
line 2 is 'ho' there, 'hi' in the teacher's; the student must read the teacher's token ids
    """
    tokens, teacher_tokens = list(load_vocab(vocab_file)), list(load_vocab(teacher_vocab_file))
    if tokens == teacher_tokens:
        return
    line = next((i for i, (a, b) in enumerate(zip(tokens, teacher_tokens)) if a != b), None)
    where = (f"line {line + 1} is {tokens[line]!r} there, {teacher_tokens[line]!r} in the teacher's" if line is not None
             else f"{len(tokens)} tokens there, {len(teacher_tokens)} in the teacher's")
    raise DistillationError(f"{what} is not the teacher's vocabulary ({teacher_vocab_file}): {where}; the student "
                            "must read the teacher's token ids")
