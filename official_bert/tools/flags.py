"""The flags the command-line tools share, defined once, under the original google-research/bert names and help.

Each tool calls the groups it needs, then defines its own flags:

- `define_model_flags`: the checkpoint, its config and its vocabulary (every tool that builds a model);
- `define_finetuning_flags`: output, train/eval/predict switches, batch sizes, learning rate and schedule, plus
  `define_shared_flags` (every fine-tuning tool);
- `define_shared_flags`: the original's TPU flags and the added device, precision and seed flags (every
  training tool);
- `define_export_flags`: where to export a SavedModel for TF Serving;
- `define_sweep_flags`: the paper's hyperparameter grid and random restarts (`tools/sweep.py`).

`finetuning_settings_from_flags` then gives a fine-tuning tool's `FineTuningSettings` for `run_task`.
"""

import dataclasses

from absl import flags, logging

from official_bert import distribution
from official_bert.checkpoints import case
from official_bert.tools.flag_kinds import (INPUT_FILE, MAX_BATCH_SIZE, MAX_SEED, MAX_SEQ_LENGTH, MAX_STEPS, MODEL,
                                            OUTPUT_DIRECTORY, RUN_DIRECTORY, define_integer, define_numbers,
                                            define_path, define_real, define_text, neutral)
from official_bert.configs import BertConfig
from official_bert.export.tflite import QUANTIZATIONS
from official_bert.finetuning.settings import FineTuningSettings
from official_bert.text import tokenizer_spec as tokenizer_specs
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.training.precision import resolve_mixed_precision

FLAGS = flags.FLAGS


def define_model_flags(max_seq_length=128, init_checkpoint_help="Initial checkpoint (usually from a pre-trained "
                       "BERT model): Google's TF1, Hugging Face or ours. Ignored when --output_dir holds a "
                       "checkpoint."):
    """Defines --bert_config_file, --vocab_file, --spm_model_file, --init_checkpoint, --do_lower_case,
    --preserve_unused_tokens, --normalize_unicode and --max_seq_length (whose default the tool chooses: the
    original's run_squad.py uses 384)."""
    define_path("bert_config_file", None, "The config json file corresponding to the pre-trained BERT model. This "
                "specifies the model architecture.", INPUT_FILE)
    define_path("vocab_file", None, "The vocabulary file that the BERT model was trained on.", INPUT_FILE)
    define_path("init_checkpoint", None, init_checkpoint_help, MODEL)
    flags.DEFINE_bool("do_lower_case", True, "Whether to lower case the input text. Should be True for uncased "
                      "models and False for cased models. Left out: as --init_checkpoint is (False when its "
                      "vocabulary has uppercase entries), else True.")
    define_integer("max_seq_length", max_seq_length, "The maximum total input sequence length after WordPiece "
                   "tokenization. Sequences longer than this will be truncated, and sequences shorter than this will "
                   "be padded.", 3, MAX_SEQ_LENGTH)
    flags.DEFINE_bool("preserve_unused_tokens", False, "If True, Wordpiece tokenization will not be applied to "
                      "words in the vocab (bert-tensorflow 1.0.4: [unused*] tokens stay whole).")
    # Added.
    define_path("spm_model_file", None, "A SentencePiece model to tokenize with, instead of --vocab_file.", INPUT_FILE)
    flags.DEFINE_enum("normalize_unicode", None, ["nfc"], "nfc: compose the text (Unicode NFC) before tokenizing, "
                      "in training and in the export alike, so that decomposed (NFD) text finds a cased vocabulary's "
                      "composed tokens. Default: the original's ids; a cased run warns, with a count, about "
                      "decomposed characters its vocabulary has only composed.")


