"""Exports that any TensorFlow serves: a classifier's and a SQuAD model's SavedModels hold core TensorFlow ops only,
and a fresh process in which tensorflow_text cannot be imported serves them with the in-process outputs; it can
also import the library and the CLIs and export a model itself."""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, BertSpanLabeler
from official_bert.classification import InputExample
from official_bert.export import export_classifier
from official_bert.export.squad import export_squad
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file
from tests.checkpoints.test_checkpoints import randomized
from tests.export.test_export import LABELS, PAIRS, logits_of, python_inputs, spread
from tests.finetuning.test_run_classifier import SEQ_LENGTH, tiny_config, write_model_files

pytestmark = pytest.mark.slow  # four exports and a process that imports the CLIs and exports: a minute or two

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Contexts of several windows, words of several pieces, accents, odd spacing, and an empty one.
SQUAD = [("Who founded the bakery?", "Café Zoë’s bakery opened in Montréal in 1895. Its founder, Zoë Dupont, "
          "was an unaffable, hard-working pâtissier who baked croissants and pains au chocolat."),
         ("When?", "  In   1895 ,\tthe\u00a0bakery opened.  "),
         ("What is tokenization?", "Tokenization splits text into subword units: unbelievably, "
          "antidisestablishmentarianism becomes many pieces."),
         ("Anything?", "")]

