"""Fine-tunes BERT on a sentence (pair) classification, regression or multiple-choice task: GLUE, XNLI, SWAG or
your own, with the original google-research/bert flags, and exports a SavedModel that serves raw text.

    python run_classifier.py --task_name=mrpc --data_dir=glue/MRPC --vocab_file=vocab.txt \
        --bert_config_file=bert_config.json --init_checkpoint=bert_model.ckpt --output_dir=mrpc \
        --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 --learning_rate=2e-5 \
        --num_train_epochs=3 [--export_dir=serving/mrpc] [--mixed_precision=bf16]

Tasks: cola, sst-2, mrpc, sts-b (regression), qqp, mnli (dev matched and mismatched), qnli, rte, wnli, ax (the
diagnostic set: --do_predict with --init_checkpoint=<an MNLI run's --output_dir>), xnli (--xnli_language), swag
(multiple choice), and single / pair (your own data in SST-2's / MRPC's layout, with --label_list).

Outputs in --output_dir: cached features, checkpoints, with --do_eval the dev evaluation after every epoch and the
best checkpoint by the task's metric (best-<step>/, best_checkpoint.json), which --do_eval, --do_predict and
--export_dir then use; eval_results.txt/.json; test_results.tsv and the GLUE leaderboard file (SST-2.tsv,
MNLI-m.tsv, ...). --export_dir gets a new version <export_dir>/<n>/ for TF Serving with the signatures
serving_default (raw text_a [, text_b] → probabilities and label, or score), serve_tensors and serve_examples,
and model.keras.

Rerunning the same command after a crash or kill resumes from the newest checkpoint in --output_dir. Exit status 1
with a one-line message on bad flags or data.
"""

import functools
import os
import signal
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags, logging  # noqa: E402

from official_bert import cli, distribution, tokenization  # noqa: E402
from official_bert.training.flags import define_shared_flags, strategy_from_flags  # noqa: E402
from official_bert.checkpoints import CheckpointError  # noqa: E402
from official_bert.classification import (ClassificationDataError, best_metric, get_processor,  # noqa: E402
                                          load_or_create_features, write_eval_results)
from official_bert.configs import BertConfig, ConfigError  # noqa: E402
from official_bert.export import export_classifier, tokenizer_layer  # noqa: E402
from official_bert.finetuning import (BestCheckpoint, FineTuningRun, Predictor, classifier_loss,  # noqa: E402
                                      classifier_metrics, classifier_model, evaluate_classifier,
                                      fine_tuning_schedule, has_text_b, load_trained_weights, predict_test_set,
                                      train_dataset_fn)
from official_bert.training import TrainingError, TrainingOptions, prepare_output_dir  # noqa: E402

FLAGS = flags.FLAGS

# The original's flags.
flags.DEFINE_string("data_dir", None, "The input data dir. Should contain the .tsv files (or other data files) for "
                    "the task.")
