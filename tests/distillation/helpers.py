"""Tiny teachers for the distillation tests: own-files data of the three kinds, a teacher fine-tuned on it by
run_task (a run_classifier output directory), and the settings of a student run."""

import json
import os

from official_bert.classification.own_files import Columns
from official_bert.finetuning import FineTuningSettings, run_task
from official_bert.tasks import OwnFilesTask
from tests.finetuning.test_run_classifier import SEQ_LENGTH, SINGLE, tiny_config, write_model_files

# Multi-label: "good"/"great" texts are pos, "dull"/"bad" neg, "film"/"movie" cinema.
MULTI = [("the movie is good", ["cinema", "pos"]), ("the film was awful", ["cinema", "neg"]),
         ("a great story", ["pos"]), ("a dull plot", ["neg"]), ("very poor movie", ["cinema", "neg"]),
         ("nice dog", ["pos"]), ("the cat is not good", []), ("a bad film", ["cinema", "neg"])]
REGRESSION = [("the movie is good", 4.0), ("the film was awful", 0.5), ("a great story", 4.5), ("a dull plot", 1.0),
              ("very poor movie", 0.0), ("nice dog", 3.5), ("the cat is not good", 1.5), ("a bad film", 0.5)]
UNLABELED = ["good film", "a dull movie", "the plot was great", "awful story", "the dog is nice", "poor cat"]


def write_rows(path, rows):
    """A JSON Lines file of {"text", "label"} rows; returns its path."""
    with open(path, "w", encoding="utf-8") as f:
        for text, label in rows:
            f.write(json.dumps({"text": text, "label": label}) + "\n")
    return str(path)


def write_data(directory, kind, repeat=2):
    """train.jsonl (the rows `repeat` times) and dev.jsonl of a kind ("single", "multi", "regression"); returns
    {"train": path, "dev": path}."""
    os.makedirs(directory, exist_ok=True)
    rows = {"single": SINGLE, "multi": MULTI, "regression": REGRESSION}[kind]
    return {"train": write_rows(os.path.join(directory, "train.jsonl"), rows * repeat),
            "dev": write_rows(os.path.join(directory, "dev.jsonl"), rows)}


def own_task(files, kind):
    return OwnFilesTask(files, Columns(), regression=kind == "regression", multi_label=kind == "multi")


def train_teacher(tmp_path, kind, layers=2, epochs=6, name="teacher", files=None, seed=7, learning_rate=2e-3,
                  export_dir=None):
    """A run_classifier output directory: a tiny model fine-tuned on `kind`'s data (exported to `export_dir` if
    given); returns (its path, the data files, the vocabulary)."""
    files = files or write_data(str(tmp_path / f"data-{kind}"), kind)
    vocab, _ = write_model_files(str(tmp_path / "model"))
    config = str(tmp_path / f"teacher-config-{layers}.json")
    tiny_config(num_hidden_layers=layers).to_json_file(config)
    output_dir = str(tmp_path / name)
    run_task(own_task(files, kind), FineTuningSettings(
        output_dir, config, vocab, max_seq_length=SEQ_LENGTH, do_train=True, do_eval=True, train_batch_size=4,
        eval_batch_size=4, learning_rate=learning_rate, num_train_epochs=epochs, mixed_precision="fp32", seed=seed,
        iterations_per_loop=4, log_steps=100, export_dir=export_dir))
    return output_dir, files, vocab


def student_settings(output_dir, **overrides):
    values = dict(max_seq_length=SEQ_LENGTH, do_train=True, do_eval=True, train_batch_size=4, eval_batch_size=4,
                  learning_rate=2e-3, num_train_epochs=4, mixed_precision="fp32", seed=11, iterations_per_loop=4,
                  log_steps=100)
    values.update(overrides)
    return FineTuningSettings(str(output_dir), None, **values)


LABELS = {"single": ["0", "1"], "multi": ["cinema", "neg", "pos"], "regression": None}


def make_teacher(directory, kind, layers=2, scale=4.0, seed=5, vocab=None):
    """A teacher without training: a tiny classifier whose head is scaled up so that its outputs are far from the
    untrained student's, saved with its config, vocabulary and labels.json as run_classifier leaves them; returns
    the directory."""
    import keras
    import numpy as np

    from official_bert import BertClassifier, BertEncoder, save_checkpoint

    if vocab is None:
        vocab, _ = write_model_files(os.path.join(os.path.dirname(str(directory)), "model"))
    keras.utils.set_random_seed(seed)
    labels = LABELS[kind]
    model = BertClassifier(BertEncoder(tiny_config(num_hidden_layers=layers)), len(labels or [0]))
    model.get_layer("classifier").kernel.assign(np.random.RandomState(seed).normal(
        0, scale, model.get_layer("classifier").kernel.shape).astype("float32"))
    save_checkpoint(model, str(directory), vocab_file=vocab)
    kind_name = {"single": "single_label", "multi": "multi_label", "regression": "regression"}[kind]
    with open(os.path.join(str(directory), "labels.json"), "w") as f:
        json.dump({"kind": kind_name, "labels": labels, "label_separator": None,
                   "columns": {"text_a": "text", "text_b": None, "label": "label", "id": None}}, f)
    return str(directory)
