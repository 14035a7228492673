"""The TF Hub pair (preprocess + encoder SavedModels): loaded in a fresh process with TensorFlow alone, their
tokenization and packing are the Python pipeline's and the encoder's outputs the in-process model's; a Keras
model over both, with a Dense head, trains."""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertEncoder
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.export.tfhub import export_tfhub
from official_bert.features import TextInput, tokenize_input
from official_bert.tokenization import FullTokenizer
from tests.features.test_extract_features import VOCAB, tiny_config

SEQ_LENGTH = 16
PAIR_LENGTH = 10  # bert_pack_inputs' seq_length, chosen at call time
SINGLES = ["The cat sat on the mat.", "who is a big dog?", "zebra", "the cats ran on the mat , the dog sat ."]
PAIRS = [("the cat sat", "the dogs ran"), ("a big big big big dog", "a cat"), ("who?", "the mat")]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    work = tmp_path_factory.mktemp("hub")
    vocab = work / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    keras.utils.set_random_seed(5)
    encoder = BertEncoder(tiny_config())
    preprocess_dir, encoder_dir = export_tfhub(str(work / "hub"), encoder, TokenizerSpec(str(vocab)), SEQ_LENGTH)
    return dict(work=work, vocab=str(vocab), encoder=encoder, preprocess=preprocess_dir, encoder_dir=encoder_dir)


def python_inputs(tokenizer, pairs, seq_length):
    """The Python pipeline's packing (the original's), zero-padded to seq_length."""
    arrays = {name: np.zeros((len(pairs), seq_length), np.int32)
              for name in ("input_word_ids", "input_mask", "input_type_ids")}
    for row, (a, b) in enumerate(pairs):
        text = tokenize_input(TextInput(row, a, b), tokenizer, seq_length)
        arrays["input_word_ids"][row, :len(text.input_ids)] = text.input_ids
        arrays["input_mask"][row, :len(text.input_ids)] = 1
        arrays["input_type_ids"][row, :len(text.input_ids)] = text.input_type_ids
    return arrays


