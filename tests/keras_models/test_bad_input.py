"""What the Keras text models refuse, each in one line naming the argument and position (the checks
`classification.validation` shares with the command-line readers): texts that are not texts (None, numbers, NaN,
lists, bytes that are not UTF-8), counts that disagree, labels that are not class ids (0.5, 2 of two classes),
multi-label rows and regression targets that are not what the kind needs, a left-to-right checkpoint as a masked LM,
lengths beyond the position table (named `sequence_length=`, the Python API's), a label list of another length than
the head. And what they accept: UTF-8 bytes, labels with surrounding spaces, texts far longer than sequence_length."""

import zipfile

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, BertPretrainer, save_checkpoint
from official_bert.checkpoints import CheckpointError
from official_bert.classification.examples import InputExample
from official_bert.classification.features import convert_single_example
from official_bert.classification.validation import ValidationError
from official_bert.configs import ConfigError
from official_bert.fill_mask import load_masked_lm
from official_bert.keras_models import MaskedLM, TextClassifier, TextEmbedder, TextPreprocessor
from tests.finetuning.test_run_classifier import VOCAB, tiny_config

SEQ_LENGTH = 16
TEXTS = ["the movie is good", "the film was awful", "a great story", "a dull plot"]


@pytest.fixture(scope="module")
def models():
    preprocessor = TextPreprocessor(VOCAB, sequence_length=SEQ_LENGTH)
    return {"single": TextClassifier(BertEncoder(tiny_config()), preprocessor, 2, label_list=["neg", "pos"]),
            "multi_label": TextClassifier(BertEncoder(tiny_config()), preprocessor, 3, multi_label=True),
            "regression": TextClassifier(BertEncoder(tiny_config()), preprocessor, 1),
            "embedder": TextEmbedder(BertEncoder(tiny_config()), preprocessor),
            "masked_lm": MaskedLM(BertEncoder(tiny_config()), preprocessor)}


def refused(call, message, error=ValidationError):
    """Asserts `call` raises `error` whose message is `message`, one line."""
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value) == message and "\n" not in str(raised.value)


@pytest.mark.parametrize("bad, shown", [(None, "texts[2] is None, not a text"),
                                        (7, "texts[2] is a number (7), not a text"),
                                        (float("nan"), "texts[2] is nan (a missing value?), not a text"),
                                        (["a", "film"], "texts[2] is a list ['a', 'film'], not a text: expected one "
                                                        "string per example"),
                                        (b"caf\xe9", "texts[2]: byte 0xe9 at offset 3 is not UTF-8")])
def test_a_text_that_is_not_one_is_refused_by_every_entry_point(models, bad, shown):
    texts = TEXTS[:2] + [bad] + TEXTS[2:]
    single, embedder, masked_lm = models["single"], models["embedder"], models["masked_lm"]
    refused(lambda: single.predict(texts, verbose=0), shown)
    refused(lambda: single.classify(texts), shown)
    refused(lambda: single.fit(texts, [0, 1, 0, 1, 0], verbose=0), shown)
    refused(lambda: single.evaluate(texts, [0, 1, 0, 1, 0], verbose=0), shown)
    refused(lambda: single.fit(TEXTS, [0, 1, 0, 1], validation_data=(texts, [0, 1, 0, 1, 0]), verbose=0), shown)
    refused(lambda: embedder.predict(texts, verbose=0), shown)
    refused(lambda: masked_lm.fit(texts, verbose=0), shown)
    refused(lambda: masked_lm.fill_mask(["the [MASK] is good"] + texts[1:]), shown)
    # In a pair, and in a row of an [N, 2] array.
    refused(lambda: single.predict((texts, TEXTS + ["x"]), verbose=0), shown.replace("texts[", "texts_a["))
    refused(lambda: single.predict([[t, "x"] for t in texts], verbose=0), shown.replace("texts[2]", "texts[2][0]"))


