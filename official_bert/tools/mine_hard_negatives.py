"""Mines hard negatives for training pairs with an embedding model (the starting one, or a trained run_embeddings.py
--output_dir) and writes the triplets run_embeddings.py trains on — sentence-transformers' `mine_hard_negatives`.

    python mine_hard_negatives.py --init_checkpoint=all-MiniLM-L6-v2 --input_file=data/retrieval/train.jsonl \
        --output_file=train_triplets.jsonl --num_negatives=3 --range_min=10 --range_max=50 --relative_margin=0.05
    python run_embeddings.py --train_file=train_triplets.jsonl ...

Each distinct anchor (--anchor_column) is searched, exactly, against the corpus: every positive (--positive_column)
plus --corpus_file's passages (a .txt file, one a line, or CSV/TSV/JSON Lines with --corpus_column), each text once.
Its positives are left out; --absolute_margin (drop a candidate scoring within this of the query's lowest positive
score), --relative_margin (or above positive − |positive| × margin), --max_score and --min_score filter the rest; of
those left, ranks --range_min to --range_max are candidates and the first --num_negatives the negatives.
--output_format=triplet writes a row a negative (anchor, positive, negative), n-tuple a row a pair (negative_1, ...;
pairs without as many negatives left out). The output is JSON Lines, written whole or not at all.

Exit status 1 with a one-line message on bad flags or data.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import json
import os

import tensorflow as tf
from absl import flags, logging

from official_bert.checkpoints.sentence_transformers import sentence_transformers_settings
from official_bert.finetuning.predict import Predictor
from official_bert.io import is_file, write_text
from official_bert.io.locks import output_file_lock
from official_bert.io.table_files import TEXT_COLUMN, FORMATS, read_rows
from official_bert.keras_models import TextEmbedder
from official_bert.retrieval.errors import RetrievalDataError
from official_bert.retrieval.mining import FORMATS as OUTPUT_FORMATS
from official_bert.retrieval.mining import MiningSettings, mine_hard_negatives
from official_bert.retrieval.search import DEFAULT_CHUNK_SIZE
from official_bert.retrieval.training_files import RowColumns, read_training_rows
from official_bert.tasks.embeddings import embedding_function, text_packer

FLAGS = flags.FLAGS

flags.DEFINE_string("init_checkpoint", None, "The embedding model: a sentence-transformers or Hugging Face directory, "
                    "a run_embeddings.py --output_dir, or any checkpoint TextEmbedder.from_checkpoint loads.")
flags.DEFINE_string("input_file", None, "The pairs: CSV or TSV with a header row, or JSON Lines.")
flags.DEFINE_enum("input_format", None, [f for f in FORMATS if f != "text"], "--input_file's format; default: from "
                  "its extension.")
flags.DEFINE_string("anchor_column", "anchor", "The anchors' (queries') column.")
flags.DEFINE_string("positive_column", "positive", "The positives' column.")
flags.DEFINE_string("corpus_file", None, "More passages to mine from: .txt (one a line), or CSV/TSV/JSON Lines.")
flags.DEFINE_string("corpus_column", TEXT_COLUMN, "--corpus_file's passage column.")
flags.DEFINE_string("output_file", None, "The triplets, as JSON Lines.")
flags.DEFINE_integer("num_negatives", 3, "Negatives a pair.")
flags.DEFINE_integer("range_min", 0, "Candidates skipped first (the nearest are often unlabelled positives).")
flags.DEFINE_integer("range_max", None, "The last rank considered; default --range_min + --num_negatives (times 10 "
                     "with a score filter).")
flags.DEFINE_float("absolute_margin", None, "Drop candidates scoring within this of the query's positive.")
flags.DEFINE_float("relative_margin", None, "Drop candidates scoring above positive − |positive| × this.")
flags.DEFINE_float("max_score", None, "Drop candidates scoring above this (cosine similarity).")
flags.DEFINE_float("min_score", None, "Drop candidates scoring below this.")
flags.DEFINE_enum("output_format", "triplet", list(OUTPUT_FORMATS), "triplet: a row a negative; n-tuple: a row a "
                  "pair, negative_1 ... negative_<num_negatives>.")
flags.DEFINE_integer("batch_size", 64, "Texts embedded at once.", lower_bound=1)
flags.DEFINE_integer("max_seq_length", None, "Tokens a text; default the sentence-transformers model's, else 128.")
flags.DEFINE_integer("corpus_chunk_size", DEFAULT_CHUNK_SIZE, "Passages embedded and searched at once.",
                     lower_bound=1)


def read_corpus():
    """--corpus_file's passages (none without it)."""
    path = FLAGS.corpus_file
    if not path:
        return []
    if not is_file(path):
        raise RetrievalDataError(f"--corpus_file={path}: no such file")
    column = TEXT_COLUMN if path.endswith(".txt") else FLAGS.corpus_column
    return [row[column] for _, row in read_rows(path, columns=[column]) if str(row[column]).strip()]


def check_output():
    """Refuses an --output_file that is one of the inputs, or a directory."""
    output = os.path.realpath(FLAGS.output_file)
    for flag in ("input_file", "corpus_file"):
        if FLAGS[flag].value and os.path.realpath(FLAGS[flag].value) == output:
            raise RetrievalDataError(f"--output_file={FLAGS.output_file} is --{flag}: the triplets would replace it")
    if tf.io.gfile.isdir(FLAGS.output_file):
        raise RetrievalDataError(f"--output_file={FLAGS.output_file} is a directory; expected a file")


def main():
    settings = MiningSettings(FLAGS.num_negatives, FLAGS.range_min, FLAGS.range_max, FLAGS.absolute_margin,
                              FLAGS.relative_margin, FLAGS.max_score, FLAGS.min_score, FLAGS.output_format).check()
    check_output()
    pairs = read_training_rows(FLAGS.input_file, columns=RowColumns(FLAGS.anchor_column, FLAGS.positive_column, ()),
                               input_format=FLAGS.input_format, flag="--input_file")
    corpus = read_corpus()
    length = FLAGS.max_seq_length or sentence_transformers_settings(FLAGS.init_checkpoint).get("sequence_length", 128)
    model = TextEmbedder.from_checkpoint(FLAGS.init_checkpoint, sequence_length=length)
    embed = embedding_function(Predictor(model, tf.distribute.get_strategy(), bucket_width=8),
                               text_packer(model.preprocessor), FLAGS.batch_size, model.encoder.config.hidden_size)
    with output_file_lock(FLAGS.output_file):
        rows, complete = mine_hard_negatives(*pairs.texts[:2], embed, settings, corpus, FLAGS.corpus_chunk_size)
        write_text(FLAGS.output_file, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    logging.info("wrote %s: %d rows; %d of %d pairs got %d negatives", FLAGS.output_file, len(rows), complete,
                 len(pairs), settings.num_negatives)


def run():
    """The tool as a command (`python mine_hard_negatives.py`, or the console script `bert-mine-hard-negatives`)."""
    cli.run(main, required_flags=["init_checkpoint", "input_file", "output_file"])


if __name__ == "__main__":
    run()
