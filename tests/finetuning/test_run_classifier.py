"""run_classifier's library in-process: tiny models overfit each task type; best checkpoint; exact resume."""

import csv
import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertConfig, BertEncoder, distribution, load_checkpoint
from official_bert.classification import best_metric, get_processor, load_or_create_features
from official_bert.finetuning import (BestCheckpoint, FineTuningRun, Predictor, best_checkpoint, fine_tuning_schedule,
                                      load_trained_weights)
from official_bert.tasks.classification import (classifier_loss, classifier_metrics, classifier_model,
                                                evaluate_classifier, train_records)
from official_bert.tokenization import FullTokenizer
from official_bert.training import TrainingOptions
from official_bert.training.monitor import read_scalars

SEQ_LENGTH = 16
WORDS = ("good great fine nice bad awful poor dull movie film plot story the a is was not very cat dog sat ran "
         "he she opens door walks sings eats flies").split()
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + WORDS

# Sentences whose labels a model can only get right by reading them; a handful of each task type.
SINGLE = [("the movie is good", "1"), ("the film was awful", "0"), ("a great story", "1"), ("a dull plot", "0"),
          ("not a bad film", "1"), ("very poor movie", "0"), ("nice dog", "1"), ("the cat is not good", "0")]
PAIRS = [("the cat sat", "the cat sat", "1"), ("the dog ran", "a cat sat", "0"), ("good movie", "good movie", "1"),
         ("bad plot", "great film", "0"), ("the film was good", "the film was good", "1"),
         ("a dog sat", "the plot is bad", "0"), ("very awful story", "very awful story", "1"),
         ("the cat ran", "good film", "0")]
# Similarity by shared words: the same sentence 5, one word changed 2.5, nothing in common 0.
SCORES = [("the cat sat", "the cat sat", 5.0), ("the dog ran", "a film is good", 0.0),
          ("good movie", "good film", 2.5), ("bad plot", "the cat sat", 0.0),
          ("the film was good", "the film was good", 5.0), ("a dog sat", "the plot is bad", 0.0),
          ("very awful story", "very dull story", 2.5), ("the cat ran", "the dog ran", 2.5)]
# The right ending is the one that is "very good"; where it is varies.
CHOICES = [("he opens the door .", "he", ("is very good .", "sings .", "flies .", "eats ."), "0"),
           ("she sat .", "she", ("flies .", "is very good .", "opens .", "ran ."), "1"),
           ("the dog ran .", "the dog", ("sings .", "opens .", "is very good .", "is good ."), "2"),
           ("the cat eats .", "the cat", ("flies .", "opens the door .", "walks .", "is very good ."), "3"),
           ("a film is good .", "a film", ("is very good .", "walks .", "eats .", "sat ."), "0"),
           ("the plot was dull .", "the plot", ("opens .", "is very good .", "walks .", "flies ."), "1")]


def tiny_config(**overrides):
    # No dropout inside the encoder: the tests overfit a handful of examples in a few dozen steps.
    values = dict(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=64, type_vocab_size=2, hidden_dropout_prob=0.0,
                  attention_probs_dropout_prob=0.0)
    values.update(overrides)
    return BertConfig(**values)