def test_utf8_bytes_are_texts(models):
    single = models["single"]
    np.testing.assert_allclose(single.predict([t.encode("utf-8") for t in TEXTS], verbose=0),
                               single.predict(TEXTS, verbose=0), rtol=0, atol=1e-6)


def test_counts_that_disagree_are_refused_before_any_graph_runs(models):
    single, texts = models["single"], TEXTS * 2 + TEXTS[:2]  # 10 texts
    refused(lambda: single.fit(texts, [0] * 9, verbose=0), "10 texts, 9 labels: expected one per text")
    refused(lambda: single.evaluate(texts, np.zeros(11), verbose=0), "10 texts, 11 labels: expected one per text")
    refused(lambda: single.fit(texts, [0] * 10, sample_weight=[1.0] * 3, verbose=0),
            "10 texts, 3 sample weights: expected one per text")
    refused(lambda: single.predict((TEXTS, TEXTS[:3]), verbose=0), "a pair of unequal lengths: 4 texts_a, 3 texts_b")
    refused(lambda: single.predict([], verbose=0), "expected texts, got none")
    refused(lambda: single.predict((TEXTS, []), verbose=0), "expected texts, got none")
    refused(lambda: single.predict(np.empty((0, 2), object), verbose=0), "expected texts, got none")
    refused(lambda: single.predict("one text", verbose=0), "expected a list of texts, got one text 'one text': pass "
                                                           "[text]")


@pytest.mark.slow
def test_texts_far_longer_than_sequence_length_are_cut_as_the_python_features_are(models):
    single = models["single"]
    long_a, long_b = " ".join(["good movie"] * 300), " ".join(["awful plot"] * 200)
    tokenizer = single.preprocessor.spec.python_tokenizer()
    for a, b in ((long_a, None), (long_a, long_b), ("a dog", long_b)):
        feature = convert_single_example(InputExample("x", a, b, "0"), ["0"], SEQ_LENGTH, tokenizer)
        inputs = {"input_word_ids": np.array([feature.input_ids]), "input_mask": np.array([feature.input_mask]),
                  "input_type_ids": np.array([feature.segment_ids])}
        x = [a] if b is None else ([a], [b])
        np.testing.assert_allclose(single.predict(x, verbose=0), single(inputs, training=False).numpy(), rtol=0,
                                   atol=1e-6)


def test_class_labels_are_ids_or_names_and_nothing_else(models):
    single = models["single"]
    # Names stripped as run_classifier strips its files' labels; ids whole; an [N, 1] column as a list.
    assert single.targets(["pos ", " neg", 1, 0.0, np.int64(1)]).tolist() == [1, 0, 1, 0, 1]
    assert single.targets(np.array([[1], [0]])).tolist() == [1, 0]
    refused(lambda: single.fit(TEXTS, [0, 0.5, 1, 1.7], verbose=0),
            "y[1]: label 0.5 is a number, not a class id (an integer in [0, 2)); for float labels use regression "
            "(num_classes=1)")
    refused(lambda: single.fit(TEXTS, np.array([0, 1, 2, 1]), verbose=0),
            "y[2]: label 2 is out of range: a class id is an integer in [0, 2)")
    refused(lambda: single.evaluate(TEXTS, [0, 1, -1, 1], verbose=0),
            "y[2]: label -1 is out of range: a class id is an integer in [0, 2)")
    refused(lambda: single.fit(TEXTS, [0, 1, float("nan"), 1], verbose=0),
            "y[2]: label nan is a number, not a class id (an integer in [0, 2)); for float labels use regression "
            "(num_classes=1)")
    refused(lambda: single.fit(TEXTS, ["pos", "neutral", "neg", "pos"], verbose=0),
            "y[1]: label 'neutral' is not in label_list ['neg', 'pos']")
    refused(lambda: single.fit(TEXTS, ["pos", " ", "neg", "pos"], verbose=0), "y[1]: the label is empty")
    model = TextClassifier(BertEncoder(tiny_config()), TextPreprocessor(VOCAB, sequence_length=SEQ_LENGTH), 2,
                           label_list=[" neg", "pos "])
    assert model.labels == ["neg", "pos"]
    refused(lambda: TextClassifier(BertEncoder(tiny_config()), single.preprocessor, 2, label_list=["pos", "pos "]),
            "label_list names 'pos' twice")


