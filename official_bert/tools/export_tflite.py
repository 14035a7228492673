"""Converts an exported SavedModel to LiteRT (TensorFlow Lite) files for phones and embedded devices.

    python export_tflite.py --saved_model_dir=demo_out/export --output_dir=demo_out/litert \\
        [--tflite_quantization=none|dynamic_int8|float16] [--notext_model]

--saved_model_dir is a SavedModel of run_classifier / run_squad / run_ner / extract_features --export_dir, or
such an export directory of numbered versions (the newest is converted). --output_dir gets `model.tflite`
(token ids in, LiteRT builtin ops only), the vocabulary the app tokenizes with, and `text_model.tflite` (raw text
in, the tokenizer carried as Select TF ops) where the converter can convert the tokenizer; where it cannot, a
line says which op blocks it. Prints what it wrote and each file's size. An export computing in bfloat16
(--export_precision=bf16) is converted from its float32 twin, as --export_tflite_dir converts it.

--output_dir is written whole under a temporary name and renamed into place: a new or empty directory, or an
earlier --output_dir of this tool (replaced). A regular file at that path, or a directory holding files this tool
did not write, is refused in one line before the conversion, and left as it is.

Exit status 1 with a one-line message on bad flags, an --output_dir it must not replace, or a SavedModel the
converter cannot convert.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import tensorflow as tf
from absl import flags

from official_bert.export.tflite import QUANTIZATIONS, export_tflite, saved_model_version
from official_bert.tools.flag_kinds import MODEL, OUTPUT_DIRECTORY, define_path

FLAGS = flags.FLAGS

define_path("saved_model_dir", None, "A SavedModel directory, or an export directory of numbered versions "
            "(the newest is converted).", MODEL)
define_path("output_dir", None, "Where to write model.tflite, text_model.tflite and the vocabulary: a new "
            "or empty directory, or an earlier --output_dir of this tool (replaced whole); a directory "
            "holding other files is refused, and they are left as they are.", OUTPUT_DIRECTORY)
flags.DEFINE_enum("tflite_quantization", "none", QUANTIZATIONS, "none: float32; dynamic_int8: weights as int8 "
                  "(about a quarter of the size); float16: weights as float16 (half).")
flags.DEFINE_bool("text_model", True, "Also convert the raw-text signature to text_model.tflite (Select TF ops).")


def main():
    source = saved_model_version(FLAGS.saved_model_dir)
    written = export_tflite(source, FLAGS.output_dir, FLAGS.tflite_quantization, text_model=FLAGS.text_model)
    print(f"converted {source} ({FLAGS.tflite_quantization}):")
    for path in (written.model_path, written.text_model_path, *written.assets):
        if path:
            print(f"  {path}  {tf.io.gfile.stat(path).length / 2**20:.2f} MiB")
    if written.text_problem:
        print(f"  no text_model.tflite: {written.text_problem}")


def run():
    """The tool as a command (`python export_tflite.py`, or the console script `bert-export-tflite`)."""
    cli.run(main, required_flags=["saved_model_dir", "output_dir"])


if __name__ == "__main__":
    run()
