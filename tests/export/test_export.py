"""The SavedModel export: its three signatures against the Python pipeline, versions, and serving it with only
TensorFlow and tensorflow-text (saved_model_cli, in a process that never imports official_bert)."""

import os
import shutil
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, BertMultipleChoice
from official_bert.text import sentencepiece_tokenizer
from official_bert.classification import InputExample, MultipleChoiceExample, convert_single_example
from official_bert.classification.records import serialize_features
from official_bert.export import SIGNATURES, export_classifier, versions, write_new_version
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.tokenization import FullTokenizer
from tests.finetuning.test_run_classifier import SEQ_LENGTH, tiny_config, write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Pairs that exercise the packing: plain, cased, unknown words, a second text that is empty or tokenizes to
# nothing (packed as a single sentence), and pairs too long for SEQ_LENGTH (truncated from the longer side).
PAIRS = [("the cat sat", "the dog ran"), ("The FILM was GOOD", "a dull plot"), ("zebra xylophone", "the cat"),
         ("good movie", ""), ("good movie", "\u200b"),
         ("the cat sat " * 5, "the dog ran"), ("a dog", "the very good movie is not dull " * 3)]
LABELS = ("no", "yes")


def python_inputs(tokenizer, examples, label_list):
    """Examples packed by the Python code the training data comes from: the features and the model's inputs."""
    features = [convert_single_example(e, label_list, SEQ_LENGTH, tokenizer) for e in examples]
    inputs = {name: np.array([getattr(f, field) for f in features], np.int32) for name, field in (
        ("input_word_ids", "input_ids"), ("input_mask", "input_mask"), ("input_type_ids", "segment_ids"))}
    return features, inputs


def logits_of(model, inputs):
    return keras.ops.convert_to_numpy(model(inputs, training=False))


def spread(model, inputs):
    """Gives a freshly initialized model's head large weights centred on `inputs`, whose predictions then differ
    (a random encoder's pooled outputs are all alike)."""
    head = model.get_layer("classifier")
    head.kernel.assign(np.random.default_rng(0).normal(0, 20, head.kernel.shape))
    head.bias.assign(-np.median(logits_of(model, inputs).reshape(-1, head.bias.shape[0]), axis=0))
    return model


@pytest.fixture(scope="module")
def pair_export(tmp_path_factory):
    """A tiny pair classifier (random weights) exported once, with the Python pipeline's logits on PAIRS."""
    work = tmp_path_factory.mktemp("pair_export")
    vocab, _ = write_model_files(str(work / "model"))
    keras.utils.set_random_seed(1)
    examples = [InputExample(f"test-{i}", a, b, LABELS[0]) for i, (a, b) in enumerate(PAIRS)]
    features, inputs = python_inputs(FullTokenizer(vocab), examples, LABELS)
    model = spread(BertClassifier(BertEncoder(tiny_config()), len(LABELS)), inputs)
    path = export_classifier(str(work / "export"), model, TokenizerSpec(vocab), SEQ_LENGTH, LABELS, text_b=True)
    return dict(work=work, path=path, model=model, features=features, inputs=inputs, logits=logits_of(model, inputs))


@pytest.mark.slow
def test_every_signature_gives_the_python_pipeline_outputs(pair_export):
    logits = pair_export["logits"]
    probabilities = tf.nn.softmax(logits).numpy()
    labels = [LABELS[i].encode() for i in np.argmax(logits, axis=1)]
    assert len(set(labels)) == 2  # both labels occur, so the label lookup is really tested
    loaded = tf.saved_model.load(pair_export["path"])
    assert sorted(loaded.signatures) == sorted(SIGNATURES)

    text = loaded.signatures["serving_default"](text_a=tf.constant([a for a, _ in PAIRS]),
                                                text_b=tf.constant([b for _, b in PAIRS]))
    tensors = loaded.signatures["serve_tensors"](**{k: tf.constant(v) for k, v in pair_export["inputs"].items()})
    examples = loaded.signatures["serve_examples"](
        examples=tf.constant([serialize_features(f) for f in pair_export["features"]]))
    for outputs in (text, tensors, examples):
        np.testing.assert_allclose(outputs["logits"].numpy(), logits, atol=1e-5)
        np.testing.assert_allclose(outputs["probabilities"].numpy(), probabilities, atol=1e-6)
        assert outputs["label"].numpy().tolist() == labels

    reloaded = keras.models.load_model(os.path.join(pair_export["path"], "model.keras"))
    np.testing.assert_allclose(reloaded(pair_export["inputs"]), logits, atol=1e-5)


def test_versions_count_up_and_a_failed_export_leaves_nothing(tmp_path):
    export_dir = str(tmp_path / "export")
    os.makedirs(os.path.join(export_dir, "3"))

    def fail(directory):
        open(os.path.join(directory, "saved_model.pb"), "w").close()
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_new_version(export_dir, fail)
    assert sorted(os.listdir(export_dir)) == ["3"]
    written = write_new_version(export_dir, lambda directory: open(os.path.join(directory, "a"), "w").close())
    assert written == os.path.join(export_dir, "4") and versions(export_dir) == [3, 4]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["single", "regression", "multiple choice", "sentencepiece pair"])
