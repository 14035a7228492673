"""bert-predict: every row in input order with its id and the SavedModel's own answer, however the rows are
batched; bad rows failed or skipped with their row numbers; a SIGKILLed run continued to the bytes of an
uninterrupted one; gfile paths (ram://) in and out."""

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
from official_bert.export.file_prediction import PredictionError, ServedModel, predict_files
from official_bert.export.tflite import saved_model_version
from official_bert.classification import InputExample
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
