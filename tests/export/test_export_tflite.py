"""LiteRT export: model.tflite holds builtin ops only and gives the SavedModel's outputs (float32 within 1e-4;
int8 at under 30 % of the size, with the same labels), run by ai-edge-litert's interpreter; the tool's output; a
user's files at the output path are never deleted; a bf16 export converts from float32."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter

from official_bert import BertClassifier, BertEncoder
from official_bert.export.classifier import classifier_outputs, multi_label_outputs
from official_bert.export.saved_model import ServingSpec, export_saved_model
from official_bert.export.text import TextPacker
from official_bert.export.precision import model_in_precision
from official_bert.export.tflite import LiteRtExportError, convert_signature, export_tflite
from official_bert.io import OutputError
from official_bert.models.task_model import ENCODER_INPUTS
from official_bert.text.tokenizer_spec import TokenizerSpec
from tests.export.test_export import spread
from tests.features.test_extract_features import model, model_flags, run_cli  # noqa: F401  (model: a fixture)
from tests.finetuning.test_run_classifier import SEQ_LENGTH, tiny_config, write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABELS = ("neg", "pos", "mixed")
_BUILTIN_NAMES = {value: name for name, value in vars(schema.BuiltinOperator).items() if not name.startswith("_")}


def ops_of(path):
    """The operator names of a .tflite file, read from its flatbuffer: builtin names, or a custom op's code
    (Select TF ops are custom ops named Flex<Op>)."""
    with open(path, "rb") as f:
        model = schema.ModelT.InitFromPackedBuf(bytearray(f.read()), 0)
    names = set()
    for code in model.operatorCodes:
        builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
        names.add(code.customCode.decode() if builtin == schema.BuiltinOperator.CUSTOM else _BUILTIN_NAMES[builtin])
    return names


def export_text_classifier(export_dir, model, vocab, labels, postprocess=None):
    """`model` exported with one raw-text input, text_a, as run_classifier exports a single-sentence task."""
    tokenizer = TokenizerSpec(vocab).layer()
    packer = TextPacker(tokenizer, SEQ_LENGTH, pad_to_longest=True)
    postprocess = postprocess or classifier_outputs(labels)
    spec = ServingSpec({"text_a": tf.TensorSpec([None], tf.string)},
                       lambda call_model, text_a: postprocess(call_model(packer.pack(text_a))), postprocess,
                       (SEQ_LENGTH,), (tokenizer,))
    return export_saved_model(export_dir, model, spec)


def run_tflite(path, inputs):
    runner = Interpreter(model_path=path).get_signature_runner("serve_tensors")
    return runner(**inputs)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A classifier (random weights, a head spread so that every label occurs) large enough for weight
    quantization to matter (LiteRT leaves tensors under 1,024 values in float), exported and converted."""
    work = tmp_path_factory.mktemp("tflite")
    vocab, _ = write_model_files(str(work / "model"))
    keras.utils.set_random_seed(3)
    # Token ids drawn from the whole embedding table (LiteRT takes ids, not text), of varied lengths.
    rng = np.random.default_rng(0)
    mask = (np.arange(SEQ_LENGTH) < rng.integers(3, SEQ_LENGTH + 1, (96, 1))).astype(np.int32)
    inputs = {"input_word_ids": rng.integers(5, 4000, mask.shape).astype(np.int32) * mask, "input_mask": mask,
              "input_type_ids": np.zeros_like(mask)}
    config = tiny_config(hidden_size=64, intermediate_size=256, vocab_size=4000)
    model = spread(BertClassifier(BertEncoder(config), len(LABELS)), inputs)
    path = export_text_classifier(str(work / "export"), model, vocab, LABELS)
    lite = {q: export_tflite(str(work / "export"), str(work / q), q, text_model=False)
            for q in ("none", "dynamic_int8")}
    return dict(work=work, path=path, inputs=inputs, lite=lite)


