"""Whole runs on your own files (#34), in-process: a multi-label keyword set learnt to micro-F1 >= 0.9, its thresholds
chosen on dev, saved, used again on resume and by a predict-only run from the directory, and served by the export."""

import csv
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from official_bert.classification.label_metrics import choose_thresholds, multi_label_metrics
from official_bert.classification.own_files import Columns
from official_bert.finetuning import FineTuningSettings, run_task
from official_bert.tasks.own_files import OwnFilesTask
from tests.classification.own_data import KEYWORDS, write_keyword_set, write_model


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.slow
def test_multi_label_thresholds_survive_save_resume_and_export(tmp_path):
    train, dev = write_keyword_set(str(tmp_path))
    vocab, config = write_model(str(tmp_path), hidden_size=64, intermediate_size=128, num_attention_heads=4)
    run_dir, export_dir = str(tmp_path / "run"), str(tmp_path / "export")

    def settings(output_dir, **overrides):
        values = dict(do_train=True, do_eval=True, do_predict=True, max_seq_length=16, train_batch_size=16,
                      eval_batch_size=32, predict_batch_size=32, learning_rate=2e-3, num_train_epochs=25,
                      iterations_per_loop=50, log_steps=1000, export_dir=export_dir)
        return FineTuningSettings(output_dir, config, vocab, **{**values, **overrides})

    def task(**files):
        return OwnFilesTask(files or {"train": train, "dev": dev, "test": dev}, Columns(label="labels", id="id"))

    results = run_task(task(), settings(run_dir))["eval_results"]
    assert results["eval_micro_f1"] >= 0.9, results
    assert results["global_step"] == 750 and results["eval_thresholds"].startswith("chosen on this dev set")

    # The predictions, recomputed from their probabilities with the saved thresholds and scored independently.
    with open(os.path.join(run_dir, "labels.json")) as f:
        assert json.load(f)["labels"] == sorted(KEYWORDS)
    with open(os.path.join(run_dir, "thresholds.json")) as f:
        thresholds = json.load(f)["thresholds"]
    dev_rows, predictions = read_jsonl(dev), read_jsonl(os.path.join(run_dir, "predictions.jsonl"))
    assert [p["id"] for p in predictions] == [row["id"] for row in dev_rows]
    labels = sorted(KEYWORDS)
    truth = np.array([[label in row["labels"] for label in labels] for row in dev_rows])
    probabilities = np.array([[p["probabilities"][label] for label in labels] for p in predictions])
    assert [p["labels"] for p in predictions] == [
        [label for label in labels if p["probabilities"][label] >= thresholds[label]] for p in predictions]
    np.testing.assert_allclose([thresholds[label] for label in labels], choose_thresholds(truth, probabilities),
                               atol=1e-5)
    assert multi_label_metrics(labels, truth, probabilities, [thresholds[label] for label in labels])[
        "micro_f1"] == pytest.approx(results["eval_micro_f1"], abs=1e-3)

    # The export serves the same labels for the dev texts.
    [version] = os.listdir(export_dir)
    serve = tf.saved_model.load(os.path.join(export_dir, version)).signatures["serving_default"]
    served = serve(text_a=tf.constant([row["text"] for row in dev_rows]))["labels"].numpy()
    assert [[name.decode() for name in row if name] for row in served] == [p["labels"] for p in predictions]

    # Rerunning the command resumes at the last step (no training) and chooses the same thresholds.
    os.remove(os.path.join(run_dir, "thresholds.json"))
    again = run_task(task(), settings(run_dir, export_dir=None))["eval_results"]
    assert again["global_step"] == 750 and again["eval_micro_f1"] == results["eval_micro_f1"]
    with open(os.path.join(run_dir, "thresholds.json")) as f:
        assert json.load(f)["thresholds"] == pytest.approx(thresholds)

    # A predict-only run from the directory, without the dev set, uses the saved thresholds and labels.
    predict_dir = str(tmp_path / "predict")
    run_task(task(test=dev), settings(predict_dir, do_train=False, do_eval=False, init_checkpoint=run_dir,
                                      export_dir=None))
    assert read_jsonl(os.path.join(predict_dir, "predictions.jsonl")) == predictions


@pytest.mark.slow
def test_regression_pairs_in_windows_score_every_csv_row(tmp_path):
    rng = np.random.default_rng(0)
    words = ["please", "help", "crash", "error", "thanks", "hello", "again", "now"]
    rows = [[f"r{i}", " ".join(rng.choice(words, rng.integers(2, 14))), " ".join(rng.choice(words, 2)),
             f"{rng.uniform(0, 5):.2f}"] for i in range(48)]
    path = str(tmp_path / "scores.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["key", "body", "title", "stars"], *rows])
    vocab, config = write_model(str(tmp_path))
    task = OwnFilesTask({"train": path, "dev": path, "test": path}, Columns("body", "title", "stars", "key"),
                        regression=True, doc_stride=2)
    output_dir = str(tmp_path / "run")
    results = run_task(task, FineTuningSettings(output_dir, config, vocab, do_train=True, do_eval=True,
                                                do_predict=True, max_seq_length=8, train_batch_size=8,
                                                eval_batch_size=16, predict_batch_size=16, num_train_epochs=1,
                                                learning_rate=1e-3))["eval_results"]
    assert task.dev_files["dev"].num_windows > len(rows)  # long bodies were cut into windows
    with open(os.path.join(output_dir, "predictions.csv"), newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert [row["id"] for row in table] == [row[0] for row in rows] and list(table[0]) == ["id", "score"]
    scores, labels = np.array([float(row["score"]) for row in table]), np.array([float(row[3]) for row in rows])
    assert results["eval_pearson"] == pytest.approx(np.corrcoef(scores, labels)[0, 1], abs=1e-4)
    assert results["eval_mse"] == pytest.approx(np.mean((scores - labels) ** 2), rel=1e-4)
    assert {"eval_spearman", "eval_loss", "global_step"} <= set(results)
