"""`.keras` files of the text models in a fresh process: after `import official_bert` (before or after `import
keras`), `keras.saving.load_model` gives back the model that was saved — its predictions to 1e-6, its optimizer
and the optimizer's state, with no warning — while `import official_bert` itself imports neither Keras nor
TensorFlow. The vocabulary is an asset, not config: config.json stays small for a 30,522-token vocabulary (and so
do the errors that quote it), and files of the first version, the vocabulary in their config, still load."""

import json
import os
import subprocess
import sys
import warnings
import zipfile

import keras
import numpy as np
import pytest

from official_bert import BertEncoder
from official_bert.keras_models import MaskedLM, TextClassifier, TextEmbedder, TextPreprocessor
from tests.finetuning.test_run_classifier import SINGLE, VOCAB, tiny_config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXTS = [a for a, _ in SINGLE]
LABELS = [["neg", "pos"][int(label)] for _, label in SINGLE]
FILLED = ["the [MASK] is good", "a [MASK] story"]
# Keras's warnings when a file's optimizer or compile settings do not come back.
LOST = ("Skipping variable loading", "was not called as part of model loading", "whereas the saved optimizer")


def big_vocabulary():
    """A vocabulary of BERT-Base's size: the test words, then made-up ones."""
    return VOCAB + [f"word{i}" for i in range(30522 - len(VOCAB))]


def fitted_classifier(vocabulary):
    keras.utils.set_random_seed(5)
    model = TextClassifier(BertEncoder(tiny_config(vocab_size=len(vocabulary))),
                           TextPreprocessor(vocabulary, sequence_length=16), 2, label_list=["neg", "pos"])
    model.fit(TEXTS, LABELS, batch_size=4, epochs=1, verbose=0)
    return model


def run(code, *args):
    """Runs `code` in a fresh Python of this venv (from the checkout); returns (stdout, stderr)."""
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, done.stderr


def test_importing_official_bert_imports_neither_keras_nor_tensorflow():
    out, _ = run("import sys, official_bert; print(sorted(m for m in ('keras', 'tensorflow') if m in sys.modules))")
    assert out.strip() == "[]"


@pytest.mark.slow
def test_the_config_is_small_and_the_optimizer_comes_back_without_a_warning(tmp_path):
    model = fitted_classifier(big_vocabulary())
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as saved:
        config_size = len(saved.read("config.json"))
        assert "assets/preprocessor/vocab.txt" in saved.namelist()
    assert config_size < 100_000
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = keras.saving.load_model(path)
    assert not [str(w.message) for w in caught if any(s in str(w.message) for s in LOST)]
    assert type(loaded.optimizer).__name__ == "AdamWeightDecay" and int(loaded.optimizer.iterations) == 2
    for saved_variable, variable in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(variable), np.asarray(saved_variable))
    schedule = loaded.optimizer._learning_rate
    assert (schedule.decay_steps, schedule.warmup_steps) == (2, 0)  # as fit scheduled it: 2 updates
    assert loaded.preprocessor.vocabulary == model.preprocessor.vocabulary
    np.testing.assert_array_equal(loaded.predict(TEXTS, verbose=0), model.predict(TEXTS, verbose=0))


