"""`distill`: `finetuning.run_task` for a `DistillationTask`, with the student's config and first weights prepared.

run_task takes a config file and an init checkpoint; a student's come from its `Student` spec instead (a preset, a
pretrained small checkpoint, every other layer of the teacher). `distill` checks them and the vocabulary, writes the
student's config and, for layers copied from the teacher, its first weights into a scratch directory, and hands run_task
the settings that name them: the lifecycle (lock, features, training, resume, evaluation, outputs, export) stays
run_task's. A resumed run (--output_dir holds a checkpoint) copies no layers: its checkpoint is where it starts.
"""

import dataclasses
import os
import tempfile

import tensorflow as tf

from official_bert.checkpoints import case, detect
from official_bert.distillation.errors import DistillationError
from official_bert.distillation.student import Student, check_same_vocabulary, write_layers_from_teacher
from official_bert.finetuning.driver import run_task


def distill(task, settings, student=Student(), watch=None):
    """Distils `task.teacher` into a student as `student` says, on `task`'s data, with `settings` (its
    bert_config_file and init_checkpoint are the student's, set here; vocab_file defaults to the teacher's).

    Args:
        task: a `DistillationTask`.
        settings: the `FineTuningSettings`.
        student: the `Student`.
        watch: as `run_task`'s.

    Returns:
        the result tables written, as `run_task`.

    Raises:
        official_bert.errors.Error: bad settings, teacher, student or data (nothing is written then).
    """
    teacher = task.teacher
    case.check_case(settings.do_lower_case, teacher.located, f"--teacher={teacher.path}")
    if settings.do_lower_case is None:  # not given: the teacher's casing, which its vocabulary was made for
        settings = dataclasses.replace(settings, do_lower_case=case.own_casing(teacher.located))
    if settings.spm_model_file:
        raise DistillationError("--spm_model_file: the student reads the teacher's vocabulary (its vocab.txt)")
    if settings.vocab_file:
        check_same_vocabulary(settings.vocab_file, teacher.vocab_file, f"--vocab_file={settings.vocab_file}")
    if student.init_checkpoint:
        vocab = detect.locate(student.init_checkpoint).vocab_file
        if vocab:
            check_same_vocabulary(vocab, teacher.vocab_file,
                                  f"--student_init_checkpoint={student.init_checkpoint}'s {vocab}")
    config = student.config(teacher.config)
    with tempfile.TemporaryDirectory() as scratch:
        config_file = student.config_file or os.path.join(scratch, "bert_config.json")
        if not student.config_file:
            config.to_json_file(config_file)
        init_checkpoint = student.init_checkpoint
        if student.layers_from_teacher and not tf.train.latest_checkpoint(settings.output_dir):
            init_checkpoint = write_layers_from_teacher(teacher, config, os.path.join(scratch, "student"))
        settings = dataclasses.replace(settings, bert_config_file=config_file, init_checkpoint=init_checkpoint,
                                       vocab_file=settings.vocab_file or teacher.vocab_file)
        return run_task(task, settings, watch)
