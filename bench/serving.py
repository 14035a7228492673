"""Serving an exported classifier from raw text: latency and throughput, core-ops tokenizer beside tensorflow-text's.

    python -m bench.serving [--presets mini,base] [--batches 1,32] [--seconds 3] [--seq_length 128]
        [--vocab_file V] [--do_lower_case]

For each BERT shape (random weights, the real 30,522-token vocabulary: see bench/wordpiece.py) a sentence classifier
is exported twice with `export_classifier`, its tokenizer in core TensorFlow ops (`--tokenizer_ops=core`, the
default) and in tensorflow-text's (`tf_text`). Each SavedModel is loaded back and its serving_default (text_a in,
probabilities and label out) is called on batches of English lines, one batch after another for `--seconds`
after a warm-up call: the mean latency of a call and the lines per second, side by side. Figures on a shared
machine are noisy.
"""

import os
import shutil
import tempfile
import time

from absl import app, flags, logging

from bench.wordpiece import default_vocab, english_lines  # (also defines --vocab_file, --do_lower_case)

FLAGS = flags.FLAGS
flags.DEFINE_list("presets", ["mini", "base"], "BertConfig.from_preset shapes.")
flags.DEFINE_list("batches", ["1", "32"], "Lines per request.")
flags.DEFINE_float("seconds", 3.0, "Time spent on each figure.")
flags.DEFINE_integer("seq_length", 128, "The exported max_seq_length.")
flags.DEFINE_bool("fixed_padding", False, "Pad every request to --seq_length, as exports did before they padded each "
                  "request to its own longest line (the same outputs): run with and without to compare.")

TOKENIZERS = ("core", "tf_text")


def measure(serve, lines, batch_size, seconds):
    """Calls `serve` on successive batches for `seconds`: (mean seconds per call, lines per second)."""
    import tensorflow as tf

    batches = [tf.constant(lines[i:i + batch_size]) for i in range(0, len(lines) - batch_size + 1, batch_size)]
    serve(text_a=batches[0])  # warm-up
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        serve(text_a=batches[calls % len(batches)])["probabilities"].numpy()
        calls += 1
    elapsed = time.perf_counter() - start
    return elapsed / calls, calls * batch_size / elapsed


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)  # the SavedModel writer's lines
    # Timed on the CPU, as a CPU serving host runs it.
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import keras
    import tensorflow as tf

    from official_bert import BertClassifier, BertConfig, BertEncoder
    from official_bert.export import export_classifier
    from official_bert.text.tokenizer_spec import TokenizerSpec
    from official_bert.tokenization import load_vocab

    vocab_file = FLAGS.vocab_file or default_vocab()
    lines, _ = english_lines(0.2)
    batch_sizes = [int(b) for b in FLAGS.batches]
    print(f"serving_default of an exported classifier, max_seq_length {FLAGS.seq_length}, {os.cpu_count()} CPUs, "
          f"{FLAGS.seconds:g} s per figure, padded to {'max_seq_length' if FLAGS.fixed_padding else 'each request'}")
    print(f"{'shape':<6} {'batch':>5} " + " ".join(f"{name + ' ms':>12} {name + ' lines/s':>16}" for name in TOKENIZERS)
          + f" {'core/tf_text throughput':>24}")
    work = tempfile.mkdtemp(prefix="bench_serving_")
    try:
        for preset in FLAGS.presets:
            keras.utils.set_random_seed(0)
            config = BertConfig.from_preset(preset, vocab_size=len(load_vocab(vocab_file)))
            model = BertClassifier(BertEncoder(config), 2)
            served = {}
            for name in TOKENIZERS:
                tokenizer = TokenizerSpec(vocab_file, do_lower_case=FLAGS.do_lower_case, ops=name)
                path = export_classifier(os.path.join(work, preset, name), model, tokenizer, FLAGS.seq_length,
                                         ["0", "1"], pad_to_longest=not FLAGS.fixed_padding)
                served[name] = tf.saved_model.load(path).signatures["serving_default"]
            for batch_size in batch_sizes:
                figures = {name: measure(served[name], lines, batch_size, FLAGS.seconds) for name in TOKENIZERS}
                print(f"{preset:<6} {batch_size:>5} "
                      + " ".join(f"{latency * 1e3:>12.1f} {rate:>16.1f}" for latency, rate in figures.values())
                      + f" {figures['core'][1] / figures['tf_text'][1]:>23.2f}x")
            shutil.rmtree(os.path.join(work, preset))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
