"""Deploying a classifier: size on disk and batch-1 latency of the SavedModel and its LiteRT files, side by side;
and what int8 costs on a real dev set.

    python -m bench.deploy [--presets mini,base] [--seq_length 128] [--seconds 3]
    python -m bench.deploy --presets= --export_dir=demo_out/export --dev_file=data/classification/dev.tsv

For each BERT shape (random weights, the real 30,522-token vocabulary: see bench/wordpiece.py; random weights
change neither size nor speed) a sentence classifier is exported (`export_classifier`) and converted with
`export_tflite` three times (none, dynamic_int8, float16). Printed per shape: the size of what TF Serving loads
(saved_model.pb, variables/, assets/; the version also holds model.keras) and of each .tflite, and the mean latency
of one request of one English line: the SavedModel's serving_default (raw text in), its serve_tensors (ids in),
and each model.tflite under ai-edge-litert's interpreter (ids in; the app tokenizes). text_model.tflite is
listed with the converter's reason when it cannot be written.

With --export_dir and --dev_file (a TSV of `sentence` and `label`, as data/classification's), the export's labels
on the dev set from serving_default against each model.tflite's (ids from the Python tokenizer, as the training
features are packed): agreement and accuracy. Figures on a shared machine are noisy.
"""

import os
import shutil
import tempfile
import time

from absl import app, flags, logging

from bench.wordpiece import default_vocab, english_lines  # (also defines --vocab_file, --do_lower_case)

FLAGS = flags.FLAGS
flags.DEFINE_list("presets", ["mini", "base"], "BertConfig.from_preset shapes to size and time.")
flags.DEFINE_integer("seq_length", 128, "The exported max_seq_length.")
flags.DEFINE_float("seconds", 3.0, "Time spent on each latency figure.")
flags.DEFINE_string("export_dir", None, "A trained single-sentence classifier export to measure int8 on ...")
flags.DEFINE_string("dev_file", None, "... over this TSV (sentence, label).")

QUANTIZATIONS = ("none", "dynamic_int8", "float16")


def directory_size(path, skip=()):
    return sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(path)
               for name in names if name not in skip)


def latency(call, seconds):
    call()  # warm-up
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        call()
        calls += 1
    return (time.perf_counter() - start) / calls


def tflite_runner(path):
    from ai_edge_litert.interpreter import Interpreter

    return Interpreter(model_path=path).get_signature_runner("serve_tensors")


def packed_ids(texts, vocab_file, seq_length):
    """The encoder inputs of `texts`, packed by the Python tokenizer as the training features are."""
    import numpy as np

    from official_bert.classification import InputExample, convert_single_example
    from official_bert.tokenization import FullTokenizer

    tokenizer = FullTokenizer(vocab_file)
    features = [convert_single_example(InputExample(str(i), text, None, "x"), ["x"], seq_length, tokenizer)
                for i, text in enumerate(texts)]
    return {name: np.array([getattr(f, field) for f in features], np.int32) for name, field in (
        ("input_word_ids", "input_ids"), ("input_mask", "input_mask"), ("input_type_ids", "segment_ids"))}