@pytest.mark.slow
def test_a_model_that_never_trained_loads_without_a_warning_and_then_trains(tmp_path):
    """Its optimizer has no moments yet: the file holds its step alone, and the loaded one is built as that was."""
    model = TextClassifier(BertEncoder(tiny_config()), TextPreprocessor(VOCAB, sequence_length=16), 2)
    model.save(str(tmp_path / "m.keras"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = keras.saving.load_model(str(tmp_path / "m.keras"))
    assert not [str(w.message) for w in caught if any(s in str(w.message) for s in LOST)]
    loaded.fit(TEXTS, [0, 1] * 4, batch_size=4, verbose=0)
    assert int(loaded.optimizer.iterations) == 2 and loaded.optimizer._learning_rate.decay_steps == 2


@pytest.mark.slow
def test_a_file_of_the_first_version_still_loads(saved, tmp_path):
    """Its config holds the vocabulary, and it has no assets."""
    model, new = saved["classifier"]
    old = str(tmp_path / "old.keras")
    with zipfile.ZipFile(new) as source, zipfile.ZipFile(old, "w") as target:
        for name in source.namelist():
            if name == "config.json":
                config = json.loads(source.read(name))
                preprocessor = config["config"]["preprocessor"]["config"]
                del preprocessor["tokenizer_asset"]
                preprocessor["vocabulary"] = VOCAB
                target.writestr(name, json.dumps(config))
            elif not name.startswith("assets/"):
                target.writestr(name, source.read(name))
    loaded = keras.saving.load_model(old)
    assert loaded.preprocessor.vocabulary == VOCAB
    np.testing.assert_array_equal(loaded.predict(TEXTS, verbose=0), model.predict(TEXTS, verbose=0))


LOAD = """
import json, sys
if sys.argv[1] == "official_bert first":
    import official_bert
    import keras
else:
    import keras
    import official_bert
classifier, embedder, masked_lm = (keras.saving.load_model(path) for path in sys.argv[2:5])
texts, filled = json.loads(sys.argv[5]), json.loads(sys.argv[6])
print(json.dumps({"classifier": classifier.predict(texts, verbose=0).tolist(), "labels": classifier.classify(texts),
                  "embedder": embedder.predict(texts, verbose=0).tolist(),
                  "masked_lm": masked_lm.fill_mask(filled, top_k=3),
                  "iterations": [int(m.optimizer.iterations) for m in (classifier, embedder, masked_lm)]}))
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The three models, fitted and saved: {name: (model, path)}."""
    directory = tmp_path_factory.mktemp("saved")
    classifier = fitted_classifier(VOCAB)
    keras.utils.set_random_seed(6)
    preprocessor = TextPreprocessor(VOCAB, sequence_length=16)
    embedder = TextEmbedder(BertEncoder(tiny_config()), preprocessor, pooling="cls")
    embedder.fit(TEXTS, np.random.default_rng(0).normal(size=(len(TEXTS), 32)), batch_size=4, verbose=0)
    masked_lm = MaskedLM(BertEncoder(tiny_config()), preprocessor)
    masked_lm.fit(TEXTS, batch_size=4, epochs=2, verbose=0)
    models = {"classifier": classifier, "embedder": embedder, "masked_lm": masked_lm}
    for name, model in models.items():
        model.save(str(directory / f"{name}.keras"))
    return {name: (model, str(directory / f"{name}.keras")) for name, model in models.items()}


@pytest.mark.slow
@pytest.mark.parametrize("order", ["official_bert first", "keras first"])
def test_a_fresh_process_loads_each_model_after_import_official_bert(saved, order):
    (classifier, _), (embedder, _), (masked_lm, _) = saved.values()
    out, err = run(LOAD, order, *[path for _, path in saved.values()], json.dumps(TEXTS), json.dumps(FILLED))
    assert not [line for line in err.splitlines() if any(s in line for s in LOST)], err
    got = json.loads(out.splitlines()[-1])
    np.testing.assert_allclose(got["classifier"], classifier.predict(TEXTS, verbose=0), rtol=0, atol=1e-6)
    assert got["labels"] == classifier.classify(TEXTS)
    np.testing.assert_allclose(got["embedder"], embedder.predict(TEXTS, verbose=0), rtol=0, atol=1e-6)
    expected = masked_lm.fill_mask(FILLED, top_k=3)
    assert [[[token for token, _ in mask] for mask in text] for text in got["masked_lm"]] == \
        [[[token for token, _ in mask] for mask in text] for text in expected]
    np.testing.assert_allclose([p for text in got["masked_lm"] for mask in text for _, p in mask],
                               [p for text in expected for mask in text for _, p in mask], rtol=0, atol=1e-6)
    assert got["iterations"] == [2, 2, 4]


@pytest.mark.slow
def test_without_official_bert_the_error_is_one_short_message(tmp_path):
    path = str(tmp_path / "m.keras")
    fitted_classifier(big_vocabulary()).save(path)
    done = subprocess.run([sys.executable, "-c", "import sys, keras; keras.saving.load_model(sys.argv[1])", path],
                          cwd=REPO, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
                          timeout=600)
    assert done.returncode != 0 and "Could not locate class 'TextClassifier'" in done.stderr
    assert len(done.stderr) < 100_000
