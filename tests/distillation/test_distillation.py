"""Distillation in-process on tiny teachers: the student follows its teacher (single-label, multi-label, regression),
the teacher's outputs are computed once and cached by content, the every-other-layer start, exact resume, and the
student's outputs (eval_results, labels.json, export, TextClassifier)."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, TextClassifier, load_checkpoint
from official_bert.configs import BertConfig
from official_bert.distillation import DistillationTask, Student, Teacher, UnlabeledText, distill, teacher as teachers
from official_bert.distillation.student import write_layers_from_teacher
from tests.distillation.helpers import (UNLABELED, make_teacher, own_task, student_settings, train_teacher,
                                        write_data)
from tests.finetuning.test_finetuning_resume import Killed, assert_same_weights, kill_at  # noqa: F401 (fixture)
from tests.finetuning.test_run_classifier import SEQ_LENGTH

KINDS = {"single": "single_label", "multi": "multi_label", "regression": "regression"}


def write_unlabeled(tmp_path):
    path = tmp_path / "unlabeled.txt"
    path.write_text("\n".join(UNLABELED) + "\n")
    return UnlabeledText(str(path))


def records(task):
    """Every training record of `task` (after `load`) as one (inputs, packed targets) batch."""
    train = task.train_records()
    return next(iter(train.records.batch(train.num_records).map(train.parse)))


def loss_and_distance(model, task):
    """The distillation loss over the training records above its floor (the teacher's own outputs' loss), and the
    mean absolute difference of the student's answers (probabilities; scores for regression) from the teacher's."""
    inputs, targets = records(task)
    logits = model(inputs, training=False).numpy()
    teacher = targets.numpy()[:, :logits.shape[-1]]
    loss = task.loss()
    excess = float(loss(targets, logits)) - float(loss(targets, teacher))
    answer = {"single_label": lambda z: tf.nn.softmax(z).numpy(), "multi_label": lambda z: tf.sigmoid(z).numpy(),
              "regression": lambda z: z}[task.kind]
    return excess, float(np.mean(np.abs(answer(logits) - answer(teacher))))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["single", "multi", "regression"])
def test_the_student_moves_toward_its_teacher_and_the_loss_falls(tmp_path, kind):
    files = write_data(str(tmp_path / "data"), kind)
    teacher_dir = make_teacher(tmp_path / "teacher", kind)
    # The soft loss alone: what is learnt is the teacher's answers (here not the labels', by construction).
    task = DistillationTask(own_task(files, kind), Teacher(teacher_dir), alpha=1.0, unlabeled=write_unlabeled(tmp_path))
    settings = student_settings(tmp_path / "student", num_train_epochs=6)
    tables = distill(task, settings, Student(preset="tiny"))

    # The student as run_task built it before training (same seed, same construction), and as it ended.
    keras.utils.set_random_seed(settings.seed)
    config = BertConfig.from_json_file(str(tmp_path / "student" / "bert_config.json"))
    model = task.build_model(BertEncoder(config))
    before = loss_and_distance(model, task)
    load_checkpoint(model, str(tmp_path / "student"))
    after = loss_and_distance(model, task)
    assert after[0] < 0.8 * before[0], (before, after)
    assert after[1] < 0.6 * before[1], (before, after)
    # 16 labelled rows and 6 unlabelled ones were trained on.
    assert task.num_train_examples() == 22
    results = tables["eval_results"]
    assert {"teacher_loss", "global_step"} <= set(results)
    assert ({"eval_teacher_pearson", "eval_teacher_mse"} if kind == "regression" else {"eval_teacher_agreement"}) \
        <= set(results)


@pytest.mark.slow
def test_the_teachers_outputs_are_its_predictions_cached_once_and_recomputed_for_another_teacher(tmp_path,
                                                                                                 monkeypatch):
    teacher_dir, files, _ = train_teacher(tmp_path, "single", epochs=2)
    calls = []
    compute = teachers.compute_outputs
    monkeypatch.setattr(teachers, "compute_outputs", lambda *args, **kw: calls.append(args[1].path) or compute(
        *args, **kw))

    unlabeled = write_unlabeled(tmp_path)

    def run(epochs=1):
        task = DistillationTask(own_task(files, "single"), Teacher(teacher_dir), unlabeled=unlabeled)
        distill(task, student_settings(tmp_path / "student", num_train_epochs=epochs), Student(preset="tiny"))
        return task

    task = run()
    assert len(calls) == 3  # train, unlabelled, dev: each once
    # What was cached is what the teacher predicts for the same texts (its own Keras model from the directory).
    classifier = TextClassifier.from_checkpoint(teacher_dir, sequence_length=SEQ_LENGTH)
    texts = [json.loads(line)["text"] for line in open(files["train"])] + UNLABELED
    expected = classifier.predict(texts, verbose=0)
    cached = np.concatenate([logits for _, logits, _ in task.train_parts])
    np.testing.assert_allclose(cached, expected, atol=1e-5)

    # Rerun (the same teacher, training one more epoch): nothing recomputed.
    calls.clear()
    run(epochs=2)
    assert calls == []

    # The teacher trained on: its outputs are computed again.
    train_teacher(tmp_path, "single", epochs=3)
    run(epochs=3)
    assert len(calls) == 3


@pytest.mark.slow
def test_an_export_teaches_as_the_run_it_came_from(tmp_path):
    export_dir = str(tmp_path / "export")
    teacher_dir, files, vocab = train_teacher(tmp_path, "multi", epochs=1, export_dir=export_dir)
    from_run, from_export = Teacher(teacher_dir), Teacher(export_dir)
    # What the export records (labels.json, assets/vocab.txt, model.keras) is what the run wrote.
    assert (from_export.kind, from_export.labels, from_export.num_outputs) == ("multi_label",
                                                                               ["cinema", "neg", "pos"], 3)
    assert from_export.config == from_run.config
    assert open(from_export.vocab_file).read() == open(vocab).read()
    assert Teacher(os.path.join(export_dir, "1")).identity == from_export.identity != from_run.identity
    # Its model.keras given alone is refused with the advice just followed (G2f).
    with pytest.raises(teachers.DistillationError, match=rf"give the export's directory, --teacher={export_dir}/1 "):
        Teacher(os.path.join(export_dir, "1", "model.keras"))

    task = DistillationTask(own_task(files, "multi"), from_export)
    distill(task, student_settings(tmp_path / "student", num_train_epochs=1), Student(preset="tiny"))
    classifier = TextClassifier.from_checkpoint(teacher_dir, sequence_length=SEQ_LENGTH)
    texts = [json.loads(line)["text"] for line in open(files["train"])]
    np.testing.assert_allclose(task.train_parts[0][1], classifier.predict(texts, verbose=0), atol=1e-5)

    # An export without its Keras model (or of something else than a classifier) is refused in one line.
    os.remove(os.path.join(export_dir, "1", "model.keras"))
    with pytest.raises(teachers.DistillationError, match=r"the export .*1 has no model.keras"):
        Teacher(export_dir)


def test_every_other_layer_of_the_teacher_starts_the_student(tmp_path):
    config = BertConfig.from_preset("tiny", vocab_size=40, num_hidden_layers=5, hidden_size=32, num_attention_heads=2,
                                    intermediate_size=64)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"w{i}\n" for i in range(36)) + "[PAD]\n[UNK]\n[CLS]\n[SEP]\n")
    from official_bert import save_checkpoint

    keras.utils.set_random_seed(3)
    teacher_model = BertClassifier(BertEncoder(config), 3)
    save_checkpoint(teacher_model, str(tmp_path / "teacher"), vocab_file=str(vocab))
    teacher = Teacher(str(tmp_path / "teacher"))
    student_config = Student(layers_from_teacher=True).config(teacher.config)
    assert student_config.num_hidden_layers == 3

    write_layers_from_teacher(teacher, student_config, str(tmp_path / "student"))
    student = BertEncoder(student_config)
    load_checkpoint(student, str(tmp_path / "student"))
    source = teacher_model.encoder
    for i, layer in enumerate(student.transformer_layers):
        for got, want in zip(layer.weights, source.transformer_layers[2 * i].weights, strict=True):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    for name in ("embeddings", "pooler"):
        for got, want in zip(student.get_layer(name).weights, source.get_layer(name).weights, strict=True):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    # Not the odd layers: layer 1 of the student is not the teacher's layer 1.
    assert not np.array_equal(student.transformer_layers[1].weights[0].numpy(),
                              source.transformer_layers[1].weights[0].numpy())


@pytest.mark.slow
def test_a_killed_distillation_resumes_to_the_same_student(tmp_path, kill_at):  # noqa: F811
    tf.config.experimental.enable_op_determinism()
    teacher_dir, files, _ = train_teacher(tmp_path, "single", epochs=2)
    unlabeled = write_unlabeled(tmp_path)

    def run(name):
        task = DistillationTask(own_task(files, "single"), Teacher(teacher_dir), unlabeled=unlabeled)
        # 22 records in batches of 4: epochs of 5.5 steps, 16 in all; checkpoints every 3 steps and each epoch.
        settings = student_settings(tmp_path / name, num_train_epochs=3, save_checkpoints_steps=3,
                                    iterations_per_loop=2)
        distill(task, settings, Student(preset="tiny"))  # the tiny preset has dropout: its state resumes too

    run("straight")
    kill_at(8)
    with pytest.raises(Killed):
        run("resumed")
    assert tf.train.latest_checkpoint(str(tmp_path / "resumed")).endswith("ckpt-6")
    run("resumed")

    def final(name):
        return TextClassifier.from_checkpoint(str(tmp_path / name), sequence_length=SEQ_LENGTH)

    assert_same_weights(final("resumed"), final("straight"))


@pytest.mark.slow
def test_the_student_has_run_classifiers_outputs_and_loads_as_a_text_classifier(tmp_path):
    teacher_dir, files, _ = train_teacher(tmp_path, "multi", epochs=3)
    test_file = tmp_path / "test.jsonl"
    test_file.write_text("".join(json.dumps({"text": text}) + "\n" for text in UNLABELED))
    task = DistillationTask(own_task({**files, "test": str(test_file)}, "multi"), Teacher(teacher_dir),
                            unlabeled=write_unlabeled(tmp_path))
    output_dir = tmp_path / "student"
    distill(task, student_settings(output_dir, do_predict=True, export_dir=str(tmp_path / "export")),
            Student(preset="tiny"))

    names = set(os.listdir(output_dir))
    assert {"eval_results.txt", "eval_results.json", "labels.json", "thresholds.json", "predictions.jsonl",
            "bert_config.json", "vocab.txt"} <= names, names
    assert json.load(open(output_dir / "labels.json"))["labels"] == ["cinema", "neg", "pos"]
    results = json.load(open(output_dir / "eval_results.json"))
    assert {"eval_micro_f1", "teacher_micro_f1", "eval_teacher_agreement"} <= set(results)
    assert len(open(output_dir / "predictions.jsonl").readlines()) == len(UNLABELED)

    student = TextClassifier.from_checkpoint(str(output_dir), sequence_length=SEQ_LENGTH)
    assert student.multi_label and student.labels == ["cinema", "neg", "pos"]
    assert student.encoder.config.hidden_size == 128  # the tiny preset, not the teacher's 32
    served = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    probabilities = served(text_a=tf.constant(UNLABELED[:2]))["probabilities"].numpy()
    np.testing.assert_allclose(probabilities, 1 / (1 + np.exp(-student.predict(UNLABELED[:2], verbose=0))),
                               atol=1e-5)


def test_an_export_with_a_damaged_labels_json_is_refused_in_one_line(tmp_path):
    from official_bert.errors import Error

    version = tmp_path / "export" / "1"
    (version / "assets").mkdir(parents=True)
    (version / "saved_model.pb").write_bytes(b"")
    (version / "assets" / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhi\n")
    BertClassifier(BertEncoder(BertConfig.from_preset("tiny", vocab_size=5, num_hidden_layers=1)), 2).save(
        str(version / "model.keras"))
    (version / "labels.json").write_text('{"kind": "single_label", "labels": [')
    with pytest.raises(Error, match=r"labels.json: not a label file") as raised:
        Teacher(str(tmp_path / "export"))
    assert "\n" not in str(raised.value)
