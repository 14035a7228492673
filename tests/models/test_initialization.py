"""Fresh models are initialized as the original's modeling.create_initializer does: every kernel and embedding its
own truncated-normal draw (stddev initializer_range, cut at 2σ), biases 0, LayerNorm γ = 1 and β = 0."""

import itertools
import math

import keras
import numpy as np
import pytest

from official_bert import (BertClassifier, BertConfig, BertEncoder, BertMultipleChoice, BertPretrainer,
                           BertSpanLabeler, BertTokenClassifier)

RANGE = 0.02


def _truncated_normal_std(cut=2.0):
    """Standard deviation of N(0, 1) truncated to [-cut, cut], from its density (0.8796 at 2σ)."""
    density = math.exp(-cut * cut / 2) / math.sqrt(2 * math.pi)
    mass = math.erf(cut / math.sqrt(2))
    return math.sqrt(1 - 2 * cut * density / mass)


def config():
    # Wide enough that every kernel has at least 128 values, for the statistics below.
    return BertConfig(vocab_size=600, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=256, max_position_embeddings=160, type_vocab_size=2,
                      initializer_range=RANGE)


MODELS = {
    "pretrainer": lambda: BertPretrainer(BertEncoder(config())),
    "classifier": lambda: BertClassifier(BertEncoder(config()), num_classes=3),
    "span_labeler": lambda: BertSpanLabeler(BertEncoder(config())),
    "token_classifier": lambda: BertTokenClassifier(BertEncoder(config()), num_classes=5),
    "multiple_choice": lambda: BertMultipleChoice(BertEncoder(config()), num_choices=4),
}


def _random_weights(model):
    """(path, flattened values) of the weights drawn at random: every one but biases and LayerNorm's."""
    return [(w.path, np.asarray(w.numpy(), np.float64).ravel()) for w in model.weights
            if not w.path.endswith(("bias", "gamma", "beta"))]


def test_truncated_normal_std_is_the_documented_factor():
    assert _truncated_normal_std() == pytest.approx(0.8796, abs=1e-4)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_weight_is_its_own_truncated_normal_draw(name):
    keras.utils.set_random_seed(1)
    weights = _random_weights(MODELS[name]())
    assert len(weights) >= 10
    expected_std = _truncated_normal_std() * RANGE
    for path, values in weights:
        n = values.size
        assert n >= 128, path
        assert np.abs(values).max() <= 2 * RANGE + 1e-7, path
        # Relative standard error of a sample std of a 2σ-truncated normal is about 0.6/sqrt(n); allow ~5 of them.
        assert values.std() == pytest.approx(expected_std, rel=3 / math.sqrt(n)), path
        assert abs(values.mean()) < 5 * expected_std / math.sqrt(n), path
    # One initializer instance called for two weights gives the second the first one's values (the same
    # flattened prefix); independent draws are uncorrelated. 5/sqrt(n) is five standard errors of a correlation.
    for (path_a, a), (path_b, b) in itertools.combinations(weights, 2):
        n = min(a.size, b.size)
        corr = np.corrcoef(a[:n], b[:n])[0, 1]
        assert abs(corr) < 5 / math.sqrt(n), f"{path_a} and {path_b}: correlation {corr:.3f} over {n} values"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_biases_start_at_zero_and_layer_norms_at_identity(name):
    model = MODELS[name]()
    checked = 0
    for w in model.weights:
        if w.path.endswith(("bias", "beta")):
            np.testing.assert_array_equal(w.numpy(), 0.0, err_msg=w.path)
            checked += 1
        elif w.path.endswith("gamma"):
            np.testing.assert_array_equal(w.numpy(), 1.0, err_msg=w.path)
            checked += 1
    assert checked >= 10


def test_the_same_seed_gives_the_same_weights_and_another_seed_others():
    def draw(seed):
        keras.utils.set_random_seed(seed)
        return [values for _, values in _random_weights(MODELS["pretrainer"]())]

    first, again, other = draw(3), draw(3), draw(4)
    for a, b, c in zip(first, again, other):
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)


def test_fine_tuning_heads_use_the_original_run_scripts_stddev_and_the_rest_the_config():
    # run_classifier.py / run_squad.py: output_weights ~ truncated_normal(stddev=0.02) whatever initializer_range;
    # the encoder, pooler and pretraining heads use the config's initializer_range.
    wide = 0.1

    def std_of(model, suffix):
        values = next(w.numpy() for w in model.weights if w.path.endswith(suffix))
        return values.std() / _truncated_normal_std()

    def wide_encoder():
        return BertEncoder(BertConfig(**{**config().to_dict(), "initializer_range": wide}))

    classifier, span = BertClassifier(wide_encoder(), num_classes=100), BertSpanLabeler(wide_encoder())
    assert std_of(classifier, "classifier/kernel") == pytest.approx(0.02, rel=0.1)
    assert std_of(span, "span_logits/kernel") == pytest.approx(0.02, rel=0.2)
    assert std_of(classifier, "pooler/kernel") == pytest.approx(wide, rel=0.1)
    assert std_of(BertPretrainer(wide_encoder()), "next_sentence/kernel") == pytest.approx(wide, rel=0.25)
