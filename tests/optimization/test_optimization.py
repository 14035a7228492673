"""AdamWeightDecay, Lamb, the warmup schedule and create_optimizer against hand-written NumPy references."""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert.optimization.lr_schedules import WarmupPolynomialDecay
from official_bert.optimization import create_optimizer
from official_bert.optimization.optimizers import AdamWeightDecay, Lamb

B1, B2, EPS, WD = 0.9, 0.999, 1e-6, 0.01
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------- NumPy references (Google / tfa formulas)

def np_clip(grads, clip_norm=1.0):
    norm = np.sqrt(sum(np.sum(np.square(g, dtype=np.float64)) for g in grads))
    return [g * clip_norm / max(norm, clip_norm) for g in grads]


def np_adamw(params, grads, m, v, lr, decay, eps=EPS, clip_norm=1.0):
    """One step of Google's AdamWeightDecayOptimizer after tf.clip_by_global_norm; lists in, lists out."""
    grads = np_clip(grads, clip_norm) if clip_norm else grads
    out = []
    for p, g, m_, v_, d in zip(params, grads, m, v, decay):
        m_ = B1 * m_ + (1 - B1) * g
        v_ = B2 * v_ + (1 - B2) * g * g
        u = m_ / (np.sqrt(v_) + eps)
        if d:
            u = u + WD * p
        out.append((p - lr * u, m_, v_))
    return [list(x) for x in zip(*out)]


def np_torch_adamw(params, grads, m, v, lr, step, decay, eps=EPS):
    """One step of torch.optim.AdamW (step counts from 1; sentence-transformers' optimizer) after global-norm clipping
    at 1.0, as its documentation writes the algorithm: p ← p − lr·wd·p, then p ← p − lr · m̂ / (√v̂ + eps)
    (m̂ = m / (1 − β1^step), v̂ = v / (1 − β2^step))."""
    out = []
    for p, g, m_, v_, d in zip(params, np_clip(grads), m, v, decay):
        p = p - lr * WD * p if d else p
        m_ = B1 * m_ + (1 - B1) * g
        v_ = B2 * v_ + (1 - B2) * g * g
        out.append((p - lr * (m_ / (1 - B1**step)) / (np.sqrt(v_ / (1 - B2**step)) + eps), m_, v_))
    return [list(x) for x in zip(*out)]


def np_lamb(params, grads, m, v, lr, step, decay, adapt):
    """One step of tfa's LAMB (step counts from 1) after global-norm clipping at 1.0."""
    out = []
    for p, g, m_, v_, d, a in zip(params, np_clip(grads), m, v, decay, adapt):
        m_ = B1 * m_ + (1 - B1) * g
        v_ = B2 * v_ + (1 - B2) * g * g
        r = (m_ / (1 - B1**step)) / (np.sqrt(v_ / (1 - B2**step)) + EPS)
        if d:
            r = r + WD * p
        p_norm, r_norm = np.linalg.norm(p), np.linalg.norm(r)
        ratio = p_norm / r_norm if a and p_norm > 0 and r_norm > 0 else 1.0
        out.append((p - lr * ratio * r, m_, v_))
    return [list(x) for x in zip(*out)]


# ---------------------------------------------------------------- fixtures

def tiny_model(seed=0, zero_output_kernel=False):
    """Two kernels (decayed) next to two biases and two LayerNorms (not decayed), one of them named "ln"."""
    inputs = keras.Input((4,))
    x = keras.layers.Dense(3, name="dense")(inputs)
    x = keras.layers.LayerNormalization(name="ln")(x)
    x = keras.layers.LayerNormalization(name="LayerNorm")(x)
    outputs = keras.layers.Dense(2, name="output")(x)
    model = keras.Model(inputs, outputs)
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    if zero_output_kernel:
        model.get_layer("output").kernel.assign(np.zeros((3, 2), "float32"))
    return model


def values(variables):
    return [np.array(v.numpy(), np.float64) for v in variables]


