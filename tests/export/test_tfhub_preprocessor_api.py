"""The `preprocess` export has TF Hub's preprocessor API (that of `bert_en_uncased_preprocess/3`): code written
for it runs unchanged, with tf.saved_model.load and with tensorflow-hub's KerasLayer in tf_keras, where a
classifier over the pair fine-tunes.

The vocabulary puts [CLS], [SEP], [PAD] and [MASK] where no BERT vocabulary has them, so that any id hard-coded
instead of read from it shows."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import unicodedata

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.export.tfhub import export_tfhub
from official_bert.text import BertPreprocessor

VOCAB = ["the", "[UNK]", "cat", "##s", "[MASK]", "sat", "on", "[SEP]", "mat", "dog", "a", "[CLS]", "big", "ran",
         ",", ".", "?", "!", "who", "is", "[PAD]", "zeb", "##ra", "hello", "wor", "##ld", "h", "##i"]
SEQ_LENGTH = 12  # the export's
PAIR_LENGTH = 9  # bert_pack_inputs' seq_length, chosen at call time
TEXTS = ["Héllo, the wörld!", "the cats sat on a mat.", "who is a big dog?", "zebra", "hi the dogs ran", ""]
EPOCHS = 30  # of full-batch fine-tuning in the tf_keras + TF Hub test
SPECIAL_KEYS = ["end_of_segment_id", "mask_id", "padding_id", "start_of_sequence_id", "vocab_size"]


def expected_special_tokens():
    return {"vocab_size": len(VOCAB), "start_of_sequence_id": VOCAB.index("[CLS]"),
            "end_of_segment_id": VOCAB.index("[SEP]"), "padding_id": VOCAB.index("[PAD]"),
            "mask_id": VOCAB.index("[MASK]")}


def write_vocab(directory):
    path = os.path.join(str(directory), "vocab.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB) + "\n")
    return path


def as_ints(special):
    """get_special_tokens_dict()'s tensors → Python ints, after checking that each is an int32 scalar."""
    for key, value in special.items():
        assert value.dtype == tf.int32 and value.shape == (), (key, value)
    return {key: int(value) for key, value in special.items()}


def test_special_tokens_dict_holds_the_vocabularys_ids(tmp_path):
    preprocessor = BertPreprocessor(TokenizerSpec(write_vocab(tmp_path)).layer(), seq_length=SEQ_LENGTH)
    assert sorted(preprocessor.tokenize.get_special_tokens_dict()) == SPECIAL_KEYS
    assert as_ints(preprocessor.tokenize.get_special_tokens_dict()) == expected_special_tokens()
    assert as_ints(preprocessor.tokenize_with_offsets.get_special_tokens_dict()) == expected_special_tokens()
    packed = preprocessor.bert_pack_inputs([tf.ragged.constant([[2, 3]], tf.int32)])
    cls, sep, pad = (expected_special_tokens()[k] for k in ("start_of_sequence_id", "end_of_segment_id",
                                                              "padding_id"))
    assert packed["input_word_ids"].numpy().tolist() == [[cls, 2, 3, sep] + [pad] * (SEQ_LENGTH - 4)]


@pytest.fixture(scope="module")
def hub_pair(tmp_path_factory):
    work = tmp_path_factory.mktemp("hub_api")
    vocab = write_vocab(work)
    keras.utils.set_random_seed(3)
    encoder = BertEncoder(BertConfig.from_preset("tiny", vocab_size=len(VOCAB), num_hidden_layers=1))
    preprocess_dir, encoder_dir = export_tfhub(str(work / "hub"), encoder, TokenizerSpec(vocab), SEQ_LENGTH)
    return dict(work=work, vocab=vocab, preprocess=preprocess_dir, encoder=encoder_dir)


