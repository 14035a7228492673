"""One harness over every Keras object the library registers: config round trip, the same outputs from the object
rebuilt from its config (with the same weights), `.keras` save/load for models, and output shapes.

A new registered layer or model fails `test_every_registered_object_is_in_the_harness` until it has a case here.
"""

import importlib
import os
import pkgutil

import keras
import numpy as np
import pytest

import official_bert
from official_bert import (BertClassifier, BertConfig, BertEncoder, BertMultipleChoice, BertPretrainer,
                           BertSpanLabeler, BertTokenClassifier, ElectraDiscriminator)
from official_bert.distillation.intermediate import IntermediateLayerDistillation
from official_bert.layers import BertEmbeddings, Dropout, MultiHeadSelfAttention, TransformerBlock
from official_bert.layers.dense import TokenDense
from official_bert.features.pooling import SentencePooling
from official_bert.keras_models import MaskedLM, TextClassifier, TextEmbedder, TextPreprocessor
from official_bert.models.bert_language_model import BertLanguageModel
from official_bert.models.bert_multiple_choice import FoldChoices
from official_bert.retrieval.contrastive_model import ContrastiveModel
from official_bert.text import BertPackInputs, BertTokenizer

B, T, H = 2, 6, 16
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "##s", "a", "dog"]


def tiny_config(**changes):
    return BertConfig(vocab_size=len(VOCAB), hidden_size=H, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=16, type_vocab_size=2, **changes)


def encoder_inputs(shape=(B, T)):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, len(VOCAB), size=shape).astype("int32")
    mask = np.ones(shape, "int32")
    mask[..., -2:] = 0
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": np.zeros(shape, "int32")}


def _vocab_file(tmp_path):
    path = os.path.join(tmp_path, "vocab.txt")
    with open(path, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    return path


def _sentencepiece_tokenizer(tmp_path):
    from official_bert.text import sentencepiece_tokenizer
    from official_bert.text import GraphSentencePieceTokenizer
    from tests.tokenization_helpers import english_lines

    corpus, model = os.path.join(tmp_path, "corpus.txt"), os.path.join(tmp_path, "sp.model")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(english_lines(300)) + "\n")
    sentencepiece_tokenizer.train([corpus], model, vocab_size=100)
    return GraphSentencePieceTokenizer(model), (np.array(["The cats sat", "a dog"]),)


def _byte_level_bpe_tokenizer(tmp_path):
    from official_bert.text.bpe_layer import GraphByteLevelBPETokenizer

    roberta = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "families", "roberta")
    return (GraphByteLevelBPETokenizer(os.path.join(roberta, "vocab.json"), os.path.join(roberta, "merges.txt"),
                                       tokenize_with_offsets=True), (np.array(["The cats' sat", " a dog"]),))


def _embeddings():
    layer = BertEmbeddings(vocab_size=len(VOCAB), hidden_size=H, max_position_embeddings=16, type_vocab_size=2)
    return layer, (np.array([[5, 6, 7]]), np.array([[0, 0, 1]]))


