"""A run_classifier.py output directory (own files, multi-label) loads as a `TextClassifier` that answers as the run's
predictions.jsonl does (whatever precision the run trained in), its labels and thresholds read from the directory; and the classifier's `save_checkpoint` is
an --init_checkpoint from which a predict-only run writes the same predictions."""

import json
import os

import numpy as np
import pytest

from official_bert.classification.own_files import Columns
from official_bert.finetuning import FineTuningSettings, run_task
from official_bert.keras_models import TextClassifier
from official_bert.tasks.own_files import OwnFilesTask
from tests.classification.own_data import KEYWORDS, write_keyword_set, write_model

SEQ_LENGTH = 16


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.slow  # two short in-process runs of run_classifier
def test_a_run_directory_is_a_text_classifier_and_back(tmp_path):
    train, dev = write_keyword_set(str(tmp_path), train_rows=96, dev_rows=24)
    vocab, config = write_model(str(tmp_path))
    run_dir = str(tmp_path / "run")

    def settings(output_dir, **overrides):
        # Trained in bf16 on any CPU (emulated where it is not native): the run's predictions are computed in the
        # export's precision (float32 by default), so they are what the same weights give in Keras.
        values = dict(do_train=True, do_eval=True, do_predict=True, max_seq_length=SEQ_LENGTH, train_batch_size=16,
                      eval_batch_size=32, predict_batch_size=32, learning_rate=2e-3, num_train_epochs=4,
                      iterations_per_loop=50, log_steps=1000, mixed_precision="bf16")
        return FineTuningSettings(output_dir, config, vocab, **{**values, **overrides})

    def task(**files):
        return OwnFilesTask(files or {"train": train, "dev": dev, "test": dev}, Columns(label="labels", id="id"))

    run_task(task(), settings(run_dir))
    predictions = read_jsonl(os.path.join(run_dir, "predictions.jsonl"))
    with open(os.path.join(run_dir, "thresholds.json")) as f:
        thresholds = json.load(f)["thresholds"]

    model = TextClassifier.from_checkpoint(run_dir, sequence_length=SEQ_LENGTH)
    labels = sorted(KEYWORDS)
    assert (model.labels, model.multi_label) == (labels, True)
    assert model.thresholds == pytest.approx([thresholds[label] for label in labels])
    texts = [row["text"] for row in read_jsonl(dev)]
    probabilities = model.probabilities(model.predict(texts, verbose=0))
    np.testing.assert_allclose(probabilities, [[p["probabilities"][label] for label in labels] for p in predictions],
                               rtol=0, atol=1e-5)
    assert model.classify(texts) == [p["labels"] for p in predictions]

    model.save_checkpoint(str(tmp_path / "keras_ckpt"))
    predict_dir = str(tmp_path / "predict")
    run_task(task(test=dev), settings(predict_dir, do_train=False, do_eval=False,
                                      init_checkpoint=str(tmp_path / "keras_ckpt")))
    assert read_jsonl(os.path.join(predict_dir, "predictions.jsonl")) == predictions