@pytest.mark.slow
def test_model_tflite_has_builtin_ops_only_and_the_saved_models_logits(exported):
    ops = ops_of(exported["lite"]["none"].model_path)
    assert {"FULLY_CONNECTED", "GATHER", "SOFTMAX"} <= ops
    assert not [op for op in ops if op.startswith("Flex") or op not in _BUILTIN_NAMES.values()], ops
    serving = tf.saved_model.load(exported["path"]).signatures["serve_tensors"]
    expected = {k: v.numpy() for k, v in serving(**{k: tf.constant(v) for k, v in exported["inputs"].items()}).items()}
    got = run_tflite(exported["lite"]["none"].model_path, exported["inputs"])
    np.testing.assert_allclose(got["logits"], expected["logits"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(got["probabilities"], expected["probabilities"], atol=1e-5, rtol=0)
    assert list(got["label"]) == list(expected["label"])
    assert len(set(expected["label"])) == 3  # every label occurs: the label lookup is really compared


@pytest.mark.slow
def test_dynamic_int8_is_under_30_percent_of_float32_with_the_same_labels(exported):
    fp32, int8 = (exported["lite"][q].model_path for q in ("none", "dynamic_int8"))
    assert os.path.getsize(int8) <= 0.30 * os.path.getsize(fp32), (os.path.getsize(int8), os.path.getsize(fp32))
    float_labels = run_tflite(fp32, exported["inputs"])["label"]
    float_logits, int8_out = run_tflite(fp32, exported["inputs"])["logits"], run_tflite(int8, exported["inputs"])
    assert np.mean(int8_out["label"] == float_labels) >= 0.95
    error = np.abs(int8_out["logits"] - float_logits).max()
    assert 1e-4 < error < 0.05 * np.ptp(float_logits), error  # quantized (not the float file), yet close
    # The vocabulary travels with the models: an app tokenizes with it.
    assert os.path.basename(exported["lite"]["none"].assets[0]) == "vocab.txt"


@pytest.mark.slow
def test_a_multi_label_export_converts_with_its_label_names(exported, tmp_path):
    # Its "labels" output (each row's predicted names, padded with "") was a ragged boolean mask, which LiteRT's
    # builtins do not convert.
    vocab = str(exported["work"] / "model" / "vocab.txt")
    keras.utils.set_random_seed(4)
    config = tiny_config(hidden_size=64, intermediate_size=256, vocab_size=4000)
    model = spread(BertClassifier(BertEncoder(config), len(LABELS)), exported["inputs"])
    export_text_classifier(str(tmp_path / "export"), model, vocab, LABELS,
                           multi_label_outputs(LABELS, [0.5, 0.4, 0.6]))
    lite = export_tflite(str(tmp_path / "export"), str(tmp_path / "lite"), "none", text_model=False)
    served = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serve_tensors"](
        **{name: tf.constant(value) for name, value in exported["inputs"].items()})
    answers = run_tflite(lite.model_path, exported["inputs"])
    expected = [[LABELS[i] for i, on in enumerate(row) if on] for row in served["predicted"].numpy()]
    assert len({len(row) for row in expected}) > 1  # rows of different counts: the padding is exercised
    assert [[name.decode() for name in row if name] for row in answers["labels"]] == expected
    np.testing.assert_allclose(answers["probabilities"], served["probabilities"].numpy(), rtol=0, atol=1e-4)


def test_a_bad_quantization_and_an_unconvertible_signature_are_named(tmp_path):
    with pytest.raises(LiteRtExportError, match="--tflite_quantization=int4: expected one of none, dynamic_int8"):
        convert_signature(str(tmp_path), "serve_tensors", "int4")
    module = tf.Module()
    module.f = tf.function(lambda s: {"n": tf.strings.to_number(s)}, input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path / "sm"), signatures={"serve_tensors": module.f.get_concrete_function()})
    with pytest.raises(LiteRtExportError, match=r"cannot convert serve_tensors \(.*tf\.StringToNumber"):
        convert_signature(str(tmp_path / "sm"), "serve_tensors")
    with pytest.raises(LiteRtExportError, match="no saved_model.pb in it"):
        export_tflite(str(tmp_path), str(tmp_path / "lite"))
    assert not os.path.exists(tmp_path / "lite")


