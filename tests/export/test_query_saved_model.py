"""query_saved_model.py as a client runs it: an exported classifier's answers are the model's own, the newest
version is served, no model code is imported, and bad input is a one-line error."""

import ast
import os
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest

from official_bert import BertClassifier, BertEncoder
from official_bert.classification import InputExample
from official_bert.export import export_classifier
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.tokenization import FullTokenizer
from tests.checkpoints.test_checkpoints import randomized
from tests.export.test_export import python_inputs
from tests.finetuning.test_run_classifier import SEQ_LENGTH, tiny_config, write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "query_saved_model.py")
LABELS = ("no", "maybe", "yes")
PAIRS = [("the cat sat", "the dog ran"), ("The FILM was GOOD", "a dull plot"), ("zebra xylophone", "the cat")]
# Runs the script as its own process would, then lists the official_bert and tensorflow_text modules imported.
WITH_MODULE_LIST = ("import atexit, runpy, sys; atexit.register(lambda: print('imported:', sorted(m for m in "
                    "sys.modules if m.startswith(('official_bert', 'tensorflow_text'))), file=sys.stderr)); "
                    "sys.argv[0] = {script!r}; runpy.run_path({script!r}, run_name='__main__')")
# Makes `import tensorflow_text` fail, as where it is not installed.
WITHOUT_TENSORFLOW_TEXT = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
                           "        if name.split('.')[0] == 'tensorflow_text':\n"
                           "            raise ImportError('no tensorflow_text')\nsys.meta_path.insert(0, Block())\n")


def run(*args, list_modules=False, without_tensorflow_text=False):
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    program = ["-c", WITH_MODULE_LIST.format(script=SCRIPT)] if list_modules else [SCRIPT]
    if without_tensorflow_text:
        program = ["-c", WITHOUT_TENSORFLOW_TEXT + (program[1] if list_modules else
                                                    f"sys.argv[0] = {SCRIPT!r}\nimport runpy\n"
                                                    f"runpy.run_path({SCRIPT!r}, run_name='__main__')")]
    return subprocess.run([sys.executable, *program, *args], env=env, capture_output=True, text=True, timeout=120)