def sizes_and_latency(work):
    import keras
    import tensorflow as tf

    from official_bert import BertClassifier, BertConfig, BertEncoder
    from official_bert.export import export_classifier
    from official_bert.export.tflite import export_tflite
    from official_bert.text.tokenizer_spec import TokenizerSpec
    from official_bert.tokenization import load_vocab

    vocab_file = FLAGS.vocab_file or default_vocab()
    line = next(line for line in english_lines(0.01)[0] if 15 <= len(line.split()) <= 25)
    ids = packed_ids([line], vocab_file, FLAGS.seq_length)
    print(f"one request of one line ({len(line.split())} words), max_seq_length {FLAGS.seq_length}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{'shape':<6} {'model':<36} {'size MiB':>9} {'batch-1 ms':>11}")
    for preset in FLAGS.presets:
        keras.utils.set_random_seed(0)
        config = BertConfig.from_preset(preset, vocab_size=len(load_vocab(vocab_file)))
        path = export_classifier(os.path.join(work, preset, "export"), BertClassifier(BertEncoder(config), 2),
                                 TokenizerSpec(vocab_file, do_lower_case=FLAGS.do_lower_case), FLAGS.seq_length,
                                 ["0", "1"])
        signatures = tf.saved_model.load(path).signatures
        text = tf.constant([line])
        tensors = {name: tf.constant(value) for name, value in ids.items()}
        rows = [("SavedModel serving_default (text)", directory_size(path, skip={"model.keras"}),
                 latency(lambda: signatures["serving_default"](text_a=text), FLAGS.seconds)),
                ("SavedModel serve_tensors (ids)", None,
                 latency(lambda: signatures["serve_tensors"](**tensors), FLAGS.seconds))]
        text_problem = None
        for quantization in QUANTIZATIONS:
            written = export_tflite(path, os.path.join(work, preset, quantization), quantization,
                                    text_model=quantization == "none")
            runner = tflite_runner(written.model_path)
            rows.append((f"LiteRT model.tflite {quantization} (ids)", os.path.getsize(written.model_path),
                         latency(lambda: runner(**ids), FLAGS.seconds)))
            if quantization == "none":
                text_problem = written.text_problem
        for name, size, seconds in rows:
            print(f"{preset:<6} {name:<36} {'' if size is None else f'{size / 2**20:.1f}':>9} {seconds * 1e3:>11.2f}")
        if text_problem:
            print(f"{preset:<6} {'LiteRT text_model.tflite':<36} {'-':>9} {'-':>11}  not written: {text_problem}")
        shutil.rmtree(os.path.join(work, preset))


def dev_agreement(work):
    import numpy as np
    import tensorflow as tf

    from official_bert.export.tflite import export_tflite, saved_model_version
    from official_bert.io.table_files import read_rows

    path = saved_model_version(FLAGS.export_dir)
    rows = [row for _, row in read_rows(FLAGS.dev_file, "tsv", columns=("sentence", "label"))]
    texts, gold = [row["sentence"] for row in rows], np.array([row["label"] for row in rows])
    serving = tf.saved_model.load(path).signatures
    seq_length = serving["serve_tensors"].structured_input_signature[1]["input_word_ids"].shape[1]
    reference = np.concatenate([serving["serving_default"](text_a=tf.constant(texts[i:i + 64]))["label"].numpy()
                                for i in range(0, len(texts), 64)]).astype(str)
    ids = packed_ids(texts, os.path.join(path, "assets", "vocab.txt"), seq_length)
    print(f"{FLAGS.export_dir} on {FLAGS.dev_file} ({len(texts)} rows): SavedModel serving_default accuracy "
          f"{np.mean(reference == gold):.2%}")
    fp32_size = None
    for quantization in QUANTIZATIONS:
        written = export_tflite(path, os.path.join(work, "dev", quantization), quantization, text_model=False)
        size = os.path.getsize(written.model_path)
        fp32_size = fp32_size or size
        runner = tflite_runner(written.model_path)
        labels = np.concatenate([runner(**{k: v[i:i + 1] for k, v in ids.items()})["label"]
                                 for i in range(len(texts))]).astype(str)
        print(f"  model.tflite {quantization:<13} {size / 2**20:6.2f} MiB ({size / fp32_size:.0%} of float32): "
              f"labels agree with the SavedModel's on {np.mean(labels == reference):.2%}, accuracy "
              f"{np.mean(labels == gold):.2%} ({(np.mean(labels == gold) - np.mean(reference == gold)) * 100:+.2f} "
              "points)")


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    work = tempfile.mkdtemp(prefix="bench_deploy_")
    try:
        if FLAGS.export_dir:
            dev_agreement(work)
        if FLAGS.presets:
            sizes_and_latency(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