@pytest.mark.slow
def test_the_loaded_preprocess_has_tf_hubs_api(hub_pair):
    preprocess = tf.saved_model.load(hub_pair["preprocess"])
    texts = tf.constant(TEXTS)
    for tokenize in (preprocess.tokenize, preprocess.tokenize_with_offsets):
        assert sorted(tokenize.get_special_tokens_dict()) == SPECIAL_KEYS
        assert as_ints(tokenize.get_special_tokens_dict()) == expected_special_tokens()

    tokens = preprocess.tokenize(texts)
    assert tokens.dtype == tf.int32 and tokens.ragged_rank == 2
    # seq_length left out: the export's, as preprocess(text) packs.
    default = preprocess.bert_pack_inputs([tokens])
    assert default["input_word_ids"].shape == (len(TEXTS), SEQ_LENGTH)
    for name, ids in preprocess(texts).items():
        np.testing.assert_array_equal(default[name].numpy(), ids.numpy(), err_msg=name)

    # Segments of rank 2 ([batch, (tokens)]) pack as those of rank 3, alone, paired or mixed.
    a, b = tokens, preprocess.tokenize(tf.constant(TEXTS[::-1]))
    flat_a, flat_b = a.merge_dims(1, 2), b.merge_dims(1, 2)
    pair = preprocess.bert_pack_inputs([a, b], seq_length=PAIR_LENGTH)
    assert pair["input_word_ids"].shape == (len(TEXTS), PAIR_LENGTH) and 1 in pair["input_type_ids"].numpy()
    for segments, seq_length in (([flat_a, flat_b], PAIR_LENGTH), ([a, flat_b], tf.constant(PAIR_LENGTH)),
                                 ([flat_a, b], PAIR_LENGTH)):
        packed = preprocess.bert_pack_inputs(segments, seq_length=seq_length)
        for name in pair:
            np.testing.assert_array_equal(packed[name].numpy(), pair[name].numpy(), err_msg=name)
    np.testing.assert_array_equal(preprocess.bert_pack_inputs([flat_a])["input_word_ids"].numpy(),
                                  default["input_word_ids"].numpy())

    # tokenize_with_offsets: tokenize's tokens, and the byte span of each in the input string.
    tokens_too, starts, limits = preprocess.tokenize_with_offsets(texts)
    assert tokens_too.to_list() == tokens.to_list()
    assert starts.dtype == limits.dtype == tf.int64 and starts.ragged_rank == limits.ragged_rank == 2
    for text, row, row_starts, row_limits in zip(TEXTS, tokens.to_list(), starts.to_list(), limits.to_list()):
        for ids, word_starts, word_limits in zip(row, row_starts, row_limits):
            for token_id, start, limit in zip(ids, word_starts, word_limits):
                if VOCAB[token_id] != "[UNK]":
                    assert normalized(text.encode()[start:limit].decode()) == VOCAB[token_id].removeprefix("##")
    word = tokens.to_list()[0].index([VOCAB.index("wor"), VOCAB.index("##ld")])
    assert (starts[0][word].numpy().tolist(), limits[0][word].numpy().tolist()) == ([12, 16], [16, 18])
    # As tensorflow-text's BertTokenizer.tokenize_with_offsets, where lowercasing keeps the bytes (after an
    # accent, its offsets are into the text it normalized: tensorflow/tensorflow#45684).
    tf_text = pytest.importorskip("tensorflow_text")
    reference = tf_text.BertTokenizer(hub_pair["vocab"], token_out_type=tf.int32, lower_case=True)
    assert reference.tokenize(texts).to_list() == tokens.to_list()
    ascii_texts = tf.constant([t for t in TEXTS if t.isascii()])
    for ours, theirs in zip(preprocess.tokenize_with_offsets(ascii_texts),
                            reference.tokenize_with_offsets(ascii_texts)):
        assert ours.to_list() == theirs.to_list()


