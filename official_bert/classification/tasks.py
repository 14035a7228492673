"""--task_name → the task's data processor."""

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.swag import SwagProcessor
from official_bert.classification.tfds_processor import TFDS_TASKS, TfdsProcessor
from official_bert.classification.tsv_processor import TsvProcessor
from official_bert.classification.tsv_tasks import TSV_TASKS, USER_TASKS, XNLI_LANGUAGES

TASK_NAMES = (*TSV_TASKS, "swag")


def get_processor(task_name, data_dir=None, *, label_list=None, xnli_language=None, use_tfds=False,
                  tfds_data_dir=None, tsv_first_line=None):
    """Returns the DataProcessor of a task, checking the flags it needs.

    Args:
        task_name: one of TASK_NAMES (case-insensitive).
        data_dir: the directory holding the task's files as distributed (unused with use_tfds).
        label_list: the labels of the user tasks "single" and "pair", as a sequence or a comma-separated
            string; label ids follow its order.
        xnli_language: the XNLI language (e.g. "de"); only for xnli.
        use_tfds: read the task through tensorflow-datasets (GLUE and XNLI, prepared locally).
        tfds_data_dir: tfds's data_dir.
        tsv_first_line: --tsv_first_line, for the tasks read from .tsv files: "header", "data" or None (a first
            line holding a label is refused).

    Example:
    >>> get_processor("MNLI", "glue/MNLI").dev_splits
    ('dev_matched', 'dev_mismatched')
    >>> get_processor("pair", "my_data", label_list="no,yes").label_list
    ('no', 'yes')
    >>> get_processor("sst2", "glue/SST-2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.classification.errors.ClassificationDataError: --task_name=sst2: unknown task; known tasks: cola, ...
    """
    task = task_name.lower()
    if task not in TASK_NAMES:
        raise ClassificationDataError(f"--task_name={task_name}: unknown task; known tasks: {', '.join(TASK_NAMES)}")
    label_list = _check_label_list(task, label_list)
    if (task == "xnli") != bool(xnli_language):
        raise ClassificationDataError("--xnli_language is needed by --task_name=xnli and only by it"
                                      f" (got task {task_name}, language {xnli_language!r})")
    if task == "xnli" and xnli_language not in XNLI_LANGUAGES:
        raise ClassificationDataError(f"--xnli_language={xnli_language}: expected one of {', '.join(XNLI_LANGUAGES)}")
    if tsv_first_line and (use_tfds or task == "swag"):
        raise ClassificationDataError(f"--tsv_first_line is for tasks read from .tsv files, not --task_name={task}"
                                      + (" with --use_tfds" if use_tfds else ""))
    if use_tfds:
        if task not in TFDS_TASKS:
            raise ClassificationDataError(f"--use_tfds: task {task} is not in tensorflow-datasets; it reads "
                                          f"only {', '.join(TFDS_TASKS)}")
        return TfdsProcessor(task, tfds_data_dir, language=xnli_language)
    if not data_dir:
        raise ClassificationDataError(f"--data_dir is needed by --task_name={task} (or pass --use_tfds)")
    if task == "swag":
        return SwagProcessor(data_dir)
    return TsvProcessor(TSV_TASKS[task], data_dir, label_list=label_list, language=xnli_language,
                        first_line=tsv_first_line)


def _check_label_list(task, label_list):
    if isinstance(label_list, str):
        label_list = [label.strip() for label in label_list.split(",")]
    if task not in USER_TASKS:
        if label_list:
            raise ClassificationDataError(f"--label_list is only for the tasks {' and '.join(USER_TASKS)}; "
                                          f"{task} has fixed labels")
        return None
    if not label_list or not all(label_list):
        raise ClassificationDataError(f"--task_name={task} needs --label_list, the labels in id order "
                                      f"(e.g. 0,1), with no empty label; got {label_list!r}")
    if len(set(label_list)) != len(label_list):
        raise ClassificationDataError(f"--label_list names a label twice: {', '.join(label_list)}")
    return tuple(label_list)
