"""The raw-text signatures pad each request to its longest sequence, not to max_seq_length, and answer as the
fixed-length inputs do: classifiers (single, pair, regression, multiple choice) and SQuAD."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertConfig, BertEncoder, BertMultipleChoice, BertSpanLabeler
from official_bert.classification import InputExample, MultipleChoiceExample
from official_bert.export import classifier_serving_spec, export_classifier
from official_bert.export.squad import choose_answers, export_squad, squad_serving_spec, squad_tokenizer_layer
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.export.squad import squad_windows
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file
from tests.export.test_export import PAIRS, logits_of, python_inputs, spread
from tests.finetuning.test_run_classifier import SEQ_LENGTH, tiny_config, write_model_files

SHORT = ["good", "the cat sat", "a very dull plot", "the cat sat " * 8]  # the last is truncated to SEQ_LENGTH


class Recorder:
    """A model stand-in for `ServingSpec.serve_text` that keeps the shapes it was called with."""

    def __init__(self, num_outputs):
        self.num_outputs, self.shapes = num_outputs, []

    def __call__(self, inputs):
        self.shapes.append({name: tuple(value.shape) for name, value in inputs.items()})
        return tf.zeros([*inputs["input_word_ids"].shape[:-1], self.num_outputs])


def expected_length(tokenizer, texts_a, texts_b=None):
    """The longest packed sequence, computed from the Python tokenizer: [CLS] A [SEP] (B [SEP]), capped."""
    lengths = []
    for i, a in enumerate(texts_a):
        b = tokenizer.tokenize(texts_b[i]) if texts_b is not None and texts_b[i] else []
        lengths.append(len(tokenizer.tokenize(a)) + 2 + (len(b) + 1 if b else 0))
    return min(SEQ_LENGTH, max(lengths))


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    return write_model_files(str(tmp_path_factory.mktemp("model")))[0]


@pytest.mark.parametrize("texts", [SHORT[:1], SHORT[:3], SHORT])
def test_a_request_is_padded_to_its_longest_sequence(vocab, texts):
    tokenizer = FullTokenizer(vocab)
    recorder = Recorder(2)
    spec = classifier_serving_spec(TokenizerSpec(vocab), SEQ_LENGTH, ["0", "1"])
    spec.serve_text(recorder, text_a=tf.constant(texts))
    length = expected_length(tokenizer, texts)
    assert length < SEQ_LENGTH or len(texts) == len(SHORT)
    assert recorder.shapes == [{name: (len(texts), length) for name in recorder.shapes[0]}]

    pair = Recorder(2)
    texts_b = ["the dog ran"] + [""] * (len(texts) - 1)
    classifier_serving_spec(TokenizerSpec(vocab), SEQ_LENGTH, ["0", "1"], text_b=True).serve_text(
        pair, text_a=tf.constant(texts), text_b=tf.constant(texts_b))
    assert pair.shapes[0]["input_word_ids"] == (len(texts), expected_length(tokenizer, texts, texts_b))

    choices = Recorder(1)
    endings = [["it ran .", "good", "flies very good"]] * len(texts)
    classifier_serving_spec(TokenizerSpec(vocab), SEQ_LENGTH, ["0", "1", "2"], num_choices=3).serve_text(
        choices, text_a=tf.constant(texts), text_b=tf.constant(endings))
    longest = max(expected_length(tokenizer, texts, [ending] * len(texts)) for ending in endings[0])
    assert choices.shapes[0]["input_word_ids"] == (len(texts), 3, longest)

    fixed = Recorder(2)
    classifier_serving_spec(TokenizerSpec(vocab), SEQ_LENGTH, ["0", "1"], pad_to_longest=False).serve_text(
        fixed, text_a=tf.constant(texts))
    assert fixed.shapes[0]["input_word_ids"] == (len(texts), SEQ_LENGTH)


@pytest.mark.slow
def test_the_export_answers_each_short_request_as_the_fixed_length_inputs(vocab, tmp_path):
    """Batch 1 (a request per sentence) and a mixed batch, against the model on max_seq_length inputs."""
    keras.utils.set_random_seed(3)
    labels = ("no", "yes")
    examples = [InputExample(f"test-{i}", a, b, labels[0]) for i, (a, b) in enumerate(PAIRS)]
    _, fixed = python_inputs(FullTokenizer(vocab), examples, labels)
    assert fixed["input_word_ids"].shape[1] == SEQ_LENGTH
    model = spread(BertClassifier(BertEncoder(tiny_config()), 2), fixed)
    logits = logits_of(model, fixed)
    path = export_classifier(str(tmp_path / "export"), model, TokenizerSpec(vocab), SEQ_LENGTH, labels,
                             text_b=True)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    for i, (a, b) in enumerate(PAIRS):
        one = serve(text_a=tf.constant([a]), text_b=tf.constant([b]))
        np.testing.assert_allclose(one["logits"].numpy(), logits[i:i + 1], atol=1e-5)
        np.testing.assert_allclose(one["probabilities"].numpy(), tf.nn.softmax(logits[i:i + 1]).numpy(), atol=1e-6)
    batch = serve(text_a=tf.constant([a for a, _ in PAIRS]), text_b=tf.constant([b for _, b in PAIRS]))
    np.testing.assert_allclose(batch["logits"].numpy(), logits, atol=1e-5)
    assert len(set(batch["label"].numpy().tolist())) == 2


@pytest.mark.parametrize("kind", ["single", "regression", "multiple choice"])
def test_other_task_kinds_pad_to_the_longest_with_the_same_outputs(vocab, kind):
    keras.utils.set_random_seed(4)
    tokenizer, layer = FullTokenizer(vocab), TokenizerSpec(vocab)
    if kind == "multiple choice":
        model = BertMultipleChoice(BertEncoder(tiny_config()), num_choices=3)
        contexts, endings = ["the cat sat .", "a dog"], [["it ran .", "", "good"], ["sat", "flies very good", "x"]]
        examples = [MultipleChoiceExample(f"t-{i}", c, tuple(e), "0") for i, (c, e) in enumerate(zip(contexts,
                                                                                                   endings))]
        label_list, texts = ("0", "1", "2"), {"text_a": contexts, "text_b": endings}
    else:
        model = BertClassifier(BertEncoder(tiny_config()), 1 if kind == "regression" else 2)
        examples = [InputExample(f"t-{i}", text, None, "0") for i, text in enumerate(SHORT)]
        label_list, texts = (None if kind == "regression" else ("0", "1")), {"text_a": SHORT}
    _, fixed = python_inputs(tokenizer, examples, label_list)
    logits = logits_of(spread(model, fixed), fixed)
    spec = classifier_serving_spec(layer, SEQ_LENGTH, label_list, num_choices=3 if kind == "multiple choice" else None)
    shapes = []

    def call_model(inputs):
        shapes.append(inputs["input_word_ids"].shape[-1])
        return model(inputs, training=False)

    outputs = spec.serve_text(call_model, **{name: tf.constant(value) for name, value in texts.items()})
    if kind == "regression":
        np.testing.assert_allclose(outputs["score"].numpy(), logits[:, 0], atol=1e-5)
    else:
        np.testing.assert_allclose(outputs["logits"].numpy(), logits, atol=1e-5)
    if kind == "multiple choice":
        assert shapes[0] < SEQ_LENGTH
        one = spec.serve_text(call_model, text_a=tf.constant(contexts[1:]), text_b=tf.constant(endings[1:]))
        np.testing.assert_allclose(one["logits"].numpy(), logits[1:], atol=1e-5)


# SQuAD: a context much shorter than the window, one that needs several windows, and an empty one.
QUESTIONS = [("Who founded the bakery?", "Zoe Dupont founded the bakery in Montreal."),
             ("What year?", " ".join(f"In {1900 + i} the city grew by {i} hundred people." for i in range(12))),
             ("Anything?", "")]


@pytest.fixture(scope="module")
def squad_tokenizer():
    return TokenizerSpec(real_vocab_file())


def _windows(tokenizer, pairs, seq_length, doc_stride, pad_to_longest):
    return squad_windows(squad_tokenizer_layer(tokenizer), tf.constant([q for q, _ in pairs]), tf.constant([c for _, c in pairs]),
                         seq_length, doc_stride, 16, pad_to_longest)


@pytest.mark.parametrize("pairs", [QUESTIONS[:1], QUESTIONS[2:], QUESTIONS])
def test_squad_windows_are_cut_to_the_longest_window(squad_tokenizer, pairs):
    fixed = _windows(squad_tokenizer, pairs, 64, 24, False)
    short = _windows(squad_tokenizer, pairs, 64, 24, True)
    width = int(fixed.inputs["input_mask"].numpy().sum(axis=1).max())
    assert short.inputs["input_word_ids"].shape[1] == width and (width < 64) == (pairs != QUESTIONS)
    for name in fixed.inputs:
        np.testing.assert_array_equal(short.inputs[name].numpy(), fixed.inputs[name].numpy()[:, :width])
        assert not fixed.inputs[name].numpy()[:, width:].any()  # only padding was cut
    np.testing.assert_array_equal(short.max_context.numpy(), fixed.max_context.numpy()[:, :width])
    for field in ("example", "num_windows", "doc_offset", "doc_length", "doc_start", "token_starts"):
        np.testing.assert_array_equal(getattr(short, field).numpy(), getattr(fixed, field).numpy())


@pytest.mark.parametrize("n_best_size", [64, 3])
def test_squad_answers_from_padding_to_the_longest(squad_tokenizer, n_best_size):
    """With n_best_size ≥ T every position is a candidate and the answers are the fixed-length ones; with a
    small n_best_size, padding positions no longer crowd out real ones, so an answer can only score higher, and
    is the same where the fixed-length n-best lists held no position past the longest window."""
    context = tf.constant([c for _, c in QUESTIONS[:1]] * 4)
    pairs = QUESTIONS[:1] * 4
    fixed = _windows(squad_tokenizer, pairs, 64, 24, False)
    short = _windows(squad_tokenizer, pairs, 64, 24, True)
    width = short.inputs["input_word_ids"].shape[1]
    rng = np.random.default_rng(0)
    same, better = 0, 0
    for trial in range(8):
        start, end = (rng.normal(0, 3, (4, 64)).astype(np.float32) for _ in range(2))
        if trial % 2:  # padding scored low, as a trained model scores it: it never makes the n-best lists
            start[:, width:] -= 20
            end[:, width:] -= 20
        want = choose_answers(fixed, context, tf.constant(start), tf.constant(end), n_best_size, 10)
        got = choose_answers(short, context, tf.constant(start[:, :width]), tf.constant(end[:, :width]),
                             n_best_size, 10)
        crowded = [(np.argsort(-logits[w], kind="stable")[:n_best_size] >= width).any()
                   for logits in (start, end) for w in range(4)]
        if n_best_size >= 64:
            assert got["answer"].numpy().tolist() == want["answer"].numpy().tolist()
            np.testing.assert_allclose(got["score"].numpy(), want["score"].numpy(), atol=1e-6)
        else:
            assert (got["score"].numpy() >= want["score"].numpy() - 1e-6).all()
            better += int((got["score"].numpy() > want["score"].numpy() + 1e-6).sum())
            for w in range(4):
                if not (crowded[w] or crowded[4 + w]):
                    same += 1
                    assert got["answer"].numpy()[w] == want["answer"].numpy()[w]
    assert n_best_size >= 64 or (same >= 16 and better > 0)


@pytest.mark.slow
def test_squad_export_pads_to_the_longest_and_answers_as_fixed_length(squad_tokenizer, tmp_path):
    keras.utils.set_random_seed(5)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    model = BertSpanLabeler(BertEncoder(config))
    # The model's logits on the cut windows are its fixed-length ones, cut.
    fixed = _windows(squad_tokenizer, QUESTIONS, 64, 24, False)
    short = _windows(squad_tokenizer, QUESTIONS[:1], 64, 24, True)
    full_logits = model(fixed.inputs, training=False)
    short_logits = model(short.inputs, training=False)
    width = short.inputs["input_word_ids"].shape[1]
    for name in ("start_logits", "end_logits"):
        np.testing.assert_allclose(short_logits[name].numpy(), full_logits[name].numpy()[:1, :width], atol=1e-5)

    options = dict(doc_stride=24, max_query_length=16, n_best_size=64, max_answer_length=10)
    path = export_squad(str(tmp_path / "squad"), model, squad_tokenizer, 64, **options)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    reference = squad_serving_spec(squad_tokenizer, 64, pad_to_longest=False, **options)
    for batch in (QUESTIONS[:1], QUESTIONS[2:], QUESTIONS):
        texts = {"question": tf.constant([q for q, _ in batch]), "context": tf.constant([c for _, c in batch])}
        got, want = serve(**texts), reference.serve_text(lambda inputs: model(inputs, training=False), **texts)
        assert got["answer"].numpy().tolist() == want["answer"].numpy().tolist()
        np.testing.assert_allclose(got["score"].numpy(), want["score"].numpy(), atol=1e-4)