def parse_output(stdout):
    """The printed blocks → one {output name: value text} per batch row."""
    rows = []
    for line in stdout.splitlines():
        if line.startswith("["):
            rows.append({})
        else:
            name, value = line.strip().split(": ", 1)
            rows[-1][name] = value
    return rows


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A tiny pair classifier exported as version 10 of an export directory whose other versions are broken, and
    its probabilities on PAIRS computed in this process."""
    work = tmp_path_factory.mktemp("query")
    vocab, _ = write_model_files(str(work / "model"))
    examples = [InputExample(f"dev-{i}", a, b, LABELS[0]) for i, (a, b) in enumerate(PAIRS)]
    _, inputs = python_inputs(FullTokenizer(vocab), examples, LABELS)
    # Weights of this seed give PAIRS different labels, with no probability near 0 or 1 for all of them.
    model = randomized(BertClassifier(BertEncoder(tiny_config()), len(LABELS)), seed=3)
    export_dir = work / "export"
    os.rename(export_classifier(str(export_dir), model, TokenizerSpec(vocab), SEQ_LENGTH, LABELS, text_b=True),
              export_dir / "10")
    # "9" sorts after "10" as text, and "11" is an export still being written (no saved_model.pb yet).
    shutil.copytree(export_dir / "10", export_dir / "9")
    (export_dir / "9" / "saved_model.pb").write_bytes(b"not a SavedModel")
    os.mkdir(export_dir / "11")
    probabilities = keras.ops.convert_to_numpy(keras.ops.softmax(model(inputs, training=False)))
    return dict(export_dir=export_dir, probabilities=probabilities)


@pytest.mark.slow
def test_outputs_are_the_models_and_only_tensorflow_serves_them(exported):
    args = [f"--saved_model_dir={exported['export_dir']}"]
    for a, b in PAIRS:
        args += [f"--input=text_a={a}", f"--input=text_b={b}"]
    result = run(*args, list_modules=True)
    assert result.returncode == 0, result.stderr[-3000:]
    imported = ast.literal_eval(result.stderr.rsplit("imported: ", 1)[1])
    assert "official_bert.tools.cli" in imported and "tensorflow_text" not in imported  # a core-ops export
    # No model or in-graph tokenizer code, which would hide a SavedModel that is not self-contained (the Python
    # tokenizer, which cli's casing check uses, lives in official_bert.text too).
    assert not [name for name in imported if name.split(".")[1:2] in (
        ["models"], ["networks"], ["layers"], ["export"], ["checkpoints"])
        or (name.startswith("official_bert.text.") and name != "official_bert.text.tokenization")]

    rows = parse_output(result.stdout)
    assert [sorted(row) for row in rows] == [["label", "logits", "probabilities"]] * len(PAIRS)
    probabilities = [[float(p) for p in row["probabilities"].strip("[]").split(", ")] for row in rows]
    np.testing.assert_allclose(probabilities, exported["probabilities"], atol=1e-4)
    labels = [LABELS[i] for i in np.argmax(exported["probabilities"], axis=1)]
    assert [row["label"] for row in rows] == labels and len(set(labels)) > 1


@pytest.mark.parametrize("case, args, message", [
    ("no directory", ["--saved_model_dir={work}/missing"], "--saved_model_dir={work}/missing: no such directory"),
    ("no SavedModel", ["--saved_model_dir={work}/export/11"],
     "--saved_model_dir={work}/export/11: no saved_model.pb in it, nor in a numbered version directory"),
    ("unknown signature", ["--signature=predict"], "--signature=predict: {work}/export/10 has no such signature; it "
                                                   "has serve_examples, serve_tensors, serving_default"),
    ("unknown input", ["--input=text_a=a", "--input=question=b"],
     "--input=question=b: serving_default has no input 'question'; it takes text_a (string [None]), "
     "text_b (string [None])"),
    ("missing input", ["--input=text_a=a"],
     "no --input for text_b; --signature=serving_default takes text_a (string [None]), text_b (string [None])"),
    ("uneven batch", ["--input=text_a=a", "--input=text_a=b", "--input=text_b=c"],
     "every input needs the same number of values (one per batch row); got 2 for text_a, 1 for text_b"),
])
@pytest.mark.slow
def test_bad_input_is_a_one_line_error(exported, case, args, message):
    work = exported["export_dir"].parent
    if not any(arg.startswith("--saved_model_dir") for arg in args):
        args = [f"--saved_model_dir={exported['export_dir']}", *args]
    result = run(*(arg.format(work=work) for arg in args))
    assert result.returncode == 1
    assert result.stderr.rstrip().splitlines()[-1] == "query_saved_model: error: " + message.format(work=work)
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_tensorflow_text_is_loaded_only_for_an_export_that_uses_its_ops(exported, tmp_path):
    vocab, _ = write_model_files(str(tmp_path / "model"))
    model = randomized(BertClassifier(BertEncoder(tiny_config()), len(LABELS)), seed=3)
    path = export_classifier(str(tmp_path / "export"), model, TokenizerSpec(vocab, ops="tf_text"), SEQ_LENGTH,
                             LABELS, text_b=True)
    args = [f"--saved_model_dir={path}"]
    for a, b in PAIRS:
        args += [f"--input=text_a={a}", f"--input=text_b={b}"]
    result = run(*args, list_modules=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "tensorflow_text" in ast.literal_eval(result.stderr.rsplit("imported: ", 1)[1])
    probabilities = [[float(p) for p in row["probabilities"].strip("[]").split(", ")]
                     for row in parse_output(result.stdout)]
    np.testing.assert_allclose(probabilities, exported["probabilities"], atol=1e-4)  # the same weights and inputs

    missing = run(*args, without_tensorflow_text=True)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.rstrip().splitlines()[-1] == (
        f"query_saved_model: error: {path}: the SavedModel uses the op FastWordpieceTokenizeWithOffsets, which is "
        "not TensorFlow's: it needs tensorflow-text, which cannot be imported here (pip install tensorflow-text)")
    served = run(f"--saved_model_dir={exported['export_dir']}", "--input=text_a=a", "--input=text_b=b",
                 without_tensorflow_text=True)
    assert served.returncode == 0, served.stderr[-3000:]
