"""Fine-tunes BERT on a sentence (pair) classification, regression or multiple-choice task: GLUE, XNLI, SWAG or
your own, with the original google-research/bert flags, and exports a SavedModel that serves raw text.

    python run_classifier.py --task_name=mrpc --data_dir=glue/MRPC --vocab_file=vocab.txt \
        --bert_config_file=bert_config.json --init_checkpoint=bert_model.ckpt --output_dir=mrpc \
        --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 --learning_rate=2e-5 \
        --num_train_epochs=3 [--export_dir=serving/mrpc] [--mixed_precision=bf16]

Tasks: cola, sst-2, mrpc, sts-b (regression), qqp, mnli (dev matched and mismatched), qnli, rte, wnli, ax (the
diagnostic set: --do_predict with --init_checkpoint=<an MNLI run's --output_dir>), xnli (--xnli_language), swag
(multiple choice), and single / pair (your own data in SST-2's / MRPC's layout, with --label_list).

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

from official_bert.classification.tsv_processor import TsvProcessor
from official_bert.finetuning import run_task
from official_bert.tasks import ClassificationTask
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                       define_sweep_flags, finetuning_settings_from_flags)
from official_bert.tools.sweep import sweep_from_flags

FLAGS = flags.FLAGS

# The original's flags.
flags.DEFINE_string("data_dir", None, "The input data dir. Should contain the .tsv files (or other data files) for "
                    "the task.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
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
flags.DEFINE_string("xnli_language", "zh", "The XNLI language (--task_name=xnli): en, de, zh, ... (the original "
                    "hard-codes zh).")
flags.DEFINE_string("label_list", None, "The labels of --task_name=single or pair, comma-separated, in id order.")
flags.DEFINE_enum("tsv_first_line", None, ["header", "data"], "The first line of a .tsv file whose layout has a "
                  "header (SST-2's and MRPC's, so single's and pair's too): header: skipped, as the original; data: "
                  "read as an example (a file without the header). Default: skipped, and refused when its label "
                  "column holds a label, the sign of a file without the header (its first example would be lost).")
flags.DEFINE_bool("use_tfds", False, "Read the task through tensorflow-datasets (prepared locally) instead of "
                  "--data_dir.")
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets' data_dir, with --use_tfds.")
flags.DEFINE_bool("freeze_encoder", False, "The feature-based approach (paper Table 7): keep the encoder frozen and "
                  "train the classifier on the concatenation of its last four layers (all of them if it has fewer), "
                  "averaged over the tokens.")
flags.DEFINE_integer("doc_stride", 0, "Long documents: 0 truncates a text longer than --max_seq_length (the original); "
                     "N > 0 cuts its text_a into overlapping windows N WordPiece tokens apart, as run_squad.py does "
                     "(max_seq_length - 2 tokens each; in a pair, text_b is kept in every window as truncation would "
                     "keep it and text_a gets the rest). Training uses every window with the document's label; "
                     "evaluation, prediction and the export predict a document from the mean of its windows' logits "
                     "(see --window_pooling). Not for multiple choice.", lower_bound=0)
flags.DEFINE_enum("window_pooling", "mean", ["mean", "max"], "With --doc_stride: a document's logits (or regression "
                  "score) are the mean of its windows', or their elementwise maximum.")


def main():
    task = ClassificationTask(FLAGS.task_name, FLAGS.data_dir, label_list=FLAGS.label_list,
                              xnli_language=FLAGS.xnli_language, use_tfds=FLAGS.use_tfds,
                              tfds_data_dir=FLAGS.tfds_data_dir, freeze_encoder=FLAGS.freeze_encoder,
                              doc_stride=FLAGS.doc_stride, window_pooling=FLAGS.window_pooling)
    if FLAGS.tsv_first_line:
        if not isinstance(task.processor, TsvProcessor):
            cli.fail(f"--tsv_first_line is for tasks read from .tsv files, not --task_name={FLAGS.task_name}")
        task.processor.first_line = FLAGS.tsv_first_line
    run_task(task, finetuning_settings_from_flags(sweep_from_flags()), watch=cli.watch)


def run():
    """The tool as a command (`python run_classifier.py`, or the console script `bert-run-classifier`)."""
    cli.run(main, required_flags=["task_name", "bert_config_file", "output_dir"])


if __name__ == "__main__":
    run()
