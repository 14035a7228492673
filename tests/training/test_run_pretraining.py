"""run_pretraining's library in-process: input pipeline, options, schedule, convergence, warm start, outputs."""

import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder, BertPretrainer, distribution, save_checkpoint
from official_bert.training import input_pipeline
from official_bert.pretraining_data import PretrainingDataError
from official_bert.io import write_eval_results
from official_bert.training import PretrainingRun, TrainingError, TrainingOptions, prepare_output_dir
from official_bert.training.monitor import read_scalars

SEQ_LENGTH, PREDICTIONS, VOCAB_SIZE = 16, 3, 60
CLS, SEP, MASK, FIRST_WORD = 2, 3, 4, 5


def tiny_config(**overrides):
    values = dict(vocab_size=VOCAB_SIZE, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, type_vocab_size=2)
    values.update(overrides)
    return BertConfig(**values)


def options(output_dir, **overrides):
    values = dict(train_batch_size=16, eval_batch_size=16, learning_rate=2e-3, num_train_steps=300,
                  num_warmup_steps=20, save_checkpoints_steps=100, iterations_per_loop=25, max_eval_steps=8,
                  log_steps=50)
    values.update(overrides)
    return TrainingOptions(output_dir, **values)


def counting_examples(n, seed=0, seq_length=SEQ_LENGTH, predictions=PREDICTIONS):
    """Learnable examples: [CLS] A [SEP] B [SEP], where A counts up from a random word and B continues the count
    (next_sentence_labels 0) or counts from another random word (1); masked words follow from their neighbours."""
    rng = np.random.default_rng(seed)
    words = VOCAB_SIZE - FIRST_WORD
    half = (seq_length - 3) // 2
    for i in range(n):
        start, is_random = rng.integers(words), i % 2
        b_start = rng.integers(words) if is_random else start + half
        a = [FIRST_WORD + (start + k) % words for k in range(half)]
        b = [FIRST_WORD + (b_start + k) % words for k in range(seq_length - 3 - half)]
        ids = np.array([CLS] + a + [SEP] + b + [SEP])
        segments = np.array([0] * (half + 2) + [1] * (len(b) + 1))
        candidates = [k for k in range(1, seq_length) if ids[k] not in (CLS, SEP)]
        positions = np.sort(rng.choice(candidates, predictions, replace=False))
        labels = ids[positions].copy()
        ids[positions] = MASK
        yield dict(ids=ids, mask=np.ones(seq_length, int), segments=segments, positions=positions, labels=labels,
                   weights=np.ones(predictions), nsp=[is_random])


def write_examples(path, n, seed=0, v2_names=False, gzip=False, seq_length=SEQ_LENGTH, predictions=PREDICTIONS,
                   leave_out=()):
    """Writes `counting_examples` as create_pretraining_data.py's tf.train.Examples."""
    names = ("input_word_ids", "input_type_ids") if v2_names else ("input_ids", "segment_ids")

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))

    with tf.io.TFRecordWriter(str(path), "GZIP" if gzip else "") as writer:
        for e in counting_examples(n, seed, seq_length, predictions):
            features = {names[0]: ints(e["ids"]), "input_mask": ints(e["mask"]), names[1]: ints(e["segments"]),
                        "masked_lm_positions": ints(e["positions"]), "masked_lm_ids": ints(e["labels"]),
                        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=e["weights"])),
                        "next_sentence_labels": ints(e["nsp"])}
            for name in leave_out:
                del features[name]
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    return str(path)


def one_device():
    return distribution.get_strategy("one_device")


# ---------------------------------------------------------------- input files and pipeline

def batches(data, n, **kwargs):
    dataset = input_pipeline.pretraining_dataset(data, batch_size=4, is_training=False, **kwargs).take(n)
    return [tf.nest.map_structure(lambda t: t.numpy(), batch) for batch in dataset]


