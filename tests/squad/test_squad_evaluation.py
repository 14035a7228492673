"""EM/F1 as the official evaluate-v1.1.py and evaluate-v2.0.py compute them, against hand-computed values."""

import collections
import json
import os
import re
import subprocess
import sys

import pytest

from official_bert import squad_evaluate
from official_bert.squad import GoldQuestion, SquadError, evaluate_v1, evaluate_v2, find_best_thresh, read_gold
from official_bert.squad.metrics import compute_exact, compute_f1, exact_match_score, f1_score, normalize_answer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# SQuAD 2.0 by hand: q1, q2 answerable; q3, q4 not.
V2_GOLD = [GoldQuestion("q1", ["Paris"]), GoldQuestion("q2", ["the Louvre", "Louvre Museum"]),
           GoldQuestion("q3", []), GoldQuestion("q4", [])]
V2_PREDS = {"q1": "paris", "q2": "the Louvre museum in Paris", "q3": "", "q4": "Lyon"}
V2_NA_PROBS = {"q1": 0.2, "q2": 0.9, "q3": 0.6, "q4": 0.1}
# Raw scores: q1 EM 1 F1 1; q2 EM 0, F1 = max(vs "louvre": p 1/4 r 1 → 0.4, vs "louvre museum": p 2/4 r 1 → 2/3);
# q3 "" right: 1, 1; q4 answered: 0, 0.
V2_EXPECTED_PLAIN = [("exact", 50.0), ("f1", 100 * (2 + 2 / 3) / 4), ("total", 4),
                     ("HasAns_exact", 50.0), ("HasAns_f1", 100 * (1 + 2 / 3) / 2), ("HasAns_total", 2),
                     ("NoAns_exact", 50.0), ("NoAns_f1", 50.0), ("NoAns_total", 2)]
# With na_prob_thresh 0.5, q2 (0.9) counts as answered "" (wrong: 0) and q3 (0.6) as "" (right: 1).
# find_best_thresh, na_probs ascending q4 .1, q1 .2, q3 .6, q2 .9, starting from 2 (the NoAns questions):
# EM: 2 → q4 −1 = 1 → q1 +1 = 2 → q3 +0 = 2 → q2 +0 = 2: never above 2, thresh 0.0, best 50.
# F1: ... → q2 +2/3 = 2.67 > 2: thresh 0.9, best 66.67.
V2_EXPECTED_NA = [("exact", 50.0), ("f1", 50.0), ("total", 4), ("HasAns_exact", 50.0), ("HasAns_f1", 50.0),
                  ("HasAns_total", 2), ("NoAns_exact", 50.0), ("NoAns_f1", 50.0), ("NoAns_total", 2),
                  ("best_exact", 50.0), ("best_exact_thresh", 0.0), ("best_f1", 100 * (2 + 2 / 3) / 4),
                  ("best_f1_thresh", 0.9)]


def _assert_items(actual, expected):
    assert list(actual) == [key for key, _ in expected]  # the official key order
    assert list(actual.values()) == pytest.approx([value for _, value in expected])


@pytest.mark.parametrize("text, expected", [
    ("Denver BRONCOS", "denver broncos"),  # lowercase
    ("U.S.A.!?", "usa"),  # ASCII punctuation removed, not split on
    ("rock'n'roll", "rocknroll"),
    ("Zoë’s", "zoë’s"),  # non-ASCII punctuation and letters stay
    ("The Beatles", "beatles"),  # articles, after lowercasing
    ("A Tale of an Apple", "tale of apple"),
    ("theater", "theater"),  # only whole words
    ("the-end", "theend"),  # punctuation goes first, so "the" is no longer a word
    (" New\tYork \n City ", "new york city"),  # whitespace
])
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