def random_grads(variables, seed, norm):
    rng = np.random.default_rng(seed)
    grads = [rng.normal(size=v.shape) for v in variables]
    scale = norm / np.sqrt(sum(np.sum(g * g) for g in grads))
    return [(g * scale).astype("float32") for g in grads]


def kernel_mask(variables):
    return [v.path.endswith("kernel") for v in variables]


# ---------------------------------------------------------------- AdamWeightDecay

def test_adamw_decays_only_kernels():
    model = tiny_model()
    variables = model.trainable_variables
    assert [v.path.split("/")[-2:] for v in variables] == [
        ["dense", "kernel"], ["dense", "bias"], ["ln", "gamma"], ["ln", "beta"],
        ["LayerNorm", "gamma"], ["LayerNorm", "beta"], ["output", "kernel"], ["output", "bias"]]
    optimizer = AdamWeightDecay(learning_rate=0.1)
    optimizer.build(variables)
    assert optimizer._decays == [True, False, False, False, False, False, True, False]


def test_adamw_one_step_matches_numpy():
    model = tiny_model()
    variables = model.trainable_variables
    params, grads = values(variables), random_grads(variables, seed=1, norm=0.5)
    AdamWeightDecay(learning_rate=0.1).apply(grads, variables)
    zeros = [np.zeros_like(p) for p in params]
    expected, _, _ = np_adamw(params, grads, zeros, zeros, 0.1, kernel_mask(variables))
    for got, want in zip(values(variables), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Decaying a bias or LayerNorm variable as well would move it by lr * wd * |param| ~ 1e-3.
    wrong, _, _ = np_adamw(params, grads, zeros, zeros, 0.1, [True] * len(params))
    assert max(np.abs(a - b).max() for a, b in zip(values(variables), wrong)) > 1e-4


def test_adamw_several_steps_with_schedule_and_clipping_match_numpy():
    model = tiny_model()
    variables = model.trainable_variables
    optimizer = create_optimizer(0.1, num_train_steps=10, num_warmup_steps=2)
    params = values(variables)
    m = v = [np.zeros_like(p) for p in params]
    # lr(step) = 0.1*step/2 during warmup, then 0.1*(1 - step/10) from step 2 on.
    for step, (lr, norm) in enumerate(zip([0.0, 0.05, 0.08, 0.07, 0.06], [0.3, 4.0, 0.7, 2.5, 0.1])):
        grads = random_grads(variables, seed=10 + step, norm=norm)
        optimizer.apply(grads, variables)
        params, m, v = np_adamw(params, grads, m, v, lr, kernel_mask(variables))
    assert int(optimizer.iterations) == 5
    for got, want in zip(values(variables), params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_adamw_with_bias_correction_is_torch_adamw():
    model = tiny_model()
    variables = model.trainable_variables
    optimizer = create_optimizer(0.1, num_train_steps=10, num_warmup_steps=2, bias_correction=True)
    params = values(variables)
    m = v = [np.zeros_like(p) for p in params]
    for step, (lr, norm) in enumerate(zip([0.0, 0.05, 0.08, 0.07, 0.06], [0.3, 4.0, 0.7, 2.5, 0.1])):
        grads = random_grads(variables, seed=10 + step, norm=norm)
        optimizer.apply(grads, variables)
        params, m, v = np_torch_adamw(params, grads, m, v, lr, step + 1, kernel_mask(variables))
    for got, want in zip(values(variables), params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert AdamWeightDecay.from_config(optimizer.get_config()).bias_correction  # kept in .keras files and configs


def test_global_norm_clipping_at_one():
    # With a large epsilon the update depends on the gradient's scale, so clipping is visible in one step.
    grads = [np.array([3.0, 0.0], "float32"), np.array([0.0, 4.0], "float32")]  # global norm 5
    zeros = [np.zeros(2)] * 2
    results = {}
    for clip in (1.0, None):
        variables = [keras.Variable(np.ones(2, "float32"), name=n) for n in ("a", "b")]
        AdamWeightDecay(learning_rate=0.1, epsilon=1.0, global_clipnorm=clip).apply(grads, variables)
        results[clip] = values(variables)
        expected, _, _ = np_adamw([np.ones(2)] * 2, grads, zeros, zeros, 0.1, [True, True], eps=1.0, clip_norm=clip)
        for got, want in zip(results[clip], expected):
            np.testing.assert_allclose(got, want, rtol=1e-6)
    assert np.abs(results[1.0][1] - results[None][1]).max() > 1e-3
    assert AdamWeightDecay().global_clipnorm == 1.0


def test_indexed_slices_gradient_equals_its_dense_form():
    dense = np.array([[0.0, 0.0], [0.3, -0.2], [0.0, 0.0]], "float32")
    sparse = tf.IndexedSlices(tf.constant([[0.3, -0.2]]), tf.constant([1]), tf.constant([3, 2]))
    results = []
    for grad in (dense, sparse):
        table = keras.Variable(np.ones((3, 2), "float32"), name="embeddings")
        AdamWeightDecay(learning_rate=0.1).apply([grad], [table])
        results.append(table.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


# ---------------------------------------------------------------- LAMB

def test_lamb_several_steps_match_numpy():
    model = tiny_model(zero_output_kernel=True)  # a zero-norm kernel takes the trust ratio 1 on step 1
    variables = model.trainable_variables
    optimizer = create_optimizer(0.1, num_train_steps=10, num_warmup_steps=0, optimizer_type="lamb")
    assert isinstance(optimizer, Lamb)
    params = values(variables)
    m = v = [np.zeros_like(p) for p in params]
    mask = kernel_mask(variables)
    for step, norm in enumerate([0.5, 3.0, 0.2]):
        grads = random_grads(variables, seed=20 + step, norm=norm)
        optimizer.apply(grads, variables)
        params, m, v = np_lamb(params, grads, m, v, 0.1 * (1 - step / 10), step + 1, mask, mask)
        for got, want in zip(values(variables), params):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_lamb_layer_adaptation_exclusions_are_separate():
    variables = [keras.Variable(np.full(2, 3.0, "float32"), name=n) for n in ("kernel", "bias")]
    grads = [np.array([0.5, -0.5], "float32")] * 2
    Lamb(learning_rate=0.1, weight_decay_rate=0.0, exclude_from_layer_adaptation=[]).apply(grads, variables)
    params, _, _ = np_lamb([np.full(2, 3.0)] * 2, grads, [np.zeros(2)] * 2, [np.zeros(2)] * 2, 0.1, 1,
                           [False, False], [True, True])
    for got, want in zip(values(variables), params):
        np.testing.assert_allclose(got, want, rtol=1e-5)


# ---------------------------------------------------------------- schedule and factory

def test_schedule_values_at_chosen_steps():
    linear = WarmupPolynomialDecay(1.0, decay_steps=100, warmup_steps=10)
    # The decay runs on the global step from 0, so right after warmup the rate is already 0.9, not 1.0.
    for step, want in [(0, 0.0), (5, 0.5), (9, 0.9), (10, 0.9), (55, 0.45), (100, 0.0), (150, 0.0)]:
        assert float(linear(step)) == pytest.approx(want, abs=1e-7), step
    squared = WarmupPolynomialDecay(1.0, decay_steps=100, warmup_steps=10, end_learning_rate=0.1, power=2.0)
    for step, want in [(5, 0.5), (10, 0.829), (55, 0.28225), (100, 0.1), (150, 0.1)]:
        assert float(squared(step)) == pytest.approx(want, abs=1e-6), step
    assert float(WarmupPolynomialDecay(2.0, decay_steps=4)(0)) == 2.0
    with pytest.raises(ValueError):
        WarmupPolynomialDecay(1.0, decay_steps=0)


def test_configs_round_trip():
    for optimizer_type in ("adamw", "lamb"):
        optimizer = create_optimizer(1e-4, 100, 10, optimizer_type=optimizer_type, end_lr=1e-6,
                                     exclude_from_weight_decay=["bias"], gradient_accumulation_steps=2)
        config = keras.optimizers.serialize(optimizer)
        clone = keras.optimizers.deserialize(json.loads(json.dumps(config)))
        assert type(clone) is type(optimizer)
        assert clone.get_config() == optimizer.get_config()
        assert clone.exclude_from_weight_decay == ["bias"]
        assert float(clone._learning_rate(55)) == pytest.approx(1e-4 * 0.45 + 1e-6 * 0.55)
    with pytest.raises(ValueError, match="optimizer_type"):
        create_optimizer(1e-4, 100, 10, optimizer_type="sgd")
    with pytest.raises(ValueError, match="weight_decay_rate"):
        AdamWeightDecay(weight_decay=0.1)
    with pytest.raises(ValueError, match="use_ema"):
        Lamb(use_ema=True, gradient_accumulation_steps=2)


# ---------------------------------------------------------------- saving and resuming

@pytest.mark.parametrize("optimizer_type", ["adamw", "lamb"])
def test_checkpoint_round_trip_resumes_identically(tmp_path, optimizer_type):
    def make(seed):
        model = tiny_model(seed)
        optimizer = create_optimizer(0.1, 10, 2, optimizer_type=optimizer_type)
        optimizer.build(model.trainable_variables)
        return model, optimizer

    model, optimizer = make(seed=0)
    grads = [random_grads(model.trainable_variables, seed=30 + i, norm=0.5) for i in range(3)]
    for g in grads[:2]:
        optimizer.apply(g, model.trainable_variables)
    saved_state = values(optimizer.variables)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))
    optimizer.apply(grads[2], model.trainable_variables)

    model2, optimizer2 = make(seed=1)
    tf.train.Checkpoint(model=model2, optimizer=optimizer2).restore(path).assert_consumed()
    assert int(optimizer2.iterations) == 2
    for got, want in zip(values(optimizer2.variables), saved_state):
        np.testing.assert_array_equal(got, want)
    optimizer2.apply(grads[2], model2.trainable_variables)
    for got, want in zip(values(model2.trainable_variables), values(model.trainable_variables)):
        np.testing.assert_array_equal(got, want)


def regression_data():
    rng = np.random.default_rng(5)
    return rng.normal(size=(8, 4)).astype("float32"), rng.normal(size=(8, 2)).astype("float32")


def linear_model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="dense")])
    rng = np.random.default_rng(6)
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.get_weights()])
    return model


