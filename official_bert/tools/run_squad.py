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

import math
import os

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import keras
from absl import flags, logging

from official_bert import distribution, squad, tokenization
from official_bert.batch_padding import padding_bucket_width
from official_bert.export.squad import export_squad, squad_tokenizer_layer
from official_bert.finetuning import FineTuningRun, Predictor, fine_tuning_schedule, load_trained_weights, sweep
from official_bert.finetuning.squad import (SPAN_LOSS_WEIGHTS, predict_spans, span_loss, span_metrics, span_model,
                                            squad_train_dataset_fn)
from official_bert.squad import json_files
from official_bert.training import prepare_output_dir
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                          define_sweep_flags, finetuning_options_from_flags,
                                          mixed_precision_from_flags, model_config_from_flags, strategy_from_flags)

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
flags.DEFINE_string("train_file", None, "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string("predict_file", None, "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json")
flags.DEFINE_integer("doc_stride", 128, "When splitting up a long document into chunks, how much stride to take "
                     "between chunks.")
flags.DEFINE_integer("max_query_length", 64, "The maximum number of tokens for the question. Questions longer than "
                     "this will be truncated to this length.")
flags.DEFINE_integer("n_best_size", 20, "The total number of n-best predictions to generate in the "
                     "nbest_predictions.json output file.")
flags.DEFINE_integer("max_answer_length", 30, "The maximum length of an answer that can be generated. This is "
                     "needed because the start and end predictions are not conditioned on one another.")
flags.DEFINE_bool("verbose_logging", False, "If true, all of the warnings related to data processing will be "
                  "printed. A number of warnings are expected for a normal SQuAD evaluation.")
flags.DEFINE_bool("version_2_with_negative", False, "If true, the SQuAD examples contain some that do not have an "
                  "answer.")
flags.DEFINE_float("null_score_diff_threshold", 0.0, "If null_score - best_non_null is greater than the threshold "
                   "predict null.")
# Added.
flags.DEFINE_bool("find_best_threshold", False, "SQuAD 2.0 with --do_eval: choose --null_score_diff_threshold as "
                  "the one that maximizes F1 on --predict_file, predict with it, report it (and export with it).")
define_export_flags()
flags.DEFINE_enum("tokenizer_ops", "core", ["core", "tf_text"], "The ops of the exported tokenizer: core (TensorFlow's "
                  "own: any TensorFlow serves the export, stock TF Serving included) or tf_text (tensorflow-text's "
                  "WordPiece op, which the server then needs).")
define_sweep_flags()


def main():
    _check_flags()
    runs = sweep.sweep_runs_from_flags()
    strategy = strategy_from_flags()  # first: a multi-worker strategy must precede other TensorFlow ops
    is_chief = distribution.is_chief(strategy)
    cli.output_lock(FLAGS.output_dir, strategy=strategy)
    cli.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
    config = model_config_from_flags()
    mixed_precision = mixed_precision_from_flags(strategy)
    options = finetuning_options_from_flags(strategy, mixed_precision)
    tokenizer = tokenization.FullTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case,
                                           preserve_unused_tokens=FLAGS.preserve_unused_tokens)
    lengths = dict(max_seq_length=FLAGS.max_seq_length, doc_stride=FLAGS.doc_stride,
                   max_query_length=FLAGS.max_query_length)

    # Input: the training features are converted once and cached in --features_dir (shuffled with the original's
    # fixed seed, not --seed: a sweep's runs share them); the prediction features are kept in memory, where
    # post-processing needs them.
    if FLAGS.do_train:
        train = squad.cached_train_features(FLAGS.train_file, tokenizer, FLAGS.features_dir or FLAGS.output_dir,
                                            version_2_with_negative=FLAGS.version_2_with_negative, **lengths)
        logging.info("training on %d features of %d questions (%d skipped: answer not found in the text)",
                     train.num_features, train.num_examples, train.num_skipped)
    predicting = FLAGS.do_predict or FLAGS.do_eval
    if predicting:
        examples = squad.read_squad_examples(FLAGS.predict_file, is_training=False)
        features = list(squad.convert_examples_to_features(examples, tokenizer, is_training=False, **lengths))
        logging.info("predicting %d questions in %d features", len(examples), len(features))
        if not features:
            raise squad.SquadError(f"--predict_file={FLAGS.predict_file}: no question to answer")

    # The paper's procedure (--sweep, --num_restarts, ...): every run is this tool in its own directory, reading the
    # features just cached; the best run by dev F1 is then what prediction and export use.
    sweep.sweep_then_use_the_best(runs, "f1")

    # Model.
    keras.utils.set_random_seed(FLAGS.seed)
    with strategy.scope():
        model = span_model(config, mixed_precision)

    # Training: the whole schedule (SQuAD's dev set is its test set: no checkpoint is chosen on it).
    if FLAGS.do_train:
        if is_chief:
            prepare_output_dir(FLAGS.output_dir, config, FLAGS.vocab_file, FLAGS.init_checkpoint)
        # The original counts steps from the questions, not their windows.
        schedule = fine_tuning_schedule(train.num_examples, FLAGS.train_batch_size, FLAGS.num_train_epochs,
                                        FLAGS.warmup_proportion)
        run = cli.watch(FineTuningRun(model, span_loss(), options, schedule, strategy, span_metrics(),
                                      do_lower_case=FLAGS.do_lower_case, loss_weights=SPAN_LOSS_WEIGHTS))
        run.train(squad_train_dataset_fn(train.path, train.num_features, FLAGS.max_seq_length,
                                         FLAGS.train_batch_size, FLAGS.seed,
                                         padding_bucket_width(FLAGS.length_bucket_width, strategy, FLAGS.jit_compile),
                                         FLAGS.bucket_by_length))
    global_step = load_trained_weights(model, FLAGS.output_dir, FLAGS.init_checkpoint, FLAGS.do_lower_case)

    # Prediction and evaluation: every worker predicts (the replicas' outputs are gathered); only the chief's
    # files are kept.
    threshold = FLAGS.null_score_diff_threshold
    if predicting:
        results = predict_spans(Predictor(model, strategy), features, FLAGS.predict_batch_size)
        with distribution.WorkerDirectory(FLAGS.output_dir, strategy) as directory:
            threshold = _predict_and_evaluate(examples, features, results, directory, global_step,
                                              sweep.chosen_run_note(FLAGS.init_checkpoint, "f1") if runs else None)

    if FLAGS.export_dir and is_chief:
        path = export_squad(FLAGS.export_dir, model, squad_tokenizer_layer(FLAGS.vocab_file, FLAGS.do_lower_case,
                                                                         wordpiece=FLAGS.tokenizer_ops),
                            FLAGS.max_seq_length, doc_stride=FLAGS.doc_stride,
                            max_query_length=FLAGS.max_query_length, n_best_size=FLAGS.n_best_size,
                            max_answer_length=FLAGS.max_answer_length,
                            version_2_with_negative=FLAGS.version_2_with_negative,
                            null_score_diff_threshold=threshold)
        logging.info("exported the model for serving to %s", path)

