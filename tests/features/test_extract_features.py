"""extract_features.py against the original's algorithm: its input reading, features and JSON writer transcribed
below, run on the encoder's own `encoder_outputs`; the npz and tfrecord outputs; pooling; streaming; errors."""

import collections
import itertools
import json
import os
import re
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder, save_checkpoint
from official_bert.features import (FeatureError, FeatureExtractor, JsonlWriter, TextInput, jsonl_record,
                                    open_writer, parse_feature_example, parse_layers, read_inputs, round6,
                                    tokenize_input)
from official_bert.features.extractor import Extracted
from official_bert.tokenization import FullTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "extract_features.py")
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "?", "the", "a", "cat", "dog", "sat", "ran", "on",
         "mat", "big", "##s", "is", "who", "猫"]
SEQ_LENGTH = 12
LAYERS = [-1, -3, 0]
# Singles, pairs (one that the last " ||| " splits, one truncated from its longer side), a blank line, an
# unknown word, a text longer than SEQ_LENGTH, and a non-ASCII token (JSON escapes it).
LINES = ["The cat sat on the mat.", "who is a big dog? ||| the dogs ran", "a ||| b ||| the cat",
         "", "zebra cat", "the cat sat on the mat , the dog sat on the mat .", "the 猫 sat",
         "the big big big big dog ||| a cat sat on a mat"]


