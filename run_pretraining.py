"""Pretrains BERT (masked LM + next sentence prediction) on the TFRecord files create_pretraining_data.py writes.

The original google-research/bert flags, plus distribution, mixed precision, LAMB and gradient accumulation:

    python run_pretraining.py --bert_config_file=bert_config.json --input_file='data/*.tfrecord' \
        --output_dir=run --vocab_file=vocab.txt --do_train --do_eval --train_batch_size=32 \
        --num_train_steps=100000 --num_warmup_steps=10000 [--distribution_strategy=mirrored] [--mixed_precision=bf16]

Rerunning the same command after a crash or kill resumes from the newest checkpoint in --output_dir and stops
at --num_train_steps; the input is then read in a new order (see official_bert/training/pretraining.py).
When it finishes, --output_dir holds what fine-tuning needs: the checkpoint (load it with
load_checkpoint(model, output_dir)), bert_config.json and, given --vocab_file (or a vocab.txt beside
--init_checkpoint), vocab.txt. Exit status 1 with a one-line message on bad flags or data.

Multi-worker: set TF_CONFIG on every worker and pass --distribution_strategy=multi_worker_mirrored; only the
chief writes to --output_dir, which every worker must be able to read.
"""

import os
import signal
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorflow as tf  # noqa: E402
from absl import app, flags, logging  # noqa: E402

from official_bert import cli, distribution, input_pipeline  # noqa: E402
from official_bert.training.flags import define_shared_flags, strategy_from_flags  # noqa: E402
from official_bert.checkpoints import CheckpointError  # noqa: E402
from official_bert.configs import BertConfig, ConfigError  # noqa: E402
from official_bert.pretraining_data import PretrainingDataError  # noqa: E402
from official_bert.training import (PretrainingRun, TrainingError, TrainingOptions, prepare_output_dir,  # noqa: E402
                                    write_eval_results)

FLAGS = flags.FLAGS

# The original's flags.
flags.DEFINE_string("bert_config_file", None, "The config json file corresponding to the pre-trained BERT model. "
                    "This specifies the model architecture.")
flags.DEFINE_string("input_file", None, "Input TF example files (can be a glob or comma separated).")
flags.DEFINE_string("output_dir", None, "The output directory where the model checkpoints will be written.")
flags.DEFINE_string("init_checkpoint", None, "Initial checkpoint (usually from a pre-trained BERT model): "
                    "Google's TF1, Hugging Face or ours. Ignored when --output_dir holds a checkpoint to resume.")
flags.DEFINE_integer("max_seq_length", 128, "The maximum total input sequence length after WordPiece tokenization. "
                     "Must match the data.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum number of masked LM predictions per sequence. "
                     "Must match the data.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training (of one optimizer update).")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for the optimizer.")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", 1000, "How many steps to make in each call into the compiled "
                     "training loop (Keras steps_per_execution).")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
define_shared_flags()
# Added.
flags.DEFINE_enum("optimizer", "adamw", ["adamw", "lamb"], "adamw: the original AdamWeightDecay; lamb: LAMB.")
flags.DEFINE_float("weight_decay_rate", 0.01, "Decoupled weight decay, not applied to LayerNorm and bias.")
flags.DEFINE_integer("gradient_accumulation_steps", 1, "Split each update's --train_batch_size into this many "
                     "micro-batches and apply their mean gradient.")
flags.DEFINE_bool("no_nsp", False, "Train the masked LM only (the paper's 'No NSP' ablation).")
flags.DEFINE_integer("keep_checkpoint_max", 5, "How many checkpoints to keep (0: all).")
flags.DEFINE_string("vocab_file", None, "The vocabulary the data was made with, copied into --output_dir for "
                    "fine-tuning.")


def main(argv):
    if len(argv) > 1:
        cli.fail(f"unexpected arguments: {' '.join(argv[1:])}")
    if not FLAGS.do_train and not FLAGS.do_eval:
        cli.fail("at least one of --do_train or --do_eval must be given")
    signal.signal(signal.SIGTERM, cli.raise_keyboard_interrupt)
    run = None
    try:
        strategy = strategy_from_flags()  # first: a multi-worker strategy must precede other TensorFlow ops
        options = TrainingOptions(
            FLAGS.output_dir, train_batch_size=FLAGS.train_batch_size, eval_batch_size=FLAGS.eval_batch_size,
            learning_rate=FLAGS.learning_rate, num_train_steps=FLAGS.num_train_steps,
            num_warmup_steps=FLAGS.num_warmup_steps, save_checkpoints_steps=FLAGS.save_checkpoints_steps,
            iterations_per_loop=FLAGS.iterations_per_loop, max_eval_steps=FLAGS.max_eval_steps,
            optimizer=FLAGS.optimizer, weight_decay_rate=FLAGS.weight_decay_rate,
            gradient_accumulation_steps=FLAGS.gradient_accumulation_steps, mixed_precision=FLAGS.mixed_precision,
            jit_compile=FLAGS.jit_compile, use_nsp=not FLAGS.no_nsp, keep_checkpoint_max=FLAGS.keep_checkpoint_max,
            log_steps=FLAGS.log_steps, seed=FLAGS.seed, init_checkpoint=FLAGS.init_checkpoint).validate()
        if not FLAGS.do_train and not options.init_checkpoint and not tf.train.latest_checkpoint(options.output_dir):
            cli.fail("--do_eval without --do_train evaluates a checkpoint: none in --output_dir, and no --init_checkpoint")
        config = BertConfig.from_json_file(FLAGS.bert_config_file)

        data = input_pipeline.open_pretraining_files(FLAGS.input_file, FLAGS.max_seq_length,
                                                     FLAGS.max_predictions_per_seq, config.vocab_size, options.use_nsp)
        logging.info("%d input files of examples with %d tokens and %d predictions", len(data.paths),
                     data.seq_length, data.max_predictions_per_seq)

        if distribution.is_chief(strategy):
            prepare_output_dir(options.output_dir, config, FLAGS.vocab_file, options.init_checkpoint)
        run = PretrainingRun(config, options, strategy)

        if FLAGS.do_train:
            run.train(data)

        if FLAGS.do_eval:
            results = run.evaluate(data)
            if run.is_chief:
                write_eval_results(results, options.output_dir)
            for key in sorted(results):
                logging.info("eval %s = %s", key, results[key])
    except (ConfigError, CheckpointError, PretrainingDataError, TrainingError, distribution.DistributionError) as e:
        cli.fail(str(e))
    except KeyboardInterrupt:
        cli.exit_interrupted(run)


if __name__ == "__main__":
    flags.mark_flags_as_required(["bert_config_file", "input_file", "output_dir"])
    app.run(main)
