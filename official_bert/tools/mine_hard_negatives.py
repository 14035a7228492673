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
from official_bert.tools.flag_kinds import (INPUT_FILE, MAX_BATCH_SIZE, MAX_SEQ_LENGTH, MODEL, OUTPUT_FILE,
                                            define_integer, define_path, define_real, define_text)

FLAGS = flags.FLAGS
MAX_RANK = 10**9  # ranks in a corpus: beyond any corpus searched here

define_path("init_checkpoint", None, "The embedding model: a sentence-transformers or Hugging Face directory, a "
            "run_embeddings.py --output_dir, or any checkpoint TextEmbedder.from_checkpoint loads.", MODEL)
define_path("input_file", None, "The pairs: CSV or TSV with a header row, or JSON Lines.", INPUT_FILE)
flags.DEFINE_enum("input_format", None, [f for f in FORMATS if f != "text"], "--input_file's format; default: from "
                  "its extension.")
define_text("anchor_column", "anchor", "The anchors' (queries') column.")
define_text("positive_column", "positive", "The positives' column.")
define_path("corpus_file", None, "More passages to mine from: .txt (one a line), or CSV/TSV/JSON Lines.", INPUT_FILE)
define_text("corpus_column", TEXT_COLUMN, "--corpus_file's passage column.")
define_path("output_file", None, "The triplets, as JSON Lines.", OUTPUT_FILE)
define_integer("num_negatives", 3, "Negatives a pair.", 1, MAX_RANK)
define_integer("range_min", 0, "Candidates skipped first (the nearest are often unlabelled positives).", 0, MAX_RANK)
define_integer("range_max", None, "The last rank considered; default --range_min + --num_negatives (times 10 with a "
               "score filter).", 0, MAX_RANK)
# Scores are cosine similarities, in [-1, 1]: a margin is at most their whole range.
define_real("absolute_margin", None, "Drop candidates scoring within this of the query's positive.", 0, 2)
define_real("relative_margin", None, "Drop candidates scoring above positive − |positive| × this.", 0, 1)
define_real("max_score", None, "Drop candidates scoring above this (cosine similarity).", -1, 1)
define_real("min_score", None, "Drop candidates scoring below this.", -1, 1)
flags.DEFINE_enum("output_format", "triplet", list(OUTPUT_FORMATS), "triplet: a row a negative; n-tuple: a row a "
                  "pair, negative_1 ... negative_<num_negatives>.")
define_integer("batch_size", 64, "Texts embedded at once.", 1, MAX_BATCH_SIZE, affects_result=False)
define_integer("max_seq_length", None, "Tokens a text; default the sentence-transformers model's, else 128.", 1,
               MAX_SEQ_LENGTH)
define_integer("corpus_chunk_size", DEFAULT_CHUNK_SIZE, "Passages embedded and searched at once.", 1, MAX_BATCH_SIZE,
               affects_result=False)


def read_corpus():
    """--corpus_file's passages (none without it)."""
    path = FLAGS.corpus_file
    if not path:
        return []
    if not is_file(path):
        raise RetrievalDataError(f"--corpus_file={path}: no such file")
    column = TEXT_COLUMN if path.endswith(".txt") else FLAGS.corpus_column
    return [row[column] for _, row in read_rows(path, columns=[column]) if str(row[column]).strip()]


def main():
    settings = MiningSettings(FLAGS.num_negatives, FLAGS.range_min, FLAGS.range_max, FLAGS.absolute_margin,
                              FLAGS.relative_margin, FLAGS.max_score, FLAGS.min_score, FLAGS.output_format).check()
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
