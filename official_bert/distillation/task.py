"""`DistillationTask`: a classification task (`ClassificationTask` or `OwnFilesTask`) whose student learns from a
teacher's outputs as well as from the labels, driven by `finetuning.run_task` like any other task.

What it changes of the task it wraps: the training stream carries the teacher's logits beside each label (computed
once and cached, `Teacher.outputs`), and unlabelled text the teacher labels (`UnlabeledText`); the loss is
`DistillationLoss` (plus TinyBERT's intermediate-layer losses with a weight: `intermediate.py`); the dev results
gain the teacher's figures (teacher_*) and how often the student agrees with it. Everything else — features and
their cache, evaluation, labels.json, thresholds.json, predictions, the export — is the wrapped task's.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from official_bert.classification import validation
from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import InputExample
from official_bert.classification.own_files import LABEL_FILE, MULTI_LABEL, REGRESSION, SINGLE_LABEL, Columns
from official_bert.classification.processor import DataProcessor
from official_bert.classification.records import batch_parser
from official_bert.classification.windows import document_outputs
from official_bert.configs import ConfigError
from official_bert.distillation.errors import DistillationError
from official_bert.distillation.intermediate import FROZEN_STUDENT, IntermediateLayerDistillation
from official_bert.distillation.losses import DEFAULT_ALPHA, DEFAULT_TEMPERATURE, DistillationLoss, pack_targets
from official_bert.finetuning.stream import TrainingRecords
from official_bert.finetuning.task import FineTuningTask
from official_bert.io.table_files import (TEXT_COLUMN, TableFileError, check_table_file, describe_columns, read_columns,
                                          read_rows, table_format)
from official_bert.tasks.classification import has_text_b
from official_bert.tasks.own_files import OwnFilesTask

UNLABELED = "unlabeled"  # the split of the unlabelled text, in the feature cache's file names
_MAX_SHUFFLE_BUFFER = 100_000


@dataclasses.dataclass(frozen=True)
class UnlabeledText:
    """Text of the task's domain without labels, which the teacher labels (--unlabeled_file).

    Args:
        path: a CSV, TSV, JSON Lines or plain-text file (one text per line), as `io.table_files` reads them.
        columns: the `Columns` whose text_a (and text_b, for a pair task) hold the texts.
        input_format: one of `io.table_files.FORMATS`, or None for the extension's.

    Example:
    >>> UnlabeledText("sotu.txt").input_format is None
    True
    """

    path: str
    columns: Columns = Columns()
    input_format: str = None

    def text_columns(self):
        """The columns of the text (and of the second text): a plain-text file's one, whatever the task's."""
        if table_format(self.path, self.input_format) == "text":
            return [TEXT_COLUMN]
        return [name for name in (self.columns.text_a, self.columns.text_b) if name]


class WithUnlabeled(DataProcessor):
    """A task's processor with one more split, "unlabeled": the rows of an `UnlabeledText`, each with the task's
    placeholder label (never used: the teacher's outputs are its targets).

    Args:
        processor: the task's DataProcessor.
        unlabeled: the `UnlabeledText`.

    Example:
    >>> import os, tempfile
    >>> from official_bert.classification import get_processor
    >>> work = tempfile.mkdtemp()
    >>> _ = open(os.path.join(work, "more.txt"), "w").write("a fine film\\n\\na dull one\\n")
    >>> processor = WithUnlabeled(get_processor("sst-2", work), UnlabeledText(os.path.join(work, "more.txt")))
    >>> [(e.text_a, e.label) for e in processor.get_examples("unlabeled")]
    [('a fine film', '0'), ('a dull one', '0')]
    """

    def __init__(self, processor, unlabeled):
        super().__init__(processor.task_name, processor.splits + (UNLABELED,), processor.label_list,
                         processor.num_choices, processor.leaderboard_files)
        self.processor, self.unlabeled = processor, unlabeled
        self.skipped_rows = processor.skipped_rows
        self.multi_label = processor.multi_label

    @property
    def placeholder_label(self):
        return self.processor.placeholder_label

    def get_examples(self, split):
        return super().get_examples(split) if split == UNLABELED else self.processor.get_examples(split)

    def data_files(self, split):
        return [self.unlabeled.path] if split == UNLABELED else self.processor.data_files(split)

    def cache_settings(self):
        return {**self.processor.cache_settings(), UNLABELED: {"columns": dataclasses.asdict(self.unlabeled.columns),
                                                               "input_format": self.unlabeled.input_format}}

    def _read(self, split):
        path = self.unlabeled.path
        if not tf.io.gfile.exists(path):
            raise DistillationError(f"--unlabeled_file={path}: file not found")
        names = self.unlabeled.text_columns()
        examples = []
        for row_number, row in read_rows(path, self.unlabeled.input_format, names):
            where = f"{path}, row {row_number}"
            texts = [validation.text(row[name], f"{where}, column {name!r}") for name in names]
            if not all(text.strip() for text in texts):
                raise ClassificationDataError(f"{where}: an empty text")
            examples.append(InputExample(f"{UNLABELED}-{row_number}", texts[0], texts[1] if len(texts) > 1 else None,
                                         self.placeholder_label))
        return examples


class DistillationTask(FineTuningTask):
    """Distils `teacher` into the student `run_task` builds, on `task`'s data (and `unlabeled` text).

    Args:
        task: the `ClassificationTask` or `OwnFilesTask` the teacher was fine-tuned on (its labels in its order).
        teacher: the `distillation.Teacher`.
        alpha: a labelled example's soft loss share (`DistillationLoss`).
        temperature: the soft targets' temperature.
        unlabeled: an `UnlabeledText`, or None.
        teacher_batch_size: records per batch when the teacher computes its outputs.
        intermediate_loss_weight: TinyBERT's intermediate-layer losses' weight (`distillation.intermediate`);
            0 leaves them out (the teacher then runs once, its outputs cached, instead of beside every step).

    Example:
    >>> from official_bert.tasks import ClassificationTask
    >>> task = DistillationTask(ClassificationTask("mrpc", "glue/MRPC"), teacher=None)
    >>> task.name, task.metric, task.alpha, task.temperature
    ('mrpc', 'eval_f1', 0.5, 2.0)
    """

    def __init__(self, task, teacher, alpha=DEFAULT_ALPHA, temperature=DEFAULT_TEMPERATURE, unlabeled=None,
                 teacher_batch_size=64, intermediate_loss_weight=0.0):
        self.task, self.teacher, self.unlabeled = task, teacher, unlabeled
        self.alpha, self.temperature, self.teacher_batch_size = alpha, temperature, teacher_batch_size
        self.intermediate_loss_weight = intermediate_loss_weight
        self.kind = None
        self.train_parts, self.teacher_dev = [], {}
        if not 0.0 <= alpha <= 1.0:
            raise DistillationError(f"--alpha={alpha}: expected the soft loss's share, between 0 and 1")
        if not temperature > 0:
            raise DistillationError(f"--temperature={temperature}: expected a positive number")
        if not intermediate_loss_weight >= 0:
            raise DistillationError(f"--intermediate_loss_weight={intermediate_loss_weight}: expected 0 (none) or a "
                                    "positive weight")

    @property
    def name(self):
        return self.task.name

    @property
    def metric(self):
        return self.task.metric

    def check(self, settings):
        if self.unlabeled and not settings.do_train:
            raise DistillationError("--unlabeled_file is training text: it needs --do_train")
        if isinstance(self.task, OwnFilesTask):
            self._check_own_files(settings)
        else:
            self.task.check(settings)
        processor = self.task.processor
        if processor.num_choices:
            raise DistillationError(f"--task_name={processor.task_name}: multiple choice is not distilled (a "
                                    "classification, multi-label or regression task is)")
        if self.intermediate_loss_weight and getattr(self.task, "freeze_encoder", False):
            raise DistillationError(FROZEN_STUDENT)
        self.kind = REGRESSION if processor.is_regression else MULTI_LABEL if processor.multi_label else SINGLE_LABEL
        teacher = self.teacher
        if teacher.kind and teacher.kind != self.kind:
            raise DistillationError(f"--teacher={teacher.path} is a {_kind(teacher.kind)} classifier (its "
                                    f"{LABEL_FILE}), the data {_kind(self.kind)}")
        if teacher.labels and processor.label_list and list(processor.label_list) != list(teacher.labels):
            raise DistillationError(f"the task's labels {', '.join(processor.label_list)} differ from the teacher's "
                                    f"{', '.join(teacher.labels)} (--teacher={teacher.path}, its {LABEL_FILE})")
        if teacher.num_outputs != processor.num_labels:
            raise DistillationError(f"--teacher={teacher.path} has {teacher.num_outputs} outputs, the task "
                                    f"{processor.num_labels} ({', '.join(processor.label_list or ['a score'])})")
        try:
            teacher.config.check_seq_length(settings.max_seq_length, f"--teacher={teacher.path}'s config")
        except ConfigError as e:
            raise DistillationError(str(e)) from None
        if self.unlabeled:
            self._check_unlabeled()

    def _check_own_files(self, settings):
        """The own files' task, its labels in the teacher's order and of the teacher's kind (labels.json)."""
        task, teacher = self.task, self.teacher
        label_settings = task.label_settings
        if not teacher.label_file:
            task.check(settings)
            return
        asked = (REGRESSION if label_settings["regression"] else MULTI_LABEL
                 if label_settings["multi_label"] or label_settings["label_separator"] else None)
        if asked and asked != teacher.kind:
            raise DistillationError(f"--teacher={teacher.path} is a {_kind(teacher.kind)} classifier (its "
                                    f"{LABEL_FILE}), but the flags ask for a {_kind(asked)} task")
        label_settings["multi_label"] = teacher.kind == MULTI_LABEL
        label_settings["regression"] = teacher.kind == REGRESSION
        if not asked:  # the teacher's kind, not the flags': a label of another kind names the teacher as the cause
            model = "model" if teacher.kind == REGRESSION else "classifier"
            label_settings["kind_source"] = (teacher.kind, f"--teacher={teacher.path} is a {_kind(teacher.kind)} "
                                                           f"{model} ({LABEL_FILE})")
        label_settings["label_separator"] = label_settings["label_separator"] or teacher.label_file.get(
            "label_separator")
        given = label_settings["label_list"]
        if isinstance(given, str):
            given = [label.strip() for label in given.split(",")]
        if given and list(given) != list(teacher.labels or []):
            raise DistillationError(f"--label_list={','.join(given)} differs from the teacher's labels "
                                    f"{', '.join(teacher.labels or ['(a score)'])} (its {LABEL_FILE})")
        if teacher.kind == REGRESSION or "train" not in task.files:
            label_settings["label_list"] = teacher.labels
            task.check(settings)
            return
        task.check(settings)  # the training file's own labels first, to name one the teacher lacks
        found = task.processor.label_list
        unknown = [label for label in found if label not in teacher.labels]
        if unknown:
            raise DistillationError(f"{task.files['train']}: label {unknown[0]!r} is not one of the teacher's labels "
                                    f"{', '.join(teacher.labels)} (--teacher={teacher.path}, its {LABEL_FILE})")
        if list(found) != list(teacher.labels):
            label_settings["label_list"] = teacher.labels
            task.check(settings)

    def _check_unlabeled(self):
        path, columns = self.unlabeled.path, self.unlabeled.columns
        if not tf.io.gfile.exists(path):
            raise DistillationError(f"--unlabeled_file={path}: file not found")
        try:
            input_format = check_table_file(path, "--unlabeled_file", self.unlabeled.input_format, "--unlabeled_format")
        except TableFileError as e:
            raise DistillationError(str(e)) from None
        pair = has_text_b(self.task.processor) if not isinstance(self.task, OwnFilesTask) else bool(
            self.task.columns.text_b)
        if pair and (input_format == "text" or not columns.text_b):
            raise DistillationError(f"--unlabeled_file={path}: the task reads sentence pairs; give a CSV, TSV or JSON "
                                    "Lines file and --text_b_column (and --text_a_column) naming its columns")
        found = read_columns(path, input_format)
        missing = [name for name in self.unlabeled.text_columns() if name not in found]
        if missing:
            raise DistillationError(f"--unlabeled_file={path}: no column {missing[0]!r} "
                                    f"({describe_columns(found, missing[0])}); name the text's with --text_a_column")

    def load(self, settings, tokenizer):
        extra = (WithUnlabeled(self.task.processor, self.unlabeled), {UNLABELED: 1}) if self.unlabeled else None
        self.task.load(settings, tokenizer, extra)
        width = settings.length_bucket_width or None
        outputs = lambda feature_file: self.teacher.outputs(feature_file, self.teacher_batch_size, width)  # noqa
        self.train_parts = []
        if settings.do_train:
            parts = [(self.task.train_file, 1.0), (self.task.extra_files.get(UNLABELED), 0.0)]
            self.train_parts = [(feature_file, outputs(feature_file)[0], has_label)
                                for feature_file, has_label in parts if feature_file]
        self.teacher_dev = {split: outputs(feature_file) for split, feature_file in self.task.dev_files.items()}

    def build_model(self, encoder):
        return self.task.build_model(encoder)

    def training_model(self, model):
        if not self.intermediate_loss_weight:
            return model
        return IntermediateLayerDistillation(model, self.teacher.model(), self.intermediate_loss_weight)

    def loss(self):
        return DistillationLoss(self.kind, self.task.processor.num_labels, self.alpha, self.temperature)

    def num_train_examples(self):
        return sum(feature_file.num_features for feature_file, _, _ in self.train_parts)

    def train_records(self):
        first = self.train_parts[0][0]
        parse = batch_parser(first.max_seq_length, None, first.is_regression, first.multi_hot)
        records = None
        for feature_file, logits, has_label in self.train_parts:
            part = tf.data.Dataset.zip((tf.data.TFRecordDataset(feature_file.path),
                                        tf.data.Dataset.from_tensor_slices(logits.astype(np.float32)),
                                        tf.data.Dataset.from_tensor_slices(np.full(len(logits), has_label,
                                                                                   np.float32))))
            records = part if records is None else records.concatenate(part)
        count = sum(feature_file.num_records for feature_file, _, _ in self.train_parts)

        def parse_batch(serialized, teacher_logits, has_label):
            inputs, labels, _ = parse(serialized)
            return inputs, pack_targets(teacher_logits, labels, has_label)

        # The labelled rows come first and the unlabelled after: the buffer holds them all (up to a limit) so that
        # every batch mixes both.
        return TrainingRecords(records, count, parse_batch, shuffle_buffer_size=min(count, _MAX_SHUFFLE_BUFFER))

    def evaluate(self, predictor, settings):
        return self.task.evaluate(predictor, settings)

    def write_outputs(self, predictor, settings, directory):
        teacher_figures = {}
        if settings.do_eval:
            # First: a multi-label task keeps the thresholds of its last evaluation, which must be the student's.
            replay = _Replay([self.teacher_dev[split] for split in self.task.dev_files])
            teacher_figures = {f"teacher_{name.removeprefix('eval_')}": value
                               for name, value in self.task.evaluate(replay, settings).items()
                               if not isinstance(value, str)}
        recorder = _Recorder(predictor)
        tables = self.task.write_outputs(recorder, settings, directory)
        if "eval_results" in tables:
            pooling = self.task.window_pooling
            pooled = [(document_outputs(feature_file, *student, pooling)[0],
                       document_outputs(feature_file, *self.teacher_dev[split], pooling)[0])
                      for (split, feature_file), student in zip(self.task.dev_files.items(), recorder.outputs)]
            tables["eval_results"].update(teacher_figures)
            tables["eval_results"].update(agreement(self.kind, np.concatenate([s for s, _ in pooled]),
                                                    np.concatenate([t for _, t in pooled])))
        return tables

    def serving_spec(self, tokenizer, seq_length):
        return self.task.serving_spec(tokenizer, seq_length)


def agreement(kind, student, teacher):
    """How closely the student's dev outputs follow the teacher's: for classes, the share of examples whose
    predicted class (multi-label: whose set of labels at probability 0.5) is the teacher's; for scores, their
    Pearson correlation and mean squared difference.

    Args:
        kind: "single_label", "multi_label" or "regression".
        student, teacher: the logits [N, K] (scores [N, 1]) of the same examples.

    Example:
    >>> agreement("single_label", np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 1.0], [3.0, 1.0]]))
    {'eval_teacher_agreement': 0.5}
    """
    if kind == REGRESSION:
        s, t = student.reshape(-1), teacher.reshape(-1)
        correlation = float(np.corrcoef(s, t)[0, 1]) if s.std() > 0 and t.std() > 0 else 0.0
        return {"eval_teacher_pearson": correlation, "eval_teacher_mse": float(np.mean((s - t) ** 2))}
    if kind == MULTI_LABEL:
        return {"eval_teacher_agreement": float(np.mean(np.all((student > 0) == (teacher > 0), axis=-1)))}
    return {"eval_teacher_agreement": float(np.mean(student.argmax(-1) == teacher.argmax(-1)))}


def _kind(kind):
    return kind.replace("_", "-")


class _Recorder:
    """A `Predictor` that keeps what it returns, in call order (the student's dev outputs)."""

    def __init__(self, predictor):
        self.predictor, self.outputs = predictor, []

    def __call__(self, dataset):
        outputs = self.predictor(dataset)
        self.outputs.append(outputs)
        return outputs


class _Replay:
    """Stands in for a `Predictor`: returns the given outputs, one per call, in order (the teacher's cached dev
    outputs, in the order the task evaluates its dev splits)."""

    def __init__(self, outputs):
        self.outputs = list(outputs)

    def __call__(self, dataset):
        return self.outputs.pop(0)
