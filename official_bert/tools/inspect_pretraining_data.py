"""Prints the statistics of pretraining TFRecords that show how they were made, and decodes a few examples.

    python data_prep/inspect_pretraining_data.py --input_file='out/*.tfrecord' \\
        (--vocab_file=vocab.txt | --spm_model_file=sp.model) [--masked_lm_prob=0.15] [--max_records=100000] \\
        [--num_examples=3]

Reads v1 (input_ids, segment_ids) or v2 (input_word_ids, input_type_ids) names, gzip-compressed or not.
Refuses a vocabulary that the records contradict ([CLS] first, a [SEP] ending each segment, [MASK] at most
masked positions: checked on the first records). Reports the masked share and how often it equals the
num_to_predict formula, the [MASK]/kept/random split, [CLS]/[SEP] never masked, the next-sentence balance, a
length histogram and the share of short sequences, and words masked only in part (0 with --do_whole_word_mask).
"""

import os

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # tf.data on a GPU machine would claim GPU memory it does not need

from official_bert.tools import cli  # noqa: E402  (first: it quiets TensorFlow's C++ start-up logging)

from absl import flags  # noqa: E402

from official_bert import pretraining_data as ptd  # noqa: E402
from official_bert import tokenization  # noqa: E402
from official_bert.pretraining_data import inspection  # noqa: E402
from official_bert.tools.flag_kinds import INPUT_FILE, INPUT_FILES, define_integer, define_path, define_real

FLAGS = flags.FLAGS

define_path("input_file", None, "TFRecord files (comma-separated; globs allowed).", INPUT_FILES)
define_path("vocab_file", None, "The vocabulary the data was made with (to find [MASK]/[CLS]/[SEP], "
            "decode examples and check whole words).", INPUT_FILE)
define_path("spm_model_file", None, "The SentencePiece model the data was made with, instead of --vocab_file.",
            INPUT_FILE)
define_real("masked_lm_prob", 0.15, "The --masked_lm_prob the data was made with.", 0, 1, open_lower=True)
define_real("mask_token_prob", 0.8, "The --mask_token_prob the data was made with (to check that "
            "--vocab_file's [MASK] is the data's).", 0, 1)
define_integer("max_records", None, "Read at most this many records (default: all).", 1, 10**12)
define_integer("num_examples", 3, "Examples to decode.", 0, 1000000)


def main():
    paths = ptd.expand_input_files(FLAGS.input_file)
    # Only the vocabulary is needed: do_lower_case=None skips the casing check.
    vocab = tokenization.create_tokenizer(FLAGS.vocab_file, FLAGS.spm_model_file, do_lower_case=None).vocab
    for token in ("[CLS]", "[SEP]", "[MASK]"):
        if token not in vocab:
            raise ptd.PretrainingDataError(f"the vocabulary has no {token} token")
    tokens = ptd.tokens_by_id(vocab)
    inv_vocab = dict(enumerate(tokens))
    stats = inspection.ExampleStatistics(vocab["[MASK]"], vocab["[CLS]"], vocab["[SEP]"], FLAGS.masked_lm_prob,
                                         ptd.continuation_flags(tokens))
    decoded = []
    for batch in inspection.read_batches(paths, FLAGS.max_records):
        if stats.records == 0:  # the first batch is the sample: wrong ids would make every statistic nonsense
            _check_vocabulary(batch, vocab)
        stats.add_batch(batch)
        for row in range(min(len(batch["input_ids"]), FLAGS.num_examples - len(decoded))):
            decoded.append(inspection.decode_example({name: v[row] for name, v in batch.items()}, inv_vocab))
    if stats.records == 0:
        raise ptd.PretrainingDataError(f"--input_file: {', '.join(paths)}: no records (empty files)")
    names = next(filter(None, map(inspection.feature_names, paths)))
    print(f"files: {len(paths)}, feature names: {names}")
    print("\n".join(stats.report()))
    for i, text in enumerate(decoded):
        print(f"example {i}: {text}")


def _check_vocabulary(batch, vocab):
    mismatch = inspection.vocabulary_mismatch(batch, vocab["[CLS]"], vocab["[SEP]"], vocab["[MASK]"],
                                              FLAGS.mask_token_prob)
    if mismatch:
        flag = f"--vocab_file={FLAGS.vocab_file}" if FLAGS.vocab_file else f"--spm_model_file={FLAGS.spm_model_file}"
        raise ptd.PretrainingDataError(f"{flag}: not the vocabulary the records were made with: in the first "
                                       f"{len(batch['input_ids']):,} records, {mismatch}")


def run():
    """The tool as a command (`python data_prep/inspect_pretraining_data.py`, or the console script
    `bert-inspect-pretraining-data`)."""
    cli.run(main, required_flags=["input_file"])


if __name__ == "__main__":
    run()
