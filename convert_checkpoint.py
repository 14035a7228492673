"""Converts a BERT checkpoint between Google's TF1 format, Hugging Face safetensors and our own.

    python convert_checkpoint.py --input_path=uncased_L-12_H-768_A-12 \
        --output_path=bert_base_hf --output_format=huggingface

The input may be any format `official_bert.checkpoints.load_checkpoint` reads; every head it holds
(MLM/NSP, a classifier, the SQuAD head) is converted too, and a vocab.txt beside it is copied.
"""

import sys

from absl import app, flags, logging

from official_bert.checkpoints import SAVE_FORMATS, CheckpointError
from official_bert.configs import ConfigError
from official_bert.checkpoints.convert import convert_checkpoint

FLAGS = flags.FLAGS
flags.DEFINE_string("input_path", None, "Checkpoint to read: a directory, a TF checkpoint prefix, a "
                    ".safetensors or a .keras file.")
flags.DEFINE_string("output_path", None, "Directory to write the converted checkpoint into.")
flags.DEFINE_enum("output_format", "official_bert", SAVE_FORMATS, "Format to write.")
flags.DEFINE_string("bert_config_file", None, "bert_config.json / config.json of the model; needed when "
                    "none lies beside the input.")
flags.mark_flags_as_required(["input_path", "output_path"])


def main(argv):
    del argv  # no positional arguments
    try:
        report = convert_checkpoint(FLAGS.input_path, FLAGS.output_path, FLAGS.output_format,
                                    FLAGS.bert_config_file)
    except (CheckpointError, ConfigError) as e:
        sys.exit(f"convert_checkpoint: {e}")
    logging.info("wrote %s checkpoint to %s (%d variables)", FLAGS.output_format, FLAGS.output_path,
                 len(report.loaded))


if __name__ == "__main__":
    app.run(main)
