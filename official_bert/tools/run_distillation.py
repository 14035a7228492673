"""Distils a fine-tuned BERT classifier (the teacher) into a smaller one (the student) on the task's data, and
optionally on unlabelled text the teacher labels; the student gets run_classifier.py's outputs and export.

    python run_distillation.py --teacher=runs/era --train_file=train.tsv --dev_file=dev.tsv \
        --text_a_column=sentence --student_preset=tiny --unlabeled_file=corpus.txt --output_dir=runs/era-tiny \
        --do_train --do_eval --num_train_epochs=3 --learning_rate=1e-4 [--export_dir=serving/era-tiny]

The teacher (--teacher) is a run_classifier.py output directory (its --keep_best checkpoint if it kept one, else its
newest), a fine-tuned classifier's checkpoint with its bert_config.json and vocab.txt, or its export (--export_dir:
its model.keras, vocabulary and labels); the task is given as to
run_classifier.py (--task_name with --data_dir, or your own --train_file / --dev_file / --test_file, with the same
column and label flags); a teacher trained on own files brings its labels.json: the kind (single-label, multi-label,
regression), the label order and the label separator are the teacher's, and data or flags that contradict them are
refused. The student reads the teacher's vocabulary (a --vocab_file that differs is refused).

The student: --student_preset (tiny, mini, small, medium, base, large: a released shape with the teacher's
vocabulary, segments and positions) from random weights; or --student_init_checkpoint (a pretrained small BERT with
the teacher's vocabulary); or --student_layers_from_teacher (DistilBERT's start: the teacher's embeddings, pooler and
layers 0, 2, 4, ...; the student's shape is the preset's, or the teacher's with half its layers, and must be the
teacher's but for the depth). --bert_config_file gives the student's shape as a file instead of a preset.

The loss (Hinton et al. 2015, DistilBERT): alpha * soft + (1 - alpha) * hard, soft = the cross-entropy against the
teacher's probabilities at --temperature times its square (multi-label: a sigmoid per label; regression: the squared
difference from the teacher's score), hard = the task's loss on the label; a row of --unlabeled_file has the soft
loss alone. Defaults --alpha=0.5 --temperature=2, DistilBERT's. --intermediate_loss_weight adds TinyBERT's
intermediate-layer losses (embeddings, hidden states, attention scores; the teacher then runs at every step).
The teacher's outputs are computed once, in batches, and cached beside the features (feature_cache/*.teacher-<key>.npz,
keyed by the features and the teacher's config and weights), so an epoch costs the student alone and a rerun reuses
them.

Outputs in --output_dir, as run_classifier.py's: checkpoints, eval_results.txt/.json (the student's figures under
the task's names, the teacher's as teacher_*, and eval_teacher_agreement: the share of dev examples where the
student predicts the teacher's class — for multi-label its set of labels at probability 0.5; regression:
eval_teacher_pearson and eval_teacher_mse), labels.json, thresholds.json, predictions, --export_dir and
--export_tflite_dir; TextClassifier.from_checkpoint(--output_dir) loads the student. Rerunning the same command after
a kill resumes from the newest checkpoint. Exit status 1 with a one-line message on bad flags or data.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags

from official_bert.classification.own_files import Columns
from official_bert.configs import BertConfig
from official_bert.distillation import DistillationError, DistillationTask, Student, Teacher, UnlabeledText, distill
from official_bert.distillation.losses import DEFAULT_ALPHA, DEFAULT_TEMPERATURE
from official_bert.io.table_files import FORMATS
from official_bert.tools import run_classifier  # the task's flags (--task_name, --train_file, ...) and its task
from official_bert.tools.flag_kinds import INPUT_FILE, MAX_BATCH_SIZE, MODEL, define_integer, define_path, define_real
from official_bert.tools.flags import finetuning_settings_from_flags

FLAGS = flags.FLAGS

define_path("teacher", None, "The fine-tuned classifier to distil: a run_classifier.py --output_dir, a "
            "checkpoint with its bert_config.json and vocab.txt beside it, or its --export_dir (the newest "
            "version, or the version named).", MODEL)
flags.DEFINE_enum("student_preset", None, BertConfig.preset_names(), "The student's shape, a released one (tiny: "
                  "2 layers of 128, mini: 4 of 256, small: 4 of 512, ...), with the teacher's vocabulary, segments and "
                  "positions; from random weights unless --student_layers_from_teacher.")
define_path("student_init_checkpoint", None, "A pretrained (small) BERT the student starts from, with the "
            "teacher's vocabulary; its bert_config.json gives the student's shape.", MODEL)
flags.DEFINE_bool("student_layers_from_teacher", False, "Start the student from the teacher's embeddings, pooler and "
                  "layers 0, 2, 4, ... (DistilBERT's initialisation); its widths must be the teacher's. Without "
                  "--student_preset the student is the teacher with half its layers.")
define_real("alpha", DEFAULT_ALPHA, "A labelled example's loss: alpha * soft + (1 - alpha) * hard "
            "(DistilBERT's 0.5); an unlabelled one has the soft loss alone.", 0, 1)
define_real("temperature", DEFAULT_TEMPERATURE, "The soft targets' temperature T (the soft loss is scaled by "
            "T^2; DistilBERT's 2). Not used for regression.", 0, 100, open_lower=True)
define_path("unlabeled_file", None, "Text of the task's domain without labels, which the teacher labels and "
            "the student learns from: CSV, TSV or JSON Lines with the --text_a_column (and --text_b_column) "
            "of the task, or plain text, one text per line (.txt).", INPUT_FILE)
flags.DEFINE_enum("unlabeled_format", None, list(FORMATS), "--unlabeled_file's format; default: from its extension.")
define_real("intermediate_loss_weight", 0.0, "TinyBERT's intermediate-layer losses (the student's embeddings, "
            "hidden states through a learned projection where the widths differ, and attention scores, "
            "against the teacher's layers 1·N/M, 2·N/M, ...), times this weight, added to the loss; 0: none. "
            "The teacher then runs beside the student at every step.", 0, 1000)
define_integer("teacher_batch_size", 64, "Records per batch when the teacher computes its outputs.", 1, MAX_BATCH_SIZE,
               affects_result=False)

_SWEEP_FLAGS = ("sweep", "train_batch_sizes", "learning_rates", "epochs_list", "num_restarts", "seeds")


def main():
    given = [f"--{name}" for name in ("init_checkpoint", *_SWEEP_FLAGS) if FLAGS[name].present]
    if given:
        raise DistillationError(f"{given[0]} is not a distillation flag: the student starts from --student_preset, "
                                "--student_init_checkpoint or --student_layers_from_teacher, and one run is one "
                                "student (no sweep)" if given[0] != "--init_checkpoint" else
                                "--init_checkpoint: the student starts from --student_init_checkpoint (a pretrained "
                                "small BERT), --student_preset or --student_layers_from_teacher")
    teacher = Teacher(FLAGS.teacher)
    unlabeled = UnlabeledText(FLAGS.unlabeled_file, Columns(FLAGS.text_a_column, FLAGS.text_b_column),
                              FLAGS.unlabeled_format) if FLAGS.unlabeled_file else None
    task = DistillationTask(run_classifier.task_from_flags(), teacher, alpha=FLAGS.alpha,
                            temperature=FLAGS.temperature, unlabeled=unlabeled,
                            teacher_batch_size=FLAGS.teacher_batch_size,
                            intermediate_loss_weight=FLAGS.intermediate_loss_weight)
    student = Student(FLAGS.student_preset, FLAGS.bert_config_file, FLAGS.student_init_checkpoint,
                      FLAGS.student_layers_from_teacher)
    distill(task, finetuning_settings_from_flags(), student, watch=cli.watch)


def run():
    """The tool as a command (`python run_distillation.py`, or the console script `bert-distill`)."""
    cli.run(main, required_flags=["teacher", "output_dir"])


if __name__ == "__main__":
    run()
