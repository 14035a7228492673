"""Distillation: a fine-tuned classifier's answers from a smaller model (bert-distill, run_distillation.py).

    teacher = Teacher("runs/era")                      # a run_classifier.py output directory, or a checkpoint
    task = DistillationTask(OwnFilesTask({"train": "train.tsv", "dev": "dev.tsv"}), teacher,
                            unlabeled=UnlabeledText("corpus.txt"))
    distill(task, FineTuningSettings("runs/era-tiny", None, do_train=True, do_eval=True), Student(preset="tiny"))

- `teacher.Teacher`: the teacher found, checked and identified by content; its outputs computed once, cached
  beside the features;
- `student.Student`: the student's shape and first weights (a preset, a pretrained checkpoint, every other layer
  of the teacher);
- `losses.DistillationLoss`: soft targets at a temperature (T²-scaled) mixed with the hard labels;
- `task.DistillationTask`: the wrapped classification task as `finetuning.run_task` drives it;
- `driver.distill`: run_task with the student's config and first weights prepared.
"""

from official_bert.distillation.driver import distill
from official_bert.distillation.errors import DistillationError
from official_bert.distillation.losses import DistillationLoss
from official_bert.distillation.student import Student
from official_bert.distillation.task import DistillationTask, UnlabeledText
from official_bert.distillation.teacher import Teacher

__all__ = ["DistillationError", "DistillationLoss", "DistillationTask", "Student", "Teacher", "UnlabeledText",
           "distill"]
