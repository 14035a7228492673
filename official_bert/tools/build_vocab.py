"""Learns a WordPiece vocabulary (or trains a SentencePiece model) from a pretraining corpus.

    python data_prep/build_vocab.py --input_file=corpus.txt --output_file=vocab.txt --vocab_size=30522 \
        [--do_lower_case=false] [--num_unused_tokens=100]
    python data_prep/build_vocab.py --input_file=corpus.txt --spm_model_file=sp.model --vocab_size=30000

Input: UTF-8 text, one sentence per line, a blank line between documents (create_pretraining_data's
format), streamed. The vocabulary starts with [PAD] [UNK] [CLS] [SEP] [MASK] and the [unused*] slots, and
its words are those of BasicTokenizer, so FullTokenizer covers the corpus with few [UNK]s. Exit status 1
with a one-line message on bad input; the output appears only when complete.
"""

from absl import flags, logging

from official_bert import pretraining_data
from official_bert.text import sentencepiece_tokenizer, vocab_builder
from official_bert.tools import cli
from official_bert.tools.flag_kinds import INPUT_FILES, OUTPUT_FILE, define_integer, define_path

FLAGS = flags.FLAGS

define_path("input_file", None, "Input raw text file (or comma-separated list of files; globs allowed).", INPUT_FILES)
define_path("output_file", None, "The WordPiece vocabulary to write, one token per line.", OUTPUT_FILE)
define_path("spm_model_file", None, "Train a SentencePiece model to this file instead of a WordPiece "
            "vocabulary.", OUTPUT_FILE)
define_integer("vocab_size", 30522, "Tokens in the vocabulary, reserved ones included (at most).", 10, 2000000)
flags.DEFINE_bool("do_lower_case", True, "Lowercase and strip accents (uncased model); False for a cased model.")
define_integer("num_unused_tokens", 0, "[unused0].. slots reserved after the special tokens (WordPiece).", 0, 1000000)
flags.DEFINE_bool("preserve_unused_tokens", False, "Keep the corpus's [unused<n>] of the reserved slots whole, as "
                  "create_pretraining_data --preserve_unused_tokens does, instead of learning their pieces.")
define_integer("max_unique_chars", 1000, "Alphabet size: words with rarer characters are not learned from "
               "(WordPiece).", 1, 1000000)


def main():
    if bool(FLAGS.output_file) == bool(FLAGS.spm_model_file):
        raise vocab_builder.CorpusError("pass exactly one of --output_file (WordPiece) and --spm_model_file "
                                        "(SentencePiece)")
    input_files = pretraining_data.expand_input_files(FLAGS.input_file)
    if FLAGS.spm_model_file:
        pretraining_data.check_output_file(FLAGS.spm_model_file, "--spm_model_file")
        logging.info("training a SentencePiece model on %d files", len(input_files))
        sentencepiece_tokenizer.train(input_files, FLAGS.spm_model_file, FLAGS.vocab_size,
                                      do_lower_case=FLAGS.do_lower_case)
        logging.info("wrote %s", FLAGS.spm_model_file)
    else:
        pretraining_data.check_output_file(FLAGS.output_file)
        vocab_builder.build_vocab(input_files, FLAGS.output_file, FLAGS.vocab_size, FLAGS.do_lower_case,
                                  FLAGS.num_unused_tokens, FLAGS.max_unique_chars, FLAGS.preserve_unused_tokens)


def run():
    """The tool as a command (`python data_prep/build_vocab.py`, or the console script `bert-build-vocab`)."""
    cli.run(main, required_flags=["input_file"])


if __name__ == "__main__":
    run()