def test_token_f1_and_exact_match():
    # "cat sat on mat" vs "cat on mat": 3 shared, precision 3/4, recall 1.
    assert f1_score("the cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 7)
    assert compute_f1("a cat on a mat", "the cat sat on the mat") == pytest.approx(6 / 7)
    # Shared tokens count with multiplicity: x x y vs x y y share one x and one y.
    assert f1_score("x x y", "x y y") == pytest.approx(2 / 3)
    assert f1_score("Paris", "Lyon") == 0 and compute_f1("Paris", "Lyon") == 0
    assert exact_match_score("The U.S.A.", "usa") is True and compute_exact("usa", "The U.S.A.") == 1


def test_empty_answers_differ_between_v1_and_v2():
    assert f1_score("", "") == 0  # v1.1: nothing shared
    assert compute_f1("", "") == 1 and compute_f1("", "The!") == 1  # v2.0: both empty after normalizing
    assert compute_f1("", "Paris") == 0 and compute_f1("Paris", "") == 0
    assert exact_match_score("", "") is True and compute_exact("", "a") == 1


def test_evaluate_v1_takes_the_best_gold_answer_and_counts_missing_predictions():
    gold = [GoldQuestion("q1", ["Denver Broncos", "The Broncos"]), GoldQuestion("q2", ["Santa Clara, California"]),
            GoldQuestion("q3", ["1990"])]
    # q1: exact against "The Broncos"; q2: "levis stadium in santa clara" vs "santa clara california" share 2,
    # precision 2/5, recall 2/3, F1 0.5; q3: no prediction, 0.
    scores = evaluate_v1(gold, {"q1": "broncos", "q2": "Levi's Stadium in Santa Clara"})
    assert scores == pytest.approx({"exact_match": 100 / 3, "f1": 50.0})


def test_evaluate_v2_without_and_with_na_probs():
    _assert_items(evaluate_v2(V2_GOLD, V2_PREDS), V2_EXPECTED_PLAIN)
    _assert_items(evaluate_v2(V2_GOLD, V2_PREDS, V2_NA_PROBS, na_prob_thresh=0.5), V2_EXPECTED_NA)


def test_evaluate_v2_drops_gold_answers_that_normalize_to_nothing():
    # "a" normalizes to "": it is not a gold answer, so "" (which it would match) scores 0 against "Paris".
    scores = evaluate_v2([GoldQuestion("q", ["a", "Paris"])], {"q": ""})
    assert (scores["HasAns_exact"], scores["HasAns_f1"]) == (0.0, 0.0)
    # With no gold answer left, only "" is right.
    assert evaluate_v2([GoldQuestion("q", ["a"])], {"q": ""})["HasAns_exact"] == 100.0
    assert evaluate_v2([GoldQuestion("q", ["a"])], {"q": "a b"})["exact"] == 0.0


def test_find_best_thresh_by_hand():
    preds = {"a": "x", "b": "", "c": "y", "d": "z"}
    has_ans = {"a": True, "b": False, "c": False, "d": True}
    scores = {"a": 0.5, "b": 1, "c": 0, "d": 1}
    na_probs = {"a": 0.3, "b": 0.1, "c": 0.2, "d": 0.4}
    # Start 2 (b, c). Ascending: b (.1) +0 = 2, c (.2) −1 = 1, a (.3) +0.5 = 1.5, d (.4) +1 = 2.5 > 2 → thresh 0.4.
    assert find_best_thresh(preds, scores, na_probs, has_ans) == (pytest.approx(62.5), 0.4)
    # With d wrong the running score never beats the start: threshold 0.0, score 2 of 4.
    assert find_best_thresh(preds, {**scores, "d": 0}, na_probs, has_ans) == (50.0, 0.0)


def test_evaluate_v2_needs_every_prediction():
    with pytest.raises(SquadError, match=r"preds\.json: no prediction for 1 of 4 questions \(e\.g\. 'q4'\)"):
        evaluate_v2(V2_GOLD, {k: v for k, v in V2_PREDS.items() if k != "q4"}, sources=("preds.json", None))


def _write_files(tmp_path, gold, preds, na_probs=None):
    qas = [{"id": q.qid, "question": "?", "answers": [{"text": a, "answer_start": 0} for a in q.answers]}
           for q in gold]
    data = {"version": "test", "data": [{"title": "t", "paragraphs": [{"context": "irrelevant", "qas": qas}]}]}
    paths = [str(tmp_path / "data.json"), str(tmp_path / "predictions.json"), str(tmp_path / "null_odds.json")]
    for path, value in zip(paths, (data, preds, na_probs)):
        _dump(path, value)
    return paths


def _dump(path, value):
    with open(path, "w", encoding="utf-8") as f:
        f.write(value if isinstance(value, str) else json.dumps(value))


def _run_cli(*args):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, "-m", "official_bert.squad_evaluate", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout, object_pairs_hook=collections.OrderedDict)


