"""data_prep/create_pretraining_data.py and inspect_pretraining_data.py as a user runs them.

Each bad input ends with exit status 1, a one-line message naming the flag, file or line, no traceback and
no output file, before any work for a bad output location; the documented handlings (one-sentence documents,
over-long sentences, non-UTF-8 bytes, a max_predictions_per_seq that caps the masking) succeed and say so.
Ctrl-C, a failed write or SIGKILL leave no file and no process behind.
"""

import os
import resource
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from tests.pretraining_data_corpus import real_vocab_file, write_corpus

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CREATE = os.path.join(REPO, "data_prep", "create_pretraining_data.py")
INSPECT = os.path.join(REPO, "data_prep", "inspect_pretraining_data.py")


def run(script, *flags, cwd):
    return subprocess.run([sys.executable, script, *flags], cwd=cwd, capture_output=True, text=True, timeout=300)


def spec(v2=False):
    ids, types = ("input_word_ids", "input_type_ids") if v2 else ("input_ids", "segment_ids")
    return {ids: tf.io.FixedLenFeature([64], tf.int64), "input_mask": tf.io.FixedLenFeature([64], tf.int64),
            types: tf.io.FixedLenFeature([64], tf.int64),
            "masked_lm_positions": tf.io.FixedLenFeature([10], tf.int64),
            "masked_lm_ids": tf.io.FixedLenFeature([10], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([10], tf.float32),
            "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64)}


def read_all(paths, v2=False, compression=""):
    records = [r for p in paths for r in tf.data.TFRecordDataset(p, compression_type=compression)]
    names = set(tf.train.Example.FromString(records[0].numpy()).features.feature)
    assert names == set(spec(v2))  # exactly the expected features, nothing more
    return [tf.io.parse_single_example(r, spec(v2)) for r in records]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(str(tmp_path_factory.mktemp("cli") / "corpus.txt"), num_documents=60)


COMMON = ["--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2", "--num_workers=2"]


def test_writes_the_original_features_and_a_summary(tmp_path, corpus):
    result = run(CREATE, f"--input_file={corpus}", "--output_file=a.tfrecord,b.tfrecord",
                 f"--vocab_file={real_vocab_file()}", *COMMON, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["a.tfrecord", "b.tfrecord"]
    examples = read_all([tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"])
    for line in (f"wrote {len(examples):,} instances from 60 documents", "masked ", "next sentence: ",
                 "documents/s", "instances/s"):
        assert line in result.stderr
    cls, sep = 101, 102
    for example in examples[:50]:
        ids = example["input_ids"].numpy()
        length = int(example["input_mask"].numpy().sum())
        assert ids[0] == cls and ids[length - 1] == sep and (ids[length:] == 0).all()


@pytest.mark.slow
def test_v2_names_gzip_shards_and_whole_word_masking(tmp_path, corpus):
    result = run(CREATE, f"--input_file={corpus}", "--output_file=out/train.tfrecord", "--num_output_shards=3",
                 f"--vocab_file={real_vocab_file()}", "--use_v2_feature_names", "--gzip_compress",
                 "--do_whole_word_mask", "--max_ngram_size=2", *COMMON, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shards = [f"train.tfrecord-0000{i}-of-00003" for i in range(3)]
    assert sorted(os.listdir(tmp_path / "out")) == shards
    examples = read_all([tmp_path / "out" / s for s in shards], v2=True, compression="GZIP")
    assert len(examples) > 100
    inspected = run(INSPECT, "--input_file=out/train.tfrecord-*", f"--vocab_file={real_vocab_file()}",
                    "--num_examples=2", cwd=tmp_path)
    assert inspected.returncode == 0, inspected.stderr
    out = inspected.stdout
    assert f"records: {len(examples):,} (max_seq_length 64" in out and "feature names: v2" in out
    assert "[CLS]/[SEP] masked: 0" in out and "words masked only in part: 0" in out
    assert "count = num_to_predict formula in" in out and "length histogram" in out
    assert out.count("example ") == 2 and "[CLS]" in out and "→" in out
    not_records = run(INSPECT, f"--input_file={corpus}", f"--vocab_file={real_vocab_file()}", cwd=tmp_path)
    assert not_records.returncode == 1 and "Traceback" not in not_records.stderr
    expected = f"inspect_pretraining_data: error: {corpus}: not a TFRecord file of pretraining examples (corrupted"
    assert expected in not_records.stderr


@pytest.mark.parametrize("case, flags, message", [
    ("missing file", ["--input_file=nowhere/*.txt"], "--input_file: no file matches 'nowhere/*.txt'"),
    ("empty corpus", ["--input_file=empty.txt"], "--input_file: the input files hold no text"),
    ("no document break", ["--input_file=one_document.txt"], "one_document.txt: the whole corpus is one document"),
    ("unknown vocab file", ["--vocab_file=missing_vocab.txt"], "missing_vocab.txt: vocabulary file not found"),
    ("unknown SentencePiece model", ["--vocab_file=", "--spm_model_file=missing.model"],
     "missing.model: SentencePiece model file not found"),
    ("output is a directory", ["--output_file=."], "--output_file=. is a directory; expected a file path"),
    ("output under a file", ["--output_file=empty.txt/out.tfrecord"],
     "--output_file=empty.txt/out.tfrecord: empty.txt is a file; expected a directory"),
    ("read-only directory", ["--output_file=/sys/out.tfrecord"],
     "--output_file: cannot write /sys/out.tfrecord: the directory /sys is not writable"),
    ("n-grams without whole words", ["--max_ngram_size=3"],
     "max_ngram_size=3 masks runs of whole words: also pass --do_whole_word_mask"),
])
def test_bad_input_is_a_clear_error(tmp_path, corpus, case, flags, message):
    (tmp_path / "empty.txt").write_text("\n\n   \n")
    (tmp_path / "one_document.txt").write_text("".join(f"Sentence number {i}.\n" for i in range(50)))
    defaults = {"--input_file": corpus, "--output_file": "out.tfrecord", "--vocab_file": real_vocab_file(),
                "--max_seq_length": "64", "--max_predictions_per_seq": "10"}
    defaults.update(flag.split("=", 1) for flag in flags)
    before = set(os.listdir(tmp_path))
    result = run(CREATE, *(f"{k}={v}" for k, v in defaults.items()), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"create_pretraining_data: error: {message}" in result.stderr
    assert "Traceback" not in result.stderr
    assert set(os.listdir(tmp_path)) == before  # nothing written, not even a temporary file


def test_one_sentence_documents_and_long_sentences_are_handled_and_reported(tmp_path):
    text = "Just one sentence here.\n\n" + "word " * 100 + "\nA short one.\n\nAnother document.\nIts end.\n"
    (tmp_path / "odd.txt").write_text(text)
    result = run(CREATE, "--input_file=odd.txt", "--output_file=out.tfrecord", f"--vocab_file={real_vocab_file()}",
                 "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "1 one-sentence documents: their instances always take a random next segment" in result.stderr
    assert "1 sentences longer than 61 tokens were truncated (first at odd.txt:3)" in result.stderr
    assert all(int(e["input_mask"].numpy().sum()) <= 64 for e in read_all([tmp_path / "out.tfrecord"]))


def test_interrupted_run_leaves_no_output(tmp_path):
    big = write_corpus(str(tmp_path / "big.txt"), num_documents=30000, seed=1)
    process = subprocess.Popen(
        [sys.executable, CREATE, f"--input_file={big}", "--output_file=out/a.tfrecord,out/b.tfrecord",
         f"--vocab_file={real_vocab_file()}", "--dupe_factor=20", "--num_workers=2"],
        cwd=tmp_path, stderr=subprocess.PIPE, text=True,
        # A non-interactive shell starts background jobs with SIGINT ignored, and children inherit that (a suite
        # run as `make test &` would see the signal ignored): give the tool Ctrl-C's default, which is tested.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in process.stderr:  # wait until it is working
        if "reading 1 input files" in line:
            break
    # Temporary files have no name, and the outputs' temporary names appear only in the last pass: interrupt
    # once the workers are busy.
    deadline = time.time() + 60
    while len(_children(process.pid)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1)
    process.send_signal(signal.SIGINT)
    rest = process.stderr.read()
    assert process.wait(timeout=120) == 130, rest
    assert "interrupted; no output file was written" in rest and "Traceback" not in rest
    assert os.listdir(tmp_path / "out") == []


def test_non_utf8_bytes_are_dropped_with_a_warning(tmp_path, corpus):
    (tmp_path / "latin1.txt").write_bytes(open(corpus, "rb").read() + "Caf\xe9 \xff.\n".encode("latin-1"))
    result = run(CREATE, "--input_file=latin1.txt", "--output_file=out.tfrecord", f"--vocab_file={real_vocab_file()}",
                 *COMMON, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    line = sum(1 for _ in open(corpus)) + 1
    assert f"dropped 2 bytes that are not UTF-8, as the original does (the first on latin1.txt:{line})" in result.stderr


def test_max_predictions_per_seq_caps_the_masking_as_the_original(tmp_path, corpus):
    result = run(CREATE, f"--input_file={corpus}", "--output_file=out.tfrecord", f"--vocab_file={real_vocab_file()}",
                 "--max_seq_length=128", "--max_predictions_per_seq=5", "--dupe_factor=1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "max_predictions_per_seq=5 is below the 19 predictions that masked_lm_prob=0.15 asks" in result.stderr
    records = [r for r in tf.data.TFRecordDataset(str(tmp_path / "out.tfrecord"))]
    weights = [tf.io.parse_single_example(r, {"masked_lm_weights": tf.io.FixedLenFeature([5], tf.float32)})
               for r in records]
    counts = [int(w["masked_lm_weights"].numpy().sum()) for w in weights]
    assert max(counts) == 5 and counts.count(5) > 0.9 * len(counts)


def test_preserve_unused_tokens_keeps_them_whole(tmp_path):
    vocab = open(real_vocab_file(), encoding="utf-8").read().splitlines()
    unused = vocab.index("[unused7]")
    (tmp_path / "c.txt").write_text("".join(f"The [unused7] city {i}.\nA river [unused7].\n\n" for i in range(20)))
    ids = {}
    for flag in ("--preserve_unused_tokens", "--nopreserve_unused_tokens"):
        result = run(CREATE, "--input_file=c.txt", f"--output_file={flag}.tfrecord",
                     f"--vocab_file={real_vocab_file()}", "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=1",
                     "--masked_lm_prob=0.01", flag, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        ids[flag] = {int(i) for r in read_all([tmp_path / f"{flag}.tfrecord"]) for i in r["input_ids"].numpy()}
    assert unused in ids["--preserve_unused_tokens"] and unused not in ids["--nopreserve_unused_tokens"]
    assert vocab.index("[") in ids["--nopreserve_unused_tokens"]


def test_a_write_failure_midway_is_one_line_and_leaves_nothing(tmp_path, corpus):
    """Files larger than 200 kB fail with EFBIG, like a disk that fills up during the run."""
    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    result = subprocess.run([sys.executable, CREATE, f"--input_file={corpus}", "--output_file=out/a.tfrecord",
                             f"--vocab_file={real_vocab_file()}", "--dupe_factor=20", "--max_seq_length=64",
                             "--max_predictions_per_seq=10"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300, preexec_fn=small_files)
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("create_pretraining_data: error: ") and "File too large" in last, result.stderr
    assert "Traceback" not in result.stderr and os.listdir(tmp_path / "out") == []


def _children(pid):
    try:
        return [int(c) for t in os.listdir(f"/proc/{pid}/task")
                for c in open(f"/proc/{pid}/task/{t}/children").read().split()]
    except OSError:
        return []


def test_workers_die_with_a_killed_parent(tmp_path):
    big = write_corpus(str(tmp_path / "big.txt"), num_documents=20000, seed=2)
    process = subprocess.Popen([sys.executable, CREATE, f"--input_file={big}", "--output_file=out.tfrecord",
                                f"--vocab_file={real_vocab_file()}", "--dupe_factor=20", "--num_workers=2"],
                               cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:  # wait until it is working
        if "reading 1 input files" in line:
            break
    deadline = time.time() + 60
    while len(workers := _children(process.pid)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    assert len(workers) == 2
    time.sleep(1)
    process.kill()
    process.wait(timeout=30)
    deadline = time.time() + 5
    while any(os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z"
              for pid in workers) and time.time() < deadline:
        time.sleep(0.1)
    alive = [pid for pid in workers if os.path.exists(f"/proc/{pid}")
             and open(f"/proc/{pid}/stat").read().split()[2] != "Z"]
    for pid in alive:  # leave no process behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert alive == []
    process.stderr.read()  # the pipe closes: no worker holds it open
    assert os.listdir(tmp_path) == ["big.txt"]  # the temporary files had no name: nothing is left


def test_inspecting_an_empty_file_says_so(tmp_path):
    (tmp_path / "empty.tfrecord").write_bytes(b"")
    result = run(INSPECT, "--input_file=empty.tfrecord", f"--vocab_file={real_vocab_file()}", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "inspect_pretraining_data: error: --input_file: empty.tfrecord: no records (empty files)")


def test_inspecting_records_of_other_features_names_the_missing_ones(tmp_path):
    # A classifier's TFRecord (input_ids, input_mask, segment_ids, label_ids): parsing it as pretraining records would
    # fail inside the dataset with TensorFlow's internals as the message.
    feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))
               for name in ("input_ids", "input_mask", "segment_ids", "label_ids")}
    with tf.io.TFRecordWriter(str(tmp_path / "train.tf_record")) as writer:
        writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    result = run(INSPECT, "--input_file=train.tf_record", f"--vocab_file={real_vocab_file()}", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "inspect_pretraining_data: error: train.tf_record: not a TFRecord file of pretraining examples: its first "
        "record lacks the features masked_lm_positions, masked_lm_ids, masked_lm_weights, next_sentence_labels (it "
        "has input_ids, input_mask, label_ids, segment_ids)")
