"""Post-processing against the original write_predictions' rules, with hand-made logits on real features."""

import json
import math
import os

import pytest

from official_bert.squad import (RawResult, SquadError, SquadExample, compute_predictions,
                                 convert_examples_to_features, read_squad_examples, write_predictions)
from official_bert.squad.final_text import get_final_text
from official_bert.tokenization import FullTokenizer
from tests.pretraining_data_corpus import real_vocab_file

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "squad", "train-v2.0.json")
LOW = -10.0  # every logit not set by a test


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(real_vocab_file(), do_lower_case=True)


@pytest.fixture(scope="module")
def examples():
    return {e.qas_id: e for e in read_squad_examples(FIXTURE, is_training=False, version_2_with_negative=True)}


def _features(example_list, tokenizer, max_seq_length=64, doc_stride=16, max_query_length=16):
    return list(convert_examples_to_features(example_list, tokenizer, max_seq_length, doc_stride, max_query_length,
                                             is_training=False))


def _logits(length, values):
    logits = [LOW] * length
    for position, value in values.items():
        logits[position] = value
    return logits


def _result(feature, starts, ends):
    n = len(feature.input_ids)
    return RawResult(feature.unique_id, _logits(n, starts), _logits(n, ends))


def _predict(example_list, features, results, n_best_size, version_2=False, threshold=0.0):
    return compute_predictions(example_list, features, results, n_best_size=n_best_size, max_answer_length=30,
                               do_lower_case=True, version_2_with_negative=version_2,
                               null_score_diff_threshold=threshold)


def _softmax(scores):
    exps = [math.exp(s) for s in scores]
    return [e / sum(exps) for e in exps]


def test_nbest_ranking_filters_and_original_text(tokenizer, examples):
    example = examples["p1-founder"]
    [feature] = _features([example], tokenizer)
    # Query "who founded the bakery ?" takes positions 1-5; the paragraph starts at 7: "zoe" 8, "’" 9, "s" 10,
    # ..., "zoe" 24, "dupont" 25, "[SEP]" 30.
    assert feature.tokens[8:11] == ["zoe", "’", "s"] and feature.tokens[24:26] == ["zoe", "dupont"]
    # Best starts: 2 (in the question: invalid), 24, 8. Best ends: 30 ([SEP]: invalid), 25, 10.
    result = _result(feature, {2: 9.0, 24: 5.0, 8: 4.0}, {30: 8.0, 25: 4.0, 10: 3.0})
    out = _predict([example], [feature], [result], n_best_size=3)
    # Valid: (24, 25) = 9, (8, 25) = 8, (8, 10) = 7; (24, 10) ends before it starts.
    nbest = out.nbest["p1-founder"]
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in nbest] == [
        ("Zoë Dupont", 5.0, 4.0),  # original accents and case, the word's trailing "," dropped
        # The words "Zoë’s" .. "Dupont," hold a U+00A0 that the tokenizer turned into a space: the characters no
        # longer align one to one, so the original returns the words whole (joined by single spaces).
        ("Zoë’s bakery (1895-1943) opened in\u00a0Montréal. Its founder, Zoë Dupont,", 4.0, 4.0),
        ("Zoë’s", 4.0, 3.0),
    ]
    assert [e["probability"] for e in nbest] == pytest.approx(_softmax([9.0, 8.0, 7.0]))
    assert list(nbest[0]) == ["text", "probability", "start_logit", "end_logit"]
    assert out.predictions == {"p1-founder": "Zoë Dupont"}
    assert out.null_odds == {}


def test_answers_mapping_to_the_same_text_are_listed_once(tokenizer, examples):
    example = examples["p1-city"]
    [feature] = _features([example], tokenizer)
    assert feature.tokens[18:21] == ["in", "montreal", "."]
    # All four spans lie in the word "in\u00a0Montréal.", which cannot be aligned (U+00A0): the same text each time.
    result = _result(feature, {19: 6.0, 18: 5.0}, {19: 6.0, 20: 5.0})
    out = _predict([example], [feature], [result], n_best_size=2)
    assert out.nbest["p1-city"] == [{"text": "in\u00a0Montréal.", "probability": 1.0, "start_logit": 6.0,
                                     "end_logit": 6.0}]


def test_wordpieces_are_joined_and_mapped_back(tokenizer):
    example = SquadExample("eiffel", "Which tower?", ["The", "Eiffel-Tower,", "Paris"])
    [feature] = _features([example], tokenizer)
    assert feature.tokens[5:12] == ["the", "e", "##iff", "##el", "-", "tower", ","]
    out = _predict([example], [feature], [_result(feature, {6: 3.0}, {10: 3.0})], n_best_size=1)
    assert out.predictions == {"eiffel": "Eiffel-Tower"}