def test_v1_and_v2_names_plain_and_gzip_read_the_same(tmp_path):
    v1 = write_examples(tmp_path / "v1.tfrecord", 12)
    v2 = write_examples(tmp_path / "v2.tfrecord.gz", 12, v2_names=True, gzip=True)
    files = {path: input_pipeline.open_pretraining_files(path, SEQ_LENGTH, PREDICTIONS, VOCAB_SIZE)
             for path in (v1, v2)}
    assert files[v1].names[0] == "input_ids" and files[v2].names[0] == "input_word_ids"
    assert files[v1].compression == ("",) and files[v2].compression == ("GZIP",)
    first, second = (batches(files[path], 4) for path in (v1, v2))
    expected = list(counting_examples(4))
    for got in (first, second):
        x, y = got[0]
        np.testing.assert_array_equal(x["input_word_ids"], [e["ids"] for e in expected])
        np.testing.assert_array_equal(x["input_type_ids"], [e["segments"] for e in expected])
        np.testing.assert_array_equal(x["masked_lm_positions"], [e["positions"] for e in expected])
        np.testing.assert_array_equal(y["masked_lm_ids"], [e["labels"] for e in expected])
        np.testing.assert_array_equal(y["next_sentence_labels"], [e["nsp"] for e in expected])
        assert x["input_word_ids"].dtype == np.int32 and y["masked_lm_weights"].dtype == np.float32
    # 12 examples in batches of 4: the fourth batch is the first again (the input repeats)
    np.testing.assert_array_equal(first[3][0]["input_word_ids"], first[0][0]["input_word_ids"])


def test_workers_read_disjoint_shares(tmp_path):
    def first_ids(data, pipeline_id, n):
        context = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline_id)
        return {tuple(ids[1:4]) for x, _ in batches(data, n, input_context=context) for ids in x["input_word_ids"]}

    one = input_pipeline.open_pretraining_files(write_examples(tmp_path / "a", 8), SEQ_LENGTH, PREDICTIONS)
    # One file, two workers: each reads it and keeps every other record.
    shares = [first_ids(one, i, 1) for i in (0, 1)]
    assert len(shares[0]) == len(shares[1]) == 4 and not shares[0] & shares[1]
    # Two files, two workers: each reads its own file.
    write_examples(tmp_path / "b", 8, seed=1)
    two = input_pipeline.open_pretraining_files(f"{tmp_path}/a,{tmp_path}/b", SEQ_LENGTH, PREDICTIONS)
    assert first_ids(two, 0, 2) == {tuple(e["ids"][1:4]) for e in counting_examples(8, seed=0)}
    assert first_ids(two, 1, 2) == {tuple(e["ids"][1:4]) for e in counting_examples(8, seed=1)}


def data_error(tmp_path, case):
    good = write_examples(tmp_path / "good.tfrecord", 4)
    flags = dict(input_file=good, max_seq_length=SEQ_LENGTH, max_predictions_per_seq=PREDICTIONS, vocab_size=VOCAB_SIZE)
    if case == "missing":
        flags["input_file"] = str(tmp_path / "nothing-*.tfrecord")
    elif case == "text file":
        flags["input_file"] = str(tmp_path / "corpus.txt")
        (tmp_path / "corpus.txt").write_text("This is a sentence.\nAnother one.\n")
    elif case == "classifier examples":
        flags["input_file"] = write_examples(tmp_path / "bad.tfrecord", 2, leave_out=["masked_lm_positions"])
    elif case == "seq length":
        flags["max_seq_length"] = 128
    elif case == "predictions":
        flags["max_predictions_per_seq"] = 20
    elif case == "mixed lengths":
        flags["input_file"] = good + "," + write_examples(tmp_path / "long.tfrecord", 2, seq_length=24)
    elif case == "vocabulary":
        flags["vocab_size"] = 30
    elif case == "empty":
        flags["input_file"] = write_examples(tmp_path / "empty.tfrecord", 0)
    with pytest.raises(PretrainingDataError) as error:
        input_pipeline.open_pretraining_files(**flags)
    return str(error.value)


@pytest.mark.parametrize("case, message", [
    ("missing", "--input_file: no file matches '.*nothing-\\*.tfrecord'"),
    ("text file", "corpus.txt: not a TFRecord file of tf.train.Examples"),
    ("classifier examples", "bad.tfrecord: the examples lack the feature\\(s\\) masked_lm_positions; expected"),
    ("seq length", "--max_seq_length=128, but the examples in .*good.tfrecord were made with --max_seq_length=16"),
    ("predictions", "--max_predictions_per_seq=20, but the examples in .* --max_predictions_per_seq=3"),
    ("mixed lengths", "long.tfrecord: examples of length 24 with 3 predictions, but .*good.tfrecord has 16 and 3"),
    ("vocabulary", "good.tfrecord: token id \\d+ is outside the vocabulary of --bert_config_file \\(vocab_size 30\\)"),
    ("empty", "--input_file: no examples in .*empty.tfrecord"),
])
def test_bad_data_is_one_clear_message(tmp_path, case, message):
    text = data_error(tmp_path, case)
    assert re.search(message, text), text
    assert "\n" not in text