def write_model_files(directory):
    """vocab.txt and bert_config.json of the tiny model; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    vocab, config = os.path.join(directory, "vocab.txt"), os.path.join(directory, "bert_config.json")
    with open(vocab, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    tiny_config().to_json_file(config)
    return vocab, config


def _write(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def write_task(task, data_dir, repeat=1):
    """Writes train/dev/test files of a task type in its distributed layout: train holds the task's rows `repeat`
    times, dev holds them once, test their texts. sst-2: single sentences; mrpc, mnli: pairs; sts-b: scored pairs;
    swag: multiple choice (CSV)."""
    os.makedirs(data_dir, exist_ok=True)
    path = lambda name: os.path.join(data_dir, name)  # noqa: E731
    if task == "sst-2":
        _write(path("train.tsv"), ["sentence\tlabel"] + [f"{a}\t{label}" for a, label in SINGLE * repeat])
        _write(path("dev.tsv"), ["sentence\tlabel"] + [f"{a}\t{label}" for a, label in SINGLE])
        _write(path("test.tsv"), ["index\tsentence"] + [f"{i}\t{a}" for i, (a, _) in enumerate(SINGLE)])
    elif task == "mrpc":
        header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"
        lines = [f"{label}\t{i}\t{i + 100}\t{a}\t{b}" for i, (a, b, label) in enumerate(PAIRS)]
        _write(path("train.tsv"), [header] + lines * repeat)
        _write(path("dev.tsv"), [header] + lines)
        _write(path("test.tsv"), ["index\t#1 ID\t#2 ID\t#1 String\t#2 String"]
               + [f"{i}\t{i}\t{i + 100}\t{a}\t{b}" for i, (a, b, _) in enumerate(PAIRS)])
    elif task == "sts-b":
        header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2"
        lines = [f"{i}\tmain-captions\tMSRvid\t2012test\t{i:04d}\tnone\tnone\t{a}\t{b}" for i, (a, b, _) in
                 enumerate(SCORES)]
        scored = [f"{line}\t{score}" for line, (_, _, score) in zip(lines, SCORES)]
        _write(path("train.tsv"), [header + "\tscore"] + scored * repeat)
        _write(path("dev.tsv"), [header + "\tscore"] + scored)
        _write(path("test.tsv"), [header] + lines)
    elif task == "mnli":
        rows = [(a, b, {"1": "entailment", "0": "contradiction"}[label]) for a, b, label in PAIRS] * repeat
        header = "\t".join(["index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
                            "sentence1_parse", "sentence2_parse", "sentence1", "sentence2"])

        def line(i, a, b):
            return f"{i}\t{i}\t{i}e\tfiction\t( {a} )\t( {b} )\t(ROOT {a})\t(ROOT {b})\t{a}\t{b}"

        labelled = [f"{line(i, a, b)}\t{label}\t{label}" for i, (a, b, label) in enumerate(rows)]
        _write(path("train.tsv"), [header + "\tlabel1\tgold_label"] + labelled)
        for name in ("dev_matched.tsv", "dev_mismatched.tsv"):
            _write(path(name), [header + "\tlabel1\tgold_label"] + labelled[:len(PAIRS)])
        for name in ("test_matched.tsv", "test_mismatched.tsv"):
            _write(path(name), [header] + [line(i, a, b) for i, (a, b, _) in enumerate(PAIRS)])
    elif task == "swag":
        header = ["", "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source", "ending0", "ending1",
                  "ending2", "ending3"]
        for name, chosen, labelled in (("train.csv", CHOICES * repeat, True), ("val.csv", CHOICES, True),
                                       ("test.csv", CHOICES, False)):
            with open(path(name), "w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                writer.writerow(header + (["label"] if labelled else []))
                for i, (sent1, sent2, endings, label) in enumerate(chosen):
                    writer.writerow([i, f"v{i}", i, f"{sent1} {sent2}", sent1, sent2, "gold", *endings]
                                    + ([label] if labelled else []))
    else:
        raise ValueError(task)


def options(output_dir, **overrides):
    values = dict(train_batch_size=4, eval_batch_size=4, learning_rate=2e-3, save_checkpoints_steps=1000,
                  iterations_per_loop=4, log_steps=4, seed=7)
    values.update(overrides)
    return TrainingOptions(output_dir, **values)


class Task:
    """A task's processor, cached features and model in output_dir, ready to fine-tune."""

    def __init__(self, task, tmp_path, repeat=2, seed=7):
        self.data_dir, self.output_dir = str(tmp_path / "data"), str(tmp_path / "run")
        self.vocab, _ = write_model_files(str(tmp_path / "model"))
        write_task(task, self.data_dir, repeat)
        self.processor = get_processor(task, self.data_dir)
        tokenizer = FullTokenizer(self.vocab)
        self.features = {split: load_or_create_features(
            self.processor, split, tokenizer, SEQ_LENGTH, self.output_dir, tokenizer_file=self.vocab,
            do_lower_case=True, pad_to_multiple_of=1 if split == "train" else 4)
            for split in self.processor.splits}
        self.strategy = distribution.get_strategy("one_device")
        self.seed = seed
        self.metric = best_metric(task, self.processor.dev_splits)

    def model(self, head_dropout=True):
        keras.utils.set_random_seed(self.seed)
        with self.strategy.scope():
            if head_dropout:
                return classifier_model(BertEncoder(tiny_config()), self.processor)
            return BertClassifier(BertEncoder(tiny_config()), self.processor.num_labels, dropout_rate=0.0)

    def run(self, model, epochs, **overrides):
        opts = options(self.output_dir, seed=self.seed, **overrides)
        schedule = fine_tuning_schedule(self.features["train"].num_examples, opts.train_batch_size, epochs, 0.1)
        return FineTuningRun(model, classifier_loss(self.processor), opts, schedule, self.strategy,
                             classifier_metrics(self.processor))

    def evaluate_fn(self, model):
        dev = {split: self.features[split] for split in self.processor.dev_splits}
        predictor = Predictor(model, self.strategy)
        return lambda: evaluate_classifier(predictor, self.processor, dev, 4)

    def train(self, model, run, callbacks=()):
        best = BestCheckpoint(self.output_dir, self.metric, vocab_file=self.vocab)
        run.train(train_records(self.features["train"]).dataset_fn(run.options.train_batch_size, self.seed),
                  self.evaluate_fn(model), best, callbacks)
        return best


