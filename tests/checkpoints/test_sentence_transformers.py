"""sentence-transformers directories, against what sentence-transformers 6.2 itself wrote and computed
(tests/fixtures/sentence_transformers_tiny/ and sentence_transformers_reference.json, from
tools/make_sentence_transformers_reference.py, which also checked that sentence-transformers loads our directories and
embeds within 1e-5 of us, for a tiny model and for all-MiniLM-L6-v2 fine-tuned here): a directory it saved (no
vocab.txt, 6.x's module files) loads with its pooling and gives its embeddings; written back, it has the files,
settings and tensors sentence-transformers writes; modules a TextEmbedder does not compute are refused."""

import json
import os
import shutil

import numpy as np
import pytest
from safetensors import safe_open

from official_bert.checkpoints.sentence_transformers import sentence_transformers_settings
from official_bert.checkpoints.source import CheckpointError
from official_bert.keras_models import TextEmbedder

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")
TINY = os.path.join(FIXTURES, "sentence_transformers_tiny")
# What sentence-transformers writes of its run rather than of the model: its versions, the loading's own flags.
RUNTIME = {"config_sentence_transformers.json": ["__version__"], "tokenizer_config.json": ["is_local",
                                                                                          "local_files_only"]}


@pytest.fixture(scope="module")
def reference():
    with open(os.path.join(FIXTURES, "sentence_transformers_reference.json")) as f:
        return json.load(f)


def without_runtime(name, settings):
    return {key: value for key, value in settings.items() if key not in RUNTIME.get(name, [])}


def test_a_directory_sentence_transformers_saved_gives_its_embeddings(reference):
    model = TextEmbedder.from_checkpoint(TINY)
    assert (model.pooling, model.normalize, model.preprocessor.sequence_length) == ("mean", True, 32)
    np.testing.assert_allclose(model.predict(reference["texts"], verbose=0), reference["embeddings"], rtol=0,
                               atol=1e-5)


def test_written_back_it_has_the_layout_sentence_transformers_writes(reference, tmp_path):
    model = TextEmbedder.from_checkpoint(TINY)
    written = model.save_sentence_transformers(str(tmp_path / "st"))
    files = sorted(os.path.relpath(os.path.join(root, name), written) for root, _, names in os.walk(written)
                   for name in names)
    assert set(reference["files"]) <= set(files) and set(files) - set(reference["files"]) == {"vocab.txt"}
    for name, theirs in reference["settings"].items():
        with open(os.path.join(written, name)) as f:
            ours = json.load(f)
        if isinstance(theirs, dict):
            ours, theirs = without_runtime(name, ours), without_runtime(name, theirs)
        assert ours == theirs, name
    with safe_open(os.path.join(written, "model.safetensors"), "np") as f:
        tensors = {key: [list(f.get_tensor(key).shape), str(f.get_tensor(key).dtype)] for key in sorted(f.keys())}
    assert tensors == reference["tensors"]
    with open(os.path.join(written, "tokenizer.json")) as ours, open(os.path.join(TINY, "tokenizer.json")) as theirs:
        ours, theirs = json.load(ours), json.load(theirs)
    for key in ("model", "normalizer", "pre_tokenizer", "post_processor", "decoder", "added_tokens"):
        assert ours[key] == theirs[key], key
    with open(os.path.join(written, "config.json")) as ours, open(os.path.join(TINY, "config.json")) as theirs:
        ours, theirs = json.load(ours), json.load(theirs)
    assert {key: theirs[key] for key in ours if key in theirs} == {key: ours[key] for key in ours if key in theirs}
    np.testing.assert_allclose(TextEmbedder.from_checkpoint(written).predict(reference["texts"], verbose=0),
                               reference["embeddings"], rtol=0, atol=1e-5)


def test_legacy_settings_are_read(tmp_path):
    directory = tmp_path / "legacy"
    (directory / "1_Pooling").mkdir(parents=True)
    (directory / "modules.json").write_text(json.dumps([
        {"path": "", "type": "sentence_transformers.models.Transformer"},
        {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (directory / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True,
                                                                     "pooling_mode_mean_tokens": False}))
    (directory / "sentence_bert_config.json").write_text('{"max_seq_length": 64, "do_lower_case": false}')
    (directory / "tokenizer_config.json").write_text('{"model_max_length": 512}')
    assert sentence_transformers_settings(str(directory)) == {"normalize": False, "pooling": "cls",
                                                              "sequence_length": 64}


@pytest.mark.parametrize("change, message", [
    (lambda d: _edit(d / "modules.json", lambda m: m + [{"idx": 3, "name": "3", "path": "3_Dense",
                                                         "type": "sentence_transformers.models.Dense"}]),
     "'sentence_transformers.models.Dense' is not one a TextEmbedder computes"),
    (lambda d: _edit(d / "1_Pooling" / "config.json", lambda c: {**c, "pooling_mode": "weightedmean"}),
     "pooling 'weightedmean' is not one a TextEmbedder computes"),
    (lambda d: _edit(d / "1_Pooling" / "config.json", lambda c: {**c, "pooling_mode": ["mean", "max"]}),
     r"pooling \['mean', 'max'\]"),
])
def test_modules_a_text_embedder_does_not_compute_are_refused(tmp_path, change, message):
    directory = tmp_path / "st"
    shutil.copytree(TINY, directory)
    change(directory)
    with pytest.raises(CheckpointError, match=message):
        TextEmbedder.from_checkpoint(str(directory))


def _edit(path, function):
    path.write_text(json.dumps(function(json.loads(path.read_text()))))
