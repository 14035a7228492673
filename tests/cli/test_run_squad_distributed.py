"""SQuAD fine-tuning under MirroredStrategy on two logical CPUs matches one device; predictions keep their order."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.cli.test_run_classifier_cli import environment

# One process: logical devices must be configured before TensorFlow initialises them.
SCRIPT = textwrap.dedent("""
    import json, os, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    from official_bert import BertConfig, distribution, squad
    from official_bert.finetuning import FineTuningRun, Predictor, fine_tuning_schedule
    from official_bert import BertEncoder, BertSpanLabeler
    from official_bert.tasks.squad import (SPAN_LOSS_WEIGHTS, predict_spans, span_loss, span_metrics,
                                           squad_train_records)
    from official_bert.tokenization import FullTokenizer
    from official_bert.training import TrainingOptions
    from tests.cli.test_run_squad import write_inputs

    paths = write_inputs(os.path.join(sys.argv[1], "data"), version_2=True)
    tokenizer = FullTokenizer(paths["vocab.txt"])
    config = BertConfig.from_json_file(paths["bert_config.json"])
    out = {}
    for name in ("one_device", "mirrored"):
        output_dir = os.path.join(sys.argv[1], name)
        train = squad.cached_train_features(paths["train.json"], tokenizer, output_dir, 40, 8, 10, True)
        examples = squad.read_squad_examples(paths["dev.json"], is_training=False)
        features = list(squad.convert_examples_to_features(examples, tokenizer, 40, 8, 10, is_training=False))
        strategy = distribution.get_strategy(name)
        keras.utils.set_random_seed(1)
        with strategy.scope():
            model = BertSpanLabeler(BertEncoder(config))
        options = TrainingOptions(output_dir, train_batch_size=4, learning_rate=2e-3, iterations_per_loop=2,
                                  log_steps=2, seed=1)
        run = FineTuningRun(model, span_loss(), options, fine_tuning_schedule(train.num_features, 4, 2.0, 0.1),
                            strategy, span_metrics(), loss_weights=SPAN_LOSS_WEIGHTS)
        run.train(squad_train_records(train.path, train.num_features, 40).dataset_fn(4, seed=1))
        results = predict_spans(Predictor(model, strategy), features, batch_size=4)
        direct = model({name: tf.constant([getattr(f, field) for f in features]) for name, field in
                        (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                         ("input_type_ids", "segment_ids"))})
        out[name] = {"replicas": strategy.num_replicas_in_sync, "step": run.step,
                     "weights": [w.numpy().tolist() for w in model.weights[-2:]],
                     "ids": [r.unique_id for r in results], "start": [list(map(float, r.start_logits)) for r in results],
                     "direct": direct["start_logits"].numpy().tolist(), "num_features": len(features)}
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_mirrored_on_two_devices_matches_one_device(tmp_path):
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], env=environment(), capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    one, mirrored = out["one_device"], out["mirrored"]
    assert (one["replicas"], mirrored["replicas"]) == (1, 2)
    assert one["step"] == mirrored["step"] > 0
    (kernel_one, bias_one), (kernel_mirrored, bias_mirrored) = one["weights"], mirrored["weights"]
    np.testing.assert_allclose(kernel_one, kernel_mirrored, atol=1e-5)
    # The span bias adds one constant to every position's logit, which the softmax over positions ignores: its
    # gradient is zero but for rounding, which Adam (epsilon 1e-6) turns into steps of about 1e-5 a side, and the two
    # runs round differently (summing over replicas). It stays at that noise.
    assert np.abs(np.array(bias_one + bias_mirrored)).max() < 1e-3
    # Every feature once, in order (the last batch was padded for the two replicas), with the model's own logits.
    assert mirrored["ids"] == list(range(1000000000, 1000000000 + mirrored["num_features"]))
    np.testing.assert_allclose(mirrored["start"], mirrored["direct"], atol=1e-5)
    np.testing.assert_allclose(one["start"], mirrored["start"], atol=1e-4)