def test_keras_file_round_trip_resumes_identically(tmp_path):
    x, y = regression_data()
    model = linear_model()
    model.compile(optimizer=create_optimizer(0.1, 10, 2, optimizer_type="lamb"), loss="mse")
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert isinstance(loaded.optimizer, Lamb)
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    assert int(loaded.optimizer.iterations) == 2
    for m in (model, loaded):
        m.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    for got, want in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- Keras fit, accumulation, mixed precision

def np_fit_linear(optimizer_type, steps, lr_per_step):
    """Full-batch steps on `linear_model` with Keras's mse loss, gradients by hand."""
    x, y = regression_data()
    kernel, bias = [np.array(w, np.float64) for w in linear_model().get_weights()]
    params, m, v = [kernel, bias], [np.zeros((4, 2)), np.zeros(2)], [np.zeros((4, 2)), np.zeros(2)]
    for step in range(steps):
        d_out = 2.0 * (x @ params[0] + params[1] - y) / y.size
        grads = [x.T @ d_out, d_out.sum(axis=0)]
        if optimizer_type == "adamw":
            params, m, v = np_adamw(params, grads, m, v, lr_per_step[step], [True, False])
        else:
            params, m, v = np_lamb(params, grads, m, v, lr_per_step[step], step + 1, [True, False], [True, False])
    return params


