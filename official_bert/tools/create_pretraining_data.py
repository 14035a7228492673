"""Creates BERT pretraining examples (masked LM + next sentence) as TFRecord files.

A drop-in for google-research/bert's create_pretraining_data.py: the same flags, algorithm and features
(random next segments from the whole corpus, all examples shuffled together), but in bounded memory, spread over
all cores, and without importing TensorFlow for local files (see official_bert.pretraining_data).

    python data_prep/create_pretraining_data.py --input_file=corpus.txt --output_file=train.tfrecord \\
        --vocab_file=vocab.txt [--do_whole_word_mask] [--num_workers=N] [--num_output_shards=N]

Input: UTF-8 text, one sentence per line, a blank line between documents. Exit status 1 with a one-line
message on bad input; output files appear only when the run completes.
"""

import os
import sys

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ logging (TF: for scheme:// paths only)

from absl import flags, logging

from official_bert import pretraining_data as ptd
from official_bert import tokenization
from official_bert.tools.flag_kinds import (INPUT_FILE, INPUT_FILES, MAX_SEED, MAX_SEQ_LENGTH, OUTPUT_FILES,
                                            define_integer, define_path, define_real)

FLAGS = flags.FLAGS

define_path("input_file", None, "Input raw text file (or comma-separated list of files; globs allowed).", INPUT_FILES)
define_path("output_file", None, "Output TF example file (or comma-separated list of files, written "
            "round-robin).", OUTPUT_FILES)
define_path("vocab_file", None, "The vocabulary file that the BERT model was trained on.", INPUT_FILE)
define_path("spm_model_file", None, "A SentencePiece model to tokenize with instead of --vocab_file "
            "(whole words are then the pieces from one \"\u2581\" piece to the next).", INPUT_FILE)
flags.DEFINE_bool("do_lower_case", True, "Whether to lower case the input text. Should be True for uncased "
                  "models and False for cased models.")
flags.DEFINE_bool("preserve_unused_tokens", False, "If True, Wordpiece tokenization will not be applied to words "
                  "in the vocab: an [unused*] token of the vocabulary in the text stays one token.")
flags.DEFINE_bool("do_whole_word_mask", False,
                  "Whether to use whole word masking rather than per-WordPiece masking.")
define_integer("max_ngram_size", None, "Mask runs of up to this many whole words, shorter runs favoured "
               "(weight 1/n); needs --do_whole_word_mask.", 1, 10)
flags.DEFINE_bool("gzip_compress", False, "Write GZIP-compressed TFRecord files.")
flags.DEFINE_bool("use_v2_feature_names", False,
                  "Name the features input_word_ids / input_type_ids (Model Garden).")
define_integer("max_seq_length", 128, "Maximum sequence length.", 4, MAX_SEQ_LENGTH)
define_integer("max_predictions_per_seq", 20, "Maximum number of masked LM predictions per sequence.", 1,
               MAX_SEQ_LENGTH)
define_integer("random_seed", 12345, "Random seed for data generation.", 0, MAX_SEED)
define_integer("dupe_factor", 10, "Number of times to duplicate the input data (with different masks).", 1, 10000)
define_real("masked_lm_prob", 0.15, "Masked LM probability.", 0, 1, open_lower=True)
define_real("short_seq_prob", 0.1, "Probability of creating sequences which are shorter than the "
            "maximum length.", 0, 1)
define_real("mask_token_prob", 0.8, "Share of predicted tokens replaced by [MASK].", 0, 1)
define_real("random_token_prob", 0.1, "Share of predicted tokens replaced by a random token (the rest "
            "are kept).", 0, 1)
flags.DEFINE_bool("no_nsp", False, "Single-segment examples packed to full length, without next sentence "
                  "prediction (the paper's 'No NSP' ablation; next_sentence_labels is always 0).")
define_integer("num_workers", None, "Worker processes (default: every available core). The output does "
               "not depend on it.", 1, 4096)
define_integer("num_output_shards", 1, "Write N files named OUTPUT_FILE-0000i-of-0000N instead of one.", 1, 100000)


def main():
    num_workers = len(os.sched_getaffinity(0)) if FLAGS.num_workers is None else FLAGS.num_workers
    if num_workers < 1:
        raise ptd.PretrainingDataError(f"--num_workers={num_workers}: expected at least 1")
    options = ptd.PretrainingOptions(
        max_seq_length=FLAGS.max_seq_length, max_predictions_per_seq=FLAGS.max_predictions_per_seq,
        dupe_factor=FLAGS.dupe_factor, masked_lm_prob=FLAGS.masked_lm_prob, short_seq_prob=FLAGS.short_seq_prob,
        do_whole_word_mask=FLAGS.do_whole_word_mask, max_ngram_size=FLAGS.max_ngram_size,
        mask_token_prob=FLAGS.mask_token_prob, random_token_prob=FLAGS.random_token_prob, no_nsp=FLAGS.no_nsp)
    if options.prediction_cap_warning():
        logging.warning("%s", options.prediction_cap_warning())

    input_files = ptd.expand_input_files(FLAGS.input_file)
    output_files = ptd.output_paths(FLAGS.output_file, FLAGS.num_output_shards)
    for path in output_files:
        ptd.check_output_file(path)
    tokenizer = tokenization.create_tokenizer(FLAGS.vocab_file, FLAGS.spm_model_file, FLAGS.do_lower_case,
                                              preserve_unused_tokens=FLAGS.preserve_unused_tokens)
    generator = ptd.InstanceGenerator(tokenizer, options, FLAGS.random_seed, FLAGS.use_v2_feature_names)

    logging.info("reading %d input files (%s), writing %d output files (%s) with %d workers", len(input_files),
                 _first_three(input_files), len(output_files), _first_three(output_files), num_workers)
    progress = ptd.Progress()
    try:
        stats = ptd.create_pretraining_data(input_files, output_files, generator, num_workers=num_workers,
                                            gzip_compress=FLAGS.gzip_compress, progress=progress)
    except KeyboardInterrupt:
        print("create_pretraining_data: interrupted; no output file was written", file=sys.stderr)
        sys.exit(130)

    for line in stats.summary(options.max_num_tokens, options.no_nsp):
        logging.info("%s", line)
    for line in stats.warnings():
        logging.warning("%s", line)
    documents_per_s, instances_per_s = progress.rates()
    logging.info("%.0f documents/s, %.0f instances/s", documents_per_s, instances_per_s)


def _first_three(paths):
    return ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")


def run():
    """The tool as a command (`python data_prep/create_pretraining_data.py`, or the console script
    `bert-create-pretraining-data`)."""
    cli.run(main, required_flags=["input_file", "output_file"])


if __name__ == "__main__":
    run()
