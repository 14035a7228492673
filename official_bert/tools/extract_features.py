"""Extracts BERT's hidden states for each line of a text file, as the original extract_features.py, plus pooled
sentence embeddings, compact binary outputs and SavedModel exports.

    python extract_features.py --input_file=input.txt --output_file=features.jsonl \\
        --vocab_file=uncased_L-12_H-768_A-12/vocab.txt --bert_config_file=uncased_L-12_H-768_A-12/bert_config.json \\
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt --layers=-1,-2,-3,-4 --max_seq_length=128 \\
        --batch_size=8

--input_file holds one text per line, or a pair as `text_a ||| text_b`. The output (--output_format=jsonl, the
original's) has one JSON object per line: {"linex_index": i, "features": [{"token": "[CLS]", "layers":
[{"index": -1, "values": [...]}, ...]}, ...]}, every token's values at each of --layers, rounded to 6 decimals.

Added: --output_format=npz|tfrecord (float32 or --output_dtype=float16 arrays, per-token values stored flat with
token offsets); --pooling=cls|mean|max (one vector per text and layer instead of one per token) and --normalize
(L2): --layers=-1 --pooling=mean --normalize is a sentence-transformers model's embedding (all-MiniLM-L6-v2:
--max_seq_length=256); --export_dir (a SavedModel whose serving_default takes raw `text` and returns that
`embedding`; --export_tflite_dir converts it to LiteRT files); --export_tfhub_dir (the TF Hub pair <dir>/preprocess
and <dir>/encoder, as Model Garden's). Any checkpoint format loads (Google's TF1, Hugging Face, ours). The input is
streamed: memory stays flat however long it is, and progress lines give the rate. Exit status 1 with a one-line
message on bad flags or input.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags

from official_bert import BertConfig, BertEncoder
from official_bert.checkpoints import load_checkpoint, resolve_causal_attention
from official_bert.export.embedding import export_embedding
from official_bert.export.precision import model_in_precision, resolve_export_precision
from official_bert.export.tfhub import export_tfhub
from official_bert.export.tflite import export_tflite
from official_bert.features import (DTYPES, OUTPUT_FORMATS, POOLINGS, FeatureError, FeatureExtractor,
                                    Progress, open_writer, parse_layers, read_inputs, tokenize_input)
from official_bert.tools.flag_kinds import (INPUT_FILE, MAX_BATCH_SIZE, OUTPUT_DIRECTORY, OUTPUT_FILE, define_integer,
                                            define_path, define_text)
from official_bert.tools.flags import (check_case_from_flags, define_export_precision_flags, define_model_flags,
                                       define_tflite_flags, tokenizer_spec_from_flags)

FLAGS = flags.FLAGS

# The original's flags.
define_path("input_file", None, "A text file of one input per line: `text_a`, or `text_a ||| text_b`.", INPUT_FILE)
define_path("output_file", None, "Where to write the features.", OUTPUT_FILE)
define_text("layers", "-1,-2,-3,-4", "The layers whose outputs to write: comma-separated indexes into the "
            "encoder's layers, -1 the last.")
define_model_flags(init_checkpoint_help="Initial checkpoint (usually from a pre-trained BERT model): Google's TF1, "
                   "Hugging Face or ours.")
define_integer("batch_size", 32, "Batch size for predictions.", 1, MAX_BATCH_SIZE)
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU (this tool runs on the CPU or GPU).")
define_text("master", None, "If using a TPU, the address of the master (unused).", affects_result=False)
define_integer("num_tpu_cores", 8, "Only used if `use_tpu` is True. Total number of TPU cores to use (unused).", 1,
               65536, affects_result=False)
flags.DEFINE_bool("use_one_hot_embeddings", False, "Accepted for the original's command lines; the values do not "
                  "depend on it.")
# Added.
flags.DEFINE_enum("output_format", "jsonl", OUTPUT_FORMATS, "jsonl: the original's JSON lines; npz: NumPy arrays "
                  "in one file; tfrecord: a tf.train.Example per input.")
flags.DEFINE_enum("output_dtype", "float32", DTYPES, "The values' type in npz and tfrecord outputs.")
flags.DEFINE_enum("pooling", "none", ("none", *POOLINGS), "none: every token's vector; cls: the [CLS] vector; "
                  "mean / max: over the text's tokens ([CLS] and [SEP] included), one vector per text and layer.")
flags.DEFINE_bool("normalize", False, "L2-normalise each pooled vector (with --pooling).")
define_path("export_dir", None, "Export a sentence-embedding SavedModel (raw `text` → `embedding`, the "
            "--pooling vectors of --layers side by side) as a new version <export_dir>/<n>/.", OUTPUT_DIRECTORY)
define_tflite_flags()  # LiteRT files of the --export_dir SavedModel
define_export_precision_flags()  # of the --export_dir SavedModel; the TF Hub encoder stays float32, as Model Garden's
define_path("export_tfhub_dir", None, "Export the TF Hub pair <dir>/preprocess (raw text → encoder inputs of "
            "--max_seq_length) and <dir>/encoder (→ pooled_output, sequence_output, encoder_outputs).",
            OUTPUT_DIRECTORY)
def main():
    if FLAGS.export_tflite_dir and not FLAGS.export_dir:
        raise FeatureError("--export_tflite_dir converts the --export_dir SavedModel: pass --export_dir too")
    if not (FLAGS.input_file or FLAGS.export_dir or FLAGS.export_tfhub_dir):
        raise FeatureError("nothing to do: pass --input_file and --output_file, --export_dir or --export_tfhub_dir")
    if bool(FLAGS.input_file) != bool(FLAGS.output_file):
        raise FeatureError("--input_file and --output_file go together: pass both")
    if FLAGS.use_tpu:
        raise FeatureError("--use_tpu: extract_features.py runs on the CPU or a GPU; drop the flag")
    if FLAGS.export_dir and FLAGS.pooling == "none":
        raise FeatureError("--export_dir exports one embedding per text: pass --pooling=cls, mean or max")
    if FLAGS.max_seq_length < 3:
        raise FeatureError(f"--max_seq_length={FLAGS.max_seq_length}: expected at least 3 ([CLS] and two [SEP])")
    check_case_from_flags()
    # A left-to-right checkpoint stays left-to-right under a config that does not say so.
    config = resolve_causal_attention(BertConfig.from_json_file(FLAGS.bert_config_file), None,
                                      FLAGS.bert_config_file, [FLAGS.init_checkpoint])
    config.check_seq_length(FLAGS.max_seq_length, f"--bert_config_file={FLAGS.bert_config_file}")
    # The TF Hub pair has every layer's output: --layers matters only to the features and the embedding export.
    layers = parse_layers(FLAGS.layers, config.num_hidden_layers) if FLAGS.input_file or FLAGS.export_dir else None
    pooling = None if FLAGS.pooling == "none" else FLAGS.pooling
    tokenizer_spec = tokenizer_spec_from_flags()
    tokenizer = tokenizer_spec.python_tokenizer()
    if len(tokenizer.vocab) > config.vocab_size:
        raise FeatureError(f"--vocab_file={FLAGS.vocab_file or FLAGS.spm_model_file} has {len(tokenizer.vocab)} "
                           f"tokens, more than the vocab_size={config.vocab_size} of --bert_config_file")

    inputs = read_inputs(FLAGS.input_file) if FLAGS.input_file else None  # checked now, before the model loads

    # Model.
    encoder = BertEncoder(config)
    load_checkpoint(encoder, FLAGS.init_checkpoint, tokenizer_spec.do_lower_case)

    # Features, streamed: tokenized as read, written in input order as each window of batches is done.
    if FLAGS.input_file:
        extractor = FeatureExtractor(encoder, layers, pooling, FLAGS.normalize, FLAGS.batch_size)
        texts = (tokenize_input(t, tokenizer, FLAGS.max_seq_length) for t in inputs)
        progress = Progress()
        with open_writer(FLAGS.output_format, FLAGS.output_file, layers, FLAGS.output_dtype) as writer:
            for features in extractor.extract(texts):
                writer.write(features)
                progress.add(len(features.tokens))
        print(f"{progress.summary()}; wrote {FLAGS.output_file}")

    # Exports.
    if FLAGS.export_dir:
        precision = resolve_export_precision(FLAGS.export_precision)
        path = export_embedding(FLAGS.export_dir, model_in_precision(encoder, precision), tokenizer_spec,
                                FLAGS.max_seq_length, layers, pooling, FLAGS.normalize)
        print(f"exported the sentence-embedding SavedModel to {path}")
        if FLAGS.export_tflite_dir:
            written = export_tflite(path, FLAGS.export_tflite_dir, FLAGS.tflite_quantization)
            print(f"wrote the LiteRT {written.model_path}" + (f" and {written.text_model_path}"
                  if written.text_model_path else f" (no text_model.tflite: {written.text_problem})"))
    if FLAGS.export_tfhub_dir:
        paths = export_tfhub(FLAGS.export_tfhub_dir, encoder, tokenizer_spec, FLAGS.max_seq_length)
        print(f"exported the TF Hub preprocess and encoder SavedModels to {' and '.join(paths)}")


def run():
    """The tool as a command (`python extract_features.py`, or the console script `bert-extract-features`)."""
    cli.run(main, required_flags=["bert_config_file", "init_checkpoint"])


if __name__ == "__main__":
    run()