def test_multi_label_rows_and_regression_targets_are_checked(models):
    multi, regression = models["multi_label"], models["regression"]
    assert multi.targets([[1, 0, 1], (0.0, 1.0, 0.0)]).tolist() == [[1, 0, 1], [0, 1, 0]]
    refused(lambda: multi.fit(TEXTS, [[1, 0, 1], [1, 0], [0, 0, 0], [1, 1, 1]], verbose=0),
            "y[1]: 2 values [1, 0], expected num_classes=3 values of 0 or 1 (one per label)")
    refused(lambda: multi.fit(TEXTS, np.array([[1, 0, 1], [1, 0, 2], [0, 0, 0], [1, 1, 1]]), verbose=0),
            "y[1]: [1, 0, 2] holds 2; expected num_classes=3 values of 0 or 1 (one per label)")
    refused(lambda: multi.fit(TEXTS, [0, 1, 2, 1], verbose=0),
            "y[0]: 0 is not a row of labels; expected num_classes=3 values of 0 or 1 (one per label)")
    assert regression.targets([1, 2.5, np.float32(0.5)]).tolist() == [1.0, 2.5, 0.5]
    refused(lambda: regression.fit(TEXTS, [0.5, 1.0, float("nan"), 2.0], verbose=0),
            "y[2]: target nan is not a finite number")
    refused(lambda: regression.fit(TEXTS, [0.5, "high", 1.0, 2.0], verbose=0),
            "y[1]: target 'high' is not a number (regression expects numbers)")
    refused(lambda: models["masked_lm"].fit(TEXTS, [0, 1, 0, 1], verbose=0),
            "MaskedLM.fit takes texts only: it masks them itself (no y)", ValueError)


def _pretraining_checkpoint(directory, **config):
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    save_checkpoint(BertPretrainer(BertEncoder(tiny_config(**config)), use_nsp=False), str(directory),
                    vocab_file=str(vocab))
    return str(directory)


def test_a_left_to_right_checkpoint_is_refused_as_fill_mask_refuses_it(tmp_path):
    path = _pretraining_checkpoint(tmp_path, causal_attention=True)
    with pytest.raises(CheckpointError) as fill_mask_error:
        load_masked_lm(tiny_config(), path)
    refused(lambda: MaskedLM.from_checkpoint(path, sequence_length=SEQ_LENGTH), str(fill_mask_error.value),
            CheckpointError)
    assert "left-to-right" in str(fill_mask_error.value)


def test_lengths_beyond_the_position_table_name_sequence_length(tmp_path, models):
    path = _pretraining_checkpoint(tmp_path)
    refused(lambda: MaskedLM.from_checkpoint(path, sequence_length=100),
            f"sequence_length=100 exceeds max_position_embeddings=64 of {tmp_path / 'bert_config.json'}: the model "
            "has no positions beyond it", ConfigError)
    refused(lambda: TextClassifier(BertEncoder(tiny_config()), TextPreprocessor(VOCAB, sequence_length=65), 2),
            "sequence_length=65 exceeds max_position_embeddings=64 of the encoder's config: the model has no positions "
            "beyond it", ConfigError)


