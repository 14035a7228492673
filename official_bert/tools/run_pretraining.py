"""Pretrains BERT (masked LM + next sentence prediction) on the TFRecord files create_pretraining_data.py writes.

The original google-research/bert flags, plus distribution, mixed precision, LAMB and gradient accumulation:

    python run_pretraining.py --bert_config_file=bert_config.json --input_file='data/*.tfrecord' \
        --output_dir=run --vocab_file=vocab.txt --do_train --do_eval --train_batch_size=32 \
        --num_train_steps=100000 --num_warmup_steps=10000 [--distribution_strategy=mirrored] [--mixed_precision=bf16]

Rerunning the same command after a crash or kill resumes from the newest checkpoint in --output_dir and stops
at --num_train_steps, reading the batches an uninterrupted run reads from that step on (see
official_bert/training/pretraining.py).
When it finishes, --output_dir holds what fine-tuning needs: the checkpoint (load it with
load_checkpoint(model, output_dir)), bert_config.json and, given --vocab_file (or a vocab.txt beside
--init_checkpoint), vocab.txt. Exit status 1 with a one-line message on bad flags or data.

Multi-worker: set TF_CONFIG on every worker and pass --distribution_strategy=multi_worker_mirrored; only the
chief writes to --output_dir, which every worker must be able to read.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import tensorflow as tf
from absl import flags, logging

from official_bert import distribution
from official_bert.checkpoints import kinds, resolve_causal_attention
from official_bert.io import write_eval_results
from official_bert.tools.flag_kinds import (INPUT_FILE, INPUT_FILES, MAX_BATCH_SIZE, MAX_SEQ_LENGTH, MAX_STEPS, MODEL,
                                            RUN_DIRECTORY, define_integer, define_path, define_real, neutral)
from official_bert.tools.flags import (define_shared_flags, mixed_precision_from_flags, model_config_from_flags,
                                       strategy_from_flags)
from official_bert.training import input_pipeline
from official_bert.training import PretrainingRun, TrainingError, TrainingOptions, prepare_output_dir

FLAGS = flags.FLAGS

# The original's flags.
define_path("bert_config_file", None, "The config json file corresponding to the pre-trained BERT model. "
            "This specifies the model architecture.", INPUT_FILE)
define_path("input_file", None, "Input TF example files (can be a glob or comma separated).", INPUT_FILES)
define_path("output_dir", None, "The output directory where the model checkpoints will be written.", RUN_DIRECTORY)
define_path("init_checkpoint", None, "Initial checkpoint (usually from a pre-trained BERT model): "
            "Google's TF1, Hugging Face or ours. Ignored when --output_dir holds a checkpoint to resume.", MODEL)
define_integer("max_seq_length", 128, "The maximum total input sequence length after WordPiece tokenization. "
               "Must match the data.", 3, MAX_SEQ_LENGTH)
define_integer("max_predictions_per_seq", 20, "Maximum number of masked LM predictions per sequence. "
               "Must match the data.", 1, MAX_SEQ_LENGTH)
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
neutral("do_train", "do_eval")
define_integer("train_batch_size", 32, "Total batch size for training (of one optimizer update).", 1, MAX_BATCH_SIZE)
define_integer("eval_batch_size", 8, "Total batch size for eval.", 1, MAX_BATCH_SIZE, affects_result=False)
define_real("learning_rate", 5e-5, "The initial learning rate for the optimizer.", 0, 1, open_lower=True)
define_integer("num_train_steps", 100000, "Number of training steps.", 1, MAX_STEPS)
define_integer("num_warmup_steps", 10000, "Number of warmup steps.", 0, MAX_STEPS)
define_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.", 1, MAX_STEPS,
               affects_result=False)
define_integer("iterations_per_loop", 1000, "How many steps to make in each call into the compiled "
               "training loop (Keras steps_per_execution).", 1, MAX_STEPS, affects_result=False)
define_integer("max_eval_steps", 100, "Maximum number of eval steps.", 1, MAX_STEPS, affects_result=False)
define_shared_flags()
# Added.
flags.DEFINE_enum("optimizer", "adamw", ["adamw", "lamb"], "adamw: the original AdamWeightDecay; lamb: LAMB.")
define_real("weight_decay_rate", 0.01, "Decoupled weight decay, not applied to LayerNorm and bias.", 0, 1)
define_integer("gradient_accumulation_steps", 1, "Split each update's --train_batch_size into this many "
               "micro-batches and apply their mean gradient.", 1, 65536)
flags.DEFINE_bool("no_nsp", False, "Train the masked LM only (the paper's 'No NSP' ablation): --objective=mlm.")
flags.DEFINE_enum("objective", "mlm_nsp", ["mlm_nsp", "mlm", "ltr"], "mlm_nsp: masked LM + next sentence (BERT); "
                  "mlm: masked LM only ('No NSP'); ltr: a left-to-right LM with causal attention predicting every "
                  "next token of the records' unmasked text, no NSP (the paper's 'LTR & No NSP'; the "
                  "bert_config.json it writes records \"causal_attention\": true, and every tool that builds a model "
                  "from it keeps the left-only constraint).")
define_integer("keep_checkpoint_max", 5, "How many checkpoints to keep (0: all).", 0, 1000000, affects_result=False)
# The weights do not depend on it (the records hold token ids), so a resume may add it.
define_path("vocab_file", None, "The vocabulary the data was made with, copied into --output_dir for "
            "fine-tuning.", INPUT_FILE, affects_result=False)


def main():
    if not FLAGS.do_train and not FLAGS.do_eval:
        cli.fail("at least one of --do_train or --do_eval must be given")
    strategy = strategy_from_flags()  # first: a multi-worker strategy must precede other TensorFlow ops
    cli.output_lock(FLAGS.output_dir, strategy=strategy)
    options = TrainingOptions(
        FLAGS.output_dir, train_batch_size=FLAGS.train_batch_size, eval_batch_size=FLAGS.eval_batch_size,
        learning_rate=FLAGS.learning_rate, num_train_steps=FLAGS.num_train_steps,
        num_warmup_steps=FLAGS.num_warmup_steps, save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        iterations_per_loop=FLAGS.iterations_per_loop, max_eval_steps=FLAGS.max_eval_steps,
        optimizer=FLAGS.optimizer, weight_decay_rate=FLAGS.weight_decay_rate,
        gradient_accumulation_steps=FLAGS.gradient_accumulation_steps,
        mixed_precision=mixed_precision_from_flags(strategy), jit_compile=FLAGS.jit_compile, remat=FLAGS.remat,
        use_nsp=FLAGS.objective == "mlm_nsp" and not FLAGS.no_nsp,
        keep_checkpoint_max=FLAGS.keep_checkpoint_max, log_steps=FLAGS.log_steps,
        seed=FLAGS.seed, init_checkpoint=FLAGS.init_checkpoint).validate()
    if not FLAGS.do_train and not options.init_checkpoint and not tf.train.latest_checkpoint(options.output_dir):
        raise TrainingError("--do_eval without --do_train evaluates a checkpoint: none in --output_dir, and no "
                            "--init_checkpoint")
    # An LTR run records its left-only constraint in the bert_config.json it writes and in its checkpoints, for every
    # tool after it; pretraining continued from an LTR checkpoint (or resumed) stays LTR.
    config = resolve_causal_attention(model_config_from_flags(), FLAGS.objective == "ltr", FLAGS.bert_config_file,
                                      (options.init_checkpoint, options.output_dir),
                                      ("--objective=ltr", f"--objective={FLAGS.objective}"))

    data = input_pipeline.open_pretraining_files(FLAGS.input_file, FLAGS.max_seq_length,
                                                 FLAGS.max_predictions_per_seq, config.vocab_size, options.use_nsp)
    logging.info("%d input files of examples with %d tokens and %d predictions", len(data.paths),
                 data.seq_length, data.max_predictions_per_seq)

    if distribution.is_chief(strategy):
        prepare_output_dir(options.output_dir, config, FLAGS.vocab_file, options.init_checkpoint)
        kinds.record(options.output_dir, "BertPretrainer")
    run = cli.watch(PretrainingRun(config, options, strategy, left_to_right=FLAGS.objective == "ltr"))

    if FLAGS.do_train:
        run.train(data)

    if FLAGS.do_eval:
        results = run.evaluate(data)
        if run.is_chief:
            write_eval_results(options.output_dir, results)
        for key in sorted(results):
            logging.info("eval %s = %s", key, results[key])


def run():
    """The tool as a command (`python run_pretraining.py`, or the console script `bert-run-pretraining`)."""
    cli.run(main, required_flags=["bert_config_file", "input_file", "output_dir"])


if __name__ == "__main__":
    run()