def define_finetuning_flags(do_predict_help="Whether to run the model in inference mode on the test set.",
                            do_eval_help="Whether to run eval on the dev set.", eval_batch_size=True,
                            length_bucket_width=8, length_bucket_note=""):
    """Defines the original fine-tuning flags (--output_dir, --do_train, --do_eval, --do_predict, the batch sizes,
    --learning_rate, --num_train_epochs, --warmup_proportion, --save_checkpoints_steps, --iterations_per_loop),
    the added --length_bucket_width, --bucket_by_length and --causal_attention, and the shared ones
    (`define_shared_flags`). run_squad.py, which has no eval batch, passes
    eval_batch_size=False; length_bucket_width is --length_bucket_width's default, length_bucket_note what its
    help adds."""
    define_path("output_dir", None, "The output directory where the model checkpoints will be written.", RUN_DIRECTORY)
    flags.DEFINE_bool("do_train", False, "Whether to run training.")
    flags.DEFINE_bool("do_eval", False, do_eval_help)
    flags.DEFINE_bool("do_predict", False, do_predict_help)
    neutral("do_train", "do_eval", "do_predict")
    define_integer("train_batch_size", 32, "Total batch size for training.", 1, MAX_BATCH_SIZE)
    if eval_batch_size:
        define_integer("eval_batch_size", 8, "Total batch size for eval.", 1, MAX_BATCH_SIZE, affects_result=False)
    define_integer("predict_batch_size", 8, "Total batch size for predict.", 1, MAX_BATCH_SIZE, affects_result=False)
    define_real("learning_rate", 5e-5, "The initial learning rate for Adam.", 0, 1, open_lower=True)
    define_real("num_train_epochs", 3.0, "Total number of training epochs to perform.", 0, 10_000, open_lower=True)
    define_real("warmup_proportion", 0.1, "Proportion of training to perform linear learning rate warmup for. E.g., "
                "0.1 = 10% of training.", 0, 1)
    define_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.", 1, MAX_STEPS,
                   affects_result=False)
    define_integer("iterations_per_loop", 1000, "How many steps to make in each call into the compiled training loop "
                   "(Keras steps_per_execution).", 1, MAX_STEPS, affects_result=False)
    # Added.
    define_integer("length_bucket_width", length_bucket_width, "Pad each batch only to its longest sequence, rounded "
                   "up to a multiple of this (less computation on short texts); 0 pads every sequence to "
                   "--max_seq_length, as TPUs and --jit_compile always do." + length_bucket_note, 0, MAX_SEQ_LENGTH)
    flags.DEFINE_bool("bucket_by_length", False, "Training batches of sequences of similar lengths (sorted within "
                      "chunks of 64 batches, the batches shuffled): less padding, other batches than the original's.")
    flags.DEFINE_bool("causal_attention", None, "The left-only constraint of a run_pretraining.py --objective=ltr "
                      "model, as the paper fine-tunes it: causal attention (and for a sentence representation the "
                      "last real token's output). Default: what --bert_config_file records (\"causal_attention\": "
                      "true for an LTR model; bidirectional without the key, as Google's and Hugging Face's "
                      "configs); a flag that contradicts the config is refused.")
    define_shared_flags()


def define_shared_flags():
    """Defines --use_tpu, --tpu_name, --tpu_zone, --gcp_project, --master, --num_tpu_cores,
    --distribution_strategy, --mixed_precision, --jit_compile, --remat, --seed and --log_steps."""
    flags.DEFINE_bool("use_tpu", False, "Whether to use TPU (implies --distribution_strategy=tpu).")
    define_text("tpu_name", None, "The Cloud TPU to use for training: its name or a grpc://ip.address.of.tpu:8470 url.",
                affects_result=False)
    define_text("tpu_zone", None, "[Optional] GCE zone where the Cloud TPU is located in.", affects_result=False)
    define_text("gcp_project", None, "[Optional] Project name for the Cloud TPU-enabled project.", affects_result=False)
    define_text("master", None, "[Optional] TensorFlow master URL: the TPU address when --tpu_name is not given.",
                affects_result=False)
    define_integer("num_tpu_cores", 8, "Only used if `use_tpu` is True. Total number of TPU cores to use; a warning "
                   "says so when the TPU has another number.", 1, 65536, affects_result=False)
    flags.DEFINE_enum("distribution_strategy", None, list(distribution.STRATEGIES), "How to spread training over "
                      "devices (default: one_device, or tpu with --use_tpu). multi_worker_mirrored reads TF_CONFIG.")
    flags.DEFINE_enum("mixed_precision", "auto", ["auto", "bf16", "fp16", "fp32"], "Compute in bfloat16 or "
                      "float16 (with loss scaling), keeping float32 weights. auto: bf16 where the hardware computes "
                      "it natively (CPUs with AVX512_BF16 or AMX, GPUs of compute capability 8.0 or more, TPUs), "
                      "float32 elsewhere; fp16 is never chosen for you.")
    flags.DEFINE_bool("jit_compile", False, "Compile the training step with XLA (slower than plain TF on CPUs).")
    flags.DEFINE_bool("remat", False, "Recompute each transformer block's activations in the backward pass instead "
                      "of keeping them: less memory for large models and long sequences, the same losses and "
                      "gradients, about three quarters of one more forward pass of time.")
    define_integer("seed", 12345, "Random seed for initialization, dropout and the input order.", 0, MAX_SEED)
    define_integer("log_steps", 100, "Steps between progress lines and TensorBoard summaries.", 1, MAX_STEPS,
                   affects_result=False)
    flags.DEFINE_bool("deterministic", False, "Make the run bit-for-bit repeatable: TensorFlow's op determinism "
                      "(tf.config.experimental.enable_op_determinism; some ops get slower) on top of --seed, which "
                      "fixes initialization, dropout and the input order.")
    # How and where a run computes, not what: a run resumed on other devices continues the same computation.
    neutral("use_tpu", "distribution_strategy", "jit_compile", "remat", "deterministic")