def test_a_label_list_of_another_length_than_the_head_is_refused(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    save_checkpoint(BertClassifier(BertEncoder(tiny_config()), 2), str(tmp_path), "google", vocab_file=str(vocab))
    refused(lambda: TextClassifier.from_checkpoint(str(tmp_path), label_list=["neg", "neutral", "pos"],
                                                   sequence_length=SEQ_LENGTH),
            f"{tmp_path}: label_list has 3 labels, but the checkpoint's classifier has 2 outputs: expected one name "
            "per class", ValueError)
    assert TextClassifier.from_checkpoint(str(tmp_path), label_list=["neg", "pos"], sequence_length=SEQ_LENGTH
                                          ).labels == ["neg", "pos"]


def batches():
    yield ["the movie is good", "a dull plot"]


@pytest.mark.parametrize("given, shown", [
    # J8a-c, J8e: "texts: expected a list or 1-D array of strings, or a pair of them; got shape ()".
    (lambda: (text for text in TEXTS), "got a generator, whose texts cannot be counted nor read twice"),
    (batches, "got a generator, whose texts cannot be counted nor read twice"),
    (lambda: iter(TEXTS), "got an iterator (list_iterator), whose texts cannot be counted nor read twice"),
    (lambda: map(str, TEXTS), "got an iterator (map), whose texts cannot be counted nor read twice"),
    (lambda: set(TEXTS), "got a set, whose order is not the outputs' order"),
    (lambda: 7, "got int 7"),
], ids=["generator of texts", "generator of batches", "iterator", "map", "set", "number"])
def test_what_is_not_a_sequence_of_texts_is_named_with_what_is_taken(models, given, shown):
    expected = "expected a list or 1-D array of strings, a pair of them, or a batched tf.data.Dataset"
    for call in (lambda: models["single"].predict(given(), verbose=0), lambda: models["single"].classify(given()),
                 lambda: models["embedder"].predict(given(), verbose=0),
                 lambda: models["single"].fit(given(), [0, 1, 0, 1], verbose=0)):
        with pytest.raises(ValidationError) as raised:
            call()
        message = str(raised.value)
        assert message.startswith(f"x: {shown}") and expected in message and "\n" not in message, message
    with pytest.raises(ValidationError, match=r"^texts_b: got a generator, "):
        models["single"].predict((TEXTS, (text for text in TEXTS)), verbose=0)


def test_a_dict_that_is_not_the_encoders_inputs_is_refused_naming_its_keys(models):
    # J8f: classify({"a": text}) failed 14 frames down with "Unbatching a tensor is only supported for rank >= 1".
    with pytest.raises(ValidationError) as raised:
        models["single"].classify({"a": TEXTS[0]})
    assert str(raised.value) == ("x: a dict with the keys 'a'; a dict is taken as the encoder's inputs (input_mask, "
                                 "input_type_ids, input_word_ids): give texts as a list or 1-D array of strings, a "
                                 "pair of them, or a batched tf.data.Dataset")
    inputs = models["single"].preprocessor(tf.constant(TEXTS))  # the encoder's inputs themselves still pass
    np.testing.assert_allclose(models["single"].predict(dict(inputs), verbose=0),
                               models["single"].predict(TEXTS, verbose=0), atol=1e-6)


@pytest.mark.parametrize("vocabulary, cause", [
    (None, "the .keras file has no assets, so no vocab.txt: the vocabulary it reads at load"),
    (b"[PAD]\n[CLS]\nthe\n", "its vocab.txt in the .keras file's assets is not usable: vocabulary has no [UNK] token"),
], ids=["removed", "truncated"])
def test_a_keras_file_whose_vocabulary_is_missing_or_cut_is_refused_at_load(models, tmp_path, vocabulary, cause):
    # J11a: load_model succeeded and the first predict failed in autograph frames, with advice to do what was done;
    # J11b: refused, but the cause two lines below "A total of 1 objects could not be loaded".
    path = str(tmp_path / "m.keras")
    models["single"].predict(TEXTS[:1], verbose=0)  # built, whichever test ran first
    models["single"].save(path)
    damaged = str(tmp_path / "damaged.keras")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(damaged, "w") as target:
        for name in source.namelist():
            if not name.endswith("vocab.txt"):
                target.writestr(name, source.read(name))
            elif vocabulary is not None:
                target.writestr(name, vocabulary)
    with pytest.raises(ValueError) as raised:
        keras.saving.load_model(damaged)
    assert cause in str(raised.value).splitlines()[0]