def test_other_task_kinds_serve_raw_text(tmp_path, kind):
    vocab, _ = write_model_files(str(tmp_path / "model"))
    keras.utils.set_random_seed(2)
    tokenizer, spec, config = FullTokenizer(vocab), TokenizerSpec(vocab), tiny_config()
    if kind == "sentencepiece pair":
        corpus, spm_model = str(tmp_path / "corpus.txt"), str(tmp_path / "sp.model")
        with open(corpus, "w") as f:
            f.write("".join(f"{a}\n{b}\n" for a, b in PAIRS[:3]) * 10)
        sentencepiece_tokenizer.train([corpus], spm_model, vocab_size=40)
        spec = TokenizerSpec(spm_model_file=spm_model)
        tokenizer = spec.python_tokenizer()
        config = tiny_config(vocab_size=len(tokenizer.vocab))
        model = BertClassifier(BertEncoder(config), 2)
        examples = [InputExample(f"test-{i}", a, b, "0") for i, (a, b) in enumerate(PAIRS)]
        label_list = ("0", "1")
        inputs = {"text_a": [a for a, _ in PAIRS], "text_b": [b for _, b in PAIRS]}
    elif kind == "multiple choice":
        model = BertMultipleChoice(BertEncoder(config), num_choices=3)
        contexts, endings = ["the cat sat .", "a dog"], [["it ran .", "", "good"], ["sat", "flies very good", "x"]]
        examples = [MultipleChoiceExample(f"test-{i}", c, tuple(e), "0") for i, (c, e) in enumerate(zip(contexts,
                                                                                                       endings))]
        label_list, inputs = ("0", "1", "2"), {"text_a": contexts, "text_b": endings}
    else:
        model = BertClassifier(BertEncoder(config), 1 if kind == "regression" else 2)
        texts = ["the cat sat", "GOOD movie", "the cat sat " * 8]
        examples = [InputExample(f"test-{i}", text, None, "0") for i, text in enumerate(texts)]
        label_list, inputs = (None if kind == "regression" else ("0", "1")), {"text_a": texts}
    _, python = python_inputs(tokenizer, examples, label_list)
    logits = logits_of(spread(model, python), python)

    path = export_classifier(str(tmp_path / "export"), model, spec, SEQ_LENGTH, label_list,
                             text_b="pair" in kind, num_choices=3 if kind == "multiple choice" else None)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    assert sorted(serve.structured_input_signature[1]) == sorted(inputs)
    outputs = serve(**{name: tf.constant(value) for name, value in inputs.items()})
    if kind == "regression":
        assert sorted(outputs) == ["score"]
        np.testing.assert_allclose(outputs["score"].numpy(), logits[:, 0], atol=1e-5)
    else:
        np.testing.assert_allclose(outputs["probabilities"].numpy(), tf.nn.softmax(logits).numpy(), atol=1e-6)
        # The label is the served probabilities' argmax; an untrained model's two logits may differ by less than
        # float noise, so the Python model's argmax is required only where its margin is clear of it.
        served = np.argmax(outputs["probabilities"].numpy(), axis=1)
        assert outputs["label"].numpy().tolist() == [label_list[i].encode() for i in served]
        top2 = np.sort(logits, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-4
        np.testing.assert_array_equal(served[clear], np.argmax(logits, axis=1)[clear])


# Runs saved_model_cli with tensorflow-text's ops registered (TF Serving has them built in), then names any
# official_bert module that got imported.
CLI = textwrap.dedent("""
    import sys
    import tensorflow_text  # noqa: F401
    from tensorflow.python.tools import saved_model_cli
    sys.argv = ["saved_model_cli", *sys.argv[1:]]
    try:
        saved_model_cli.main()
    finally:
        print("official_bert modules:", sorted(m for m in sys.modules if m.startswith("official_bert")))
""")


@pytest.mark.slow
def test_saved_model_cli_serves_a_moved_export_without_the_project(pair_export, tmp_path):
    moved = str(tmp_path / "elsewhere" / "7")
    shutil.copytree(pair_export["path"], moved)
    os.remove(pair_export["work"] / "model" / "vocab.txt")  # the export must not need the original vocabulary
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    texts = "text_a={};text_b={}".format([a for a, _ in PAIRS], [b for _, b in PAIRS])
    saved_model_cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    show = subprocess.Popen([saved_model_cli, "show", "--all", "--dir", moved], env=env, cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = subprocess.Popen([sys.executable, "-c", CLI, "run", "--dir", moved, "--tag_set", "serve",
                            "--signature_def", "serving_default", "--input_exprs", texts,
                            "--outdir", str(tmp_path / "outputs")],
                           env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    shown, show_errors = show.communicate(timeout=300)
    ran, run_errors = run.communicate(timeout=300)
    assert show.returncode == 0, show_errors[-3000:]
    assert run.returncode == 0 and "official_bert modules: []" in ran, run_errors[-3000:]

    for name in SIGNATURES:
        assert f"signature_def['{name}']" in shown
    for name in ("text_a", "text_b", "input_word_ids", "input_mask", "input_type_ids", "examples", "probabilities",
                 "label", "logits"):
        assert f"['{name}'] tensor_info" in shown, name
    logits = pair_export["logits"]
    outputs = {name: np.load(tmp_path / "outputs" / f"{name}.npy", allow_pickle=True)
               for name in ("logits", "probabilities", "label")}
    np.testing.assert_allclose(outputs["logits"], logits, atol=1e-5)
    np.testing.assert_allclose(outputs["probabilities"], tf.nn.softmax(logits).numpy(), atol=1e-6)
    assert outputs["label"].tolist() == [LABELS[i].encode() for i in np.argmax(logits, axis=1)]
