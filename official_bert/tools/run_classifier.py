"""Fine-tunes BERT on a sentence (pair) classification, regression or multiple-choice task: GLUE, XNLI, SWAG or
your own, with the original google-research/bert flags, and exports a SavedModel that serves raw text.

    python run_classifier.py --task_name=mrpc --data_dir=glue/MRPC --vocab_file=vocab.txt \
        --bert_config_file=bert_config.json --init_checkpoint=bert_model.ckpt --output_dir=mrpc \
        --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 --learning_rate=2e-5 \
        --num_train_epochs=3 [--export_dir=serving/mrpc] [--mixed_precision=bf16]

Tasks: cola, sst-2, mrpc, sts-b (regression), qqp, mnli (dev matched and mismatched), qnli, rte, wnli, ax (the
diagnostic set: --do_predict with --init_checkpoint=<an MNLI run's --output_dir>), xnli (--xnli_language), swag
(multiple choice), and single / pair (your own data in SST-2's / MRPC's layout, with --label_list).

Your own files instead of --task_name: --train_file, --dev_file, --test_file (CSV or TSV with a header row, or JSON
Lines), columns by name (--text_a_column, --text_b_column, --label_column, --id_column); single-label, multi-label
(a JSON list or --label_separator in the label cell, or --multi_label: a threshold per label chosen on dev) or
--regression; --class_weights=balanced. The label order is saved as labels.json in --output_dir; --do_predict
writes predictions.jsonl (and predictions.csv for a CSV input): one row per input row, in order, with its id. Every
file is read and checked before any feature is written.

As the original, training runs int(examples / train_batch_size * num_train_epochs) steps and --do_eval,
--do_predict and --export_dir then use the final checkpoint. Outputs in --output_dir: cached features,
checkpoints, eval_results.txt/.json (the original's eval_accuracy, eval_loss, global_step and loss, plus the task's
paper metric: eval_f1 for MRPC/QQP, eval_mcc for CoLA, eval_pearson/eval_spearman for STS-B, the eval_mismatched_*
figures for MNLI), test_results.tsv and the GLUE leaderboard file (SST-2.tsv, MNLI-m.tsv, ...). With --keep_best
the dev set is evaluated after every epoch and the best checkpoint by the task's metric (best-<step>/,
best_checkpoint.json) is used instead. --export_dir gets a new version <export_dir>/<n>/ for TF Serving with the
signatures serving_default (raw text_a [, text_b] → probabilities and label, or score), serve_tensors and
serve_examples, and model.keras.

Rerunning the same command after a crash or kill resumes from the newest checkpoint in --output_dir. Exit status 1
with a one-line message on bad flags or data.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags

from official_bert.classification import ClassificationDataError
from official_bert.classification.own_files import Columns
from official_bert.finetuning import run_task
from official_bert.tasks import ClassificationTask, OwnFilesTask
from official_bert.tools.flag_kinds import (INPUT_DIRECTORY, INPUT_FILE, MAX_SEQ_LENGTH, define_integer, define_path,
                                            define_real, define_text, neutral)
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                       define_sweep_flags, finetuning_settings_from_flags)
from official_bert.tools.sweep import sweep_from_flags

FLAGS = flags.FLAGS

# The original's flags.
define_path("data_dir", None, "The input data dir. Should contain the .tsv files (or other data files) for "
            "the task.", INPUT_DIRECTORY)
define_text("task_name", None, "The name of the task to train (or give your own files: --train_file, ...).")
define_model_flags(init_checkpoint_help="Initial checkpoint (usually from a pre-trained BERT model): Google's TF1, "
                   "Hugging Face or ours; a fine-tuning --output_dir means its final (or --keep_best) checkpoint. "
                   "Ignored when --output_dir holds a checkpoint.")
define_finetuning_flags()
define_export_flags()
flags.DEFINE_enum("tokenizer_ops", "core", ["core", "tf_text"], "The ops of the exported WordPiece tokenizer: core "
                  "(TensorFlow's own: any TensorFlow serves the export, stock TF Serving included) or tf_text "
                  "(tensorflow-text's op, which the server then needs). A --spm_model_file always needs "
                  "tensorflow-text.")
define_sweep_flags()
# Added.
flags.DEFINE_bool("keep_best", False, "With --do_train and --do_eval: evaluate on dev after every epoch and use the "
                  "best checkpoint by the task's metric for --do_eval, --do_predict and --export_dir, instead of the "
                  "final one (the original's behaviour). The dev figure is then optimistic: it is chosen on the set "
                  "it is reported on, and eval_results.txt says so.")
define_text("xnli_language", "zh", "The XNLI language (--task_name=xnli): en, de, zh, ... (the original "
            "hard-codes zh).")
define_text("label_list", None, "The labels of --task_name=single or pair, comma-separated, in id order; for "
            "your own files, the labels in id order instead of the training file's, sorted.")
flags.DEFINE_enum("tsv_first_line", None, ["header", "data"], "The first line of a .tsv file whose layout has a "
                  "header (SST-2's and MRPC's, so single's and pair's too): header: skipped, as the original; data: "
                  "read as an example (a file without the header). Default: skipped, and refused when its label "
                  "column holds a label, the sign of a file without the header (its first example would be lost).")
flags.DEFINE_bool("use_tfds", False, "Read the task through tensorflow-datasets (prepared locally) instead of "
                  "--data_dir.")
define_path("tfds_data_dir", None, "tensorflow-datasets' data_dir, with --use_tfds.", INPUT_DIRECTORY)
flags.DEFINE_bool("freeze_encoder", False, "The feature-based approach (paper Table 7): keep the encoder frozen and "
                  "train the classifier on the concatenation of its last four layers (all of them if it has fewer), "
                  "averaged over the tokens.")
define_integer("doc_stride", 0, "Long documents: 0 truncates a text longer than --max_seq_length (the original); "
               "N > 0 cuts its text_a into overlapping windows N WordPiece tokens apart, as run_squad.py does "
               "(max_seq_length - 2 tokens each; in a pair, text_b is kept in every window as truncation would "
               "keep it and text_a gets the rest). Training uses every window with the document's label; "
               "evaluation, prediction and the export predict a document from the mean of its windows' logits "
               "(see --window_pooling). Not for multiple choice.", 0, MAX_SEQ_LENGTH)
flags.DEFINE_enum("window_pooling", "mean", ["mean", "max"], "With --doc_stride: a document's logits (or regression "
                  "score) are the mean of its windows', or their elementwise maximum.")
neutral("tokenizer_ops", "window_pooling")
# Your own files (instead of --task_name).
define_path("train_file", None, "Your training file (--do_train): .csv or .tsv with a header row (read as "
            "Python's csv module reads it), or .jsonl / .json (one JSON object per line); instead of "
            "--task_name. Each file goes with its --do_* flag: one given without it is refused.", INPUT_FILE)
define_path("dev_file", None, "Your dev file (--do_eval), as --train_file.", INPUT_FILE, affects_result=False)
define_path("test_file", None, "Your file to predict (--do_predict), as --train_file; its label column may be "
            "missing. One row of predictions.jsonl per row, in order.", INPUT_FILE, affects_result=False)
flags.DEFINE_enum("input_format", None, ["csv", "tsv", "jsonl"], "The files' format; default: from each extension "
                  "(a .csv file whose header holds tabs needs --input_format=tsv).")
define_text("text_a_column", "text", "The column of the text (the first of a pair).")
define_text("text_b_column", None, "The column of the second text of a sentence-pair task.")
define_text("label_column", "label", "The column of the label: a class, a list of classes (JSON Lines; or a "
            "string split by --label_separator), or a number (--regression). A class is its cell stripped of "
            "surrounding spaces; two spellings of one class (Pos and pos, 1.0 and 1) are refused unless "
            "--label_list names both.")
define_text("id_column", None, "The column whose value identifies a row in predictions.jsonl; default: the "
            "row number (a CSV file's data rows from 1, a JSON Lines file's line).", affects_result=False)
define_text("label_separator", None, "Multi-label: split a label cell at this string (e.g. '|').")
flags.DEFINE_bool("multi_label", False, "Each row has a set of labels (sigmoid outputs, binary cross-entropy); implied "
                  "by --label_separator or a JSON list in the training file's first label.")
define_real("threshold", None, "Multi-label: every label's decision threshold; default: per label, the one "
            "that maximises its F1 on the dev set, saved as thresholds.json and used by --do_predict and the "
            "export.", 0, 1, open_lower=True, open_upper=True, affects_result=False)
flags.DEFINE_bool("regression", False, "The labels are numbers: one output, mean squared error; eval_results has "
                  "Pearson, Spearman and MSE (as STS-B).")
define_text("class_weights", None, "balanced: weigh class c's loss by n / (n_classes * count_c), as "
            "scikit-learn's 'balanced' (multi-label: each label's positives and negatives likewise); or one "
            "weight per label, comma-separated, in label order (multi-label: the positives' weights).")


def task_from_flags():
    """The task the flags name: your own files, or a --task_name's (run_distillation.py's too)."""
    files = {split: FLAGS[f"{split}_file"].value for split in ("train", "dev", "test")}
    if any(files.values()):
        if FLAGS.task_name or FLAGS.data_dir:
            raise ClassificationDataError("give --task_name (with --data_dir) or your own --train_file / --dev_file / "
                                          "--test_file, not both")
        return OwnFilesTask(files, Columns(FLAGS.text_a_column, FLAGS.text_b_column, FLAGS.label_column,
                                           FLAGS.id_column), input_format=FLAGS.input_format,
                            label_list=FLAGS.label_list, multi_label=FLAGS.multi_label,
                            label_separator=FLAGS.label_separator, regression=FLAGS.regression,
                            threshold=FLAGS.threshold, class_weights=FLAGS.class_weights,
                            freeze_encoder=FLAGS.freeze_encoder, doc_stride=FLAGS.doc_stride,
                            window_pooling=FLAGS.window_pooling)
    if not FLAGS.task_name:
        raise ClassificationDataError("give --task_name (a GLUE task, ...) or your own files: --train_file, "
                                      "--dev_file, --test_file")
    own = [f"--{name}" for name in ("input_format", "id_column", "text_b_column", "label_separator", "multi_label",
                                    "threshold", "regression", "class_weights") if FLAGS[name].present]
    if own:
        raise ClassificationDataError(f"{own[0]} is for your own files (--train_file, ...), not --task_name")
    task = ClassificationTask(FLAGS.task_name, FLAGS.data_dir, label_list=FLAGS.label_list,
                              xnli_language=FLAGS.xnli_language, use_tfds=FLAGS.use_tfds,
                              tfds_data_dir=FLAGS.tfds_data_dir, freeze_encoder=FLAGS.freeze_encoder,
                              doc_stride=FLAGS.doc_stride, window_pooling=FLAGS.window_pooling,
                              tsv_first_line=FLAGS.tsv_first_line)
    return task


def main():
    run_task(task_from_flags(), finetuning_settings_from_flags(sweep_from_flags()), watch=cli.watch)


def run():
    """The tool as a command (`python run_classifier.py`, or the console script `bert-run-classifier`)."""
    cli.run(main, required_flags=["bert_config_file", "output_dir"])


if __name__ == "__main__":
    run()