# name → (tmp_path → (object, call arguments)). Models are also saved as .keras and reloaded.
LAYERS = {
    "BertEmbeddings": lambda tmp_path: _embeddings(),
    "MultiHeadSelfAttention": lambda tmp_path: (MultiHeadSelfAttention(num_heads=2, head_size=8),
                                                (np.ones((B, T, H), "float32"), np.zeros((B, 1, 1, T), "float32"))),
    "TransformerBlock": lambda tmp_path: (TransformerBlock(num_heads=2, hidden_size=H, intermediate_size=32),
                                          (np.ones((B, T, H), "float32"), np.zeros((B, 1, 1, T), "float32"))),
    "Dropout": lambda tmp_path: (Dropout(0.3, noise_shape=(None, 1, H), seed=1), (np.ones((B, T, H), "float32"),)),
    "TokenDense": lambda tmp_path: (TokenDense(5, activation="tanh"), (np.ones((B, T, H), "float32"),)),
    "FoldChoices": lambda tmp_path: (FoldChoices(), (np.zeros((B, 4, T), "int32"),)),
    "BertPackInputs": lambda tmp_path: (
        BertPackInputs(8, start_of_sequence_id=2, end_of_segment_id=3, padding_id=0),
        (__import__("tensorflow").ragged.constant([[[5, 6], [7]], [[9]]]),)),
    "BertTokenizer": lambda tmp_path: (BertTokenizer(_vocab_file(tmp_path)),
                                       (np.array(["The cats sat", "a dog"]),)),
    "GraphSentencePieceTokenizer": _sentencepiece_tokenizer,
    "GraphByteLevelBPETokenizer": _byte_level_bpe_tokenizer,
    "SentencePooling": lambda tmp_path: (SentencePooling("mean", normalize=True),
                                         (np.ones((B, T, H), "float32"), encoder_inputs()["input_mask"])),
    "TextPreprocessor": lambda tmp_path: (TextPreprocessor(VOCAB, sequence_length=8),
                                          ((np.array(["The cats sat", "a dog"]), np.array(["the dog", ""])),)),
}
MODELS = {
    "BertEncoder": lambda: (BertEncoder(tiny_config()), encoder_inputs()),
    "BertClassifier": lambda: (BertClassifier(BertEncoder(tiny_config()), 3), encoder_inputs()),
    "BertSpanLabeler": lambda: (BertSpanLabeler(BertEncoder(tiny_config())), encoder_inputs()),
    "BertTokenClassifier": lambda: (BertTokenClassifier(BertEncoder(tiny_config()), 5), encoder_inputs()),
    "BertMultipleChoice": lambda: (BertMultipleChoice(BertEncoder(tiny_config()), 4), encoder_inputs((B, 4, T))),
    "BertPretrainer": lambda: (BertPretrainer(BertEncoder(tiny_config())),
                               {**encoder_inputs(), "masked_lm_positions": np.array([[1, 2], [0, 3]], "int32")}),
    "BertLanguageModel": lambda: (BertLanguageModel(BertEncoder(tiny_config(), causal_attention=True)),
                                  encoder_inputs()),
    # ELECTRA's narrower embeddings (their projection is serialized with the encoder).
    "ElectraDiscriminator": lambda: (ElectraDiscriminator(BertEncoder(tiny_config(family="electra", embedding_size=8))),
                                     encoder_inputs()),
    # The preprocessors' rows fit the encoders' 16 positions (longer ones are refused).
    "TextClassifier": lambda: (TextClassifier(BertEncoder(tiny_config()), TextPreprocessor(VOCAB, sequence_length=16),
                                              3, label_list=["a", "b", "c"]), encoder_inputs()),
    "TextEmbedder": lambda: (TextEmbedder(BertEncoder(tiny_config()), TextPreprocessor(VOCAB, sequence_length=16),
                                          pooling="max"), encoder_inputs()),
    # The training wrapper of the retrieval losses: rows of 2 texts, each embedded by the TextEmbedder.
    "ContrastiveModel": lambda: (ContrastiveModel(TextEmbedder(BertEncoder(tiny_config()),
                                                               TextPreprocessor(VOCAB, sequence_length=16)),
                                                  mini_batch_size=2), encoder_inputs((B, 2, T))),
    "MaskedLM": lambda: (MaskedLM(BertEncoder(tiny_config()), TextPreprocessor(VOCAB, sequence_length=16)),
                         {**encoder_inputs(), "masked_lm_positions": np.array([[1, 2], [0, 3]], "int32")}),
    # Its output is the student's logits; the teacher (not its weights: it is neither trained nor saved) comes back
    # from the config, the projection's weights from the file.
    "IntermediateLayerDistillation": lambda: (IntermediateLayerDistillation(
        BertClassifier(BertEncoder(tiny_config()), 3),
        BertClassifier(BertEncoder(tiny_config().replace(hidden_size=32)), 3),
        weight=0.5), encoder_inputs()),
}
# Registered objects that are not layers or models, covered by their own tests: the optimizers and the schedule
# (test_optimization.py), the NER token accuracy (test_run_ner.py), the GELU functions (test_model.py), the own-data
# losses (tests/classification/test_own_files.py), the distillation loss (tests/distillation/test_losses.py), the
# retrieval losses (tests/retrieval/test_losses.py); and
# MaskedLMHead, which shares the encoder's word embeddings and so round-trips inside BertPretrainer (above).
NOT_LAYERS = {"AdamWeightDecay", "Lamb", "WarmupPolynomialDecay", "TokenAccuracy", "gelu_erf", "gelu_tanh",
              "MaskedLMHead", "ClassWeightedCrossentropy", "MultiLabelCrossentropy", "DistillationLoss",
              "MultipleNegativesRankingLoss", "CachedMultipleNegativesRankingLoss", "CoSENTLoss",
              "CosineSimilarityLoss", "MatryoshkaLoss"}


def _outputs(obj, args):
    out = obj(*args) if isinstance(args, tuple) else obj(args)
    return [np.asarray(getattr(t, "to_tensor", lambda: t)()) for t in keras.tree.flatten(out)]


def test_every_registered_object_is_in_the_harness():
    # Every module, so that every object the library registers is registered (the package imports lazily); the
    # tools register none, and each defines its absl flags at import (several share names).
    for module in pkgutil.walk_packages(official_bert.__path__, "official_bert."):
        if not module.name.startswith("official_bert.tools."):
            importlib.import_module(module.name)
    registered = {name.split(">", 1)[1] for name in keras.saving.get_custom_objects() if
                  name.startswith("official_bert>")}
    missing = registered - set(LAYERS) - set(MODELS) - NOT_LAYERS
    assert not missing, f"registered but not in tests/models/test_serialization.py: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_layer_rebuilt_from_its_config_computes_the_same(tmp_path, name):
    layer, args = LAYERS[name](str(tmp_path))
    expected = _outputs(layer, args)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    if hasattr(layer, "save_assets"):  # state a .keras file keeps as assets, not config (TextPreprocessor's vocabulary)
        layer.save_assets(tmp_path)
        clone.load_assets(tmp_path)
    _outputs(clone, args)  # builds it
    clone.set_weights(layer.get_weights())
    for a, b in zip(expected, _outputs(clone, args)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_model_round_trips_through_its_config_and_a_keras_file(tmp_path, name):
    keras.utils.set_random_seed(1)
    model, inputs = MODELS[name]()
    expected = _outputs(model, inputs)
    clone = type(model).from_config(model.get_config())
    assert clone.get_config() == model.get_config()
    path = str(tmp_path / f"{name}.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded) is type(model)
    for a, b in zip(expected, _outputs(loaded, inputs)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    if name != "BertEncoder":
        assert expected[0].shape[0] == B  # every head keeps the batch first
