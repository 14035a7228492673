"""Converts a BERT checkpoint between Google's TF1 format, Hugging Face safetensors and our own; also RoBERTa's,
XLM-RoBERTa's, DistilBERT's and ELECTRA's (their config.json's model_type says which, and the log names it).

    python convert_checkpoint.py --input_path=uncased_L-12_H-768_A-12 \
        --output_path=bert_base_hf --output_format=huggingface

The input may be any format `official_bert.checkpoints.load_checkpoint` reads; every head it holds
(MLM/NSP, a classifier, the SQuAD head) is converted too, and a vocab.txt beside it is copied. --output_path must
be a new or empty directory (or pass --overwrite): converted files beside another checkpoint would shadow it.
Each file is written under a temporary name, so Ctrl-C or `kill` (exit status 130) leaves none half-written; what
`kill -9` leaves (hidden .<name>.incomplete-<pid> files) the next run removes, and never counts as content.
Exit status 1 with a one-line message on bad flags or input.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags, logging

from official_bert.checkpoints import SAVE_FORMATS
from official_bert.checkpoints.convert import convert_checkpoint
from official_bert.tools.flag_kinds import INPUT_FILE, MODEL, OUTPUT_DIRECTORY, define_path

FLAGS = flags.FLAGS
define_path("input_path", None, "Checkpoint to read: a directory, a TF checkpoint prefix, a "
            ".safetensors or a .keras file.", MODEL)
define_path("output_path", None, "Directory to write the converted checkpoint into: new or empty.", OUTPUT_DIRECTORY)
flags.DEFINE_enum("output_format", "official_bert", SAVE_FORMATS, "Format to write.")
define_path("bert_config_file", None, "bert_config.json / config.json of the model; needed when "
            "none lies beside the input.", INPUT_FILE)
flags.DEFINE_bool("overwrite", False, "Write into --output_path even if it holds files (those of the same names "
                  "are replaced).")


def main():
    cli.output_lock(FLAGS.output_path, flag="--output_path")
    report = convert_checkpoint(FLAGS.input_path, FLAGS.output_path, FLAGS.output_format, FLAGS.bert_config_file,
                                overwrite=FLAGS.overwrite)
    logging.info("wrote %s checkpoint%s to %s (%d variables)", FLAGS.output_format,
                 f" of a {report.family} model" if report.family else "", FLAGS.output_path, len(report.loaded))


def run():
    """The tool as a command (`python convert_checkpoint.py`, or the console script `bert-convert-checkpoint`)."""
    cli.run(main, required_flags=["input_path", "output_path"])


if __name__ == "__main__":
    run()