def define_export_precision_flags():
    """Defines --export_precision (`official_bert.export.precision.resolve_export_precision` reads it)."""
    flags.DEFINE_enum("export_precision", "fp32", ["auto", "fp32", "bf16"], "What the exported SavedModel computes "
                      "in (its inputs and outputs stay float32/strings), and a fine-tuning run's evaluation and "
                      "predictions too, so that the figures it reports are those the export serves (training follows "
                      "--mixed_precision). fp32: the same answers on any machine. bf16: faster where the serving "
                      "hardware computes it natively (CPUs with AMX or AVX512_BF16, GPUs of compute capability 8.0 or "
                      "more), slower elsewhere. auto: bf16 if this machine has it, else fp32.")
    neutral("export_precision")


def define_export_flags():
    """Defines --export_dir, --export_precision, --export_tflite_dir and --tflite_quantization."""
    define_path("export_dir", None, "Export the model for TF Serving as a new version <export_dir>/<n>/.",
                OUTPUT_DIRECTORY)
    define_export_precision_flags()
    define_tflite_flags()


def define_tflite_flags():
    """Defines --export_tflite_dir and --tflite_quantization: LiteRT files of a tool's --export_dir SavedModel."""
    define_path("export_tflite_dir", None, "Also convert that export to LiteRT: <export_tflite_dir>/model.tflite "
                "(token ids in, builtin ops only), text_model.tflite (raw text in) where the converter can, and "
                "vocab.txt.", OUTPUT_DIRECTORY)
    flags.DEFINE_enum("tflite_quantization", "none", QUANTIZATIONS, "LiteRT weights: none (float32), dynamic_int8 "
                      "(about a quarter of the size) or float16 (half).")
    neutral("tflite_quantization")


def define_sweep_flags():
    """Defines --sweep, --train_batch_sizes, --learning_rates, --epochs_list, --num_restarts, --seeds and
    --features_dir."""
    flags.DEFINE_bool("sweep", False, "Fine-tune over the paper's grid (Appendix A.3, with §4.1's learning rates): "
                      "--train_batch_sizes=16,32 --learning_rates=5e-5,4e-5,3e-5,2e-5 --epochs_list=2,3,4, each run "
                      "in its own directory under --output_dir/runs/, and use the best on dev.")
    define_numbers("train_batch_sizes", None, "Batch sizes to sweep, comma-separated (implies a sweep).", 1,
                   MAX_BATCH_SIZE, integers=True)
    define_numbers("learning_rates", None, "Learning rates to sweep, comma-separated (implies a sweep).", 0, 1,
                   open_lower=True)
    define_numbers("epochs_list", None, "Numbers of epochs to sweep, comma-separated (implies a sweep).", 0, 10_000,
                   open_lower=True)
    define_integer("num_restarts", None, "Random restarts of every configuration, with seeds --seed, --seed + 1, ... "
                   "(implies a sweep).", 1, 1000)
    define_numbers("seeds", None, "The seeds of every configuration, comma-separated (implies a sweep; instead of "
                   "--num_restarts).", 0, MAX_SEED, integers=True)
    define_path("features_dir", None, "Where the converted features are cached (default: --output_dir); the runs of a "
                "sweep share their sweep's.", OUTPUT_DIRECTORY)