@pytest.mark.slow
def test_the_tool_converts_the_newest_version_prints_sizes_and_writes_the_text_model(exported, tmp_path):
    result = subprocess.run([sys.executable, os.path.join(REPO, "export_tflite.py"),
                             f"--saved_model_dir={exported['work'] / 'export'}", f"--output_dir={tmp_path / 'lite'}",
                             "--tflite_quantization=float16"],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"converted {exported['path']} (float16):" in result.stdout
    assert f"{tmp_path / 'lite' / 'model.tflite'}  0." in result.stdout
    # The raw-text model: the tokenizer's string, hash-table and ragged ops as Select TF ops (custom Flex<Op>s),
    # the rest builtin; no op the converter had to leave out (tf.LowerBound was one until the tokenizer's
    # lookups became UpperBound).
    text_ops = ops_of(str(tmp_path / "lite" / "text_model.tflite"))
    assert "FlexHashTableV2" in text_ops and "FULLY_CONNECTED" in text_ops
    assert not any("LowerBound" in name for name in text_ops)
    half = os.path.getsize(tmp_path / "lite" / "model.tflite")
    assert 0.4 < half / os.path.getsize(exported["lite"]["none"].model_path) < 0.6
    np.testing.assert_allclose(run_tflite(str(tmp_path / "lite" / "model.tflite"), exported["inputs"])["logits"],
                               run_tflite(exported["lite"]["none"].model_path, exported["inputs"])["logits"],
                               atol=0.05, rtol=0.01)


@pytest.mark.slow
def test_extract_features_converts_its_embedding_export(model, tmp_path):  # noqa: F811  (the fixture)
    result = run_cli(*model_flags(model), f"--export_dir={tmp_path / 'export'}", "--layers=-1", "--pooling=mean",
                     "--normalize", f"--export_tflite_dir={tmp_path / 'lite'}", "--tflite_quantization=none")
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"wrote the LiteRT {tmp_path / 'lite' / 'model.tflite'} and {tmp_path / 'lite' / 'text_model.tflite'}" in result.stdout
    rng = np.random.default_rng(0)
    mask = (np.arange(12) < rng.integers(3, 13, (5, 1))).astype(np.int32)
    inputs = {"input_word_ids": rng.integers(5, 21, mask.shape).astype(np.int32) * mask, "input_mask": mask,
              "input_type_ids": np.zeros_like(mask)}
    serving = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serve_tensors"]
    expected = serving(**{k: tf.constant(v) for k, v in inputs.items()})["embedding"].numpy()
    np.testing.assert_allclose(run_tflite(str(tmp_path / "lite" / "model.tflite"), inputs)["embedding"], expected,
                               atol=1e-5)
    assert not [op for op in ops_of(str(tmp_path / "lite" / "model.tflite")) if op not in _BUILTIN_NAMES.values()]
    refused = run_cli(*model_flags(model), f"--export_tflite_dir={tmp_path / 'lite2'}")
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith("--export_tflite_dir converts the --export_dir SavedModel: pass "
                                           "--export_dir too")


def export_small_model(export_dir):
    """A SavedModel of export_saved_model small enough to convert in a second: a Dense over the summed inputs."""
    inputs = {name: keras.Input((4,), dtype="int32", name=name) for name in ENCODER_INPUTS}
    total = keras.layers.Add()([keras.ops.cast(x, "float32") for x in inputs.values()])
    model = keras.Model(inputs, keras.layers.Dense(2)(total))

    def pack(text):
        ids = tf.strings.unicode_decode(text, "UTF-8").to_tensor(shape=[None, 4])
        return {"input_word_ids": ids, "input_mask": tf.sign(ids), "input_type_ids": tf.zeros_like(ids)}

    spec = ServingSpec({"text": tf.TensorSpec([None], tf.string)}, lambda call, text: {"logits": call(pack(text))},
                       lambda logits: {"logits": logits}, input_shape=(4,))
    return export_saved_model(export_dir, model, spec)


def test_a_users_files_at_the_output_path_are_refused_before_the_conversion_and_kept(tmp_path):
    source = export_small_model(str(tmp_path / "export"))
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("the user's")
    with pytest.raises(OutputError) as refused:
        export_tflite(source, str(taken))
    assert str(refused.value) == (f"{taken} holds files this tool did not write (notes.txt): they are left as they "
                                  "are; move them, or choose a new directory")
    assert os.listdir(taken) == ["notes.txt"] and (taken / "notes.txt").read_text() == "the user's"
    (tmp_path / "model.tflite").write_text("a file of the user's")
    with pytest.raises(OutputError, match=r"model\.tflite is a file; expected a directory \(the file is left as it "
                                          r"is\)$"):
        export_tflite(source, str(tmp_path / "model.tflite"))
    assert (tmp_path / "model.tflite").read_text() == "a file of the user's"
    assert sorted(os.listdir(tmp_path)) == ["export", "model.tflite", "taken"]  # no temporary left either


def test_an_earlier_output_is_replaced_whole_and_one_the_user_added_to_is_refused(tmp_path):
    source = export_small_model(str(tmp_path / "export"))
    lite = tmp_path / "lite"
    export_tflite(source, str(lite))
    assert {"model.tflite", "text_model.tflite"} <= set(os.listdir(lite))
    export_tflite(source, str(lite), text_model=False)  # a rerun over its own output, which it replaces whole
    assert sorted(os.listdir(lite)) == [".official_bert.written", "model.tflite"]
    assert ops_of(str(lite / "model.tflite")) >= {"FULLY_CONNECTED"}
    (lite / "labels.txt").write_text("the user's")
    with pytest.raises(OutputError, match=r"lite holds files this tool did not write \(labels\.txt\)"):
        export_tflite(source, str(lite))
    assert (lite / "labels.txt").read_text() == "the user's" and (lite / "model.tflite").exists()


def test_the_tool_refuses_a_file_at_output_dir_in_one_line(tmp_path):
    source = export_small_model(str(tmp_path / "export"))
    (tmp_path / "lite").write_bytes(b"keep me")
    result = subprocess.run([sys.executable, os.path.join(REPO, "export_tflite.py"), f"--saved_model_dir={source}",
                             f"--output_dir={tmp_path / 'lite'}"], capture_output=True, text=True, cwd=REPO,
                            timeout=300)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (f"export_tflite: error: --output_dir={tmp_path / 'lite'} is a file; "
                                              "expected a directory (a new or existing one)")
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert (tmp_path / "lite").read_bytes() == b"keep me"


@pytest.mark.slow
def test_a_bf16_export_stores_bf16_weights_and_converts_from_its_float32_twin(tmp_path):
    vocab, _ = write_model_files(str(tmp_path / "model"))
    keras.utils.set_random_seed(3)
    rng = np.random.default_rng(1)
    mask = (np.arange(SEQ_LENGTH) < rng.integers(3, SEQ_LENGTH + 1, (24, 1))).astype(np.int32)
    inputs = {"input_word_ids": rng.integers(5, 30, mask.shape).astype(np.int32) * mask, "input_mask": mask,
              "input_type_ids": np.zeros_like(mask)}
    model = spread(BertClassifier(BertEncoder(tiny_config()), len(LABELS)), inputs)
    fp32 = export_text_classifier(str(tmp_path / "fp32"), model, vocab, LABELS)
    bf16_model = model_in_precision(model, "bf16")
    bf16 = export_text_classifier(str(tmp_path / "bf16"), bf16_model, vocab, LABELS)
    expected, served_bf16 = ({k: v.numpy() for k, v in tf.saved_model.load(path).signatures["serve_tensors"](
        **{k: tf.constant(v) for k, v in inputs.items()}).items()} for path in (fp32, bf16))
    assert np.abs(served_bf16["logits"] - expected["logits"]).max() > 0  # the export does compute in bfloat16
    # Converted as it is, its bfloat16 ops have no builtin kernel.
    with pytest.raises(LiteRtExportError, match="ops without a LiteRT builtin"):
        convert_signature(bf16, "serve_tensors")
    written = export_tflite(str(tmp_path / "bf16"), str(tmp_path / "lite"))
    assert written.text_problem is None and os.path.exists(written.text_model_path)
    assert not [op for op in ops_of(written.model_path) if op not in _BUILTIN_NAMES.values()]
    got = run_tflite(written.model_path, inputs)
    # float32 throughout, with the export's weights (the encoder's stored rounded to bfloat16): the logits of the
    # float32 model holding those weights (bf16's 8-bit mantissa would be ~1e-2 of them off), its labels.
    rounded = BertClassifier(BertEncoder(tiny_config()), len(LABELS))
    rounded.set_weights([tf.cast(w, tf.float32).numpy() for w in bf16_model.weights])
    want = np.asarray(rounded(inputs))
    scale = np.abs(want).max()
    np.testing.assert_allclose(got["logits"], want, atol=1e-5 * scale, rtol=0)
    np.testing.assert_allclose(got["logits"], served_bf16["logits"], atol=2 ** -7 * scale, rtol=0)
    assert list(got["label"]) == [LABELS[i].encode() for i in want.argmax(-1)] and len(set(got["label"])) > 1
    # The export stores its weights as bfloat16: about half the float32 export's size on disk.
    size = {name: sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(tmp_path / name / "1" /
                                                                                           "variables") for f in files)
            for name in ("fp32", "bf16")}
    assert 0.45 < size["bf16"] / size["fp32"] < 0.55, size
