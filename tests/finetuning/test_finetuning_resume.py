"""Exact resume: a run killed at a step that is neither a checkpoint nor an epoch's end, then rerun from its last
checkpoint, ends with the weights of a run never interrupted — run_classifier's, run_squad's and
run_pretraining's training, without dropout and with it (the dropout layers' random state is checkpointed)."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertConfig, BertEncoder, BertSpanLabeler, distribution, squad
from official_bert.finetuning import FineTuningRun, fine_tuning_schedule
from official_bert.tasks.squad import SPAN_LOSS_WEIGHTS, span_loss, squad_train_records
from official_bert.tokenization import FullTokenizer
from official_bert.training import PretrainingRun
from official_bert.training.monitor import TrainingMonitor
from official_bert.training import input_pipeline
from tests.training import test_run_pretraining as pretraining_fixtures
from tests.finetuning.test_run_classifier import Task, options, tiny_config
from tests.cli.test_run_squad import write_inputs


class Killed(Exception):
    """Stands in for SIGKILL: nothing catches it, so nothing is saved on the way out."""


@pytest.fixture
def kill_at(monkeypatch):
    """kill_at(step): the next training run dies at the end of the compiled loop that reaches `step`."""
    original = TrainingMonitor.on_train_batch_end

    def arm(step):
        def on_train_batch_end(self, batch, logs=None):
            original(self, batch, logs)
            if int(keras.ops.convert_to_numpy(self.model.optimizer.iterations)) >= step:
                monkeypatch.setattr(TrainingMonitor, "on_train_batch_end", original)
                raise Killed

        monkeypatch.setattr(TrainingMonitor, "on_train_batch_end", on_train_batch_end)

    return arm


def assert_same_weights(a, b):
    assert len(a.weights) == len(b.weights)
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=0, atol=1e-6, err_msg=x.path)


def checkpoint_steps(output_dir):
    state = tf.train.get_checkpoint_state(output_dir)
    return sorted(int(path.rsplit("-", 1)[1]) for path in state.all_model_checkpoint_paths)


# 24 examples in batches of 4: epochs of 6 steps, 18 in all; loops of 2 steps (3 `fit` calls per epoch),
# checkpoints every 4 steps and at each epoch's end. Killed at step 10, the run resumes from ckpt-8.
CLASSIFIER = dict(train_batch_size=4, iterations_per_loop=2, log_steps=2, save_checkpoints_steps=4)


@pytest.mark.slow
@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_classifier_resumes_exactly_after_a_kill(tmp_path, kill_at, dropout):
    def model(task):
        keras.utils.set_random_seed(task.seed)
        config = tiny_config(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
        with task.strategy.scope():
            return BertClassifier(BertEncoder(config), task.processor.num_labels, dropout_rate=dropout)

    def train(task, callbacks=()):
        classifier = model(task)
        run = task.run(classifier, epochs=3, **CLASSIFIER)
        task.train(classifier, run, callbacks)
        return classifier, run

    straight = Task("sst-2", tmp_path / "straight", repeat=3)
    uninterrupted, run = train(straight)
    assert (run.schedule.steps_per_epoch, run.step) == (6, 18)

    resumed = Task("sst-2", tmp_path / "resumed", repeat=3)
    kill_at(10)
    with pytest.raises(Killed):
        train(resumed)
    assert checkpoint_steps(resumed.output_dir) == [4, 6, 8]
    final, final_run = train(resumed)
    assert final_run.step == 18
    assert_same_weights(final, uninterrupted)


@pytest.mark.slow
def test_squad_resumes_exactly_after_a_kill(tmp_path, kill_at):
    paths = write_inputs(str(tmp_path / "data"), version_2=False)
    tokenizer = FullTokenizer(paths["vocab.txt"])
    with open(paths["bert_config.json"]) as f:
        config = json.load(f)
    strategy = distribution.get_strategy("one_device")

    def train(output_dir):
        features = squad.cached_train_features(paths["train.json"], tokenizer, output_dir, max_seq_length=40,
                                               doc_stride=8, max_query_length=10, version_2_with_negative=False)
        keras.utils.set_random_seed(3)
        with strategy.scope():
            model = BertSpanLabeler(BertEncoder(BertConfig(**{**config, "hidden_dropout_prob": 0.1})))
        schedule = fine_tuning_schedule(features.num_examples, 4, 4.0, 0.1)
        run = FineTuningRun(model, span_loss(), options(output_dir, iterations_per_loop=1, log_steps=1,
                                                        save_checkpoints_steps=4),
                            schedule, strategy, loss_weights=SPAN_LOSS_WEIGHTS)
        run.train(squad_train_records(features.path, features.num_features, 40).dataset_fn(4, seed=3, bucket_width=8))
        return model, run, features

    uninterrupted, run, features = train(str(tmp_path / "straight"))
    # Steps count questions, as the original's: 8 questions × 4 epochs / 4, over more windows than questions.
    assert (features.num_examples, run.step) == (8, 8) and features.num_features > features.num_examples
    kill_at(5)  # epochs of 2 steps, each saved
    with pytest.raises(Killed):
        train(str(tmp_path / "resumed"))
    assert checkpoint_steps(str(tmp_path / "resumed")) == [2, 4]
    final, final_run, _ = train(str(tmp_path / "resumed"))
    assert final_run.step == 8
    assert_same_weights(final, uninterrupted)


@pytest.mark.slow
def test_pretraining_resumes_exactly_after_a_kill(tmp_path, kill_at):
    data_path = pretraining_fixtures.write_examples(tmp_path / "data.tfrecord", 40)
    data = input_pipeline.open_pretraining_files(
        data_path, pretraining_fixtures.SEQ_LENGTH, pretraining_fixtures.PREDICTIONS)
    config = pretraining_fixtures.tiny_config()  # dropout 0.1

    def train(output_dir):
        options = pretraining_fixtures.options(output_dir, train_batch_size=8, num_train_steps=12,
                                               num_warmup_steps=2, save_checkpoints_steps=4, iterations_per_loop=2,
                                               log_steps=2)
        run = PretrainingRun(config, options, pretraining_fixtures.one_device())
        run.train(data)
        return run

    uninterrupted = train(str(tmp_path / "straight"))
    kill_at(6)  # 40 records: the stream is in its second pass
    with pytest.raises(Killed):
        train(str(tmp_path / "resumed"))
    assert checkpoint_steps(str(tmp_path / "resumed")) == [4]
    final = train(str(tmp_path / "resumed"))
    assert final.step == uninterrupted.step == 12
    assert_same_weights(final.model, uninterrupted.model)
