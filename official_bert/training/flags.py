"""The flags every training CLI shares: the original's TPU flags and the added device and precision flags."""

from absl import flags, logging

from official_bert import distribution

FLAGS = flags.FLAGS


def define_shared_flags():
    """Defines --use_tpu, --tpu_name, --tpu_zone, --gcp_project, --master, --num_tpu_cores,
    --distribution_strategy, --mixed_precision, --jit_compile, --seed and --log_steps."""
    flags.DEFINE_bool("use_tpu", False, "Whether to use TPU (implies --distribution_strategy=tpu).")
    flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use for training: its name or a "
                        "grpc://ip.address.of.tpu:8470 url.")
    flags.DEFINE_string("tpu_zone", None, "[Optional] GCE zone where the Cloud TPU is located in.")
    flags.DEFINE_string("gcp_project", None, "[Optional] Project name for the Cloud TPU-enabled project.")
    flags.DEFINE_string("master", None, "[Optional] TensorFlow master URL: the TPU address when --tpu_name is not "
                        "given.")
    flags.DEFINE_integer("num_tpu_cores", 8, "Only used if `use_tpu` is True. Total number of TPU cores to use; "
                         "a warning says so when the TPU has another number.")
    flags.DEFINE_enum("distribution_strategy", None, list(distribution.STRATEGIES), "How to spread training over "
                      "devices (default: one_device, or tpu with --use_tpu). multi_worker_mirrored reads TF_CONFIG.")
    flags.DEFINE_enum("mixed_precision", None, ["bf16", "fp16"], "Compute in bfloat16 or float16 (with loss "
                      "scaling), keeping float32 weights.")
    flags.DEFINE_bool("jit_compile", False, "Compile the training step with XLA (slower than plain TF on CPUs).")
    flags.DEFINE_integer("seed", 12345, "Random seed for initialization, dropout and the input order.")
    flags.DEFINE_integer("log_steps", 100, "Steps between progress lines and TensorBoard summaries.")


def strategy_from_flags():
    """The tf.distribute strategy the shared flags ask for (create it before any other TensorFlow op runs:
    a multi-worker strategy must be first). Raises `distribution.DistributionError` on a bad setting."""
    strategy = distribution.get_strategy(distribution.strategy_name(FLAGS.distribution_strategy, FLAGS.use_tpu),
                                         FLAGS.tpu_name or FLAGS.master, FLAGS.tpu_zone, FLAGS.gcp_project)
    if FLAGS.use_tpu and strategy.num_replicas_in_sync != FLAGS.num_tpu_cores:
        logging.warning("--num_tpu_cores=%d, but the TPU has %d cores: using them all", FLAGS.num_tpu_cores,
                        strategy.num_replicas_in_sync)
    return strategy