def tiny_config():
    return BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=32)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A random tiny encoder saved as a Google checkpoint with its vocabulary, and the input file."""
    work = tmp_path_factory.mktemp("extract")
    keras.utils.set_random_seed(3)
    encoder = BertEncoder(tiny_config())
    save_checkpoint(encoder, str(work / "model"), format="google")
    (work / "model" / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (work / "input.txt").write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    return dict(work=work, encoder=encoder, vocab=str(work / "model" / "vocab.txt"), input=str(work / "input.txt"))


# --- The original extract_features.py, transcribed: read_examples, convert_examples_to_features, the writer. ---

def original_read_examples(input_file):
    examples = []
    with open(input_file, encoding="utf-8") as reader:
        for unique_id, line in enumerate(reader):
            line = line.strip()
            m = re.match(r"^(.*) \|\|\| (.*)$", line)
            examples.append((unique_id, line, None) if m is None else (unique_id, m.group(1), m.group(2)))
    return examples


def original_features(examples, seq_length, tokenizer):
    features = []
    for unique_id, text_a, text_b in examples:
        tokens_a = tokenizer.tokenize(text_a)
        tokens_b = tokenizer.tokenize(text_b) if text_b else None
        if tokens_b:
            while len(tokens_a) + len(tokens_b) > seq_length - 3:
                (tokens_a if len(tokens_a) > len(tokens_b) else tokens_b).pop()
        elif len(tokens_a) > seq_length - 2:
            tokens_a = tokens_a[0:seq_length - 2]
        tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
        input_type_ids = [0] * len(tokens)
        if tokens_b:
            tokens += tokens_b + ["[SEP]"]
            input_type_ids += [1] * (len(tokens_b) + 1)
        input_ids = tokenizer.convert_tokens_to_ids(tokens)
        input_mask = [1] * len(input_ids)
        padding = [0] * (seq_length - len(input_ids))
        features.append((unique_id, tokens, input_ids + padding, input_mask + padding, input_type_ids + padding))
    return features


def original_json_line(unique_id, tokens, layer_indexes, layer_outputs):
    """The original's writer: `layer_outputs[j]` is layer_indexes[j]'s output [seq_length, H] for this input."""
    output_json = collections.OrderedDict()
    output_json["linex_index"] = unique_id
    all_features = []
    for (i, token) in enumerate(tokens):
        all_layers = []
        for (j, layer_index) in enumerate(layer_indexes):
            layer_output = layer_outputs[j]
            layers = collections.OrderedDict()
            layers["index"] = layer_index
            layers["values"] = [round(float(x), 6) for x in layer_output[i:(i + 1)].flat]
            all_layers.append(layers)
        features = collections.OrderedDict()
        features["token"] = token
        features["layers"] = all_layers
        all_features.append(features)
    output_json["features"] = all_features
    return json.dumps(output_json)


def original_run(encoder, vocab, input_file, layer_indexes):
    """The original pipeline: features padded to SEQ_LENGTH, one forward pass, then its writer per input."""
    features = original_features(original_read_examples(input_file), SEQ_LENGTH, FullTokenizer(vocab))
    inputs = {name: np.array([f[k] for f in features], np.int32)
              for k, name in ((2, "input_word_ids"), (3, "input_mask"), (4, "input_type_ids"))}
    all_layers = [x.numpy() for x in encoder(inputs, training=False)["encoder_outputs"]]
    return features, all_layers, [original_json_line(f[0], f[1], layer_indexes,
                                                     [all_layers[layer][row] for layer in layer_indexes])
                                  for row, f in enumerate(features)]


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, SCRIPT, *args], env=env, capture_output=True, text=True, timeout=300)


def model_flags(model):
    directory = model["work"] / "model"
    return [f"--bert_config_file={directory / 'bert_config.json'}", f"--vocab_file={model['vocab']}",
            f"--init_checkpoint={directory}", f"--max_seq_length={SEQ_LENGTH}"]


def assert_same_json(ours, theirs, atol):
    """Same keys in the same order, same tokens and layer indexes, values within `atol`."""
    ours, theirs = json.loads(ours), json.loads(theirs)
    assert list(ours) == list(theirs) == ["linex_index", "features"]
    assert ours["linex_index"] == theirs["linex_index"]
    assert [f["token"] for f in ours["features"]] == [f["token"] for f in theirs["features"]]
    for a, b in zip(ours["features"], theirs["features"]):
        assert list(a) == ["token", "layers"] and [list(x) for x in a["layers"]] == [["index", "values"]] * len(LAYERS)
        assert [x["index"] for x in a["layers"]] == [x["index"] for x in b["layers"]] == LAYERS
        np.testing.assert_allclose([x["values"] for x in a["layers"]], [x["values"] for x in b["layers"]], atol=atol,
                                   rtol=0)


def test_cli_writes_the_originals_jsonl(model):
    out = model["work"] / "features.jsonl"
    result = run_cli(f"--input_file={model['input']}", f"--output_file={out}", f"--layers={','.join(map(str, LAYERS))}",
                     "--batch_size=3", *model_flags(model))
    assert result.returncode == 0, result.stderr
    assert f"{len(LINES)} inputs" in result.stdout
    ours = out.read_text().splitlines()
    features, _, theirs = original_run(model["encoder"], model["vocab"], model["input"], LAYERS)
    assert len(ours) == len(theirs) == len(LINES)
    # Pairs, the truncated texts and the blank line are in there, as the original makes them.
    assert any(1 in f[4] for f in features) and max(len(f[1]) for f in features) == SEQ_LENGTH
    assert features[3][1] == ["[CLS]", "[SEP]"] and features[2][1][:3] == ["[CLS]", "a", "[UNK]"]
    assert "\\u732b" in ours[6]  # JSON's escaping of "猫", as json.dumps writes it
    for line_ours, line_theirs in zip(ours, theirs):
        # Each batch is padded to its longest text, not to SEQ_LENGTH: float rounding may move the 6th decimal.
        assert_same_json(line_ours, line_theirs, atol=2e-6)


def test_jsonl_record_is_the_originals_line_byte_for_byte():
    rng = np.random.default_rng(0)
    tokens = ("[CLS]", "猫", "##s", "[SEP]")
    values = (rng.normal(size=(len(tokens), len(LAYERS), 16)) * rng.choice([1e-6, 1e-4, 1, 1e3], size=16))
    values = values.astype(np.float32)
    values[0, 0, :4] = [0.0078125, -0.0234375, -1e-7, 5e-7]  # exact ties (to even), a -0.0, tiny values
    line = jsonl_record(Extracted(7, tokens, (2, 20, 17, 3), values), LAYERS)
    assert line == original_json_line(7, tokens, LAYERS, [values[:, j] for j in range(len(LAYERS))])


def test_round6_is_pythons_round_on_float32():
    rng = np.random.default_rng(1)
    x = (rng.normal(size=200_000) * 10.0 ** rng.integers(-8, 5, size=200_000)).astype(np.float32)
    x[:1000] = (rng.integers(-10**6, 10**6, size=1000) + 0.5) / 1e6  # near-ties at the 7th decimal
    x[1000:1100] = np.arange(-50, 50) / 128  # exact binary ties at the 7th decimal
    assert round6(x).tolist() == [round(float(v), 6) for v in x]
    big = np.array([3e10, -7.25e12], np.float32)  # beyond the exact fast path
    assert round6(big).tolist() == [round(float(v), 6) for v in big]


@pytest.mark.parametrize("output_format,dtype", [("npz", "float32"), ("npz", "float16"), ("tfrecord", "float32"),
                                                 ("tfrecord", "float16")])
def test_binary_outputs_hold_the_encoder_outputs(model, tmp_path, output_format, dtype):
    tokenizer = FullTokenizer(model["vocab"])
    texts = [tokenize_input(t, tokenizer, SEQ_LENGTH) for t in read_inputs(model["input"])]
    path = str(tmp_path / f"features.{output_format}")
    with open_writer(output_format, path, LAYERS, dtype) as writer:
        for extracted in FeatureExtractor(model["encoder"], LAYERS, batch_size=3).extract(texts):
            writer.write(extracted)
    if output_format == "npz":
        with np.load(path) as f:
            arrays = {k: f[k] for k in f.files}
        offsets = arrays["token_offsets"]
        assert arrays["linex_index"].tolist() == list(range(len(LINES))) and arrays["layers"].tolist() == LAYERS
        got = [dict(values=arrays["values"][a:b], tokens=arrays["tokens"][a:b].tolist(),
                    token_ids=arrays["token_ids"][a:b].tolist()) for a, b in zip(offsets[:-1], offsets[1:])]
    else:
        got = [parse_feature_example(r.numpy()) for r in tf.data.TFRecordDataset(path)]
        assert [g["linex_index"] for g in got] == list(range(len(LINES)))
    features, all_layers, _ = original_run(model["encoder"], model["vocab"], model["input"], LAYERS)
    for row, (g, f) in enumerate(zip(got, features)):
        assert g["values"].dtype == np.dtype(dtype)
        assert g["tokens"] == f[1] and g["token_ids"] == f[2][:len(f[1])]
        expected = np.stack([all_layers[layer][row, :len(f[1])] for layer in LAYERS], axis=1)
        tolerance = 1e-5 if dtype == "float32" else 2e-3 * np.abs(expected).max()
        np.testing.assert_allclose(g["values"].astype(np.float32), expected, atol=tolerance, rtol=0)


@pytest.mark.parametrize("pooling", ["cls", "mean", "max"])
@pytest.mark.parametrize("normalize", [False, True])
def test_pooled_features_are_numpys_pooling_of_the_encoder_outputs(model, pooling, normalize):
    tokenizer = FullTokenizer(model["vocab"])
    texts = [tokenize_input(t, tokenizer, SEQ_LENGTH) for t in read_inputs(model["input"])]
    extracted = list(FeatureExtractor(model["encoder"], LAYERS, pooling, normalize, batch_size=4).extract(texts))
    features, all_layers, _ = original_run(model["encoder"], model["vocab"], model["input"], LAYERS)
    for row, (e, f) in enumerate(zip(extracted, features)):
        real = np.stack([all_layers[layer][row, :len(f[1])] for layer in LAYERS])  # [L, T, H]
        expected = {"cls": real[:, 0], "mean": real.mean(axis=1), "max": real.max(axis=1)}[pooling]
        if normalize:
            expected = expected / np.linalg.norm(expected, axis=-1, keepdims=True)
        np.testing.assert_allclose(e.values, expected, atol=1e-5, rtol=0)


def test_pooled_jsonl_has_one_vector_per_layer(model):
    values = np.array([[0.5, -0.25]], np.float32)
    assert json.loads(jsonl_record(Extracted(4, ("[CLS]", "[SEP]"), (2, 3), values), [-1])) == {
        "linex_index": 4, "layers": [{"index": -1, "values": [0.5, -0.25]}]}


def test_extraction_streams_its_input(model):
    """An endless input: the first results come out after one window of batches, without reading it all."""
    tokenizer = FullTokenizer(model["vocab"])
    endless = (tokenize_input(TextInput(i, LINES[i % len(LINES)]), tokenizer, SEQ_LENGTH) for i in itertools.count())
    first = list(itertools.islice(FeatureExtractor(model["encoder"], [-1], "mean", batch_size=2).extract(endless), 5))
    assert [e.unique_id for e in first] == list(range(5))


def test_a_failed_write_leaves_no_file(tmp_path):
    path = tmp_path / "features.jsonl"
    with pytest.raises(KeyboardInterrupt):
        with JsonlWriter(str(path), [-1]) as writer:
            writer.write(Extracted(0, ("[CLS]",), (2,), np.ones((1, 1, 2), np.float32)))
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_bad_flags_and_input_name_what_is_wrong(model, tmp_path):
    with pytest.raises(FeatureError, match=r"--layers=-1,x: expected comma-separated integers"):
        parse_layers("-1,x", 3)
    with pytest.raises(FeatureError, match=r"--layers=3: layer 3 does not exist in a model of 3 layers"):
        parse_layers("3", 3)
    with pytest.raises(FeatureError, match="--normalize needs --pooling"):
        FeatureExtractor(model["encoder"], [-1], normalize=True)
    with pytest.raises(FeatureError, match="--output_format=csv: expected one of jsonl, npz, tfrecord"):
        open_writer("csv", str(tmp_path / "x"), [-1])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe\n")
    with pytest.raises(FeatureError, match=r"bad.txt:2: expected UTF-8 text"):
        list(read_inputs(str(bad)))
    result = run_cli(f"--input_file={tmp_path / 'missing.txt'}", f"--output_file={tmp_path / 'out.jsonl'}",
                     "--layers=-1", *model_flags(model))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"extract_features: error: --input_file={tmp_path / 'missing.txt'}: file not found")
    assert not (tmp_path / "out.jsonl").exists()
