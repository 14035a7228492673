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

import functools

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import keras
from absl import flags, logging

from official_bert import distribution, tokenization
from official_bert.batch_padding import padding_bucket_width
from official_bert.classification import best_metric, get_processor, load_or_create_features, write_eval_results
from official_bert.export import export_classifier, tokenizer_layer
from official_bert.finetuning import (BestCheckpoint, FineTuningRun, Predictor, classifier_loss, classifier_metrics,
                                      classifier_model, evaluate_classifier, fine_tuning_schedule, has_text_b,
                                      load_trained_weights, predict_test_set, sweep, train_dataset_fn)
from official_bert.training import prepare_output_dir
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                          define_sweep_flags, finetuning_options_from_flags,
                                          mixed_precision_from_flags, model_config_from_flags, strategy_from_flags)

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
flags.DEFINE_bool("use_tfds", False, "Read the task through tensorflow-datasets (prepared locally) instead of "
                  "--data_dir.")
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets' data_dir, with --use_tfds.")
flags.DEFINE_bool("causal_attention", False, "Fine-tune with the left-only constraint of a run_pretraining.py "
                  "--objective=ltr model, as the paper does: causal attention, and the last real token's output as "
                  "the sequence representation.")
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
    if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir):
        cli.fail("at least one of --do_train, --do_eval, --do_predict or --export_dir must be given")
    runs = sweep.sweep_runs_from_flags()
    strategy = strategy_from_flags()  # first: a multi-worker strategy must precede other TensorFlow ops
    is_chief = distribution.is_chief(strategy)
    cli.output_lock(FLAGS.output_dir, strategy=strategy)
    cli.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
    config = model_config_from_flags()
    mixed_precision = mixed_precision_from_flags(strategy)
    options = finetuning_options_from_flags(strategy, mixed_precision)
    processor = get_processor(FLAGS.task_name, FLAGS.data_dir, label_list=FLAGS.label_list,
                              xnli_language=FLAGS.xnli_language if FLAGS.task_name.lower() == "xnli" else None,
                              use_tfds=FLAGS.use_tfds, tfds_data_dir=FLAGS.tfds_data_dir)
    tokenizer = tokenization.create_tokenizer(FLAGS.vocab_file, FLAGS.spm_model_file, FLAGS.do_lower_case,
                                              preserve_unused_tokens=FLAGS.preserve_unused_tokens)

    # Input: every split needed, converted once and cached in --output_dir (see classification/cache.py);
    # evaluation and prediction sets are padded to whole batches.
    features = functools.partial(load_or_create_features, processor, tokenizer=tokenizer,
                                 max_seq_length=FLAGS.max_seq_length, output_dir=FLAGS.features_dir or FLAGS.output_dir,
                                 tokenizer_file=FLAGS.vocab_file or FLAGS.spm_model_file,
                                 do_lower_case=FLAGS.do_lower_case, doc_stride=FLAGS.doc_stride)
    train_file = features("train") if FLAGS.do_train else None
    dev_files = {split: features(split, pad_to_multiple_of=FLAGS.eval_batch_size)
                 for split in processor.dev_splits} if FLAGS.do_eval else {}
    test_files = {split: features(split, pad_to_multiple_of=FLAGS.predict_batch_size)
                  for split in processor.test_splits} if FLAGS.do_predict else {}
    # Each batch padded to its longest sequence (fixed shapes on TPUs and with --jit_compile).
    bucket_width = padding_bucket_width(FLAGS.length_bucket_width, strategy, FLAGS.jit_compile)

    # The paper's procedure (--sweep, --num_restarts, ...): every run is this tool in its own directory, reading the
    # features just cached; the best run on dev is then what evaluation, prediction and export use.
    if runs:
        sweep.sweep_then_use_the_best(runs, best_metric(processor.task_name, processor.dev_splits))

    # Model.
    keras.utils.set_random_seed(FLAGS.seed)
    with strategy.scope():
        model = classifier_model(config, processor, mixed_precision, FLAGS.causal_attention,
                                 feature_layers=min(4, config.num_hidden_layers) if FLAGS.freeze_encoder else None)
    predictor = Predictor(model, strategy)
    evaluate = functools.partial(evaluate_classifier, predictor, processor, dev_files, FLAGS.eval_batch_size,
                                 bucket_width=bucket_width, window_pooling=FLAGS.window_pooling)

    # Training; with --keep_best the dev set is evaluated after every epoch and the best checkpoint kept.
    keep_best = FLAGS.keep_best and FLAGS.do_train and FLAGS.do_eval
    if FLAGS.do_train:
        if is_chief:
            prepare_output_dir(FLAGS.output_dir, config, FLAGS.vocab_file, FLAGS.init_checkpoint)
        schedule = fine_tuning_schedule(train_file.num_features, FLAGS.train_batch_size, FLAGS.num_train_epochs,
                                        FLAGS.warmup_proportion)
        run = cli.watch(FineTuningRun(model, classifier_loss(processor), options, schedule, strategy,
                                      classifier_metrics(processor), do_lower_case=FLAGS.do_lower_case))
        best = BestCheckpoint(FLAGS.output_dir, best_metric(processor.task_name, processor.dev_splits),
                              vocab_file=FLAGS.vocab_file) if keep_best else None
        run.train(train_dataset_fn(train_file, FLAGS.train_batch_size, FLAGS.seed, bucket_width,
                                   FLAGS.bucket_by_length),
                  evaluate if keep_best else None, best)
    global_step = load_trained_weights(model, FLAGS.output_dir, FLAGS.init_checkpoint, FLAGS.do_lower_case,
                                       best=keep_best)

    # Every worker evaluates and predicts (the replicas' outputs are gathered); only the chief's files are kept.
    with distribution.WorkerDirectory(FLAGS.output_dir, strategy) as directory:
        if FLAGS.do_eval:
            results = evaluate()
            if global_step is not None:
                results["global_step"] = global_step
            if keep_best:
                results["checkpoint"] = (f"best of the per-epoch evaluations by {best.metric} on this dev set "
                                         "(an optimistic figure: chosen on the set it is reported on)")
            if runs:
                results["checkpoint"] = sweep.chosen_run_note(FLAGS.init_checkpoint,
                                                              best_metric(processor.task_name, processor.dev_splits))
            for key in sorted(results):
                logging.info("eval %s = %s", key, results[key])
            write_eval_results(directory, results)
        for split, feature_file in test_files.items():
            for path in predict_test_set(predictor, processor, split, feature_file, FLAGS.predict_batch_size,
                                         directory, bucket_width=bucket_width,
                                         window_pooling=FLAGS.window_pooling):
                logging.info("wrote %s", path)

    if FLAGS.export_dir and is_chief:
        path = export_classifier(
            FLAGS.export_dir, model, tokenizer_layer(FLAGS.vocab_file, FLAGS.spm_model_file, FLAGS.do_lower_case,
                                                      wordpiece=FLAGS.tokenizer_ops),
            FLAGS.max_seq_length, processor.label_list, text_b=has_text_b(processor),
            num_choices=processor.num_choices, doc_stride=FLAGS.doc_stride, window_pooling=FLAGS.window_pooling)
        logging.info("exported the model for serving to %s", path)


def run():
    """The tool as a command (`python run_classifier.py`, or the console script `bert-run-classifier`)."""
    cli.run(main, required_flags=["task_name", "bert_config_file", "output_dir"])


if __name__ == "__main__":
    run()