# Settings under which every seed tried (1 to 5) overfits; a higher learning rate makes some collapse.
@pytest.mark.parametrize("task, epochs, batch_size, learning_rate, expected", [
    ("sst-2", 8, 4, 1e-3, {"eval_accuracy": 1.0}),
    ("mrpc", 8, 4, 1e-3, {"eval_f1": 1.0, "eval_accuracy": 1.0}),
    # Regression must also learn the scale of its scores: bigger batches and steps.
    ("sts-b", 12, 8, 2e-3, {"eval_spearman": 0.94, "eval_pearson": 0.8}),
    ("swag", 3, 4, 1e-3, {"eval_accuracy": 1.0}),
])
@pytest.mark.slow
def test_a_tiny_model_overfits_each_task_type(tmp_path, task, epochs, batch_size, learning_rate, expected):
    fixture = Task(task, tmp_path, repeat=32 // len(task_rows(task)))
    model = fixture.model()
    run = fixture.run(model, epochs, train_batch_size=batch_size, learning_rate=learning_rate)
    best = fixture.train(model, run)
    # The original's count: int(examples / batch × epochs), whole batches across passes.
    assert run.step == run.schedule.num_train_steps == int(fixture.features["train"].num_examples / batch_size * epochs)
    for name, minimum in expected.items():
        assert best.results[name] >= minimum, best.state["evaluations"]
    # Checked independently on the best checkpoint's outputs for the dev examples.
    load_checkpoint(model, best.path)
    logits = model.predict(_encoder_inputs(fixture.features["dev"]), verbose=0)
    labels = np.array([example.label for example in fixture.processor.get_examples("dev")])
    if task == "sts-b":
        scores = logits[:, 0]
        assert np.corrcoef(scores, labels.astype(float))[0, 1] == pytest.approx(best.results["eval_pearson"], abs=1e-5)
        # Every pair is scored above every pair of a lower similarity level.
        levels = sorted(set(labels))
        for lower, higher in zip(levels, levels[1:]):
            assert scores[labels == lower].max() < scores[labels == higher].min(), (scores, labels)
    else:
        assert np.mean(np.argmax(logits, -1) == labels.astype(int)) == best.results["eval_accuracy"] == 1.0


def task_rows(task):
    return {"sst-2": SINGLE, "mrpc": PAIRS, "sts-b": SCORES, "swag": CHOICES}[task]


def _encoder_inputs(feature_file):
    """The real examples' inputs of a cached feature file, read with tf.train.Example (not the library's parser)."""
    shape = [-1, feature_file.max_seq_length] if feature_file.num_choices is None else \
        [-1, feature_file.num_choices, feature_file.max_seq_length]
    columns = {"input_word_ids": [], "input_mask": [], "input_type_ids": []}
    for record in tf.data.TFRecordDataset(feature_file.path).take(feature_file.num_examples):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        for ours, original in zip(columns, ("input_ids", "input_mask", "segment_ids")):
            columns[ours].append(list(feature[original].int64_list.value))
    return {name: np.array(values, np.int32).reshape(shape) for name, values in columns.items()}


def test_the_best_epoch_by_the_dev_metric_is_kept(tmp_path):
    task = Task("sst-2", tmp_path, repeat=1)
    model = task.model()
    run = task.run(model, epochs=3)
    scripted = iter([0.25, 0.75, 0.5])  # the second epoch is best
    best = BestCheckpoint(task.output_dir, "accuracy")
    run.train(train_records(task.features["train"]).dataset_fn(4, task.seed), lambda: {"accuracy": next(scripted)}, best)

    steps = int(run.schedule.steps_per_epoch)
    assert run.schedule.epoch_ends == (steps, 2 * steps, 3 * steps)  # the sst-2 fixture is whole batches
    assert [e["global_step"] for e in best.state["evaluations"]] == [steps, 2 * steps, 3 * steps]
    assert best.path == os.path.join(task.output_dir, f"best-{2 * steps}") == best_checkpoint(task.output_dir)[0]
    assert sorted(n for n in os.listdir(task.output_dir) if n.startswith("best-")) == [f"best-{2 * steps}"]
    assert read_scalars(os.path.join(task.output_dir, "eval"))["accuracy"] == {
        steps: 0.25, 2 * steps: 0.75, 3 * steps: 0.5}
    # The kept weights are those of the training checkpoint at the end of epoch 2, not the last ones.
    kept, epoch_two = task.model(), task.model()
    load_checkpoint(kept, best.path)
    load_checkpoint(epoch_two, os.path.join(task.output_dir, f"ckpt-{2 * steps}"))
    for a, b in zip(kept.weights, epoch_two.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(kept.weights, model.weights))
    # What evaluation, prediction and export then use: with --keep_best the best checkpoint and its step; by
    # default, as the original, the final one.
    assert load_trained_weights(task.model(), task.output_dir, best=True) == 2 * steps
    assert load_trained_weights(task.model(), task.output_dir) == 3 * steps
    with open(os.path.join(task.output_dir, "best_checkpoint.json")) as f:
        assert json.load(f)["best_path"] == f"best-{2 * steps}"


class StopAt(keras.callbacks.Callback):
    """Stands in for Ctrl-C or SIGTERM once training reaches `step`."""

    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations) >= self.step:
            raise KeyboardInterrupt


