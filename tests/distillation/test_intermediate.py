"""TinyBERT's intermediate-layer losses: the loss against a NumPy transcription of its definition, the layer states
against the encoder's own outputs, and a student trained with them — its layers move toward the teacher's, a kill
resumes to the same student (projection included), and the checkpoint loads as the student alone."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertConfig, BertEncoder, TextClassifier, load_checkpoint
from official_bert.distillation import DistillationTask, Student, Teacher
from official_bert.distillation.intermediate import IntermediateLayerDistillation, intermediate_loss, layer_map
from tests.distillation.helpers import make_teacher, own_task, student_settings, write_data
from tests.distillation.test_distillation import write_unlabeled
from tests.finetuning.test_finetuning_resume import Killed, assert_same_weights, kill_at  # noqa: F401 (fixture)
from tests.finetuning.test_run_classifier import SEQ_LENGTH


def inputs_of(ids, mask):
    return {"input_word_ids": np.array(ids, "int32"), "input_mask": np.array(mask, "int32"),
            "input_type_ids": np.zeros_like(np.array(ids, "int32"))}


def numpy_attention(student_scores, teacher_scores, mask, mapping):
    """TinyBERT's attention terms: the mean squared difference of the scores over pairs of real tokens, per head
    (over the head-averaged maps when the head counts differ), summed over the mapped layers."""
    pairs = (mask[:, None, :, None] * mask[:, None, None, :]).astype(bool)
    total = 0.0
    for m, g in enumerate(mapping):
        s, t = student_scores[m].astype("float64"), teacher_scores[g].astype("float64")
        if s.shape[1] != t.shape[1]:
            s, t = s.mean(axis=1, keepdims=True), t.mean(axis=1, keepdims=True)
        total += np.mean(((s - t) ** 2)[np.broadcast_to(pairs, s.shape)])
    return total


def numpy_loss(student, teacher, mask, mapping, kernel, bias):
    """TinyBERT's terms as its paper writes them (states projected by x·kernel + bias), over the real tokens."""
    rows = mask.astype(bool)

    def states(s, t):
        return np.mean(((s.astype("float64") @ kernel + bias - t) ** 2)[rows])

    total = states(student["embedding_output"], teacher["embedding_output"])
    for m, g in enumerate(mapping):
        total += states(student["encoder_outputs"][m], teacher["encoder_outputs"][g])
    return total + numpy_attention(student["attention_scores"], teacher["attention_scores"], mask, mapping)


def test_layer_map_is_tinyberts_uniform_mapping():
    # g(m) = m·N/M: a 4-layer student of BERT-base learns layers 3, 6, 9, 12 (0-based 2, 5, 8, 11).
    assert layer_map(4, 12) == [2, 5, 8, 11]
    assert layer_map(6, 12) == [1, 3, 5, 7, 9, 11]
    assert layer_map(2, 2) == [0, 1]


