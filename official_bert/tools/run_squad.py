"""Fine-tunes BERT on SQuAD 1.1 or 2.0 and answers questions about paragraphs, with the original
google-research/bert flags; scores the answers as the official scripts do and exports a SavedModel that answers
raw (question, context) pairs.

    python run_squad.py --vocab_file=vocab.txt --bert_config_file=bert_config.json \
        --init_checkpoint=bert_model.ckpt --do_train --train_file=train-v1.1.json --do_predict --do_eval \
        --predict_file=dev-v1.1.json --train_batch_size=12 --learning_rate=3e-5 --num_train_epochs=2.0 \
        --max_seq_length=384 --doc_stride=128 --output_dir=squad [--export_dir=serving/squad]

SQuAD 2.0: add --version_2_with_negative (and --find_best_threshold to choose --null_score_diff_threshold on
the --predict_file).

Outputs in --output_dir: the cached training features (squad_train_<key>.tf_record), checkpoints (a run trains
for the whole schedule and predicts with its last checkpoint, as the original); with --do_predict or --do_eval
predictions.json, nbest_predictions.json and, for 2.0, null_odds.json; with --do_eval eval_results.json (the
official evaluate-v1.1 / evaluate-v2.0 scores; for 2.0 with null_odds.json as the no-answer probabilities, as
Google's README runs it). --export_dir gets a new version <export_dir>/<n>/ whose serving_default takes
`question` and `context` strings and returns `answer` and `score` (`null_odds` too for 2.0), and whose
serve_tensors and serve_examples return the start and end logits of a window.

Rerunning the same command after a crash or kill resumes from the newest checkpoint in --output_dir. Exit status 1
with a one-line message on bad flags or data.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags

from official_bert.finetuning import run_task
from official_bert.tasks import SquadTask
from official_bert.tools.flag_kinds import INPUT_FILE, MAX_SEQ_LENGTH, define_integer, define_path, define_real, neutral
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                       define_sweep_flags, finetuning_settings_from_flags)
from official_bert.tools.sweep import sweep_from_flags

FLAGS = flags.FLAGS

# The original's flags.
define_model_flags(max_seq_length=384, init_checkpoint_help="Initial checkpoint (usually from a pre-trained BERT "
                   "model): Google's TF1, Hugging Face or ours; a fine-tuned SQuAD --output_dir too. Ignored when "
                   "--output_dir holds a checkpoint.")
define_finetuning_flags(do_predict_help="Whether to run eval on the dev set.",
                        do_eval_help="Score the predictions on --predict_file against its answers, as the official "
                        "evaluate-v1.1 / evaluate-v2.0 scripts do (implies predicting).", eval_batch_size=False,
                        length_bucket_width=0, length_bucket_note=" Training only, and off by default: the original's "
                        "softmax over positions covers every position up to --max_seq_length, padding included, "
                        "and a shorter batch leaves the cut positions out of the loss.")
define_path("train_file", None, "SQuAD json for training. E.g., train-v1.1.json", INPUT_FILE)
define_path("predict_file", None, "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json", INPUT_FILE,
            affects_result=False)
define_integer("doc_stride", 128, "When splitting up a long document into chunks, how much stride to take "
               "between chunks.", 1, MAX_SEQ_LENGTH)
define_integer("max_query_length", None, "The maximum number of tokens for the question. Questions longer than "
               "this will be truncated to this length. Default: 64, or, where 64 would leave no room for the "
               "paragraph, half of what --max_seq_length leaves besides [CLS] and two [SEP].", 1, MAX_SEQ_LENGTH)
define_integer("n_best_size", 20, "The total number of n-best predictions to generate in the "
               "nbest_predictions.json output file.", 1, 10000, affects_result=False)
define_integer("max_answer_length", 30, "The maximum length of an answer that can be generated. This is "
               "needed because the start and end predictions are not conditioned on one another.", 1, MAX_SEQ_LENGTH,
               affects_result=False)
flags.DEFINE_bool("verbose_logging", False, "If true, all of the warnings related to data processing will be "
                  "printed. A number of warnings are expected for a normal SQuAD evaluation.")
flags.DEFINE_bool("version_2_with_negative", False, "If true, the SQuAD examples contain some that do not have an "
                  "answer.")
define_real("null_score_diff_threshold", 0.0, "If null_score - best_non_null is greater than the threshold "
            "predict null.", -10000, 10000, affects_result=False)
# Added.
flags.DEFINE_bool("find_best_threshold", False, "SQuAD 2.0 with --do_eval: choose --null_score_diff_threshold as "
                  "the one that maximizes F1 on --predict_file, predict with it, report it (and export with it).")
define_export_flags()
flags.DEFINE_enum("tokenizer_ops", "core", ["core", "tf_text"], "The ops of the exported tokenizer: core (TensorFlow's "
                  "own: any TensorFlow serves the export, stock TF Serving included) or tf_text (tensorflow-text's "
                  "WordPiece op, which the server then needs).")
neutral("verbose_logging", "find_best_threshold", "tokenizer_ops")
define_sweep_flags()


def main():
    task = SquadTask(FLAGS.train_file, FLAGS.predict_file, doc_stride=FLAGS.doc_stride,
                     max_query_length=FLAGS.max_query_length, n_best_size=FLAGS.n_best_size,
                     max_answer_length=FLAGS.max_answer_length, verbose_logging=FLAGS.verbose_logging,
                     version_2_with_negative=FLAGS.version_2_with_negative,
                     null_score_diff_threshold=FLAGS.null_score_diff_threshold,
                     find_best_threshold=FLAGS.find_best_threshold)
    run_task(task, finetuning_settings_from_flags(sweep_from_flags()), watch=cli.watch)


def run():
    """The tool as a command (`python run_squad.py`, or the console script `bert-run-squad`)."""
    # --vocab_file is checked with the config: a RoBERTa's or XLM-R's tokenizer files are read beside the checkpoint.
    cli.run(main, required_flags=["bert_config_file", "output_dir"])


if __name__ == "__main__":
    run()
