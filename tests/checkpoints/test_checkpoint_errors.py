"""Bad checkpoints and mismatched models fail with a message naming the file and variable, before any
weight is touched; settings that contradict the checkpoint's casing warn."""

import os

import numpy as np
import pytest

from official_bert import BertClassifier, BertEncoder
from official_bert.checkpoints import CheckpointError, load_checkpoint, save_checkpoint
from official_bert.io import atomic_path
from tests.checkpoints.test_checkpoints import assert_same_weights, randomized, tiny_config


def saved(tmp_path, fmt, config=None, keep_config=True, model=None):
    model = model or randomized(BertEncoder(config or tiny_config()), seed=21)
    directory = tmp_path / fmt
    save_checkpoint(model, str(directory), fmt)
    if not keep_config:
        os.remove(directory / ("config.json" if fmt == "huggingface" else "bert_config.json"))
    return directory


def test_shape_mismatch_names_variable_and_both_shapes(tmp_path):
    google = saved(tmp_path, "google", keep_config=False)
    model = BertEncoder(tiny_config(intermediate_size=48))
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(model, str(google))
    message = str(error.value)
    assert "bert/encoder/layer_0/intermediate/dense/kernel: checkpoint (16, 32)" in message
    assert "'transformer_layer_0/intermediate/kernel' needs (16, 48)" in message

    hf = saved(tmp_path, "huggingface", keep_config=False)
    with pytest.raises(CheckpointError, match=r"encoder\.layer\.0\.intermediate\.dense\.weight: checkpoint "
                                              r"\(32, 16\), model variable .* needs \(48, 16\)"):
        load_checkpoint(model, str(hf))


def test_config_beside_checkpoint_must_match_model(tmp_path):
    # Two heads instead of four: every shape agrees, only the config can tell.
    directory = saved(tmp_path, "google")
    with pytest.raises(CheckpointError, match="num_attention_heads: model 2, checkpoint 4"):
        load_checkpoint(BertEncoder(tiny_config(num_attention_heads=2)), str(directory))
    # Hugging Face's "gelu" is exact erf; the model computes the tanh approximation.
    hf = saved(tmp_path, "huggingface", config=tiny_config(hidden_act="gelu_erf"))
    with pytest.raises(CheckpointError, match=r"config\.json .*hidden_act: model 'gelu' \(gelu_tanh\), "
                                              r"checkpoint 'gelu_erf' \(gelu_erf\)"):
        load_checkpoint(BertEncoder(tiny_config()), str(hf))


@pytest.mark.parametrize("model_layers,match", [(1, "encoder has variables the model lacks"),
                                                (3, "lacks 16 encoder variable")])
def test_layer_count_mismatch(tmp_path, model_layers, match):
    directory = saved(tmp_path, "official_bert", keep_config=False)
    model = BertEncoder(tiny_config(num_hidden_layers=model_layers))
    before = {v.path: v.numpy() for v in model.weights}
    with pytest.raises(CheckpointError, match=match):
        load_checkpoint(model, str(directory))
    for v in model.weights:
        np.testing.assert_array_equal(v.numpy(), before[v.path])


def test_head_shape_mismatch(tmp_path):
    source = randomized(BertClassifier(BertEncoder(tiny_config()), num_classes=3), seed=22)
    directory = saved(tmp_path, "huggingface", model=source)
    with pytest.raises(CheckpointError, match=r"classifier\.weight: checkpoint \(3, 16\), .* needs \(2, 16\)"):
        load_checkpoint(BertClassifier(BertEncoder(tiny_config()), num_classes=2), str(directory))


def truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


@pytest.mark.parametrize("fmt,victim", [("google", "bert_model.ckpt.data-00000-of-00001"),
                                        ("google", "bert_model.ckpt.index"),
                                        ("official_bert", "model.ckpt.data-00000-of-00001"),
                                        ("huggingface", "model.safetensors")])
def test_truncated_file_fails_cleanly_and_leaves_model_untouched(tmp_path, fmt, victim):
    directory = saved(tmp_path, fmt)
    truncate(directory / victim)
    model = BertEncoder(tiny_config())
    pristine = randomized(BertEncoder(tiny_config()), seed=23)
    for ours, theirs in zip(model.weights, pristine.weights):
        ours.assign(theirs)
    with pytest.raises(CheckpointError, match=str(directory)):
        load_checkpoint(model, str(directory))
    assert_same_weights(model, pristine)


def test_paths_that_hold_no_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint there"):
        load_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hi")
    with pytest.raises(CheckpointError, match="no checkpoint found.*It holds: notes.txt"):
        load_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "empty"))
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "pytorch_model.bin").write_bytes(b"\x80\x02")
    with pytest.raises(CheckpointError, match="pytorch_model.bin: PyTorch pickle .* safetensors"):
        load_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "torch"))
    (tmp_path / "broken.keras").write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="broken.keras: cannot open the .keras file"):
        load_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "broken.keras"))


def test_foreign_safetensors_matches_nothing(tmp_path):
    from safetensors.numpy import save_file
    save_file({"lm_head.weight": np.zeros((4, 4), np.float32)}, str(tmp_path / "gpt.safetensors"))
    with pytest.raises(CheckpointError, match="gpt.safetensors: the checkpoint lacks"):
        load_checkpoint(BertEncoder(tiny_config()), str(tmp_path / "gpt.safetensors"))


def test_unknown_save_format(tmp_path):
    with pytest.raises(ValueError, match="unknown checkpoint format 'onnx'"):
        save_checkpoint(BertEncoder(tiny_config()), str(tmp_path), format="onnx")


def test_failed_write_leaves_nothing_behind(tmp_path):
    target = tmp_path / "model.safetensors"
    with pytest.raises(RuntimeError):
        with atomic_path(str(target)) as tmp:
            open(tmp, "wb").write(b"half")
            raise RuntimeError("disk full")
    assert os.listdir(tmp_path) == []


def test_case_mismatch_warnings(tmp_path):
    released = tmp_path / "cased_L-12_H-768_A-12"
    saved(tmp_path, "google")
    os.rename(tmp_path / "google", released)
    (released / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\nThe\nthe\n##s\n")
    with pytest.warns(UserWarning) as caught:
        report = load_checkpoint(BertEncoder(tiny_config()), str(released), do_lower_case=True)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2 == len(report.warnings)
    assert "seems to be a cased model" in messages[0]  # the original's rule, from the directory's name
    assert "has 1 entries with uppercase letters (e.g. ['The'])" in messages[1]  # the vocab's evidence

    uncased = tmp_path / "uncased"
    saved(tmp_path, "huggingface")
    os.rename(tmp_path / "huggingface", uncased)
    (uncased / "vocab.txt").write_text("[PAD]\n[UNK]\nthe\n##s\n")
    with pytest.warns(UserWarning, match="no entry with an uppercase letter"):
        load_checkpoint(BertEncoder(tiny_config()), str(uncased), do_lower_case=False)
    assert load_checkpoint(BertEncoder(tiny_config()), str(uncased), do_lower_case=True).warnings == []
