"""Inference throughput: our encoder and our raw-text export, beside KerasHub and PyTorch + transformers.

    python -m bench.inference [--preset base] [--seq_length 128] [--batch_sizes 1,32] [--precisions fp32,bf16]
        [--frameworks official_bert,export,keras_hub,torch] [--seconds 10] [--rounds 1]
        [--torch_python PYTHON]

Prints the machine (CPU features, oneDNN, load), the matmul peak of each dtype measured here, then one line per
framework × precision × batch: seq/s, GFLOP/s (the encoder's matmul FLOPs) and their share of that dtype's peak,
and last a table of seq/s with each framework's ratio to ours. Every model has random weights of the preset's shape
and reads full-length sequences. The frameworks:

- official_bert: `BertEncoder` in a tf.function; bf16 is `export.precision.model_in_precision(encoder, "bf16")`,
  what `--export_precision=bf16` exports;
- export: the raw-text SavedModel that extract_features' --export_dir writes (WordPiece in the graph, the encoder,
  mean pooling), loaded back and fed strings of seq_length tokens;
- keras_hub: KerasHub's BertBackbone (`pip install keras-hub==0.32.0`, as `make bench` does), dtype
  mixed_bfloat16 for bf16;
- torch: transformers' BertModel under torch.inference_mode, bf16 with torch.autocast, measured by
  `bench.torch_peer` in a process of its own (PyTorch and TensorFlow in one process crash) run by --torch_python
  (default: this Python; skipped where it lacks torch or transformers).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import keras
import numpy as np
import tensorflow as tf

from bench import hardware
from bench.timing import seconds_per_call
from official_bert import BertConfig, BertEncoder
from official_bert.export.embedding import export_embedding
from official_bert.export.precision import float32_outputs, model_in_precision
from official_bert.text.tokenizer_spec import TokenizerSpec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FRAMEWORKS = ("official_bert", "export", "keras_hub", "torch")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="base", choices=BertConfig.preset_names())
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--batch_sizes", default="1,32")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds per measurement (at least 3 calls)")
    parser.add_argument("--rounds", type=int, default=1, help="measure every cell this many times, the frameworks "
                        "taking turns, and report the median (PyTorch's seq/s moved 30 %% between runs on one machine)")
    parser.add_argument("--torch_python", default=sys.executable, help="the Python that runs the PyTorch peer "
                        "(bench.torch_peer, in its own process): one with torch and transformers installed")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.seconds <= 0:
        parser.error(f"--seconds must be positive, got {args.seconds}")
    return args


def token_ids(config, batch, seq_length):
    ids = np.random.default_rng(0).integers(5, config.vocab_size, (batch, seq_length)).astype(np.int32)
    ids[:, 0], ids[:, -1] = 2, 3
    return ids


def official_bert_call(encoder, precision, ids):
    model = model_in_precision(encoder, precision)
    inputs = {"input_word_ids": tf.constant(ids), "input_mask": tf.ones_like(ids),
              "input_type_ids": tf.zeros_like(ids)}
    forward = tf.function(lambda x: float32_outputs(model(x, training=False)["sequence_output"]))
    return lambda: forward(inputs).numpy()


def export_call(encoder, precision, ids, work):
    """The raw-text export of `encoder`, fed texts of which each tokenizes to exactly seq_length tokens."""
    vocab = os.path.join(work, "vocab.txt")
    if not os.path.exists(vocab):
        with open(vocab, "w", encoding="utf-8") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                              + [f"w{i}" for i in range(encoder.config.vocab_size - 5)]) + "\n")
    path = export_embedding(os.path.join(work, f"export_{precision}"), model_in_precision(encoder, precision),
                            TokenizerSpec(vocab), ids.shape[1])
    serve = tf.saved_model.load(path).signatures["serving_default"]
    texts = tf.constant([" ".join(f"w{i - 5}" for i in row[1:-1]) for row in ids])
    return lambda: serve(text=texts)["embedding"].numpy()


def keras_hub_call(config, precision, ids):
    import keras_hub

    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers, num_heads=config.num_attention_heads,
        hidden_dim=config.hidden_size, intermediate_dim=config.intermediate_size,
        max_sequence_length=config.max_position_embeddings, num_segments=config.type_vocab_size,
        dtype="mixed_bfloat16" if precision == "bf16" else "float32")
    inputs = {"token_ids": tf.constant(ids), "padding_mask": tf.ones_like(ids), "segment_ids": tf.zeros_like(ids)}
    forward = tf.function(lambda x: tf.cast(backbone(x, training=False)["sequence_output"], tf.float32))
    return lambda: forward(inputs).numpy()


def torch_seq_per_s(config, precision, batch, seq_length, seconds, python):
    """seq/s of the PyTorch peer, measured by `bench.torch_peer` in a process of its own run by `python`."""
    done = subprocess.run([python, "-m", "bench.torch_peer", "--config", config.to_json_string(),
                           "--batch", str(batch), "--seq_length", str(seq_length), "--precision", precision,
                           "--seconds", str(seconds)], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=REPO))
    if done.returncode != 0:
        raise RuntimeError(f"bench.torch_peer failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def available(framework, torch_python):
    if framework == "torch":
        return subprocess.run([torch_python, "-c", "import torch, transformers"], capture_output=True).returncode == 0
    try:
        for module in {"keras_hub": ("keras_hub",)}.get(framework, ()):
            __import__(module)
    except ImportError:
        return False
    return True


def main():
    args = parse_args()
    config = BertConfig.from_preset(args.preset)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    precisions = args.precisions.split(",")
    frameworks = [f for f in args.frameworks.split(",") if f in FRAMEWORKS]
    print(hardware.machine_line(), flush=True)
    peaks = {p: hardware.matmul_peak({"fp32": "float32", "bf16": "bfloat16"}[p]) for p in precisions}
    print("matmul peak (2048³): " + ", ".join(f"{p} {peaks[p]:.0f} GFLOP/s" for p in precisions), flush=True)
    installed = {f: available(f, args.torch_python) for f in frameworks}
    for framework in frameworks:
        if not installed[framework]:
            print(f"{framework}: not installed, skipped", flush=True)
    frameworks = [f for f in frameworks if installed[f]]
    print(f"preset {args.preset} (L={config.num_hidden_layers} H={config.hidden_size}), seq {args.seq_length}, "
          f"batches {batch_sizes}, {args.seconds:.0f} s per measurement", flush=True)
    keras.utils.set_random_seed(0)
    encoder = BertEncoder(config)
    flops = hardware.encoder_flops_per_sequence(config, args.seq_length)
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for batch in batch_sizes:
            ids = token_ids(config, batch, args.seq_length)
            for precision in precisions:
                calls = {}  # each framework's call, built once for all rounds
                for _ in range(args.rounds):
                    for framework in frameworks:
                        if framework == "torch":
                            peer = torch_seq_per_s(config, precision, batch, args.seq_length, args.seconds,
                                                   args.torch_python)
                            seq_per_s, note = peer["seq_per_s"], f"torch {peer['torch']}, transformers " \
                                f"{peer['transformers']}, own process; "
                        else:
                            if framework not in calls:
                                calls[framework] = {
                                    "official_bert": lambda: official_bert_call(encoder, precision, ids),
                                    "export": lambda: export_call(encoder, precision, ids, work),
                                    "keras_hub": lambda: keras_hub_call(config, precision, ids)}[framework]()
                            seq_per_s, note = batch / seconds_per_call(calls[framework], args.seconds), ""
                        gflops = seq_per_s * flops / 1e9
                        results.setdefault((framework, precision, batch), []).append(seq_per_s)
                        print(f"{framework:13} {precision} batch {batch:3}: {seq_per_s:8.2f} seq/s, {gflops:7.1f} "
                              f"GFLOP/s = {gflops / peaks[precision]:4.0%} of the {precision} matmul peak "
                              f"({note}load {hardware.load_line()})", flush=True)
    rounds = f", median of {args.rounds} rounds (min-max)" if args.rounds > 1 else ""
    print(f"\nseq/s (ratio to official_bert{rounds})" + "".join(f" | {f}" for f in frameworks))
    for batch in batch_sizes:
        for precision in precisions:
            ours = results.get(("official_bert", precision, batch))
            cells = [cell(results[f, precision, batch], ours if f != "official_bert" else None) for f in frameworks]
            print(f"batch {batch} {precision} | " + " | ".join(cells))


def cell(figures, ours):
    """`median (ratio to ours' median) [min-max]`; the range only for several rounds."""
    text = f"{statistics.median(figures):.2f}"
    if ours:
        text += f" ({statistics.median(figures) / statistics.median(ours):.2f})"
    if len(figures) > 1:
        text += f" [{min(figures):.2f}-{max(figures):.2f}]"
    return text


if __name__ == "__main__":
    main()