def normalized(text):
    """The original's do_lower_case: lowercase, NFD, accents (Mn) dropped."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")


@pytest.mark.slow
def test_a_tf_keras_classifier_over_hub_keras_layers_fine_tunes(hub_pair):
    for package in ("tensorflow_hub", "tf_keras"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (pip install -r requirements-dev.txt)")
    # A new process with tf_keras as tf.keras, and neither official_bert nor tensorflow-text imported.
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        import tensorflow as tf
        import tensorflow_hub as hub
        import tf_keras

        # Seeded (the Dense head's init, dropout) and at a learning rate without the loss spikes 3e-3 gave on
        # six examples, so that the loss-falls check does not hang on the draw.
        tf_keras.utils.set_random_seed(0)
        preprocess = hub.load({hub_pair["preprocess"]!r})
        encoder = hub.load({hub_pair["encoder"]!r})
        special = {{k: int(v) for k, v in preprocess.tokenize.get_special_tokens_dict().items()}}

        # One segment: the preprocess model itself.
        text = tf_keras.layers.Input(shape=(), dtype=tf.string)
        single = tf_keras.Model(text, hub.KerasLayer(preprocess)(text))
        single_ids = single(tf.constant({TEXTS!r}))["input_word_ids"]

        # Pairs: tokenize, bert_pack_inputs with a seq_length of its own, the encoder fine-tuned.
        text_a = tf_keras.layers.Input(shape=(), dtype=tf.string, name="a")
        text_b = tf_keras.layers.Input(shape=(), dtype=tf.string, name="b")
        tokenize = hub.KerasLayer(preprocess.tokenize)
        pack = hub.KerasLayer(preprocess.bert_pack_inputs, arguments=dict(seq_length={PAIR_LENGTH}))
        encoder_inputs = pack([tokenize(text_a), tokenize(text_b)])
        encoder_layer = hub.KerasLayer(encoder, trainable=True)
        pooled = encoder_layer(encoder_inputs)["pooled_output"]
        model = tf_keras.Model([text_a, text_b], tf_keras.layers.Dense(2)(pooled))
        model.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                      loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        a, b = tf.constant({TEXTS!r}), tf.constant({TEXTS[::-1]!r})
        labels = tf.constant(np.arange({len(TEXTS)}) % 2)
        pair_ids = pack([tokenize(a), tokenize(b)])["input_word_ids"]
        encoder_weights = [w.numpy() for w in encoder_layer.trainable_weights]
        before = model.evaluate([a, b], labels, verbose=0)
        history = model.fit([a, b], labels, epochs={EPOCHS}, batch_size={len(TEXTS)}, verbose=0, shuffle=False)
        after = model.evaluate([a, b], labels, verbose=0)
        changed = sum(not np.array_equal(w0, w.numpy()) for w0, w in zip(encoder_weights,
                                                                           encoder_layer.trainable_weights))
        print(json.dumps({{
            "tensorflow_text": "tensorflow_text" in sys.modules,
            "official_bert": sorted(m for m in sys.modules if m.startswith("official_bert")),
            "keras": tf.keras.__name__, "special": special,
            "single_ids": single_ids.numpy().tolist(), "pair_ids": pair_ids.numpy().tolist(),
            "before": before, "after": after, "losses": history.history["loss"],
            "trainable": len(model.trainable_weights), "encoder_trainable": len(encoder_layer.trainable_weights),
            "changed": int(changed)}}))
    """)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                            cwd=str(hub_pair["work"]))
    assert result.returncode == 0, result.stderr[-5000:]
    info = json.loads(result.stdout.strip().splitlines()[-1])

    assert not info["tensorflow_text"] and info["official_bert"] == []
    assert info["keras"].startswith("tf_keras")
    assert info["special"] == expected_special_tokens()
    preprocess = tf.saved_model.load(hub_pair["preprocess"])
    assert info["single_ids"] == preprocess(tf.constant(TEXTS))["input_word_ids"].numpy().tolist()
    a, b = preprocess.tokenize(tf.constant(TEXTS)), preprocess.tokenize(tf.constant(TEXTS[::-1]))
    expected_pairs = preprocess.bert_pack_inputs([a, b], seq_length=PAIR_LENGTH)["input_word_ids"]
    assert info["pair_ids"] == expected_pairs.numpy().tolist()
    # The encoder's weights are the model's and train: every one moved, and the loss fell.
    assert info["encoder_trainable"] > 2 and info["trainable"] == info["encoder_trainable"] + 2
    assert info["changed"] == info["encoder_trainable"]
    assert len(info["losses"]) == EPOCHS and info["losses"][-1] < info["losses"][0]
    assert info["after"] < 0.5 * info["before"], {k: info[k] for k in ("before", "after", "losses")}
