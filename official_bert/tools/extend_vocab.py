"""Adds a domain's words to a released BERT vocabulary and writes the checkpoint that goes with it.

    python data_prep/extend_vocab.py --init_checkpoint=uncased_L-12_H-768_A-12 \
        --new_words=words.txt --mode=unused --output_dir=bert_base_med
    python data_prep/extend_vocab.py --init_checkpoint=uncased_L-12_H-768_A-12 \
        --from_corpus=pubmed.txt --num_new_words=500 --mode=append --output_dir=bert_base_med

Each new word becomes one vocabulary entry: over an [unusedX] entry (--mode=unused: the vocabulary size, the config and
every other id stay as they are) or after the last one (--mode=append: the word embeddings and the masked-LM output
bias grow, and so does vocab_size in the config). Its rows start at the mean of those of the pieces the old
vocabulary split it into. Old ids never change; a text none of whose words begins with a new word gets the same
ids and the same encoder outputs. --from_corpus picks the words the vocabulary splits into the most
pieces x occurrences and prints them with their counts and pieces. --output_dir (new or empty) gets vocab.txt,
bert_config.json and the checkpoint in the input's format (or --output_format); it appears whole or not at all.
Continue pretraining from it with run_pretraining.py --init_checkpoint (README: "Adapting to your domain").

A left-to-right checkpoint (run_pretraining.py --objective=ltr) is extended as one, and its output records it, as
run_classifier.py follows it. Prints what it did (each new word's id and pieces) to stdout. Exit status 1 with a
one-line message, before anything is written, for a word the basic tokenizer would split, a word listed twice, more
words than [unused] entries, a --new_words file without words, a --from_corpus file that is not UTF-8 (its byte
offset named), or a non-empty --output_dir.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags

from official_bert import pretraining_data
from official_bert.checkpoints import SAVE_FORMATS
from official_bert.checkpoints import vocab_extension
from official_bert.tools.flag_kinds import INPUT_FILE, INPUT_FILES, MODEL, OUTPUT_DIRECTORY, define_integer, define_path

FLAGS = flags.FLAGS

define_path("init_checkpoint", None, "The checkpoint to extend: Google's TF1, Hugging Face or ours (a "
            "directory, a TF checkpoint prefix or a .safetensors file).", MODEL)
define_path("vocab_file", None, "Its vocabulary (default: the vocab.txt beside the checkpoint).", INPUT_FILE)
define_path("bert_config_file", None, "Its config (default: the bert_config.json or config.json beside "
            "the checkpoint).", INPUT_FILE)
flags.DEFINE_bool("do_lower_case", None, "The model's casing (default: uncased when the vocabulary has no "
                  "uppercase entry). New words are lowercased and accent-stripped for an uncased model.")
define_path("new_words", None, "A file of words to add, one per line (a tab ends the word).", INPUT_FILE)
define_path("from_corpus", None, "Instead of --new_words: text files (comma-separated, globs allowed) whose "
            "--num_new_words words the vocabulary splits into the most pieces x occurrences are added.", INPUT_FILES)
define_integer("num_new_words", None, "How many words to take from --from_corpus.", 1, 1000000)
flags.DEFINE_enum("mode", "unused", vocab_extension.MODES, "unused: write the words over [unusedX] entries; "
                  "append: add rows after the last id.")
define_path("output_dir", None, "A new or empty directory for vocab.txt, bert_config.json and the "
            "checkpoint.", OUTPUT_DIRECTORY)
flags.DEFINE_enum("output_format", None, SAVE_FORMATS, "The checkpoint format to write (default: the input's).")
flags.DEFINE_bool("dry_run", False, "Check the words and print where they would go; write nothing.")


def main():
    if not FLAGS.dry_run and not FLAGS.output_dir:
        raise vocab_extension.VocabExtensionError("pass --output_dir (or --dry_run to only see the plan)")
    if bool(FLAGS.new_words) == bool(FLAGS.from_corpus):
        raise vocab_extension.VocabExtensionError("pass exactly one of --new_words and --from_corpus")
    words = vocab_extension.read_words_file(FLAGS.new_words) if FLAGS.new_words else ()
    corpus_files = pretraining_data.expand_input_files(FLAGS.from_corpus, "--from_corpus") if FLAGS.from_corpus else ()

    report = vocab_extension.extend_vocabulary(
        FLAGS.init_checkpoint, None if FLAGS.dry_run else FLAGS.output_dir, words, corpus_files,
        FLAGS.num_new_words, FLAGS.mode, FLAGS.vocab_file, FLAGS.bert_config_file, FLAGS.do_lower_case,
        FLAGS.output_format, source=FLAGS.new_words)
    print(report)


def run():
    """The tool as a command (`python data_prep/extend_vocab.py`, or the console script `bert-extend-vocab`)."""
    cli.run(main, required_flags=["init_checkpoint"])


if __name__ == "__main__":
    run()