CHILD = textwrap.dedent("""
    import json, sys

    class NoTensorflowText:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "tensorflow_text":
                raise ImportError(f"{name} is blocked in this process")

    sys.meta_path.insert(0, NoTensorflowText())
    import numpy as np
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2
    from tensorflow.python.framework import op_def_registry

    def op_types(path):
        # The ops of the graph and of every function in its library (a node may call a library function by name).
        with open(path + "/saved_model.pb", "rb") as f:
            model = saved_model_pb2.SavedModel.FromString(f.read())
        ops, functions = set(), set()
        for graph in model.meta_graphs:
            ops.update(node.op for node in graph.graph_def.node)
            for function in graph.graph_def.library.function:
                functions.add(function.signature.name)
                ops.update(node.op for node in function.node_def)
        return sorted(ops - functions)

    request, out = json.load(open(sys.argv[1])), sys.argv[2]
    report = {}

    def serve(name, path, inputs):
        ops = op_types(path)
        report[name] = {"ops": ops, "unregistered": [op for op in ops if op_def_registry.get(op) is None]}
        if not report[name]["unregistered"]:
            outputs = tf.saved_model.load(path).signatures["serving_default"](
                **{key: tf.constant(value) for key, value in inputs.items()})
            arrays = {key: value.numpy() for key, value in outputs.items()}
            np.savez(f"{out}/{name}.npz", **{key: a.astype(bytes) if a.dtype == object else a
                                             for key, a in arrays.items()})

    for name, (path, inputs) in request["serve"].items():
        serve(name, path, inputs)
    report["served_without_the_project"] = sorted(m for m in sys.modules if m.startswith("official_bert"))

    # The library and the training CLIs, without tensorflow-text: import, export, serve.
    sys.path.insert(0, request["repo"])
    from absl import flags
    defined = set(flags.FLAGS)
    import run_classifier  # noqa: F401
    for flag in set(flags.FLAGS) - defined:  # run_squad defines the same shared flags
        delattr(flags.FLAGS, flag)
    import run_squad  # noqa: F401
    import keras
    from official_bert.errors import Error
    from official_bert.export import export_classifier
    from official_bert.text.tokenizer_spec import TokenizerSpec
    from official_bert.text import BertTokenizer, GraphSentencePieceTokenizer
    model = keras.models.load_model(request["serve"]["classifier"][0] + "/model.keras")
    path = export_classifier(out + "/child_export", model, TokenizerSpec(request["vocab"]), request["seq_length"],
                             request["labels"], text_b=True)
    serve("child_classifier", path, request["serve"]["classifier"][1])
    for name, build in (("sentencepiece", lambda: GraphSentencePieceTokenizer(request["vocab"])),
                        ("tf_text_wordpiece", lambda: BertTokenizer(request["vocab"], wordpiece="tf_text"))):
        try:
            build()
            report[name] = "built"
        except Error as e:
            report[name] = str(e)
    report["tensorflow_text_imported"] = "tensorflow_text" in sys.modules
    with open(out + "/report.json", "w") as f:
        json.dump(report, f)
""")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A pair classifier and a SQuAD model (random weights), exported with the core-ops tokenizer (and the SQuAD
    model also with tensorflow-text's), with their outputs served in this process; then the child's report."""
    work = tmp_path_factory.mktemp("core_ops")
    vocab, _ = write_model_files(str(work / "model"))
    keras.utils.set_random_seed(4)
    examples = [InputExample(f"test-{i}", a, b, LABELS[0]) for i, (a, b) in enumerate(PAIRS)]
    _, inputs = python_inputs(FullTokenizer(vocab), examples, LABELS)
    classifier = spread(BertClassifier(BertEncoder(tiny_config()), len(LABELS)), inputs)
    classifier_path = export_classifier(str(work / "classifier"), classifier, TokenizerSpec(vocab), SEQ_LENGTH,
                                        LABELS, text_b=True)
    span_labeler = randomized(BertSpanLabeler(BertEncoder(tiny_config(vocab_size=30522))), seed=5)
    squad_paths = {wordpiece: export_squad(str(work / f"squad_{wordpiece}"), span_labeler,
                                           TokenizerSpec(real_vocab_file(), ops=wordpiece), 32,
                                           doc_stride=8, max_query_length=8, n_best_size=5, max_answer_length=6)
                   for wordpiece in ("core", "tf_text")}
    classifier_inputs = {"text_a": [a for a, _ in PAIRS], "text_b": [b for _, b in PAIRS]}
    squad_inputs = {"question": [q for q, _ in SQUAD], "context": [c for _, c in SQUAD]}
    request = {"repo": REPO, "vocab": vocab, "seq_length": SEQ_LENGTH, "labels": list(LABELS),
               "serve": {"classifier": [classifier_path, classifier_inputs],
                         "squad": [squad_paths["core"], squad_inputs],
                         "squad_tf_text": [squad_paths["tf_text"], squad_inputs]}}
    with open(work / "request.json", "w") as f:
        json.dump(request, f)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(work / "request.json"), str(work)], cwd=str(work),
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def serve(path, inputs):
        outputs = tf.saved_model.load(path).signatures["serving_default"](
            **{key: tf.constant(value) for key, value in inputs.items()})
        return {key: value.numpy() for key, value in outputs.items()}

    here = {"classifier": serve(classifier_path, classifier_inputs),
            "squad": serve(squad_paths["core"], squad_inputs),
            "squad_tf_text": serve(squad_paths["tf_text"], squad_inputs)}
    _, errors = child.communicate(timeout=600)
    assert child.returncode == 0, errors[-3000:]
    with open(work / "report.json") as f:
        report = json.load(f)
    return dict(work=work, here=here, report=report, logits=logits_of(classifier, inputs))


def served(exported, name):
    with np.load(exported["work"] / f"{name}.npz") as outputs:
        return dict(outputs)


def assert_same_outputs(got, want):
    assert sorted(got) == sorted(want)
    for key in want:
        if want[key].dtype.kind in "OSU":
            assert got[key].tolist() == want[key].tolist(), key
        else:
            np.testing.assert_allclose(got[key], want[key], atol=1e-5, err_msg=key)


def test_the_exports_hold_core_tensorflow_ops_only(exported):
    report = exported["report"]
    for name in ("classifier", "squad", "child_classifier"):
        assert report[name]["unregistered"] == [], name
        # The check sees the ops inside functions: the tokenizer's lookups, loop and string ops are there.
        assert {"LookupTableFindV2", "StatelessWhile", "Substr", "StatefulPartitionedCall"} <= set(report[name]["ops"])
    # The check can fail: tensorflow-text's WordPiece is not registered without tensorflow-text.
    assert "FastWordpieceTokenizeWithOffsets" in report["squad_tf_text"]["unregistered"]
    assert report["tensorflow_text_imported"] is False


def test_a_process_without_tensorflow_text_serves_the_in_process_outputs(exported):
    here = exported["here"]
    assert_same_outputs(served(exported, "classifier"), here["classifier"])
    assert_same_outputs(served(exported, "squad"), here["squad"])
    assert exported["report"]["served_without_the_project"] == []
    # What the Python pipeline gives, and what the tensorflow-text tokenizer's export answers.
    np.testing.assert_allclose(here["classifier"]["logits"], exported["logits"], atol=1e-5)
    assert_same_outputs(here["squad"], here["squad_tf_text"])
    answers = [a.decode() for a in here["squad"]["answer"]]
    assert all(answer in context for answer, (_, context) in zip(answers, SQUAD)) and any(answers)


def test_the_library_and_clis_export_and_serve_without_tensorflow_text(exported):
    report = exported["report"]
    assert_same_outputs(served(exported, "child_classifier"), exported["here"]["classifier"])
    for name in ("sentencepiece", "tf_text_wordpiece"):
        assert "needs tensorflow-text, which cannot be imported" in report[name], report[name]
    assert report["sentencepiece"].startswith("SentencePiece in the graph needs tensorflow-text")