def test_layer_states_are_the_encoders_outputs_and_its_attention_scores():
    config = BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32)
    encoder = BertEncoder(config)
    inputs = inputs_of([[2, 7, 9, 3, 0], [2, 5, 3, 0, 0]], [[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
    states = encoder.layer_states(inputs)
    outputs = encoder(inputs)
    for got, want in zip(states["encoder_outputs"], outputs["encoder_outputs"], strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-6)
    np.testing.assert_allclose(states["pooled_output"].numpy(), outputs["pooled_output"].numpy(), atol=1e-6)
    # Layer 1's scores from its input (layer 0's output), by hand: q·k/√d per head, -10000 on padded keys.
    attention = encoder.transformer_layers[1].attention
    x = outputs["encoder_outputs"][0].numpy()
    kernel, bias = attention.qkv_kernel.numpy(), attention.qkv_bias.numpy()
    q = (x @ kernel[:, :16] + bias[:16]).reshape(2, 5, 2, 8)
    k = (x @ kernel[:, 16:32] + bias[16:32]).reshape(2, 5, 2, 8)
    want = np.einsum("btnd,bsnd->bnts", q, k) / np.sqrt(8) + (1 - inputs["input_mask"][:, None, None, :]) * -10000.0
    np.testing.assert_allclose(states["attention_scores"][1].numpy(), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("student_heads", [2, 4])
def test_the_loss_is_tinyberts_over_the_real_tokens(student_heads):
    rng = np.random.RandomState(0)
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]])

    def states(width, heads, layers):
        return {"embedding_output": rng.normal(size=(2, 4, width)).astype("float32"),
                "encoder_outputs": [rng.normal(size=(2, 4, width)).astype("float32") for _ in range(layers)],
                "attention_scores": [rng.normal(size=(2, heads, 4, 4)).astype("float32") for _ in range(layers)]}

    student, teacher = states(6, student_heads, 2), states(8, 4, 4)
    projection = keras.layers.Dense(8, dtype="float32")
    projection.build((None, None, 6))
    got = float(intermediate_loss(student, teacher, mask, [1, 3], projection))
    want = numpy_loss(student, teacher, mask, [1, 3], projection.kernel.numpy(), projection.bias.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # Padding does not count: other values at the padded positions give the same loss.
    teacher["encoder_outputs"][3][:, 3:] = 99.0
    teacher["attention_scores"][1][:, :, 3:, :] = -50.0
    np.testing.assert_allclose(float(intermediate_loss(student, teacher, mask, [1, 3], projection)), got, rtol=1e-5)


def test_a_frozen_student_cannot_learn_the_teachers_layers():
    config = BertConfig.from_preset("tiny", vocab_size=20, intermediate_size=32)
    student = BertClassifier(BertEncoder(config), 2, feature_layers=1)
    with pytest.raises(Exception, match="--intermediate_loss_weight: the student's encoder is frozen"):
        IntermediateLayerDistillation(student, BertClassifier(BertEncoder(config), 2), 1.0)


def attention_distance(student_dir, teacher_dir, task):
    """The attention terms (they need no projection) of `student_dir`'s student toward the teacher on the training
    records."""
    from tests.distillation.test_distillation import records

    config = BertConfig.from_json_file(f"{student_dir}/bert_config.json")
    student = BertClassifier(BertEncoder(config), 2)
    load_checkpoint(student, student_dir)
    teacher = Teacher(teacher_dir).model()
    inputs, _ = records(task)
    scores = [[a.numpy() for a in model.encoder.layer_states(inputs)["attention_scores"]]
              for model in (student, teacher)]
    mapping = layer_map(config.num_hidden_layers, teacher.encoder.config.num_hidden_layers)
    return numpy_attention(*scores, inputs["input_mask"].numpy(), mapping)


@pytest.mark.slow
def test_a_student_trained_with_them_learns_the_teachers_layers_and_resumes_exactly(tmp_path, kill_at):  # noqa: F811
    tf.config.experimental.enable_op_determinism()
    files = write_data(str(tmp_path / "data"), "single")
    teacher_dir = make_teacher(tmp_path / "teacher", "single", layers=2)
    unlabeled = write_unlabeled(tmp_path)

    def run(name, weight=1.0, epochs=3):
        task = DistillationTask(own_task(files, "single"), Teacher(teacher_dir), unlabeled=unlabeled,
                                intermediate_loss_weight=weight)
        # The tiny preset is 128 wide, the teacher 32: the projection is trained (and checkpointed) too.
        distill(task, student_settings(tmp_path / name, num_train_epochs=epochs, save_checkpoints_steps=3,
                                       iterations_per_loop=2, learning_rate=1e-3), Student(preset="tiny"))
        return task

    from official_bert.distillation import distill

    task = run("straight")
    # The checkpoint holds the projection beside the student's weights, which load into the student alone.
    names = [name for name, _ in tf.train.list_variables(str(tmp_path / "straight"))]
    projection = [name for name in names if name.startswith("model/projection/")]
    assert len(projection) == 2, names
    straight = TextClassifier.from_checkpoint(str(tmp_path / "straight"), sequence_length=SEQ_LENGTH)

    # Its attention is nearer the teacher's than a student's distilled on the answers alone, from the same start.
    run("answers_only", weight=0.0)
    with_layers = attention_distance(str(tmp_path / "straight"), teacher_dir, task)
    answers_only = attention_distance(str(tmp_path / "answers_only"), teacher_dir, task)
    assert with_layers < 0.7 * answers_only, (with_layers, answers_only)

    kill_at(8)
    with pytest.raises(Killed):
        run("resumed")
    run("resumed")
    assert_same_weights(TextClassifier.from_checkpoint(str(tmp_path / "resumed"), sequence_length=SEQ_LENGTH),
                        straight)
    for name in projection:
        np.testing.assert_allclose(tf.train.load_variable(str(tmp_path / "resumed"), name),
                                   tf.train.load_variable(str(tmp_path / "straight"), name), atol=1e-6)
    load_checkpoint(BertClassifier(BertEncoder(BertConfig.from_json_file(
        str(tmp_path / "resumed" / "bert_config.json"))), 2), str(tmp_path / "resumed"))
