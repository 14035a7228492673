"""bert-predict: every row in input order with its id (the input's id column where it has one) and the SavedModel's
own answer, however the rows are batched; bad rows failed or skipped with their row numbers; a SIGKILLed or
interrupted run continued to the bytes of an uninterrupted one, but not onto another model or input at the same
path; one run per output file; gfile paths (ram://) in and out."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder
from official_bert.errors import Interrupted
from official_bert.export.file_prediction import PredictionError, ServedModel, predict_files
from official_bert.export.tflite import saved_model_version
from official_bert.classification import InputExample
from official_bert.io.locks import LockError
from official_bert.tokenization import FullTokenizer
from tests.export.test_export import python_inputs, spread
from tests.export.test_export_tflite import export_text_classifier
from tests.finetuning.test_run_classifier import WORDS, tiny_config, write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABELS = ("neg", "pos", "mixed")


def sentences(count, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, rng.integers(1, 14))) for _ in range(count)]


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    """A tiny single-sentence classifier (random weights, a head spread so that every label occurs)."""
    work = tmp_path_factory.mktemp("predict")
    vocab, _ = write_model_files(str(work / "model"))
    keras.utils.set_random_seed(5)
    examples = [InputExample(f"x-{i}", text, None, LABELS[0]) for i, text in enumerate(sentences(64, seed=9))]
    _, inputs = python_inputs(FullTokenizer(vocab), examples, LABELS)
    model = spread(BertClassifier(BertEncoder(tiny_config()), len(LABELS)), inputs)
    export_text_classifier(str(work / "export"), model, vocab, LABELS)
    return work / "export"


def one_by_one(export, texts):
    serving = tf.saved_model.load(saved_model_version(str(export))).signatures["serving_default"]
    return [{k: v.numpy()[0] for k, v in serving(text_a=tf.constant([text])).items()} for text in texts]


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(row) + "\n" for row in rows))


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.slow
def test_every_row_in_input_order_with_its_id_and_the_models_answer(export, tmp_path):
    texts = sentences(45)
    # Blank lines in between: ids are line numbers, which they skip.
    write_jsonl(tmp_path / "in.jsonl", [{"text_a": t, "ref": f"r{i}"} for i, t in enumerate(texts)])
    with open(tmp_path / "in.jsonl") as f:
        lines = f.read().splitlines()
    with open(tmp_path / "in.jsonl", "w") as f:
        f.write("\n".join(lines[:10] + ["", ""] + lines[10:]) + "\n")
    summary = predict_files(str(export), str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), batch_size=4,
                            window=16, keep_columns=["ref"], report=None)
    assert (summary.rows, summary.written, summary.skipped) == (45, 45, 0)
    got = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in got] == list(range(1, 11)) + list(range(13, 48))
    assert [row["ref"] for row in got] == [f"r{i}" for i in range(45)]
    expected = one_by_one(export, texts)
    assert [row["label"] for row in got] == [e["label"].decode() for e in expected]
    assert len({row["label"] for row in got}) == 3  # every label occurs: the answers are really compared
    for row, e in zip(got, expected):
        assert list(row["probabilities"]) == list(LABELS)  # the export's labels, in id order
        np.testing.assert_allclose(list(row["probabilities"].values()), e["probabilities"], atol=2e-6)
    # Batched by length or in input order, and written as CSV: the same answers.
    predict_files(str(export), str(tmp_path / "in.jsonl"), str(tmp_path / "out.csv"), batch_size=4, window=16,
                  length_batching=False, id_column="ref", report=None)
    with open(tmp_path / "out.csv") as f:
        header, *rows = [line.split(",") for line in f.read().splitlines()]
    assert header == ["id", "label", "probability_neg", "probability_pos", "probability_mixed"]
    assert [r[0] for r in rows] == [f"r{i}" for i in range(45)]
    assert [r[1] for r in rows] == [row["label"] for row in got]
    np.testing.assert_allclose(np.array([r[2:] for r in rows], float),
                               [list(row["probabilities"].values()) for row in got], atol=2e-6)


@pytest.mark.slow
def test_bad_rows_fail_naming_the_row_or_go_to_the_side_file(export, tmp_path):
    texts = sentences(20, seed=2)
    rows = [{"text_a": t} for t in texts]
    rows[6] = {"text_a": "   "}
    rows[13] = {"other": "the cat"}
    rows[17] = {"text_a": 3}
    write_jsonl(tmp_path / "in.jsonl", rows)
    with pytest.raises(PredictionError, match=r"in\.jsonl, row 7: the column 'text_a' is empty \(--on_error=skip"):
        predict_files(str(export), str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), report=None)
    assert os.listdir(tmp_path) == ["in.jsonl"]  # no output, and no partial files: bad input is not continued
    summary = predict_files(str(export), str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), on_error="skip",
                            batch_size=3, window=5, report=None)
    assert (summary.written, summary.skipped) == (17, 3)
    assert summary.errors_file == str(tmp_path / "out.jsonl") + ".errors.jsonl"
    got = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in got] == [n for n in range(1, 21) if n not in (7, 14, 18)]
    assert [row["label"] for row in got] == [e["label"].decode() for i, e in
                                             enumerate(one_by_one(export, texts)) if i not in (6, 13, 17)]
    errors = read_jsonl(summary.errors_file)
    assert [(e["row"], e["error"]) for e in errors] == [
        (7, "the column 'text_a' is empty"), (14, "no column 'text_a' (for the input text_a)"),
        (18, "the column 'text_a' holds int 3, not text")]
    assert errors[1]["input"] == {"other": "the cat"} and errors[0]["file"] == str(tmp_path / "in.jsonl")
    # A CSV header without the column is refused before any work, naming the flag that fixes it.
    with open(tmp_path / "in.csv", "w") as f:
        f.write("sentence,label\nthe cat,pos\n")
    with pytest.raises(PredictionError, match=r"in\.csv: no column 'text_a' for the input text_a \(its columns: "
                                              r"sentence, label\); name it with --columns=text_a=COLUMN"):
        predict_files(str(export), str(tmp_path / "in.csv"), str(tmp_path / "out2.jsonl"), report=None)


@pytest.mark.slow
def test_a_killed_run_continues_to_the_bytes_of_an_uninterrupted_one(export, tmp_path):
    with open(tmp_path / "in.txt", "w") as f:
        f.write("\n".join(sentences(2000, seed=3)) + "\n")
    whole = tmp_path / "whole.jsonl"
    predict_files(str(export), str(tmp_path / "in.txt"), str(whole), batch_size=8, window=40, report=None)
    output = tmp_path / "out.jsonl"
    state = tmp_path / ".out.jsonl.partial.json"
    command = [sys.executable, os.path.join(REPO, "predict.py"), f"--saved_model_dir={export}",
               f"--input_file={tmp_path / 'in.txt'}", f"--output_file={output}", "--batch_size=8",
               "--length_window=40"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if state.exists() and json.loads(state.read_text())["rows"] >= 400:
            break
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = json.loads(state.read_text())["rows"]
    assert 400 <= killed_at < 2000 and not output.exists()
    rerun = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"resuming after row {killed_at:,}" in rerun.stderr
    assert "2,000 rows in" in rerun.stdout and f"(continued after row {killed_at:,}): wrote {output}" in rerun.stdout
    assert output.read_bytes() == whole.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "out.jsonl", "whole.jsonl"]


@pytest.mark.slow
def test_gfile_paths_in_and_out(export, tmp_path):
    texts = sentences(12, seed=4)
    tf.io.gfile.makedirs("ram://predict")
    with tf.io.gfile.GFile("ram://predict/in.tsv", "w") as f:
        f.write("sentence\tid\n" + "".join(f"{t}\tx{i}\n" for i, t in enumerate(texts)))
    predict_files(str(export), "ram://predict/*.tsv", "ram://predict/out.jsonl", columns={"text_a": "sentence"},
                  id_column="id", report=None)
    with tf.io.gfile.GFile("ram://predict/out.jsonl") as f:
        got = [json.loads(line) for line in f.read().splitlines()]
    assert [row["id"] for row in got] == [f"x{i}" for i in range(12)]
    assert [row["label"] for row in got] == [e["label"].decode() for e in one_by_one(export, texts)]


def test_a_plain_text_file_feeds_a_one_input_signature_and_outputs_are_readable(tmp_path):
    module = tf.Module()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def entities(text):
        words = tf.strings.split(text).to_tensor("")
        found = tf.where(tf.strings.regex_full_match(words, "[A-Z].*"), tf.constant("PER"), "")
        length = tf.strings.length(words)
        end = tf.cumsum(length + 1, axis=1) - 1
        return {"entity_type": found, "entity_text": words, "entity_start": end - length, "entity_end": end}

    module.f = entities
    tf.saved_model.save(module, str(tmp_path / "ner"), signatures={"serving_default": entities.get_concrete_function()})
    assert ServedModel(str(tmp_path / "ner")).kind == "ner"
    with open(tmp_path / "in.txt", "w") as f:
        f.write("met Zoe today\n\nno one\n")
    predict_files(str(tmp_path / "ner"), str(tmp_path / "in.txt"), str(tmp_path / "out.jsonl"), report=None)
    assert read_jsonl(tmp_path / "out.jsonl") == [
        {"id": 1, "entities": [{"type": "PER", "text": "Zoe", "start": 4, "end": 7}]}, {"id": 3, "entities": []}]


def test_loading_calls_the_model_once_and_leaves_its_errors_to_the_rows(tmp_path):
    """TensorFlow sets a graph up at its first call; ServedModel makes that call part of loading, on a one-word row.
    A model that fails on that row still loads: the error is the rows' own, when one of them causes it."""
    module = tf.Module()
    module.calls = tf.Variable(0)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def calls(text):
        count = module.calls.assign_add(1)
        with tf.control_dependencies([tf.debugging.assert_greater(tf.strings.length(text), 1, "too short")]):
            return {"score": tf.fill(tf.shape(text), tf.cast(count, tf.float32))}

    module.f = calls
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={"serving_default": calls.get_concrete_function()})
    model = ServedModel(str(tmp_path / "m"))
    assert model.predict({"text": ["abc", "de"]}) == [{"score": 2.0}, {"score": 2.0}]  # the warm-up was call 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="too short"):
        model.predict({"text": ["x"]})