@pytest.mark.slow
def test_interrupted_training_resumes_exactly(tmp_path):
    # Two runs of the same task and seed: one uninterrupted; one stopped twice, each time rebuilt from scratch
    # (as a rerun of the command would be): mid-epoch, then at an epoch's end before its evaluation. Without
    # dropout (its random state is not checkpointed) they must end identical: same batches, steps and schedule.
    straight = Task("mrpc", tmp_path / "straight", repeat=1)
    model = straight.model(head_dropout=False)
    run = straight.run(model, epochs=3, iterations_per_loop=1, save_checkpoints_steps=1000)
    best = straight.train(model, run)
    steps_per_epoch = run.schedule.steps_per_epoch
    assert steps_per_epoch == 2

    resumed = Task("mrpc", tmp_path / "resumed", repeat=1)
    for stop_at in (3, 4):
        stopped = resumed.model(head_dropout=False)
        with pytest.raises(KeyboardInterrupt):
            resumed.train(stopped, resumed.run(stopped, epochs=3, iterations_per_loop=1, save_checkpoints_steps=1000),
                          [StopAt(stop_at)])
        assert tf.train.latest_checkpoint(resumed.output_dir).endswith(f"ckpt-{stop_at}")
    assert [e["global_step"] for e in BestCheckpoint(resumed.output_dir, "eval_f1").state["evaluations"]] == [2]
    final = resumed.model(head_dropout=False)
    final_run = resumed.run(final, epochs=3, iterations_per_loop=1, save_checkpoints_steps=1000)
    assert final_run.step == 4
    resumed_best = resumed.train(final, final_run)

    assert final_run.step == run.step == 6
    assert resumed_best.state["evaluations"] == best.state["evaluations"]
    for a, b in zip(final.weights, model.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-6, err_msg=a.path)
