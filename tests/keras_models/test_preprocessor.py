"""`TextPreprocessor`: the features run_classifier.py makes in Python (`convert_single_example`), id for id, on the
tokenizer parity texts — cased and uncased, with and without preserve_unused_tokens, single sentences and pairs —
padded per batch; its assets carry the vocabulary (not its config), so a copy works without the file."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from official_bert.classification.examples import InputExample
from official_bert.classification.features import convert_single_example
from official_bert.keras_models import TextPreprocessor
from official_bert.text.tokenizer_spec import TokenizerSpec
from tests.pretraining_data_corpus import real_vocab_file
from tests.text.test_tokenizer_spec import UNUSED_TEXTS
from tests.tokenization_helpers import english_lines, mixed_sentences

SEQ_LENGTH = 40
TEXTS = english_lines(120) + mixed_sentences(120, seed=5) + UNUSED_TEXTS


def _python_features(spec, text_a, text_b=None):
    features = convert_single_example(InputExample("x", text_a, text_b, "0"), ["0"], SEQ_LENGTH,
                                      spec.python_tokenizer())
    return features.input_ids, features.input_mask, features.segment_ids


def _graph_features(layer, *texts):
    packed = layer(tuple(tf.constant(t) for t in texts) if len(texts) > 1 else tf.constant(texts[0]))
    width = packed["input_mask"].shape[1]
    # Padded to the batch's longest row: the rest of SEQ_LENGTH is padding (id 0, mask 0, type 0).
    pad = lambda x: np.pad(x.numpy(), [(0, 0), (0, SEQ_LENGTH - width)]).tolist()  # noqa: E731
    return width, list(zip(pad(packed["input_word_ids"]), pad(packed["input_mask"]), pad(packed["input_type_ids"])))


@pytest.mark.parametrize("preserve", [False, True], ids=["split", "preserve"])
@pytest.mark.parametrize("do_lower_case", [True, False], ids=["uncased", "cased"])
def test_ids_equal_the_python_features(do_lower_case, preserve):
    spec = TokenizerSpec(real_vocab_file(), do_lower_case=do_lower_case, preserve_unused_tokens=preserve)
    layer = TextPreprocessor.from_spec(spec, SEQ_LENGTH)
    width, singles = _graph_features(layer, TEXTS)
    expected = [_python_features(spec, text) for text in TEXTS]
    assert singles == [tuple(map(list, e)) for e in expected]
    assert width == max(sum(mask) for _, mask, _ in expected)
    seconds = TEXTS[7:] + TEXTS[:7]
    _, pairs = _graph_features(layer, TEXTS, seconds)
    assert pairs == [tuple(map(list, _python_features(spec, a, b))) for a, b in zip(TEXTS, seconds)]


def test_preserve_unused_tokens_is_kept_and_refused_for_sentencepiece():
    vocab = real_vocab_file()
    unused0 = TokenizerSpec(vocab).python_tokenizer().vocab["[unused0]"]
    kept = TextPreprocessor.from_spec(TokenizerSpec(vocab, preserve_unused_tokens=True), 8)
    split = TextPreprocessor.from_spec(TokenizerSpec(vocab), 8)
    assert kept(tf.constant(["[unused0]"]))["input_word_ids"].numpy().tolist() == [[101, unused0, 102]]
    assert unused0 not in split(tf.constant(["[unused0]"]))["input_word_ids"].numpy().tolist()[0]


def test_the_assets_carry_the_vocabulary_and_the_config_stays_small(tmp_path):
    vocab = str(tmp_path / "vocab.txt")
    shutil.copy(real_vocab_file(), vocab)
    layer = TextPreprocessor.from_spec(TokenizerSpec(vocab, do_lower_case=False, preserve_unused_tokens=True), 16)
    config = layer.get_config()
    assets = tmp_path / "assets"
    assets.mkdir()
    layer.save_assets(str(assets))
    os.remove(vocab)
    assert "vocabulary" not in config and len(json.dumps(config)) < 1000
    clone = TextPreprocessor.from_config(config)
    with pytest.raises(ValueError, match="^TextPreprocessor: no vocabulary yet: .* assets"):
        clone(tf.constant(["a"]))
    clone.load_assets(str(assets))
    # A config of the first version, the vocabulary in it (and no asset to read), gives the same layer.
    old = TextPreprocessor.from_config({**{k: v for k, v in config.items() if k != "tokenizer_asset"},
                                        "vocabulary": layer.vocabulary})
    old.load_assets(str(tmp_path / "no assets"))
    assert clone.get_config() == config and old.get_config() == config and len(clone.vocabulary) == 30522
    texts = tf.constant(["Hello [unused3] wörld", "a"])
    for name, ids in layer(texts).items():
        np.testing.assert_array_equal(clone(texts)[name], ids)
        np.testing.assert_array_equal(old(texts)[name], ids)
    assert clone.spec.python_tokenizer().tokenize("hello [unused3]") == ["hello", "[unused3]"]