def save_length_model(path, scale):
    """A SavedModel scoring a text `scale` × its length, the scale a weight (in variables/, not in the graph)."""
    module = tf.Module()
    module.scale = tf.Variable(float(scale))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def score(text):
        return {"score": module.scale * tf.cast(tf.strings.length(text), tf.float32)}

    module.f = score
    tf.saved_model.save(module, str(path), signatures={"serving_default": score.get_concrete_function()})


@contextlib.contextmanager
def interrupted_at_call(monkeypatch, call):
    """Within the block, the model's `call`-th batch raises KeyboardInterrupt, as Ctrl-C there would: the windows
    before it are complete, and the run stops as a killed one does (a partial file and its state left)."""
    calls = []
    predict = ServedModel.predict

    def interrupting(self, texts):
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return predict(self, texts)

    with monkeypatch.context() as patch:
        patch.setattr(ServedModel, "predict", interrupting)
        yield


def test_an_interrupted_run_says_what_it_kept_and_the_same_call_continues(tmp_path, monkeypatch):
    save_length_model(tmp_path / "model", 1)
    (tmp_path / "in.txt").write_text("".join(f"{'x' * n}\n" for n in range(1, 11)))
    args = (str(tmp_path / "model"), str(tmp_path / "in.txt"), str(tmp_path / "out.jsonl"))
    with interrupted_at_call(monkeypatch, 3), pytest.raises(Interrupted) as stopped:
        predict_files(*args, batch_size=2, window=4, report=None)
    assert str(stopped.value) == (f"after row 4: the 4 rows written are kept in {tmp_path / '.out.jsonl.partial'}; "
                                  "rerun the same command to continue from row 5")
    lines = []
    summary = predict_files(*args, batch_size=2, window=4, report=lines.append)
    assert lines == ["resuming after row 4 (a previous run's 4 rows are kept)"] and summary.resumed_from == 4
    assert read_jsonl(tmp_path / "out.jsonl") == [{"id": n, "score": float(n)} for n in range(1, 11)]
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "model", "out.jsonl"]