FIT_LRS = [0.0, 0.05, 0.08]  # create_optimizer(0.1, num_train_steps=10, num_warmup_steps=2) at steps 0, 1, 2


@pytest.mark.parametrize("optimizer_type", ["adamw", "lamb"])
@pytest.mark.parametrize("jit_compile", [False, True])
def test_fit_matches_numpy(optimizer_type, jit_compile):
    x, y = regression_data()
    model = linear_model()
    model.compile(optimizer=create_optimizer(0.1, 10, 2, optimizer_type=optimizer_type), loss="mse",
                  jit_compile=jit_compile)
    model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    for got, want in zip(model.get_weights(), np_fit_linear(optimizer_type, 3, FIT_LRS)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("optimizer_type,jit_compile", [("adamw", False), ("lamb", False), ("lamb", True)])
def test_gradient_accumulation_equals_full_batch_steps(optimizer_type, jit_compile):
    # Two half-batches per update, three updates: the same weights (and schedule) as three full-batch steps.
    x, y = regression_data()
    model = linear_model()
    optimizer = create_optimizer(0.1, 10, 2, optimizer_type=optimizer_type, gradient_accumulation_steps=2)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=jit_compile)
    model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    assert int(optimizer.iterations) == 3
    for got, want in zip(model.get_weights(), np_fit_linear(optimizer_type, 3, FIT_LRS)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_mixed_float16_with_loss_scaling():
    x, y = regression_data()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="dense", dtype="mixed_float16")])
    model.set_weights(linear_model().get_weights())
    optimizer = keras.optimizers.LossScaleOptimizer(create_optimizer(0.1, 10, 2), initial_scale=1024.0)
    model.compile(optimizer=optimizer, loss="mse")
    model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    assert int(optimizer.inner_optimizer.iterations) == 3  # no step skipped for overflow
    for got, want in zip(model.get_weights(), np_fit_linear("adamw", 3, FIT_LRS)):
        np.testing.assert_allclose(got, want, atol=2e-3)


