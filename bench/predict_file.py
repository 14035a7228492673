"""bert-predict over a big file: order and ids, agreement with query_saved_model, memory, speed, kill and resume.

    python -m bench.predict_file --saved_model_dir=demo_out/export [--rows 200000] [--batch_size 32]
        [--compare_rows 50000] [--work_dir DIR]

Writes a CSV of `--rows` passages (`id,sentence`: the lines of data/corpus/sotu_heldout.txt over and over, ids
s1, s2, ...) and runs `predict.py` on it as a user would (`--columns=text_a=sentence --id_column=id`), each run a
new process, then prints side by side:

- the output's rows against the input's: the same ids in the same order, none missing, none twice;
- 100 rows drawn at random against query_saved_model.py's answers for the same texts (one call, a batch of 100):
  the same label, probabilities within 1e-4 (it prints 4 decimals);
- peak memory (the process's max RSS) of the whole file against a 10,000-row file;
- rows/s of bert-predict, of bert-predict with --nolength_batching, and of serving_default called in a loop on
  the same texts at the same batch size, in file order (texts already in memory), over `--compare_rows` rows;
- a run SIGKILLed halfway, then rerun: whether the output is byte-identical to the uninterrupted run's.

A shared machine disturbs the rates: compare the figures of one run, not across runs.
"""

import csv
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("saved_model_dir", None, "A classifier export with a text_a input (e.g. run_classifier's "
                    "--export_dir).")
flags.DEFINE_integer("rows", 200_000, "Rows of the big file.")
flags.DEFINE_integer("small_rows", 10_000, "Rows of the file whose peak memory the big one's is compared with.")
flags.DEFINE_integer("compare_rows", 50_000, "Rows the three rates are measured on.")
flags.DEFINE_integer("batch_size", 32, "bert-predict's --batch_size, and the loop's.")
flags.DEFINE_string("work_dir", None, "Where the files go (default: a temporary directory).")
flags.DEFINE_bool("rates_only", False, "Measure the three rates alone.")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "data", "corpus", "sotu_heldout.txt")


def write_input(path, rows):
    with open(CORPUS, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["id", "sentence"])
        for i in range(rows):
            writer.writerow([f"s{i + 1}", lines[i % len(lines)]])
    return [lines[i % len(lines)] for i in range(rows)]