def test_a_model_replaced_at_the_same_path_starts_over_with_no_old_row(tmp_path, monkeypatch):
    save_length_model(tmp_path / "model", 1)
    (tmp_path / "in.txt").write_text("".join(f"{'x' * n}\n" for n in range(1, 11)))
    args = (str(tmp_path / "model"), str(tmp_path / "in.txt"), str(tmp_path / "out.jsonl"))
    with interrupted_at_call(monkeypatch, 3), pytest.raises(Interrupted):
        predict_files(*args, batch_size=2, window=4, report=None)
    graph = (tmp_path / "model" / "saved_model.pb").read_bytes()
    tf.io.gfile.rmtree(str(tmp_path / "model"))
    save_length_model(tmp_path / "model", 2)  # retrained and exported to the same directory
    (tmp_path / "model" / "saved_model.pb").write_bytes(graph)  # even byte for byte the same graph: new weights
    lines = []
    summary = predict_files(*args, batch_size=2, window=4, report=lines.append)
    assert lines == ["starting over: the 4 rows an interrupted run did are not continued: the model is another one "
                     "(the same path, new content)"]
    assert summary.resumed_from == 0
    predict_files(args[0], args[1], str(tmp_path / "fresh.jsonl"), batch_size=2, window=4, report=None)
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    assert read_jsonl(tmp_path / "out.jsonl") == [{"id": n, "score": 2.0 * n} for n in range(1, 11)]