def test_only_the_max_context_window_may_start_an_answer(tokenizer, examples):
    example = examples["p2-after-six"]
    features = _features([example], tokenizer, max_seq_length=16, doc_stride=3, max_query_length=8)
    # Windows of 8 words from 0, 3, 6, ...; the paragraph starts at position 7. "seven" (word 6) is at position 13
    # in window 0, where it is not max-context (window 1 is), and at 10 in window 1.
    assert features[0].tokens[13:15] == ["seven", "eight"] and features[1].tokens[10:13] == ["seven", "eight", "nine"]
    results = [_result(features[0], {13: 9.0}, {14: 9.0}), _result(features[1], {10: 4.0}, {12: 4.0})]
    results += [_result(f, {}, {}) for f in features[2:]]
    out = _predict([example], features, reversed(results), n_best_size=2)
    assert out.predictions == {"p2-after-six": "seven eight nine"}
    assert len(out.nbest["p2-after-six"]) == 1


def _null_setup(tokenizer, examples):
    example = examples["p2-after-six"]
    features = _features([example], tokenizer, max_seq_length=16, doc_stride=3, max_query_length=8)
    # [CLS] start+end per window: 2, 0.75, 4, 3, 2. The null score is the smallest, window 1's 0.5 + 0.25.
    cls = [(1.0, 1.0), (0.5, 0.25), (2.0, 2.0), (3.0, 0.0), (1.0, 1.0)]
    results = [_result(f, {0: s}, {0: e}) for f, (s, e) in zip(features, cls)]
    results[1] = _result(features[1], {0: 0.5, 10: 2.0}, {0: 0.25, 12: 1.0})  # "seven eight nine" = 3.0
    return example, features, results


def test_version_2_null_answer_and_threshold(tokenizer, examples):
    example, features, results = _null_setup(tokenizer, examples)
    out = _predict([example], features, results, n_best_size=20, version_2=True, threshold=0.0)
    assert out.null_odds == {"p2-after-six": 0.75 - 3.0}
    assert out.predictions == {"p2-after-six": "seven eight nine"}  # -2.25 is not above 0.0
    texts = [(e["text"], e["start_logit"], e["end_logit"]) for e in out.nbest["p2-after-six"]]
    assert texts[0] == ("seven eight nine", 2.0, 1.0)
    assert ("", 0.5, 0.25) in texts
    lower = _predict([example], features, results, n_best_size=20, version_2=True, threshold=-2.5)
    assert lower.predictions == {"p2-after-six": ""}  # -2.25 > -2.5


def test_version_2_adds_the_null_answer_beyond_n_best(tokenizer, examples):
    example, features, results = _null_setup(tokenizer, examples)
    out = _predict([example], features, results, n_best_size=1, version_2=True)
    nbest = out.nbest["p2-after-six"]
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in nbest] == [("seven eight nine", 2.0, 1.0),
                                                                              ("", 0.5, 0.25)]
    assert [e["probability"] for e in nbest] == pytest.approx(_softmax([3.0, 0.75]))


def test_no_valid_span(tokenizer, examples):
    example = examples["p1-year"]
    [feature] = _features([example], tokenizer)
    result = _result(feature, {0: 1.0, 2: 5.0}, {0: 2.0, 3: 5.0})  # only [CLS] and the question score
    v1 = _predict([example], [feature], [result], n_best_size=2)
    assert v1.predictions == {"p1-year": "empty"}  # the original's stand-in
    v2 = _predict([example], [feature], [result], n_best_size=2, version_2=True)
    assert v2.predictions == {"p1-year": ""}
    assert v2.null_odds == {"p1-year": 3.0}


def test_missing_result_is_a_clear_error(tokenizer, examples):
    [feature] = _features([examples["p1-year"]], tokenizer)
    with pytest.raises(SquadError, match=r"no model output \(RawResult\) for feature 1000000000 of question "
                                         r"'p1-year'"):
        _predict([examples["p1-year"]], [feature], [], n_best_size=2)


def test_write_predictions(tmp_path, tokenizer, examples):
    example, features, results = _null_setup(tokenizer, examples)
    out = _predict([example], features, results, n_best_size=2, version_2=True)
    paths = write_predictions(out, str(tmp_path / "out"))
    assert sorted(os.listdir(tmp_path / "out")) == ["nbest_predictions.json", "null_odds.json", "predictions.json"]
    loaded = [json.loads(open(p, encoding="utf-8").read()) for p in paths]
    assert loaded == [{"p2-after-six": "seven eight nine"}, out.nbest, {"p2-after-six": -2.25}]
    assert open(paths[0]).read() == '{\n    "p2-after-six": "seven eight nine"\n}\n'
    v1 = _predict([example], features, results, n_best_size=2)
    write_predictions(v1, str(tmp_path / "v1"))
    assert sorted(os.listdir(tmp_path / "v1")) == ["nbest_predictions.json", "predictions.json"]


@pytest.mark.parametrize("pred_text, orig_text, do_lower_case, expected", [
    ("steve smith", "Steve Smith's", True, "Steve Smith"),
    ("zoe", "Zoë’s", True, "Zoë"),  # accent stripped by the tokenizer, kept in the answer
    ("Zoë", "Zoë’s", False, "Zoë"),  # cased
    ("1895", "(1895-1943).", True, "1895"),
    ("paris", "Zoë’s", True, "Zoë’s"),  # not found: the whole original text
    ("montreal", "in\u00a0Montréal.", True, "in\u00a0Montréal."),  # U+00A0 breaks the alignment
])
def test_get_final_text(pred_text, orig_text, do_lower_case, expected):
    assert get_final_text(pred_text, orig_text, do_lower_case) == expected