def predict(input_file, output_file, *flags_, kill_after_rows=None):
    """Runs predict.py; returns (seconds, max RSS in MiB, stdout, stderr); with kill_after_rows, SIGKILLs it once
    its state records that many rows."""
    command = [sys.executable, os.path.join(REPO, "predict.py"), f"--saved_model_dir={FLAGS.saved_model_dir}",
               f"--input_file={input_file}", f"--output_file={output_file}", "--columns=text_a=sentence",
               "--id_column=id", f"--batch_size={FLAGS.batch_size}", *flags_]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=err)
        if kill_after_rows:
            state = os.path.join(os.path.dirname(output_file), f".{os.path.basename(output_file)}.partial.json")
            while process.poll() is None:
                try:
                    with open(state) as f:
                        if json.load(f)["rows"] >= kill_after_rows:
                            process.send_signal(signal.SIGKILL)
                            break
                except (OSError, ValueError):
                    pass
                time.sleep(0.05)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if process.returncode != 0 and not kill_after_rows:
        sys.exit(f"predict.py failed:\n{stderr[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, stdout, stderr


def tool_rate(stdout):
    """The rows/s bert-predict's last line reports (start-up of Python and TensorFlow and the model's loading
    excluded, as the loop's are)."""
    return float(re.search(r"\(([\d,]+) rows/s after", stdout).group(1).replace(",", ""))


def loop_rate(texts):
    """serving_default called on successive batches of `texts`, in order: rows/s after a warm-up call."""
    import tensorflow as tf

    from official_bert.export.tflite import saved_model_version

    serve = tf.saved_model.load(saved_model_version(FLAGS.saved_model_dir)).signatures["serving_default"]
    serve(text_a=tf.constant(texts[:FLAGS.batch_size]))
    start = time.perf_counter()
    for i in range(0, len(texts), FLAGS.batch_size):
        serve(text_a=tf.constant(texts[i:i + FLAGS.batch_size]))
    return len(texts) / (time.perf_counter() - start)


def query_saved_model(texts):
    """query_saved_model.py's answers for `texts` (one call): [(label, [probabilities])]."""
    command = [sys.executable, os.path.join(REPO, "query_saved_model.py"), f"--saved_model_dir={FLAGS.saved_model_dir}",
               *(f"--input=text_a={text}" for text in texts)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True)
    labels = re.findall(r"^  label: (.*)$", result.stdout, re.M)
    probabilities = [[float(p) for p in found.split(", ")]
                     for found in re.findall(r"^  probabilities: \[(.*)\]$", result.stdout, re.M)]
    return list(zip(labels, probabilities))


def check_big_file(work, big, small, texts):
    """The big file's rows, ids and memory against the small one's, and 100 rows against query_saved_model."""
    small_seconds, small_rss, _, _ = predict(small, os.path.join(work, "small.jsonl"))
    big_out = os.path.join(work, "big.jsonl")
    big_seconds, big_rss, big_stdout, _ = predict(big, big_out)
    with open(big_out, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    ids_ok = [row["id"] for row in rows] == [f"s{i + 1}" for i in range(FLAGS.rows)]
    print(f"rows: {len(rows):,} written for {FLAGS.rows:,} input rows; ids in input order, each once: {ids_ok}")
    sample = sorted(random.Random(0).sample(range(FLAGS.rows), 100))
    answers = query_saved_model([texts[i] for i in sample])
    same = sum(rows[i]["label"] == label and all(abs(p - q) <= 1e-4 for p, q in zip(
        rows[i]["probabilities"].values(), probabilities)) for i, (label, probabilities) in zip(sample, answers))
    print(f"query_saved_model.py: {same} of {len(sample)} sampled rows give the same label and probabilities "
          "(within 1e-4)")
    print(f"peak memory: {big_rss:,.0f} MiB for {FLAGS.rows:,} rows, {small_rss:,.0f} MiB for {FLAGS.small_rows:,} "
          f"({big_rss / small_rss:.2f}x); times {big_seconds:.1f} s and {small_seconds:.1f} s; bert-predict on "
          f"{FLAGS.rows:,} rows: {tool_rate(big_stdout):,.0f} rows/s")
    return big_out


def main(argv):
    del argv
    work = FLAGS.work_dir or tempfile.mkdtemp(prefix="bench_predict_")
    os.makedirs(work, exist_ok=True)
    big, small = os.path.join(work, "big.csv"), os.path.join(work, "small.csv")
    texts = write_input(big, FLAGS.rows)
    write_input(small, FLAGS.small_rows)
    compare = os.path.join(work, "compare.csv")
    write_input(compare, FLAGS.compare_rows)
    print(f"inputs: {FLAGS.rows:,} and {FLAGS.small_rows:,} rows in {work}; batch size {FLAGS.batch_size}; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)

    if not FLAGS.rates_only:
        big_out = check_big_file(work, big, small, texts)
    # The loop before and after the two runs of the tool: how far the machine's load moved meanwhile.
    loop_before = loop_rate(texts[:FLAGS.compare_rows])
    _, _, length_stdout, _ = predict(compare, os.path.join(work, "compare.jsonl"))
    _, _, order_stdout, _ = predict(compare, os.path.join(work, "compare_order.jsonl"), "--nolength_batching")
    loop_after = loop_rate(texts[:FLAGS.compare_rows])
    loop = (loop_before + loop_after) / 2
    length, order = tool_rate(length_stdout), tool_rate(order_stdout)
    print(f"rows/s over {FLAGS.compare_rows:,} rows at batch {FLAGS.batch_size}: serving_default in a loop "
          f"{loop:,.0f} ({loop_before:,.0f} before, {loop_after:,.0f} after) | bert-predict --nolength_batching "
          f"{order:,.0f} ({order / loop:.2f}x) | bert-predict {length:,.0f} ({length / loop:.2f}x; length batching "
          f"{length / order:.2f}x)")
    if FLAGS.rates_only:
        return
    killed_out = os.path.join(work, "killed.jsonl")
    predict(big, killed_out, kill_after_rows=FLAGS.rows // 2)
    with open(os.path.join(work, ".killed.jsonl.partial.json")) as f:
        killed_at = json.load(f)["rows"]
    _, _, resumed_stdout, _ = predict(big, killed_out)
    with open(killed_out, "rb") as a, open(big_out, "rb") as b:
        identical = a.read() == b.read()
    print(f"SIGKILL after {killed_at:,} rows, then a rerun ({resumed_stdout.strip()}): byte-identical to the "
          f"uninterrupted run: {identical}")
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    flags.mark_flag_as_required("saved_model_dir")
    app.run(main)