flags.DEFINE_string("bert_config_file", None, "The config json file corresponding to the pre-trained BERT model. "
                    "This specifies the model architecture.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_string("output_dir", None, "The output directory where the model checkpoints will be written.")
flags.DEFINE_string("init_checkpoint", None, "Initial checkpoint (usually from a pre-trained BERT model): Google's "
                    "TF1, Hugging Face or ours; a fine-tuning --output_dir means its best checkpoint. Ignored when "
                    "--output_dir holds a checkpoint.")
flags.DEFINE_bool("do_lower_case", True, "Whether to lower case the input text. Should be True for uncased models "
                  "and False for cased models.")
flags.DEFINE_integer("max_seq_length", 128, "The maximum total input sequence length after WordPiece tokenization. "
                     "Sequences longer than this will be truncated, and sequences shorter than this will be padded.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set (after every epoch when training, keeping "
                  "the best checkpoint).")
flags.DEFINE_bool("do_predict", False, "Whether to run the model in inference mode on the test set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0, "Total number of training epochs to perform.")
flags.DEFINE_float("warmup_proportion", 0.1, "Proportion of training to perform linear learning rate warmup for. "
                   "E.g., 0.1 = 10% of training.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", 1000, "How many steps to make in each call into the compiled training "
                     "loop (Keras steps_per_execution).")
define_shared_flags()
# Added.
flags.DEFINE_string("spm_model_file", None, "A SentencePiece model to tokenize with, instead of --vocab_file.")
flags.DEFINE_string("export_dir", None, "Export the model (the best checkpoint) for TF Serving as a new version "
                    "<export_dir>/<n>/.")
flags.DEFINE_string("xnli_language", None, "The XNLI language (--task_name=xnli): en, de, zh, ...")
flags.DEFINE_string("label_list", None, "The labels of --task_name=single or pair, comma-separated, in id order.")
flags.DEFINE_bool("use_tfds", False, "Read the task through tensorflow-datasets (prepared locally) instead of "
                  "--data_dir.")
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets' data_dir, with --use_tfds.")


def main(argv):
    if len(argv) > 1:
        cli.fail(f"unexpected arguments: {' '.join(argv[1:])}")
    if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir):
        cli.fail("at least one of --do_train, --do_eval, --do_predict or --export_dir must be given")
    signal.signal(signal.SIGTERM, cli.raise_keyboard_interrupt)
    run = None
    try:
        strategy = strategy_from_flags()  # first: a multi-worker strategy must precede other TensorFlow ops
        is_chief = distribution.is_chief(strategy)
        cli.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
        config = BertConfig.from_json_file(FLAGS.bert_config_file)
        config.check_seq_length(FLAGS.max_seq_length, f"--bert_config_file={FLAGS.bert_config_file}")
        options = TrainingOptions(
            FLAGS.output_dir, train_batch_size=FLAGS.train_batch_size, eval_batch_size=FLAGS.eval_batch_size,
            learning_rate=FLAGS.learning_rate, save_checkpoints_steps=FLAGS.save_checkpoints_steps,
            iterations_per_loop=FLAGS.iterations_per_loop, mixed_precision=FLAGS.mixed_precision,
            jit_compile=FLAGS.jit_compile, log_steps=FLAGS.log_steps, seed=FLAGS.seed,
            init_checkpoint=FLAGS.init_checkpoint).validate()
        for flag, batch_size in (("--train_batch_size", FLAGS.train_batch_size),
                                 ("--eval_batch_size", FLAGS.eval_batch_size),
                                 ("--predict_batch_size", FLAGS.predict_batch_size)):
            distribution.per_replica_batch_size(batch_size, strategy.num_replicas_in_sync, flag)
        processor = get_processor(FLAGS.task_name, FLAGS.data_dir, label_list=FLAGS.label_list,
                                  xnli_language=FLAGS.xnli_language, use_tfds=FLAGS.use_tfds,
                                  tfds_data_dir=FLAGS.tfds_data_dir)
        tokenizer = tokenization.create_tokenizer(FLAGS.vocab_file, FLAGS.spm_model_file, FLAGS.do_lower_case)

        # Input: every split needed, converted once and cached in --output_dir (see classification/cache.py);
        # evaluation and prediction sets are padded to whole batches.
        features = functools.partial(load_or_create_features, processor, tokenizer=tokenizer,
                                     max_seq_length=FLAGS.max_seq_length, output_dir=FLAGS.output_dir,
                                     tokenizer_file=FLAGS.vocab_file or FLAGS.spm_model_file,
                                     do_lower_case=FLAGS.do_lower_case)
        train_file = features("train") if FLAGS.do_train else None
        dev_files = {split: features(split, pad_to_multiple_of=FLAGS.eval_batch_size)
                     for split in processor.dev_splits} if FLAGS.do_eval else {}
        test_files = {split: features(split, pad_to_multiple_of=FLAGS.predict_batch_size)
                      for split in processor.test_splits} if FLAGS.do_predict else {}

        # Model.
        keras.utils.set_random_seed(FLAGS.seed)
        with strategy.scope():
            model = classifier_model(config, processor, FLAGS.mixed_precision)
        predictor = Predictor(model, strategy)

        # Training, with the dev set evaluated after every epoch (--do_eval) and the best checkpoint kept.
        if FLAGS.do_train:
            if is_chief:
                prepare_output_dir(FLAGS.output_dir, config, FLAGS.vocab_file, FLAGS.init_checkpoint)
            drop_remainder = isinstance(strategy, tf.distribute.TPUStrategy)  # TPUs need fixed batch shapes
            schedule = fine_tuning_schedule(train_file.num_examples, FLAGS.train_batch_size, FLAGS.num_train_epochs,
                                            FLAGS.warmup_proportion, drop_remainder)
            run = FineTuningRun(model, classifier_loss(processor), options, schedule, strategy,
                                classifier_metrics(processor), do_lower_case=FLAGS.do_lower_case)
            evaluate = functools.partial(evaluate_classifier, predictor, processor, dev_files,
                                         FLAGS.eval_batch_size) if FLAGS.do_eval else None
            best = BestCheckpoint(FLAGS.output_dir, best_metric(processor.task_name, processor.dev_splits),
                                  vocab_file=FLAGS.vocab_file)
            run.train(train_dataset_fn(train_file, FLAGS.train_batch_size, FLAGS.seed, drop_remainder), evaluate,
                      best)
        global_step = load_trained_weights(model, FLAGS.output_dir, FLAGS.init_checkpoint, FLAGS.do_lower_case)

        # Every worker evaluates and predicts (the replicas' outputs are gathered); only the chief's files are kept.
        with distribution.WorkerDirectory(FLAGS.output_dir, strategy) as directory:
            if FLAGS.do_eval:
                results = evaluate_classifier(predictor, processor, dev_files, FLAGS.eval_batch_size)
                if global_step is not None:
                    results["global_step"] = global_step
                for key in sorted(results):
                    logging.info("eval %s = %s", key, results[key])
                write_eval_results(directory, results)
            for split, feature_file in test_files.items():
                for path in predict_test_set(predictor, processor, split, feature_file, FLAGS.predict_batch_size,
                                             directory):
                    logging.info("wrote %s", path)

        if FLAGS.export_dir and is_chief:
            path = export_classifier(
                FLAGS.export_dir, model, tokenizer_layer(FLAGS.vocab_file, FLAGS.spm_model_file, FLAGS.do_lower_case),
                FLAGS.max_seq_length, processor.label_list, text_b=has_text_b(processor),
                num_choices=processor.num_choices)
            logging.info("exported the model for serving to %s", path)
    except (ClassificationDataError, ConfigError, CheckpointError, TrainingError, tokenization.VocabError,
            distribution.DistributionError) as e:
        cli.fail(str(e))
    except KeyboardInterrupt:
        cli.exit_interrupted(run)


if __name__ == "__main__":
    flags.mark_flags_as_required(["task_name", "bert_config_file", "output_dir"])
    app.run(main)