@pytest.mark.slow
def test_the_pair_in_a_fresh_process_is_the_python_pipeline_and_the_model(hub):
    out = hub["work"] / "served.npz"
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (in case the tokenizer uses its ops)
        assert not any(name.startswith("official_bert") for name in sys.modules)
        preprocess = tf.saved_model.load({hub["preprocess"]!r})
        encoder = tf.saved_model.load({hub["encoder_dir"]!r})
        single = preprocess(tf.constant({SINGLES!r}))
        pieces = preprocess.tokenize(tf.constant({SINGLES!r}))
        a, b = (preprocess.tokenize(tf.constant(texts)) for texts in zip(*{PAIRS!r}))
        pair = preprocess.bert_pack_inputs([a, b], seq_length={PAIR_LENGTH})
        # seq_length left out: the export's.
        default = preprocess.bert_pack_inputs([pieces])
        assert all(np.array_equal(default[k].numpy(), single[k].numpy()) for k in single)
        arrays = {{}}
        for name, inputs in (("single", single), ("pair", pair)):
            outputs = encoder(inputs)
            signature = encoder.signatures["serving_default"](**inputs)
            arrays.update({{f"{{name}}/{{k}}": v.numpy() for k, v in inputs.items()}})
            arrays.update({{f"{{name}}/{{k}}": outputs[k].numpy() for k in ("pooled_output", "sequence_output",
                                                                      "default")}})
            arrays[f"{{name}}/encoder_outputs"] = np.stack([x.numpy() for x in outputs["encoder_outputs"]])
            arrays.update({{f"{{name}}/signature/{{k}}": v.numpy() for k, v in signature.items()}})
        dropout = encoder(single, training=True)["sequence_output"].numpy()
        np.savez({str(out)!r}, dropout=dropout, **arrays)
        print(json.dumps({{"pieces": pieces.to_list(), "pieces_dtype": pieces.dtype.name,
                          "default_signature": sorted(preprocess.signatures["serving_default"](
                              tf.constant(["a"])).keys()),
                          "variables": len(encoder.variables), "trainable": len(encoder.trainable_variables),
                          "regularization_losses": len(encoder.regularization_losses)}}))
    """)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                            cwd=str(hub["work"]))
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout.strip().splitlines()[-1])
    with np.load(out) as f:
        served = {k: f[k] for k in f.files}

    tokenizer = FullTokenizer(hub["vocab"])
    # tokenize: [batch, words, pieces] int32, WordPiece of each word of the basic tokenizer.
    assert info["pieces_dtype"] == "int32"
    assert info["pieces"] == [[tokenizer.convert_tokens_to_ids(tokenizer.wordpiece_tokenizer.tokenize(word))
                               for word in tokenizer.basic_tokenizer.tokenize(text)] for text in SINGLES]
    assert info["default_signature"] == ["input_mask", "input_type_ids", "input_word_ids"]
    assert info["trainable"] == len(hub["encoder"].trainable_weights) and info["regularization_losses"] == 0
    assert info["variables"] >= info["trainable"]
    num_layers = hub["encoder"].config.num_hidden_layers
    for name, inputs in (("single", python_inputs(tokenizer, [(s, None) for s in SINGLES], SEQ_LENGTH)),
                         ("pair", python_inputs(tokenizer, PAIRS, PAIR_LENGTH))):
        for k, v in inputs.items():
            np.testing.assert_array_equal(served[f"{name}/{k}"], v, err_msg=f"{name}/{k}")
        expected = hub["encoder"](inputs, training=False)
        layers = np.stack([x.numpy() for x in expected["encoder_outputs"]])
        assert served[f"{name}/encoder_outputs"].shape[0] == num_layers
        np.testing.assert_allclose(served[f"{name}/encoder_outputs"], layers, atol=1e-5, rtol=0)
        for k in ("pooled_output", "sequence_output"):
            np.testing.assert_allclose(served[f"{name}/{k}"], expected[k].numpy(), atol=1e-5, rtol=0)
            np.testing.assert_array_equal(served[f"{name}/signature/{k}"], served[f"{name}/{k}"])
        np.testing.assert_array_equal(served[f"{name}/default"], served[f"{name}/pooled_output"])
        for i in range(num_layers):
            np.testing.assert_array_equal(served[f"{name}/signature/encoder_outputs_{i}"],
                                          served[f"{name}/encoder_outputs"][i])
    assert 1 in served["pair/input_type_ids"]  # the pairs are packed as pairs
    # training=True applies the config's dropout.
    assert np.abs(served["dropout"] - served["single/sequence_output"]).max() > 1e-3
    assert "vocab.txt" in os.listdir(os.path.join(hub["preprocess"], "assets"))


class LoadedSavedModel(keras.layers.Layer):
    """What hub.KerasLayer does for Keras 3: calls a SavedModel loaded with tf.saved_model.load (its weights
    stay fixed here)."""

    def __init__(self, saved_model_dir, **kwargs):
        super().__init__(**kwargs)
        self.saved_model_dir = saved_model_dir
        self._loaded = tf.saved_model.load(saved_model_dir)

    def call(self, inputs):
        return self._loaded(inputs)

    def get_config(self):
        return {**super().get_config(), "saved_model_dir": self.saved_model_dir}


@pytest.mark.slow
def test_a_keras_model_over_the_loaded_pair_trains(hub):
    text = keras.Input(shape=(), dtype="string", name="text")
    encoder_inputs = LoadedSavedModel(hub["preprocess"], name="preprocess")(text)
    sequence = LoadedSavedModel(hub["encoder_dir"], name="encoder")(encoder_inputs)["sequence_output"]
    # The token average: a random encoder's pooled outputs are nearly all alike.
    features = keras.layers.GlobalAveragePooling1D()(sequence)
    model = keras.Model(text, keras.layers.Dense(2, name="head")(features))
    model.compile(optimizer=keras.optimizers.Adam(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    texts = SINGLES + [a for a, _ in PAIRS]
    data = tf.data.Dataset.from_tensor_slices((texts, np.arange(len(texts)) % 2)).batch(len(texts))
    before = model.evaluate(data, verbose=0)
    history = model.fit(data, epochs=30, verbose=0, shuffle=False)
    assert len(history.history["loss"]) == 30
    assert model.evaluate(data, verbose=0) < 0.5 * before
    assert [w.path for w in model.trainable_weights] == ["head/kernel", "head/bias"]