def test_cli_v1(tmp_path):
    gold = [GoldQuestion("q1", ["the Eiffel Tower"]), GoldQuestion("q2", ["1889", "in 1889"])]
    data, preds, _ = _write_files(tmp_path, gold, {"q1": "Eiffel tower!", "q2": "1887"})
    _assert_items(_run_cli(data, preds), [("exact_match", 50.0), ("f1", 50.0)])


def test_cli_v2_with_the_official_flag_spellings(tmp_path):
    data, preds, na_probs = _write_files(tmp_path, V2_GOLD, V2_PREDS, V2_NA_PROBS)
    _assert_items(_run_cli(data, preds, "--na-prob-file", na_probs, "-t", "0.5"), V2_EXPECTED_NA)


def test_cli_in_process_and_out_file(tmp_path, capsys):
    data, preds, na_probs = _write_files(tmp_path, V2_GOLD, V2_PREDS, V2_NA_PROBS)
    assert squad_evaluate.main([data, preds]) == 0
    _assert_items(json.loads(capsys.readouterr().out, object_pairs_hook=collections.OrderedDict),
                  V2_EXPECTED_PLAIN)
    out_file = str(tmp_path / "eval.json")
    assert squad_evaluate.main([data, preds, "--na_prob_file", na_probs, "--na_prob_thresh", "0.5",
                                "--out_file", out_file]) == 0
    assert capsys.readouterr().out == ""
    _assert_items(json.load(open(out_file), object_pairs_hook=collections.OrderedDict), V2_EXPECTED_NA)


@pytest.mark.parametrize("broken, message", [
    ("data", r"data\.json: not valid JSON \(line 1 column 1: Expecting value\); expected a SQuAD data file"),
    ("preds", r"predictions\.json: expected an object mapping question ids to answer strings, got list"),
    ("missing", r"predictions\.json: no prediction for 1 of 4 questions \(e\.g\. 'q1'\)"),
    ("na_probs", r"null_odds\.json: expected an object mapping question ids to numbers; 'q1' maps to str"),
])
def test_cli_bad_input_is_one_clear_line(tmp_path, capsys, broken, message):
    data, preds, na_probs = _write_files(tmp_path, V2_GOLD, V2_PREDS, V2_NA_PROBS)
    if broken == "data":
        _dump(data, "not json")
    elif broken == "preds":
        _dump(preds, '["paris"]')
    elif broken == "missing":
        _dump(preds, {k: v for k, v in V2_PREDS.items() if k != "q1"})
    else:
        _dump(na_probs, {**V2_NA_PROBS, "q1": "high"})
    assert squad_evaluate.main([data, preds, "--na_prob_file", na_probs]) == 1
    err = capsys.readouterr().err
    assert err.startswith("squad_evaluate: error: ") and err.count("\n") == 1
    assert re.search(message, err)


def test_read_gold_names_the_bad_place(tmp_path):
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"qas": [{"id": "q", "answers": [{"txt": "x"}]}]}]}]}))
    with pytest.raises(SquadError, match=r"dev\.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]\.answers: expected "
                                         r"objects with a string 'text'"):
        read_gold(str(path))