def test_an_input_rewritten_in_place_with_its_size_and_time_starts_over(tmp_path, monkeypatch):
    save_length_model(tmp_path / "model", 1)
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{'x' * n}\n" for n in range(1, 11)))
    args = (str(tmp_path / "model"), str(source), str(tmp_path / "out.jsonl"))
    with interrupted_at_call(monkeypatch, 3), pytest.raises(Interrupted):
        predict_files(*args, batch_size=2, window=4, report=None)
    stat = source.stat()
    source.write_text("".join(f"{'y' * n}\n" for n in range(10, 0, -1)))  # same bytes count, other rows
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    lines = []
    predict_files(*args, batch_size=2, window=4, report=lines.append)
    assert lines == ["starting over: the 4 rows an interrupted run did are not continued: the input files changed"]
    assert read_jsonl(tmp_path / "out.jsonl") == [{"id": n, "score": float(11 - n)} for n in range(1, 11)]


# A process that holds the lock of an output file as bert-predict does, until told to go.
LOCK_HOLDER = """
import sys
from official_bert.io.locks import output_file_lock
with output_file_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_a_second_run_on_the_same_output_refuses_naming_the_first(tmp_path):
    save_length_model(tmp_path / "model", 1)
    (tmp_path / "in.txt").write_text("a\nbb\n")
    output = tmp_path / "out.jsonl"
    (tmp_path / ".out.jsonl.partial").write_bytes(b'{"id": 1, "score": 1.0}\n')  # the first run's, growing
    first = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(output)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="3"))
    try:
        assert first.stdout.readline() == "locked\n"
        with pytest.raises(LockError) as refused:
            predict_files(str(tmp_path / "model"), str(tmp_path / "in.txt"), str(output), report=None)
        message = str(refused.value)
        assert message.startswith(f"--output_file={output} is in use by another run (pid {first.pid} on this host, ")
        assert message.endswith("wait for it to end, or use another --output_file") and "\n" not in message
        assert (tmp_path / ".out.jsonl.partial").read_bytes() == b'{"id": 1, "score": 1.0}\n'
        assert not output.exists()
        first.communicate("go\n", timeout=60)
    finally:
        first.kill()
    predict_files(str(tmp_path / "model"), str(tmp_path / "in.txt"), str(output), report=None)
    assert read_jsonl(output) == [{"id": 1, "score": 1.0}, {"id": 2, "score": 2.0}]
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "model", "out.jsonl"]


def test_ids_come_from_the_inputs_id_column_where_it_has_one(tmp_path):
    save_length_model(tmp_path / "model", 1)
    (tmp_path / "in.csv").write_text("id,text\nq-7,aaa\nq-2,b\nq-7,cc\n,dddd\n")
    model = str(tmp_path / "model")
    with pytest.raises(PredictionError, match=r"in\.csv, row 4: no id in the column 'id' \(--on_error=skip"):
        predict_files(model, str(tmp_path / "in.csv"), str(tmp_path / "out.jsonl"), report=None)
    predict_files(model, str(tmp_path / "in.csv"), str(tmp_path / "out.jsonl"), on_error="skip", report=None)
    # A repeated id: each row still once, in input order.
    assert read_jsonl(tmp_path / "out.jsonl") == [{"id": "q-7", "score": 3.0}, {"id": "q-2", "score": 1.0},
                                                  {"id": "q-7", "score": 2.0}]
    write_jsonl(tmp_path / "in.jsonl", [{"id": 70, "text": "aa"}, {"id": 70, "text": "a"}])
    predict_files(model, str(tmp_path / "in.jsonl"), str(tmp_path / "out2.csv"), report=None)
    assert (tmp_path / "out2.csv").read_text() == "id,score\n70,2.0\n70,1.0\n"
    # Without an id column, or with --id_column= (empty), the row's number.
    predict_files(model, str(tmp_path / "in.jsonl"), str(tmp_path / "out3.jsonl"), id_column="", report=None)
    assert [row["id"] for row in read_jsonl(tmp_path / "out3.jsonl")] == [1, 2]
    (tmp_path / "plain.txt").write_text("a\nbb\n")
    predict_files(model, f"{tmp_path / 'plain.txt'},{tmp_path / 'in.jsonl'}", str(tmp_path / "out4.jsonl"),
                  report=None)  # one of the files has no id column: every row gets FILE:NUMBER
    assert [row["id"] for row in read_jsonl(tmp_path / "out4.jsonl")] == ["plain.txt:1", "plain.txt:2", "in.jsonl:1",
                                                                          "in.jsonl:2"]


def test_a_directory_as_input_file_is_named_as_one_in_one_line(tmp_path):
    (tmp_path / "rows").mkdir()
    (tmp_path / "model").mkdir()
    (tmp_path / "rows" / "a.csv").write_text("text\nhi\n")
    result = subprocess.run([sys.executable, os.path.join(REPO, "predict.py"),
                             f"--saved_model_dir={tmp_path / 'model'}",
                             f"--input_file={tmp_path / 'rows'}", f"--output_file={tmp_path / 'out.jsonl'}"],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"predict: error: --input_file={tmp_path / 'rows'}: {tmp_path / 'rows'} is a directory; expected files: give "
        f"a glob of the files in it, e.g. {tmp_path / 'rows' / '*.csv'}")
    assert sorted(os.listdir(tmp_path)) == ["model", "rows"]  # nothing written, not even a lock file


@pytest.mark.slow
def test_a_second_process_is_refused_and_sigterm_says_how_many_rows_are_kept(export, tmp_path):
    with open(tmp_path / "in.txt", "w") as f:
        f.write("\n".join(sentences(6000, seed=6)) + "\n")
    output = tmp_path / "out.jsonl"
    state = tmp_path / ".out.jsonl.partial.json"
    command = [sys.executable, os.path.join(REPO, "predict.py"), f"--saved_model_dir={export}",
               f"--input_file={tmp_path / 'in.txt'}", f"--output_file={output}", "--batch_size=1",
               "--length_window=16"]
    first = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and first.poll() is None and not state.exists():
            time.sleep(0.02)
        second = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert first.poll() is None, "the first run ended before the second started"
        assert second.returncode == 1 and "Traceback" not in second.stderr
        refusal = second.stderr.splitlines()[-1]
        assert refusal.startswith(f"predict: error: --output_file={output} is in use by another run (pid "
                                  f"{first.pid} on this host, predict.py since "), refusal
        first.send_signal(signal.SIGTERM)
        _, stderr = first.communicate(timeout=120)
    finally:
        first.kill()
    assert first.returncode == 130
    kept = json.loads(state.read_text())["rows"]
    assert 0 < kept < 6000 and not output.exists()
    assert stderr.splitlines()[-1] == (f"predict: interrupted after row {kept:,}: the {kept:,} rows written are "
                                       f"kept in {tmp_path / '.out.jsonl.partial'}; rerun the same command to "
                                       f"continue from row {kept + 1:,}"), stderr[-2000:]
    rerun = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"resuming after row {kept:,}" in rerun.stderr
    assert [row["id"] for row in read_jsonl(output)] == list(range(1, 6001))  # each row once, in order


def save_length_classifier(path):
    """A SavedModel classifying a text by its length (pos beyond 3 characters), with a classifier's outputs."""
    module = tf.Module()
    labels = tf.constant(["neg", "pos"])  # captured: the graph's constant that names the labels, as an export's

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a")])
    def classify(text_a):
        length = tf.cast(tf.strings.length(text_a), tf.float32)
        probabilities = tf.stack([3.0 / (3.0 + length), length / (3.0 + length)], axis=1)
        return {"label": tf.gather(labels, tf.argmax(probabilities, axis=1)),
                "probabilities": probabilities}

    module.f = classify
    tf.saved_model.save(module, str(path), signatures={"serving_default": classify.get_concrete_function()})
    return str(path)