@pytest.mark.slow
def test_records_unlike_the_first_stop_training_with_one_clear_message(tmp_path):
    # TFRecord files concatenate: 8 good records, then records of another length the first-record check misses.
    write_examples(tmp_path / "good", 8), write_examples(tmp_path / "long", 8, seq_length=24)
    mixed = tmp_path / "mixed.tfrecord"
    mixed.write_bytes((tmp_path / "good").read_bytes() + (tmp_path / "long").read_bytes())
    data = input_pipeline.open_pretraining_files(str(mixed), SEQ_LENGTH, PREDICTIONS, VOCAB_SIZE)
    run = PretrainingRun(tiny_config(), options(str(tmp_path / "run"), train_batch_size=4, num_train_steps=8,
                                                num_warmup_steps=0), one_device())
    with pytest.raises(PretrainingDataError, match=r"--input_file: a record unlike the first of its file \(Key: \w+, "
                       r"Index: \d+.  Number of int64 values != expected.  Values size: 24 but output shape: \[16\]\)"):
        run.train(data)
    truncated = tmp_path / "truncated.tfrecord"
    truncated.write_bytes((tmp_path / "good").read_bytes()[:-10])
    with pytest.raises(PretrainingDataError, match="--input_file: a damaged record \\(truncated record at"):
        run.evaluate(input_pipeline.open_pretraining_files(str(truncated), SEQ_LENGTH, PREDICTIONS))


def test_nsp_labels_are_optional_without_nsp(tmp_path):
    path = write_examples(tmp_path / "mlm.tfrecord", 4, leave_out=["next_sentence_labels"])
    with pytest.raises(PretrainingDataError, match="next_sentence_labels"):
        input_pipeline.open_pretraining_files(path, SEQ_LENGTH, PREDICTIONS)
    data = input_pipeline.open_pretraining_files(path, SEQ_LENGTH, PREDICTIONS, use_nsp=False)
    _, y = batches(data, 1, use_nsp=False)[0]
    assert sorted(y) == ["masked_lm_ids", "masked_lm_weights"]


# ---------------------------------------------------------------- flags

@pytest.mark.parametrize("overrides, message", [
    (dict(learning_rate=0.0), "--learning_rate=0.0: expected a positive number"),
    (dict(num_train_steps=0), "--num_train_steps=0: expected a positive integer"),
    (dict(num_warmup_steps=400), "--num_warmup_steps=400 exceeds --num_train_steps=300"),
    (dict(optimizer="sgd"), "--optimizer=sgd: expected one of adamw, lamb"),
    (dict(mixed_precision="fp8"), "--mixed_precision=fp8: expected one of bf16, fp16"),
])
def test_bad_options_name_the_flag(tmp_path, overrides, message):
    with pytest.raises(TrainingError, match=re.escape(message)):
        options(tmp_path, **overrides).validate()


def test_strategy_and_batch_checks():
    assert distribution.strategy_name("multi_worker_mirrored") == "multi_worker_mirrored"
    with pytest.raises(distribution.DistributionError, match="--use_tpu contradicts --distribution_strategy=mirrored"):
        distribution.strategy_name("mirrored", use_tpu=True)
    with pytest.raises(distribution.DistributionError, match=re.escape(
            "--train_batch_size=12 must be a multiple of the 4 replicas × --gradient_accumulation_steps=2 (= 8)")):
        distribution.per_replica_batch_size(12, 4, gradient_accumulation_steps=2)
    with pytest.raises(distribution.DistributionError, match="--eval_batch_size=0: expected a positive batch size"):
        distribution.per_replica_batch_size(0, 1, flag="--eval_batch_size")
    assert distribution.per_replica_batch_size(12, 1, gradient_accumulation_steps=3) == 4