def strategy_from_flags():
    """The tf.distribute strategy the shared flags ask for (create it before any other TensorFlow op runs:
    a multi-worker strategy must be first), with op determinism on under --deterministic. Raises
    `distribution.DistributionError` on a bad setting."""
    if FLAGS.deterministic:
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()
    strategy = distribution.get_strategy(distribution.strategy_name(FLAGS.distribution_strategy, FLAGS.use_tpu),
                                         FLAGS.tpu_name or FLAGS.master, FLAGS.tpu_zone, FLAGS.gcp_project)
    if FLAGS.use_tpu and strategy.num_replicas_in_sync != FLAGS.num_tpu_cores:
        logging.warning("--num_tpu_cores=%d, but the TPU has %d cores: using them all", FLAGS.num_tpu_cores,
                        strategy.num_replicas_in_sync)
    return strategy


# TokenizerSpec's fields under their flags' names.
_TOKENIZER_FLAGS = {"vocab_file": "vocab_file", "spm_model_file": "spm_model_file", "do_lower_case": "do_lower_case",
                    "preserve_unused_tokens": "preserve_unused_tokens", "ops": "tokenizer_ops",
                    "normalize_unicode": "normalize_unicode"}


def tokenizer_spec_from_flags():
    """The `TokenizerSpec` of --vocab_file / --spm_model_file, --do_lower_case, --preserve_unused_tokens,
    --normalize_unicode and --tokenizer_ops (those a tool does not define keep their defaults), checked. Without
    --vocab_file and --spm_model_file, a --bert_config_file of BERT's family (RoBERTa, XLM-R, DistilBERT, ELECTRA)
    reads the tokenizer files beside it or beside --init_checkpoint."""
    values = {field: FLAGS[flag].value for field, flag in _TOKENIZER_FLAGS.items() if flag in FLAGS}
    init_checkpoint = FLAGS["init_checkpoint"].value if "init_checkpoint" in FLAGS else None
    if not (values.get("vocab_file") or values.get("spm_model_file")) and "bert_config_file" in FLAGS and \
            FLAGS.bert_config_file:
        spec = tokenizer_specs.for_run(FLAGS.bert_config_file, init_checkpoint, _given_do_lower_case(),
                                       values.get("ops", "core"))
        if spec is not None:
            return spec
    if "do_lower_case" in values and _given_do_lower_case() is None and init_checkpoint:
        values["do_lower_case"] = case.own_casing(init_checkpoint)
    return TokenizerSpec(**values).check()


def _given_do_lower_case():
    """--do_lower_case where the command line gives it, else None (the checkpoint's own casing: a family's
    tokenizer's, a WordPiece checkpoint's `checkpoints.case.own_casing`)."""
    return FLAGS.do_lower_case if "do_lower_case" in FLAGS and FLAGS["do_lower_case"].present else None


def check_case_from_flags():
    """Refuses a given --do_lower_case that --init_checkpoint contradicts (`checkpoints.case.check_case`)."""
    case.check_case(_given_do_lower_case(), FLAGS.init_checkpoint, f"--init_checkpoint={FLAGS.init_checkpoint}")


def model_config_from_flags():
    """The `BertConfig` of --bert_config_file, checked to hold --max_seq_length positions."""
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    config.check_seq_length(FLAGS.max_seq_length, f"--bert_config_file={FLAGS.bert_config_file}")
    return config


def mixed_precision_from_flags(strategy):
    """--mixed_precision resolved for `strategy`'s devices: None (float32), "bf16" or "fp16"; "auto" is logged
    once with the reason."""
    return resolve_mixed_precision(FLAGS.mixed_precision, strategy)


def finetuning_settings_from_flags(sweep=None):
    """The `FineTuningSettings` of a fine-tuning tool's flags (those it does not define keep their defaults).

    Args:
        sweep: the `finetuning.sweep.Sweep` to run first (`tools.sweep.sweep_from_flags()`), or None.
    """
    settings = FineTuningSettings(FLAGS.output_dir, FLAGS.bert_config_file, strategy=strategy_from_flags,
                                  sweep=sweep)
    for field in dataclasses.fields(FineTuningSettings):
        if field.name in FLAGS and field.name not in ("output_dir", "bert_config_file", "strategy", "sweep"):
            setattr(settings, field.name, FLAGS[field.name].value)
    if "eval_batch_size" not in FLAGS:
        settings.eval_batch_size = settings.predict_batch_size
    settings.do_lower_case = _given_do_lower_case()  # not given: as the tokenizer is (run_task resolves it)
    return settings