@pytest.fixture(scope="module")
def length_classifier(tmp_path_factory):
    return save_length_classifier(tmp_path_factory.mktemp("classifier") / "model")


def write_keep_csv(path):
    path.write_text("id,text_a,label,input_label\n1,ab,gold-neg,note 1\n2,abcdef,gold-pos,note 2\n")
    return str(path)


@pytest.mark.parametrize("output", ["out.jsonl", "out.csv"])
def test_kept_columns_that_collide_with_the_outputs_are_refused_before_any_work(length_classifier, tmp_path, output):
    # I3h: label's value was lost (JSON Lines); I3i: a CSV with the column input_label twice (rc 0).
    source = write_keep_csv(tmp_path / "keep2.csv")
    with pytest.raises(PredictionError) as raised:
        predict_files(length_classifier, source, str(tmp_path / output), keep_columns=["label", "input_label"],
                      report=None)
    assert str(raised.value) == ("--keep_columns=label,input_label: the columns 'label' (written as 'input_label': the "
                                 "output has its own 'label') and 'input_label' would both be written as "
                                 "'input_label': keep one of them, or rename one in the input")
    assert sorted(os.listdir(tmp_path)) == ["keep2.csv"]
    with pytest.raises(PredictionError, match=r"^--keep_columns=id,id: names the column 'id' twice$"):
        predict_files(length_classifier, source, str(tmp_path / output), keep_columns=["id", "id"], report=None)