def test_bad_tf_config_is_named(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker", "index": 3}}')
    with pytest.raises(distribution.DistributionError, match="TF_CONFIG: expected"):
        distribution.get_strategy("multi_worker_mirrored")


# ---------------------------------------------------------------- training

def schedule(step, peak, warmup, total):
    """The original's schedule by hand: linear warmup; then linear decay to 0, evaluated at the global step."""
    return peak * step / warmup if step < warmup else peak * max(0.0, 1 - step / total)


@pytest.mark.slow
def test_loss_falls_and_accuracy_rises(tmp_path):
    data = input_pipeline.open_pretraining_files(write_examples(tmp_path / "train.tfrecord", 512), SEQ_LENGTH,
                                                 PREDICTIONS, VOCAB_SIZE)
    output_dir = str(tmp_path / "run")
    # Whether next-sentence prediction is learned within 300 steps depends on the random stream: over 13 seeds it
    # reached 0.794 on average, 12 of them above 0.7; 12345 (the default) stalled at 0.52. A seed that learns it.
    run = PretrainingRun(tiny_config(), options(output_dir, num_warmup_steps=50, log_steps=25, seed=1), one_device())
    before = run.evaluate(data)
    run.train(data)
    after = run.evaluate(data)
    assert before["global_step"] == 0 and after["global_step"] == run.step == 300
    assert after["masked_lm_loss"] < before["masked_lm_loss"] - 1.0
    assert after["masked_lm_accuracy"] > before["masked_lm_accuracy"] + 0.15
    assert after["next_sentence_accuracy"] > 0.7 and before["next_sentence_accuracy"] < 0.6
    assert after["loss"] == pytest.approx(after["masked_lm_loss"] + after["next_sentence_loss"], rel=1e-4)
    # Checkpoints every 100 steps, the newest one the end.
    assert tf.train.latest_checkpoint(output_dir).endswith("ckpt-300")
    assert tf.train.get_checkpoint_state(output_dir).all_model_checkpoint_paths[-3:] == [
        os.path.join(output_dir, f"ckpt-{step}") for step in (100, 200, 300)]
    # A summary every 25 steps; learning rates from the optimizer the CLI builds match the hand-made schedule.
    scalars = read_scalars(os.path.join(output_dir, "train"))
    assert sorted(scalars["learning_rate"]) == list(range(25, 301, 25))
    for step, value in scalars["learning_rate"].items():
        assert value == pytest.approx(schedule(step, 2e-3, 50, 300), rel=1e-5, abs=1e-9), step
    assert scalars["learning_rate"][25] == pytest.approx(1e-3)  # mid-warmup
    assert scalars["learning_rate"][50] == pytest.approx(2e-3 * 250 / 300)  # decayed from step 0, as the original
    assert scalars["masked_lm_loss"][300] < scalars["masked_lm_loss"][25] - 1.0
    assert min(scalars["sequences_per_second"].values()) > 0
    assert set(scalars) >= {"loss", "masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy",
                            "next_sentence_loss"}
    assert read_scalars(os.path.join(output_dir, "eval"))["masked_lm_accuracy"][300] == pytest.approx(
        after["masked_lm_accuracy"])
    # Running a finished run again trains nothing and saves nothing.
    again = PretrainingRun(tiny_config(), options(output_dir, num_warmup_steps=50, log_steps=25, seed=1), one_device())
    again.train(data)
    assert again.step == 300 and tf.train.latest_checkpoint(output_dir).endswith("ckpt-300")
    assert len(tf.train.get_checkpoint_state(output_dir).all_model_checkpoint_paths) == 3


@pytest.mark.slow
@pytest.mark.parametrize("optimizer_type, accumulation, precision", [("lamb", 2, "bf16"), ("adamw", 1, "fp16")])
def test_schedule_counts_updates_with_accumulation_and_mixed_precision(tmp_path, optimizer_type, accumulation,
                                                                       precision):
    data = input_pipeline.open_pretraining_files(write_examples(tmp_path / "train.tfrecord", 64), SEQ_LENGTH,
                                                 PREDICTIONS)
    output_dir = str(tmp_path / "run")
    run = PretrainingRun(tiny_config(), options(
        output_dir, train_batch_size=8, num_train_steps=8, num_warmup_steps=4, optimizer=optimizer_type,
        gradient_accumulation_steps=accumulation, mixed_precision=precision, iterations_per_loop=1000, log_steps=2,
        save_checkpoints_steps=4), one_device())
    optimizer = run.model.optimizer
    if precision == "fp16":
        assert isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        optimizer = optimizer.inner_optimizer
    assert type(optimizer).__name__ == {"lamb": "Lamb", "adamw": "AdamWeightDecay"}[optimizer_type]
    policy = {"bf16": "mixed_bfloat16", "fp16": "mixed_float16"}[precision]
    assert run.model.encoder.embeddings.dtype_policy.name == policy
    run.train(data)
    assert run.step == 8 and int(optimizer._iterations) == 8 * accumulation
    scalars = read_scalars(os.path.join(output_dir, "train"))
    assert {step: round(value, 9) for step, value in scalars["learning_rate"].items()} == {
        step: round(schedule(step, 2e-3, 4, 8), 9) for step in (2, 4, 6, 8)}
    assert all(np.isfinite(v) for v in scalars["loss"].values())
    assert [os.path.basename(p) for p in tf.train.get_checkpoint_state(output_dir).all_model_checkpoint_paths] == [
        "ckpt-4", "ckpt-8"]


def encoder_weights(model):
    return [w.numpy() for w in model.encoder.weights]


def test_init_checkpoint_warm_starts_a_new_run_only(tmp_path):
    config = tiny_config()
    keras.utils.set_random_seed(99)
    source = BertPretrainer(BertEncoder(config))
    save_checkpoint(source, str(tmp_path / "google"), format="google")
    warm = PretrainingRun(config, options(str(tmp_path / "warm"), init_checkpoint=str(tmp_path / "google")),
                          one_device())
    assert warm.step == 0
    for got, want in zip(encoder_weights(warm.model), encoder_weights(source)):
        np.testing.assert_array_equal(got, want)
    # A directory holding a checkpoint resumes it: --init_checkpoint no longer applies.
    cold = PretrainingRun(config, options(str(tmp_path / "cold")), one_device())
    cold.checkpoints.save()
    resumed = PretrainingRun(config, options(str(tmp_path / "cold"), init_checkpoint=str(tmp_path / "google")),
                             one_device())
    for got, want in zip(encoder_weights(resumed.model), encoder_weights(cold.model)):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(encoder_weights(resumed.model)[0], encoder_weights(source)[0])


def test_resuming_with_another_optimizer_is_one_clear_message(tmp_path):
    PretrainingRun(tiny_config(), options(str(tmp_path)), one_device()).checkpoints.save()
    with pytest.raises(TrainingError, match="ckpt-0: cannot resume from this checkpoint .*--mixed_precision"):
        PretrainingRun(tiny_config(), options(str(tmp_path), mixed_precision="fp16"), one_device())


# ---------------------------------------------------------------- output directory

def test_output_dir_gets_config_and_vocab_and_refuses_another_model(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(55)]) + "\n")
    output_dir = str(tmp_path / "run")
    prepare_output_dir(output_dir, tiny_config(), str(vocab))
    assert BertConfig.from_json_file(os.path.join(output_dir, "bert_config.json")) == tiny_config()
    assert open(os.path.join(output_dir, "vocab.txt")).read() == vocab.read_text()
    # Without a checkpoint the directory holds no run yet: a corrected config replaces the first one.
    prepare_output_dir(output_dir, tiny_config(hidden_size=64), str(vocab))
    prepare_output_dir(output_dir, tiny_config(), str(vocab))
    PretrainingRun(tiny_config(), options(output_dir), one_device()).checkpoints.save()
    with pytest.raises(TrainingError, match="holds a run of another model \\(hidden_size 32 there, 64 now\\)"):
        prepare_output_dir(output_dir, tiny_config(hidden_size=64), str(vocab))
    with pytest.raises(TrainingError, match="has 60 tokens, more than the vocab_size 50"):
        prepare_output_dir(str(tmp_path / "other"), tiny_config(vocab_size=50), str(vocab))
    # Without --vocab_file, the vocabulary beside --init_checkpoint is kept.
    save_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "init"), vocab_file=str(vocab))
    prepare_output_dir(str(tmp_path / "warm"), tiny_config(), init_checkpoint=str(tmp_path / "init"))
    assert open(tmp_path / "warm" / "vocab.txt").read() == vocab.read_text()


def test_eval_results_file_is_the_originals_format(tmp_path):
    write_eval_results(str(tmp_path), {"masked_lm_loss": 2.0000001, "global_step": 7, "loss": np.float32(2.5),
                                       "next_sentence_accuracy": 0.875, "masked_lm_accuracy": 1 / 3,
                                       "next_sentence_loss": 0.5})
    assert (tmp_path / "eval_results.txt").read_text() == (
        "global_step = 7\nloss = 2.5\nmasked_lm_accuracy = 0.33333334\nmasked_lm_loss = 2.0\n"
        "next_sentence_accuracy = 0.875\nnext_sentence_loss = 0.5\n")
    assert sorted(os.listdir(tmp_path)) == ["eval_results.json", "eval_results.txt"]