def _predict_and_evaluate(examples, features, results, directory, global_step, checkpoint_note=None):
    """Writes the predictions (and with --do_eval the scores, with `checkpoint_note`: what chose the checkpoint)
    to `directory`; returns the null threshold used."""
    version_2 = FLAGS.version_2_with_negative

    def predictions(threshold):
        return squad.compute_predictions(examples, features, results, FLAGS.n_best_size, FLAGS.max_answer_length,
                                         FLAGS.do_lower_case, version_2, threshold, FLAGS.verbose_logging)

    threshold = FLAGS.null_score_diff_threshold
    gold = squad.read_gold(FLAGS.predict_file) if FLAGS.do_eval else None
    if FLAGS.find_best_threshold:
        # Every question's best span with its null odds, so that the search sees every possible threshold.
        candidates = predictions(math.inf)
        threshold = squad.evaluate(gold, candidates.predictions, candidates.null_odds)["best_f1_thresh"]
        logging.info("best --null_score_diff_threshold on %s: %s", FLAGS.predict_file, threshold)
    answers = predictions(threshold)
    for path in squad.write_predictions(answers, directory):
        logging.info("wrote %s", path)
    if FLAGS.do_eval:
        scores = dict(squad.evaluate(gold, answers.predictions, answers.null_odds if version_2 else None))
        if version_2:
            scores["null_score_diff_threshold"] = threshold
        if global_step is not None:
            scores["global_step"] = global_step
        if checkpoint_note:
            scores["checkpoint"] = checkpoint_note
        for key, value in scores.items():
            logging.info("eval %s = %s", key, value)
        json_files.write_json(os.path.join(directory, "eval_results.json"), scores)
    return threshold


def _check_flags():
    """The original's validate_flags_or_throw, and the added flags' rules."""
    if not (FLAGS.do_train or FLAGS.do_predict or FLAGS.do_eval or FLAGS.export_dir):
        cli.fail("at least one of --do_train, --do_predict, --do_eval or --export_dir must be given")
    if FLAGS.do_train and not FLAGS.train_file:
        cli.fail("--do_train needs --train_file (a SQuAD JSON file)")
    if (FLAGS.do_predict or FLAGS.do_eval) and not FLAGS.predict_file:
        cli.fail("--do_predict and --do_eval need --predict_file (a SQuAD JSON file)")
    if FLAGS.find_best_threshold and not (FLAGS.do_eval and FLAGS.version_2_with_negative):
        cli.fail("--find_best_threshold needs --do_eval and --version_2_with_negative: it chooses the SQuAD 2.0 "
                 "null threshold on --predict_file's answers")
    squad.check_lengths(FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.max_query_length)
    for flag in ("n_best_size", "max_answer_length"):
        if FLAGS[flag].value < 1:
            cli.fail(f"--{flag}={FLAGS[flag].value}: expected a positive integer")


def run():
    """The tool as a command (`python run_squad.py`, or the console script `bert-run-squad`)."""
    cli.run(main, required_flags=["vocab_file", "bert_config_file", "output_dir"])


if __name__ == "__main__":
    run()