def test_a_kept_column_named_like_an_output_is_renamed_and_the_run_says_so(length_classifier, tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("id,text_a,label,probability_pos\n1,ab,gold-neg,0.1\n2,abcdef,gold-pos,0.9\n")
    lines = []
    predict_files(length_classifier, str(source), str(tmp_path / "out.csv"), report=lines.append,
                  keep_columns=["label", "probability_pos"])
    assert lines[0] == ("--keep_columns: 'label' is written as 'input_label', 'probability_pos' is written as "
                        "'input_probability_pos' (the output has its own)")
    header, *rows = (tmp_path / "out.csv").read_text().splitlines()
    assert header.split(",") == ["id", "input_label", "input_probability_pos", "label", "probability_neg",
                                 "probability_pos"]
    assert [row.split(",")[:4] for row in rows] == [["1", "gold-neg", "0.1", "neg"], ["2", "gold-pos", "0.9", "pos"]]


@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_a_kept_or_id_column_a_file_lacks_is_a_file_error_listing_its_columns(length_classifier, tmp_path, on_error):
    # I3d: a row error with skip advice; I3d2: with --on_error=skip, rc 0 and 0 rows written; I1b: the same for ids.
    source = write_keep_csv(tmp_path / "keep.csv")
    out = str(tmp_path / "out.jsonl")
    with pytest.raises(PredictionError) as raised:
        predict_files(length_classifier, source, out, keep_columns=["nosuch"], on_error=on_error, report=None)
    assert str(raised.value) == (f"{source}: no column 'nosuch' to keep (--keep_columns) (its columns: id, text_a, "
                                 "label, input_label)")
    (tmp_path / "b.csv").write_text("text_a\nabc\n")
    with pytest.raises(PredictionError) as raised:
        predict_files(length_classifier, f"{source},{tmp_path / 'b.csv'}", out, id_column="id", on_error=on_error,
                      report=None)
    assert str(raised.value) == f"{tmp_path / 'b.csv'}: no column 'id' for the ids (--id_column) (its columns: text_a)"
    assert sorted(os.listdir(tmp_path)) == ["b.csv", "keep.csv"]


def test_plain_text_has_no_columns_to_keep(tmp_path):
    # I3g: "row 1: no column 'text_a' (--keep_columns) (--on_error=skip ...)", advice that cannot work.
    save_length_model(tmp_path / "model", 1)
    (tmp_path / "plain20.txt").write_text("a\nbb\n")
    with pytest.raises(PredictionError) as raised:
        predict_files(str(tmp_path / "model"), str(tmp_path / "plain20.txt"), str(tmp_path / "out.jsonl"),
                      keep_columns=["text_a"], report=None)
    assert str(raised.value) == (f"{tmp_path / 'plain20.txt'}: plain text has no columns (one text per line), so "
                                 "none to keep (--keep_columns); give a CSV, TSV or JSON Lines file for those")


def test_a_run_whose_every_row_is_bad_is_an_error_and_writes_nothing(tmp_path):
    # I3d2 exited 0 with an empty output; a run that predicts nothing has failed.
    save_length_model(tmp_path / "model", 1)
    write_jsonl(tmp_path / "in.jsonl", [{"text": " "}, {"other": "a"}, {"text": ""}])
    with pytest.raises(PredictionError) as raised:
        predict_files(str(tmp_path / "model"), str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"),
                      on_error="skip", report=None)
    assert str(raised.value) == (f"--input_file={tmp_path / 'in.jsonl'}: every row is bad (3 of 3); the first, "
                                 f"{tmp_path / 'in.jsonl'}, row 1: the column 'text' is empty; nothing written")
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "model"]
