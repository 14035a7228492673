"""The silent failures a hostile probe found (outputs aliasing inputs, reruns across a change, NaN weights, a
checkpoint of another kind, an input changed while read, an export that spun), each reproduced as the user met it
and held: refused in one line, or correct, and nothing of the user's touched. tests/hostile/test_generated.py holds
their classes on every flag of every tool; here are the cases themselves, end to end."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, BertTokenClassifier, TextClassifier, save_checkpoint
from official_bert.errors import Error
from official_bert.export import file_prediction
from official_bert.export.file_prediction import predict_files
from tests.distillation.helpers import UNLABELED, make_teacher, write_data
from tests.finetuning.test_run_classifier import SEQ_LENGTH, tiny_config, write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tree(directory):
    """Every file below `directory` and the hash of its bytes (but a killed run's lock file, which the next run
    takes over and removes)."""
    found = {}
    for parent, _, names in os.walk(directory):
        for name in names:
            if name == ".official_bert.lock":
                continue
            with open(os.path.join(parent, name), "rb") as f:
                found[os.path.relpath(os.path.join(parent, name), directory)] = hashlib.sha256(f.read()).hexdigest()
    return found


def tool(script, *argv, timeout=600):
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, os.path.join(REPO, script), *argv], env=env, capture_output=True,
                          text=True, timeout=timeout)
    return done.returncode, [line for line in done.stderr.splitlines() if ": error: " in line], done.stderr


# --- A checkpoint says what it is (G3a2, J12a) ---

def test_a_tagger_is_no_teacher_and_no_text_classifier(tmp_path):
    from official_bert.distillation import Teacher

    vocab, _ = write_model_files(str(tmp_path / "model"))
    tagger = BertTokenClassifier(BertEncoder(tiny_config()), 3)  # three tags, as a 3-class classifier would have
    save_checkpoint(tagger, str(tmp_path / "ner_run"), vocab_file=vocab)
    with pytest.raises(Error, match=r"--teacher=.*ner_run is a token tagger \(run_ner.py\), not a sentence classifier"):
        Teacher(str(tmp_path / "ner_run"))
    with pytest.raises(Error, match=r"ner_run is a token tagger .*pass num_classes"):
        TextClassifier.from_checkpoint(str(tmp_path / "ner_run"), sequence_length=SEQ_LENGTH)
    # Asked for a new classifier on its encoder, it gets the encoder and a fresh head, never the tagger's.
    model = TextClassifier.from_checkpoint(str(tmp_path / "ner_run"), 3, sequence_length=SEQ_LENGTH)
    assert not np.allclose(model.get_layer("classifier").kernel.numpy(), tagger.get_layer("classifier").kernel.numpy())
    for mine, its in zip(model.encoder.weights, tagger.encoder.weights):
        np.testing.assert_array_equal(mine.numpy(), its.numpy())


# --- A loss that is no longer a number stops the run, with no checkpoint of NaN weights (G6f, G6j) ---

def test_a_loss_that_becomes_nan_stops_the_run_and_saves_nothing(tmp_path):
    from official_bert.finetuning import FineTuningRun
    from official_bert.finetuning.schedule import Schedule
    from official_bert.training import TrainingError, TrainingOptions

    def nan_after_the_first_step(labels, logits):
        step = tf.cast(model.optimizer.iterations, tf.float32)
        return tf.reduce_mean(logits) * tf.where(step >= 1, np.float32("nan"), 1.0)

    model = BertClassifier(BertEncoder(tiny_config(num_hidden_layers=1)), 2)
    run = FineTuningRun(model, nan_after_the_first_step, TrainingOptions(str(tmp_path), save_checkpoints_steps=1,
                                                                        iterations_per_loop=1, log_steps=1),
                        Schedule(2, 6, 0), tf.distribute.get_strategy())
    ids = np.full((2, SEQ_LENGTH), 5, np.int32)
    batch = ({"input_word_ids": ids, "input_mask": np.ones_like(ids), "input_type_ids": np.zeros_like(ids)},
             np.zeros(2, np.int32))
    with pytest.raises(TrainingError, match="at step 2 the weights are no longer finite numbers .*nothing was "
                                            "saved, the last good checkpoint is .*ckpt-1"):
        run.train(lambda step: tf.data.Dataset.from_tensors(batch).repeat())
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-1")
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(tmp_path)))
    assert all(np.isfinite(reader.get_tensor(name)).all() for name, _ in tf.train.list_variables(str(tmp_path))
               if reader.get_variable_to_dtype_map()[name].is_floating)


# --- bert-predict's outputs never alias its inputs (H1a, H1b, H1c, H1d, H1e, H1f, H1f2, H2a, H2b) ---

@pytest.fixture
def predict_inputs(tmp_path):
    model = tmp_path / "export" / "1"
    (model / "assets").mkdir(parents=True)
    for name in ("saved_model.pb", "assets/vocab.txt"):
        (model / name).write_text("the model's own file\n")
    data = tmp_path / "data"
    data.mkdir()
    for name in ("in.csv", "in.jsonl"):
        (data / name).write_text("id,text_a\n1,a text\n" if name.endswith(".csv") else '{"text_a": "a text"}\n')
    (tmp_path / "outdir").mkdir()
    return tmp_path


@pytest.mark.parametrize("case, output, errors, message", [
    ("H1a", "data/in.csv", None, r"--output_file=.*in.csv is the --input_file: writing it would destroy the input"),
    ("H1b", "data/in.jsonl", None, r"--output_file=.*in.jsonl is one of --input_file=.*\*: writing it would destroy"),
    ("H1c", "data/out.jsonl", None, r"--output_file=.*out.jsonl matches --input_file=.*: the output would be read"),
    ("H1d", "out.jsonl", "data/in.csv", r"--errors_file=.*in.csv is the --input_file"),
    ("H1e", "out.jsonl", "out.jsonl", r"--output_file=.*out.jsonl is also the --errors_file"),
    ("H1f", "export/1/assets/vocab.txt", None, r"--output_file=.*vocab.txt is inside --saved_model_dir=.*export, "
                                               r"which this run reads"),
    ("H1f2", "export/1/saved_model.pb", None, r"is inside --saved_model_dir"),
    ("H2a", "outdir", None, r"--output_file=.*outdir is a directory; expected a file path"),
    ("H2b", "outdir/", None, r"--output_file=.*outdir/ is a directory; expected a file path")])
def test_predict_refuses_an_output_that_would_overwrite_what_it_reads(predict_inputs, case, output, errors, message):
    work = predict_inputs
    inputs = {"H1a": "data/in.csv", "H1b": "data/*", "H1c": "data/*.jsonl"}.get(case, "data/in.csv")
    before = tree(work)
    with pytest.raises(Error, match=message):
        predict_files(str(work / "export"), str(work / inputs), os.path.join(str(work), output),  # keeps a "/"
                      errors_file=errors and str(work / errors), report=None)
    assert tree(work) == before and sorted(os.listdir(work / "outdir")) == []


# --- An input rewritten or truncated while bert-predict reads it (I7, I7c) ---

def _length_model(path):
    module = tf.Module()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a")])
    def length(text_a):
        return {"score": tf.cast(tf.strings.length(text_a), tf.float32)}

    module.f = length
    tf.saved_model.save(module, path, signatures={"serving_default": length.get_concrete_function()})
    return path


@pytest.mark.parametrize("change", ["rewritten", "truncated"])
def test_an_input_changed_while_predicted_is_refused_and_nothing_written(tmp_path, monkeypatch, change):
    model = _length_model(str(tmp_path / "model"))
    live = tmp_path / "live.csv"
    rows = [f"{i},text number {i}" for i in range(400)]
    live.write_text("id,text_a\n" + "\n".join(rows) + "\n")
    served = file_prediction.ServedModel.predict
    calls = []

    def predict_and_change_the_input(self, texts):
        calls.append(1)
        if len(calls) == 2:  # the first windows are read: another file takes this one's place, or part of it
            text = live.read_text()
            live.write_text(text.replace("text number", "other words") if change == "rewritten"
                            else text[:len(text) // 3])
        return served(self, texts)

    monkeypatch.setattr(file_prediction.ServedModel, "predict", predict_and_change_the_input)
    with pytest.raises(Error, match=r"--input_file=.*live.csv: the input changed while it was read"):
        predict_files(model, str(live), str(tmp_path / "out.jsonl"), batch_size=4, window=8, report=None)
    assert not [name for name in os.listdir(tmp_path) if name.startswith((".out", "out"))]


# --- An export directory holding a user's file named like a version (H5d, H6c) ---

@pytest.mark.slow
def test_an_export_skips_over_a_users_files_named_like_versions(tmp_path):
    vocab, _ = write_model_files(str(tmp_path / "model"))
    save_checkpoint(BertClassifier(BertEncoder(tiny_config()), 3), str(tmp_path / "run"), vocab_file=vocab)
    model = TextClassifier.from_checkpoint(str(tmp_path / "run"), sequence_length=SEQ_LENGTH)
    export = tmp_path / "export"
    (export / "1").mkdir(parents=True)
    (export / "1" / "notes.txt").write_text("mine\n")
    (export / "2").write_text("mine\n")
    started = time.monotonic()
    path = model.export(str(export))
    assert os.path.basename(path) == "3" and time.monotonic() - started < 120
    assert (export / "2").read_text() == "mine\n" and (export / "1" / "notes.txt").read_text() == "mine\n"
    assert sorted(os.listdir(export)) == ["1", "2", "3"]


# --- Reruns that change what the run computes refuse, naming the change (G9b, G9c, G13, G14, G15, K14, G9d) ---

def _distill_argv(work, output, *extra):
    return [f"--teacher={work / 'teacher'}", f"--train_file={work / 'data' / 'train.jsonl'}",
            f"--dev_file={work / 'data' / 'dev.jsonl'}", f"--unlabeled_file={work / 'unlabeled.txt'}",
            f"--bert_config_file={work / 'student.json'}", f"--output_dir={output}", f"--max_seq_length={SEQ_LENGTH}",
            "--do_train", "--do_eval", "--train_batch_size=4", "--eval_batch_size=4", "--learning_rate=2e-3",
            "--mixed_precision=fp32", "--save_checkpoints_steps=1", "--iterations_per_loop=1", *extra]


@pytest.fixture
def distillation(tmp_path):
    work = tmp_path
    make_teacher(work / "teacher", "single")
    make_teacher(work / "other_teacher", "single", seed=8)
    write_data(str(work / "data"), "single")
    (work / "unlabeled.txt").write_text("\n".join(UNLABELED * 3) + "\n")
    tiny_config(num_hidden_layers=1).to_json_file(str(work / "student.json"))
    return work


@pytest.mark.slow
def test_a_finished_distillation_rerun_with_any_change_refuses_and_writes_nothing(distillation):
    work = distillation
    run = work / "student"
    status, errors, stderr = tool("run_distillation.py", *_distill_argv(work, run, "--num_train_epochs=2"))
    assert status == 0, stderr[-3000:]
    finished = tree(run)
    status, errors, stderr = tool("run_distillation.py", *_distill_argv(work, run, "--num_train_epochs=2"))
    assert status == 0 and tree(run).keys() == finished.keys(), stderr[-3000:]  # the same run: nothing to do

    def refused(expected, *argv, script="run_distillation.py"):
        status, errors, stderr = tool(script, *argv)
        assert status == 1 and len(errors) == 1 and expected in errors[0], stderr[-3000:]
        assert tree(run) == finished  # labels.json, eval_results, checkpoints: untouched (G9c, G9d)

    refused("holds a run made with --alpha=0.5 (now 0.9)",
            *_distill_argv(work, run, "--num_train_epochs=2", "--alpha=0.9"))  # G9b
    shutil.rmtree(work / "teacher")
    shutil.copytree(work / "other_teacher", work / "teacher")  # G13: another teacher at the same path
    refused("another --teacher: ", *_distill_argv(work, run, "--num_train_epochs=2"))
    shutil.rmtree(work / "teacher")
    make_teacher(work / "teacher", "single")
    (work / "unlabeled.txt").write_text("\n".join(reversed(UNLABELED * 3)) + "\n")  # G14: rewritten in place
    refused("another --unlabeled_file: ", *_distill_argv(work, run, "--num_train_epochs=2"))
    refused("holds a run of run_distillation, not of run_classifier",  # G9c, G9d: another tool's run
            f"--train_file={work / 'data' / 'train.jsonl'}", f"--dev_file={work / 'data' / 'dev.jsonl'}",
            f"--bert_config_file={work / 'student.json'}", f"--vocab_file={work / 'teacher' / 'vocab.txt'}",
            f"--output_dir={run}", f"--max_seq_length={SEQ_LENGTH}", "--do_train", "--do_eval",
            script="run_classifier.py")


@pytest.mark.slow
def test_a_killed_distillation_rerun_with_another_alpha_refuses_then_resumes_with_its_own(distillation):
    work = distillation
    run = work / "student"
    argv = _distill_argv(work, run, "--num_train_epochs=30")
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
    process = subprocess.Popen([sys.executable, os.path.join(REPO, "run_distillation.py"), *argv], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    while not (run / "ckpt-3.index").exists():
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()[-3000:]
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # G15: killed mid-run
    process.wait()
    killed = tree(run)
    status, errors, stderr = tool("run_distillation.py", *argv, "--alpha=0.9")
    assert status == 1 and "holds a run made with --alpha=0.5 (now 0.9)" in errors[0], stderr[-3000:]
    assert tree(run) == killed
    status, _, stderr = tool("run_distillation.py", *argv)  # its own flags: it resumes (exactly: tests/finetuning)
    assert status == 0 and "resuming from" in stderr, stderr[-3000:]


@pytest.mark.slow
def test_output_dir_equal_to_the_teacher_or_its_export_is_refused_before_any_work(distillation):
    from tests.distillation.helpers import train_teacher

    work = distillation
    teacher, files, _ = train_teacher(work / "trained", "single", epochs=1, export_dir=str(work / "export"))
    for name, output in (("G8a2", teacher), ("G8b", str(work / "export" / "1")), ("G8c", str(work / "export"))):
        given = output if name != "G8a2" else teacher
        before = tree(work)
        status, errors, stderr = tool("run_distillation.py", f"--teacher={given}", f"--train_file={files['train']}",
                                      f"--dev_file={files['dev']}", f"--output_dir={output}", "--student_preset=tiny",
                                      f"--max_seq_length={SEQ_LENGTH}", "--do_train", "--do_eval")
        assert status == 1 and len(errors) == 1 and "--output_dir" in errors[0] and "--teacher" in errors[0], (
            name, stderr[-3000:])
        assert tree(work) == before, name


@pytest.mark.slow
def test_a_finished_run_rerun_with_its_labels_reordered_refuses(tmp_path):
    vocab, _ = write_model_files(str(tmp_path / "model"))
    tiny_config().to_json_file(str(tmp_path / "config.json"))
    files = write_data(str(tmp_path / "data"), "single")
    argv = [f"--train_file={files['train']}", f"--dev_file={files['dev']}", f"--test_file={files['dev']}",
            f"--bert_config_file={tmp_path / 'config.json'}", f"--vocab_file={vocab}", f"--output_dir={tmp_path / 'run'}",
            f"--max_seq_length={SEQ_LENGTH}", "--do_train", "--do_eval", "--do_predict", "--train_batch_size=4",
            "--num_train_epochs=1", "--mixed_precision=fp32"]
    status, _, stderr = tool("run_classifier.py", *argv)
    assert status == 0, stderr[-3000:]
    finished = tree(tmp_path / "run")
    status, errors, stderr = tool("run_classifier.py", *argv, "--label_list=1,0")  # K14
    assert status == 1 and "holds a run made with --label_list=(not given) (now 1,0)" in errors[0], stderr[-3000:]
    assert tree(tmp_path / "run") == finished
