"""Runs an exported SavedModel over whole files: every input row, in order, with the model's answer.

    python predict.py --saved_model_dir=demo_out/export --input_file='passages/*.csv' --output_file=eras.jsonl \\
        [--columns=text_a=sentence] [--id_column=id] [--keep_columns=date,speaker] [--batch_size=32] \\
        [--on_error=fail|skip]

--saved_model_dir is a SavedModel of run_classifier / run_squad / run_ner / extract_features --export_dir, or
such an export directory (its newest version). --input_file is a glob (or comma-separated globs) of CSV, TSV
(header row), JSON Lines or plain-text files (one input per line), by extension or --input_format. Each input of
the signature (text_a [, text_b]; question, context; text) reads the column of its name, or the one --columns
names; a plain-text file's lines feed a one-input signature. --output_file gets one row per input row, in input
order: JSON Lines (`{"id": 1, "label": "1946-2021", "probabilities": {"1790-1860": 0.01, ...}}`; SQuAD `answer`
and `score`, NER `entities`, an embedding export `embedding`) or CSV (by its extension, or --output_format). The
id is the input's `id` column where it has one (--id_column names another), else the row's number in its file.

Progress lines (rows, rows/s, ETA) go to stderr; at the end a line such as `200,000 rows in 96.1 s (2,187 rows/s
after 4.6 s loading the model): wrote eras.jsonl`. Killed or interrupted (Ctrl-C, SIGTERM: it says how many rows
are kept), the same command continues after the last complete window of rows, and the output is the one an
uninterrupted run writes; it appears under its name only when complete. A model exported again to the same
directory, or an input changed in place, starts over instead (saying so). One run at a time per --output_file: a
second refuses, naming the first. Bad rows (a missing column, an empty text) stop the run naming file and row, or
with --on_error=skip go to <output_file>.errors.jsonl.

Exit status 1 with a one-line message on bad flags or input, or an --output_file another run writes; 130 when
interrupted.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import sys

from absl import flags

from official_bert.export.file_prediction import ON_ERROR, OUTPUT_FORMATS, PredictionError, predict_files
from official_bert.io.table_files import FORMATS
from official_bert.tools.flag_kinds import (INPUT_FILES, MAX_BATCH_SIZE, MODEL, OUTPUT_FILE, define_integer,
                                            define_path, define_text, define_text_list)

FLAGS = flags.FLAGS

define_path("saved_model_dir", None, "A SavedModel directory, or an export directory of numbered versions "
            "(the newest is used).", MODEL)
define_path("input_file", None, "The input: a glob, or comma-separated globs, of .csv, .tsv, .jsonl or .txt "
            "files (gs:// too).", INPUT_FILES)
flags.DEFINE_enum("input_format", None, FORMATS, "The input files' format, if their extensions do not say it.")
define_path("output_file", None, "The output: .jsonl or .csv (gs:// too); written whole at the end, by one "
            "run at a time (a second refuses).", OUTPUT_FILE)
flags.DEFINE_enum("output_format", None, OUTPUT_FORMATS, "jsonl or csv (default: by --output_file's extension, "
                  "JSON Lines unless .csv).")
define_text_list("columns", [], "INPUT=COLUMN pairs: which column feeds each input of the signature (default: "
                 "the column of the input's name; a plain-text file's lines for a one-input signature).")
define_text("id_column", None, "The column holding each row's id (default: the column 'id' where every input "
            "file has one, else the row's number in its file, FILE:NUMBER over several files; --id_column= "
            "numbers the rows even then).")
define_text_list("keep_columns", [], "Input columns copied to each output row (one named like an output field, "
                 "e.g. label, as input_<name>).")
define_integer("batch_size", 32, "Rows per call of the model.", 1, MAX_BATCH_SIZE)
define_integer("length_window", None, "Rows sorted by length together before batching (default 32 batches); "
               "also how often progress is saved for a rerun to continue from.", 1, 10**7)
flags.DEFINE_bool("length_batching", True, "Batch rows of similar length (within --length_window).")
flags.DEFINE_enum("on_error", "fail", ON_ERROR, "fail: stop at the first bad row, naming it; skip: write bad rows "
                  "to --errors_file and go on.")
define_path("errors_file", None, "Where --on_error=skip writes bad rows (default <output_file>.errors.jsonl).",
            OUTPUT_FILE)
define_text("signature", "serving_default", "The signature to call: its inputs must be strings [batch].")


def main():
    columns = {}
    for pair in FLAGS.columns:
        name, equals, column = pair.partition("=")
        if not equals or not name or not column:
            raise PredictionError(f"--columns={','.join(FLAGS.columns)}: expected INPUT=COLUMN pairs, got {pair!r}")
        columns[name] = column
    summary = predict_files(
        FLAGS.saved_model_dir, FLAGS.input_file, FLAGS.output_file, input_format=FLAGS.input_format,
        output_format=FLAGS.output_format, columns=columns, id_column=FLAGS.id_column,
        keep_columns=FLAGS.keep_columns, batch_size=FLAGS.batch_size, window=FLAGS.length_window,
        length_batching=FLAGS.length_batching, on_error=FLAGS.on_error, errors_file=FLAGS.errors_file,
        signature=FLAGS.signature, report=lambda line: print(line, file=sys.stderr, flush=True))
    rate = (summary.rows - summary.resumed_from) / max(summary.seconds - summary.load_seconds, 1e-9)
    skipped = f", {summary.skipped:,} bad rows written to {summary.errors_file}" if summary.skipped else ""
    resumed = f" (continued after row {summary.resumed_from:,})" if summary.resumed_from else ""
    print(f"{summary.rows:,} rows in {summary.seconds:.1f} s ({rate:,.0f} rows/s after {summary.load_seconds:.1f} s "
          f"loading the model){resumed}: wrote {summary.output_file}{skipped}")


def run():
    """The tool as a command (`python predict.py`, or the console script `bert-predict`)."""
    cli.run(main, required_flags=["saved_model_dir", "input_file", "output_file"])


if __name__ == "__main__":
    run()