MIRRORED_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    from official_bert.optimization import create_optimizer
    x, y, kernel, bias = (np.array(a, "float32") for a in json.loads(sys.stdin.read()))
    out = {}
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    # Every run makes three updates of 8 examples; the last accumulates two batches of 4 and scales the
    # loss (by a power of two, so exactly) through LossScaleOptimizer, as fp16 training does.
    for name, optimizer_type, accumulate, batch in [("adamw", "adamw", None, 8), ("lamb", "lamb", None, 8),
                                                    ("adamw_accumulated_scaled", "adamw", 2, 4)]:
        with strategy.scope():
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="dense")])
            model.set_weights([kernel, bias])
            optimizer = create_optimizer(0.1, 10, 2, optimizer_type=optimizer_type,
                                         gradient_accumulation_steps=accumulate)
            if accumulate:
                optimizer = keras.optimizers.LossScaleOptimizer(optimizer, initial_scale=64.0)
            model.compile(optimizer=optimizer, loss="mse")
        model.fit(x, y, batch_size=batch, epochs=3, shuffle=False, verbose=0)
        out[name] = [w.tolist() for w in model.get_weights()]
    out["replicas"] = strategy.num_replicas_in_sync
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_mirrored_strategy_on_two_logical_cpus_matches_numpy():
    # Logical devices must be configured before TensorFlow initialises them, hence a fresh process.
    x, y = regression_data()
    payload = json.dumps([a.tolist() for a in (x, y, *linear_model().get_weights())])
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([sys.executable, "-c", MIRRORED_SCRIPT], input=payload, capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["replicas"] == 2
    for name, optimizer_type in [("adamw", "adamw"), ("lamb", "lamb"), ("adamw_accumulated_scaled", "adamw")]:
        for got, want in zip(out[name], np_fit_linear(optimizer_type, 3, FIT_LRS)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
