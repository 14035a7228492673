"""Fine-tuning under MirroredStrategy on two logical CPUs matches one device, and predictions keep their order."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.cli.test_run_classifier_cli import environment

# One process: logical devices must be configured before TensorFlow initialises them.
SCRIPT = textwrap.dedent("""
    import json, pathlib, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from official_bert import distribution
    from official_bert.classification import feature_dataset
    from official_bert.finetuning import Predictor
    from tests.finetuning.test_run_classifier import Task

    out = {}
    for name in ("one_device", "mirrored"):
        task = Task("mrpc", pathlib.Path(sys.argv[1]) / name, repeat=2)
        task.strategy = distribution.get_strategy(name)
        model = task.model(head_dropout=False)
        best = task.train(model, task.run(model, epochs=2, iterations_per_loop=2))
        logits, labels, real = Predictor(model, task.strategy)(feature_dataset(task.features["test"], 4,
                                                                               with_sample_weights=True))
        out[name] = {"replicas": task.strategy.num_replicas_in_sync, "evaluations": best.state["evaluations"],
                     "weights": [w.numpy().tolist() for w in model.weights[:3] + model.weights[-2:]],
                     "logits": logits.tolist(), "real": real.tolist(),
                     "direct": model(dict(next(iter(feature_dataset(task.features["test"], 100)))[0])).numpy().tolist()}
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
    for a, b in zip(one["weights"], mirrored["weights"]):
        np.testing.assert_allclose(a, b, atol=5e-5)  # the replicas sum gradients in another order
    assert [e["global_step"] for e in mirrored["evaluations"]] == [4, 8]
    for a, b in zip(one["evaluations"], mirrored["evaluations"]):
        assert a == pytest.approx(b, abs=1e-6)  # the same predictions; losses to float rounding
    # Gathered from two replicas, the predictions are still in the test file's order (8 pairs, no padding).
    assert mirrored["real"] == [1.0] * 8
    np.testing.assert_allclose(mirrored["logits"], mirrored["direct"], atol=1e-5)
    np.testing.assert_allclose(mirrored["logits"], one["logits"], atol=1e-4)
