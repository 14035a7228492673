"""The in-graph SQuAD windows and span choice against the Python features and post-processing they stand in for."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from official_bert.export.squad import choose_answers, squad_tokenizer_layer, squad_windows
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.squad import RawResult, compute_predictions, convert_examples_to_features, read_squad_examples
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "squad", "train-v2.0.json")
# Besides the fixture: a context of many windows, one with odd spacing and accents, an empty one and a long query.
EXTRA = [
    ("Which numbers come after twelve and before the end?",
     " ".join(f"word{i} {n}" for i, n in enumerate("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda "
                                                    "mu nu xi omicron pi rho sigma tau upsilon phi chi psi".split()))),
    ("Où est   le café?", "  Le  CAFÉ\u00a0est à\tMontréal,\n(près du fleuve).  "),
    ("Anything?", ""),
    ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen", "short text here ."),
]


def _questions():
    with open(FIXTURE, encoding="utf-8") as f:
        data = json.load(f)
    pairs = [(qa["question"], paragraph["context"]) for article in data["data"]
             for paragraph in article["paragraphs"] for qa in paragraph["qas"]]
    return pairs + EXTRA


def _examples(tmp_path, pairs):
    """The pairs as a SQuAD prediction file, read back by the Python reader."""
    data = {"data": [{"paragraphs": [{"context": context, "qas": [{"id": f"q{i}", "question": question}]}
                                     for i, (question, context) in enumerate(pairs)]}]}
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return read_squad_examples(str(path), is_training=False)


LENGTHS = [(32, 8, 8), (48, 16, 12), (24, 4, 6), (24, 40, 6)]  # the last: a stride longer than the window


@pytest.fixture(scope="module")
def tokenizers():
    return FullTokenizer(real_vocab_file(), do_lower_case=True), squad_tokenizer_layer(TokenizerSpec(real_vocab_file()))


@pytest.mark.parametrize("seq_length,doc_stride,max_query_length", LENGTHS)
def test_windows_equal_the_python_features(tmp_path, tokenizers, seq_length, doc_stride, max_query_length):
    python_tokenizer, graph_tokenizer = tokenizers
    pairs = _questions()
    features = list(convert_examples_to_features(_examples(tmp_path, pairs), python_tokenizer, seq_length,
                                                 doc_stride, max_query_length, is_training=False))
    windows = squad_windows(graph_tokenizer, tf.constant([q for q, _ in pairs]), tf.constant([c for _, c in pairs]),
                            seq_length, doc_stride, max_query_length)
    # The Python reader gives an empty context no window at all; the graph gives it one without context tokens.
    empty = [i for i, (_, context) in enumerate(pairs) if not context.split()]
    keep = [w for w, e in enumerate(windows.example.numpy()) if e not in empty]
    assert len(features) == len(keep) and len(features) > len(pairs)  # several windows somewhere
    assert max(windows.num_windows.numpy()) >= 4
    for feature, w in zip(features, keep):
        assert windows.example[w] == feature.example_index
        assert windows.inputs["input_word_ids"][w].numpy().tolist() == feature.input_ids
        assert windows.inputs["input_mask"][w].numpy().tolist() == feature.input_mask
        assert windows.inputs["input_type_ids"][w].numpy().tolist() == feature.segment_ids
        max_context = [p for p, is_max in feature.token_is_max_context.items() if is_max]
        assert np.flatnonzero(windows.max_context[w].numpy()).tolist() == sorted(max_context)


@pytest.mark.parametrize("version_2,threshold", [(False, 0.0), (True, 0.0), (True, -2.0), (True, 3.0)])
@pytest.mark.parametrize("seq_length,doc_stride,max_query_length", LENGTHS[:2])
def test_answers_equal_the_python_postprocessing(tmp_path, tokenizers, seq_length, doc_stride, max_query_length,
                                                 version_2, threshold):
    python_tokenizer, graph_tokenizer = tokenizers
    # U+00A0 is inside a word for the original's paragraph splitter, and its get_final_text, whose space
    # stripping misses U+00A0, then answers with whole words ("opened in\u00a0Montréal." for "opened in");
    # the graph answers the exact span (test_answers_keep_the_original_text).
    pairs = [(question, context.replace("\u00a0", " ")) for question, context in _questions() if context.split()]
    examples = _examples(tmp_path, pairs)
    features = list(convert_examples_to_features(examples, python_tokenizer, seq_length, doc_stride,
                                                 max_query_length, is_training=False))
    context = tf.constant([c for _, c in pairs])
    windows = squad_windows(graph_tokenizer, tf.constant([q for q, _ in pairs]), context, seq_length, doc_stride,
                            max_query_length)
    rng = np.random.default_rng(seq_length + int(version_2))
    for trial in range(3):
        start_logits = rng.normal(0, 3, (len(features), seq_length)).astype(np.float32)
        end_logits = rng.normal(0, 3, (len(features), seq_length)).astype(np.float32)
        results = [RawResult(f.unique_id, s.tolist(), e.tolist())
                   for f, s, e in zip(features, start_logits, end_logits)]
        # Small n-best and answer lengths, so that the filters decide often.
        expected = compute_predictions(examples, features, results, n_best_size=5, max_answer_length=4,
                                       do_lower_case=True, version_2_with_negative=version_2,
                                       null_score_diff_threshold=threshold)
        got = choose_answers(windows, context, tf.constant(start_logits), tf.constant(end_logits), n_best_size=5,
                             max_answer_length=4, version_2_with_negative=version_2,
                             null_score_diff_threshold=threshold)
        answers = [a.decode("utf-8") for a in got["answer"].numpy()]
        for i, example in enumerate(examples):
            want = expected.predictions[example.qas_id]
            want = "" if want == "empty" else want  # the original's stand-in for "no valid span"
            # Up to whitespace: the original joins words with " ", the graph keeps the context's own spacing.
            assert answers[i].split() == want.split(), (trial, example.qas_id, answers[i], want)
            best = expected.nbest[example.qas_id][0]
            if want and not version_2:
                assert float(got["score"][i]) == pytest.approx(best["start_logit"] + best["end_logit"], abs=1e-5)
            if version_2:
                assert float(got["null_odds"][i]) == pytest.approx(expected.null_odds[example.qas_id], abs=1e-4)
        assert any(answers) and (not version_2 or threshold > 0 or not all(answers))


def test_answers_keep_the_original_text(tokenizers):
    _, graph_tokenizer = tokenizers
    context = tf.constant(["Café Zoë’s\u202fbakery\t(1895-1943) opened in\u00a0Montréal."])
    windows = squad_windows(graph_tokenizer, tf.constant(["Where?"]), context, 32, 8, 8)
    ids = windows.inputs["input_word_ids"][0].numpy().tolist()
    vocab = [line.rstrip("\n") for line in open(real_vocab_file(), encoding="utf-8")]
    words = [vocab[i] for i in ids]

    def span(first, last):
        start = np.zeros((1, 32), np.float32)
        end = np.zeros((1, 32), np.float32)
        start[0, words.index(first)] = 10.0
        end[0, words.index(last)] = 10.0
        return choose_answers(windows, context, tf.constant(start), tf.constant(end))["answer"][0].numpy()

    assert span("1895", "1895").decode() == "1895"  # mid-word, inside "(1895-1943)"
    assert span("montreal", "montreal").decode() == "Montréal"  # original case and accents
    assert span("zoe", "bakery").decode() == "Zoë’s\u202fbakery"  # original spacing
    assert span("opened", "in").decode() == "opened in"  # not the whole "in\u00a0Montréal." the original gives
