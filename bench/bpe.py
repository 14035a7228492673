"""Byte-level BPE (RoBERTa's) tokens/s: our Python tokenizer and our in-graph one (core TensorFlow ops), beside the
peers: HF `tokenizers` (Rust, what transformers' RobertaTokenizer runs) and KerasHub's BytePairTokenizer
(tensorflow-text's regular expressions), at batch 1 and at a large batch, with the number of lines whose ids differ
from HF's.

    PYTHONPATH=. /work/benchvenv/bin/python -m bench.bpe [--vocab_size 8000] [--batch_sizes 1,1000] [--batch1_lines 500]

Run it in an environment with `tokenizers` and keras-hub beside the project's stack (/work/benchvenv). The
vocabulary is trained first on data/corpus/sotu.txt (`tokenizers`' ByteLevelBPETokenizer, RoBERTa's kind: roberta-base
has 50,265 tokens); the timed text is data/corpus/sotu_heldout.txt, one line per input string. Everything starts
from Python strings; the in-graph paths and HF may use every core. Figures on a shared machine are noisy.
"""

import os
import tempfile
import time

from absl import app, flags

from bench.hardware import machine_line

FLAGS = flags.FLAGS
flags.DEFINE_integer("vocab_size", 8000, "Size of the BPE vocabulary trained on the corpus.")
flags.DEFINE_list("batch_sizes", ["1", "1000"], "Lines per call.")
flags.DEFINE_integer("batch1_lines", 500, "Lines tokenized at batch size 1.")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def report(name, tokens, seconds, megabytes):
    print(f"{name:<44} {tokens / seconds:>11,.0f} tokens/s {megabytes / seconds:>7.2f} MB/s "
          f"({tokens:,} tokens in {seconds:.2f} s)")


def main(argv):
    del argv
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # as a CPU serving host runs them
    import json

    import keras_hub
    import tensorflow as tf
    from tokenizers import ByteLevelBPETokenizer as TrainedBPE
    from transformers import RobertaTokenizer

    from official_bert.text.bpe_layer import GraphByteLevelBPETokenizer
    from official_bert.text.byte_level_bpe import ByteLevelBPETokenizer

    print(machine_line())
    work = tempfile.mkdtemp()
    trainer = TrainedBPE()
    trainer.train_from_iterator(read_lines(os.path.join(REPO, "data", "corpus", "sotu.txt")),
                                vocab_size=FLAGS.vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    trainer.save_model(work)
    vocab_file, merges_file = os.path.join(work, "vocab.json"), os.path.join(work, "merges.txt")
    lines = read_lines(os.path.join(REPO, "data", "corpus", "sotu_heldout.txt"))
    print(f"{len(lines):,} lines of data/corpus/sotu_heldout.txt, a {FLAGS.vocab_size:,}-token BPE trained on "
          f"sotu.txt, {os.cpu_count()} CPUs")
    hf = RobertaTokenizer.from_pretrained(work)
    python = ByteLevelBPETokenizer(vocab_file, merges_file)
    ours = GraphByteLevelBPETokenizer(vocab_file, merges_file)
    merges = [line for line in open(merges_file, encoding="utf-8").read().splitlines()[1:] if line]
    keras = keras_hub.tokenizers.BytePairTokenizer(json.load(open(vocab_file, encoding="utf-8")), merges)
    graph = {"ours, in-graph core ops": tf.function(lambda t: ours(t).merge_dims(1, 2), autograph=False,
                                                    input_signature=[tf.TensorSpec([None], tf.string)]),
             "KerasHub BytePairTokenizer (tf-text)": tf.function(lambda t: keras(t), autograph=False,
                                                                 input_signature=[tf.TensorSpec([None], tf.string)])}
    for batch_size in map(int, FLAGS.batch_sizes):
        chosen = lines[:FLAGS.batch1_lines] if batch_size == 1 else lines
        megabytes = sum(len(line.encode()) + 1 for line in chosen) / 1e6
        batches = [chosen[i:i + batch_size] for i in range(0, len(chosen), batch_size)]
        print(f"batch {batch_size}: {len(chosen):,} lines, {megabytes:.2f} MB")
        start = time.perf_counter()
        reference = [ids for batch in batches for ids in hf(batch, add_special_tokens=False)["input_ids"]]
        report("HF tokenizers (Rust), RobertaTokenizer", sum(map(len, reference)), time.perf_counter() - start,
               megabytes)
        for name, tokenize in graph.items():
            tokenize(tf.constant(batches[0]))  # traced outside the timing
            start = time.perf_counter()
            got = [ids for batch in batches for ids in tokenize(tf.constant(batch)).to_list()]
            report(name, sum(map(len, got)), time.perf_counter() - start, megabytes)
            print(f"{'':<44} lines whose ids differ from HF's: {sum(a != b for a, b in zip(got, reference)):,}")
        if batch_size == 1:
            start = time.perf_counter()
            got = [python.convert_tokens_to_ids(python.tokenize(line)) for line in chosen]
            report("ours, Python (ByteLevelBPETokenizer)", sum(map(len, got)), time.perf_counter() - start, megabytes)
            print(f"{'':<44} lines whose ids differ from HF's: {sum(a != b for a, b in zip(got, reference)):,}")


if __name__ == "__main__":
    app.run(main)
