"""Dataset scores exactly as the official evaluate-v1.1.py and evaluate-v2.0.py compute them.

v1.1 (`evaluate_v1`): {"exact_match", "f1"} in percent, max over the gold answers, a question without a
prediction scores 0. v2.0 (`evaluate_v2`): questions without gold answers are "NoAns" (only "" is right);
scores overall and split into HasAns/NoAns; with no-answer probabilities (`na_probs`, e.g. null_odds.json)
a question whose probability exceeds `na_prob_thresh` counts as answered "", and the best threshold for EM
and for F1 is searched (`find_best_thresh`). Sums run in the scripts' order so the floats are identical.
"""

import collections

from absl import logging

from official_bert.squad import json_files
from official_bert.squad.errors import SquadError
from official_bert.squad.metrics import compute_exact, compute_f1, exact_match_score, f1_score, normalize_answer

GoldQuestion = collections.namedtuple("GoldQuestion", ["qid", "answers"])
GoldQuestion.__doc__ = """A question's id and its gold answer texts (none for a SQuAD 2.0 unanswerable one)."""


def read_gold(data_file):
    """The questions of a SQuAD data file, in file order, as `GoldQuestion`s.

    Raises SquadError naming the file and the place in it when it is not SQuAD JSON.

    Example:
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "dev.json")
    >>> qas = [{"id": "q1", "question": "?", "answers": [{"text": "Paris", "answer_start": 0}]}]
    >>> _ = open(path, "w").write(json.dumps({"data": [{"paragraphs": [{"context": "Paris", "qas": qas}]}]}))
    >>> read_gold(path)
    [GoldQuestion(qid='q1', answers=['Paris'])]
    """
    data = json_files.read_json(data_file, "a SQuAD data file")
    gold = []
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise SquadError(f"{data_file}: expected a SQuAD data file, an object with a 'data' list")
    for a, article in enumerate(articles):
        for p, paragraph in enumerate(_list(article, "paragraphs", data_file, f"data[{a}]")):
            for q, qa in enumerate(_list(paragraph, "qas", data_file, f"data[{a}].paragraphs[{p}]")):
                where = f"data[{a}].paragraphs[{p}].qas[{q}]"
                answers = _list(qa, "answers", data_file, where)
                if not isinstance(qa.get("id"), str):
                    raise SquadError(f"{data_file}: {where}: expected a string 'id'")
                if not all(isinstance(answer, dict) and isinstance(answer.get("text"), str) for answer in answers):
                    raise SquadError(f"{data_file}: {where}.answers: expected objects with a string 'text'")
                gold.append(GoldQuestion(qa["id"], [answer["text"] for answer in answers]))
    return gold


def read_predictions(pred_file):
    """A predictions file ({question id: answer text}, e.g. predictions.json), checked.

    Args:
        pred_file: the JSON file.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "predictions.json")
    >>> _ = open(path, "w").write('{"q1": 3}')
    >>> read_predictions(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.squad.errors.SquadError: .../predictions.json: expected an object mapping ... 'q1' maps to int
    """
    return _read_mapping(pred_file, (str,), "answer strings")


def read_na_probs(na_prob_file):
    """A no-answer probability file ({question id: number}, e.g. null_odds.json), checked.

    Args:
        na_prob_file: the JSON file.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "null_odds.json")
    >>> _ = open(path, "w").write('{"q1": -2.5, "q2": 3}')
    >>> read_na_probs(path)
    {'q1': -2.5, 'q2': 3}
    """
    return _read_mapping(na_prob_file, (int, float), "numbers")


def evaluate(gold, predictions, na_probs=None, na_prob_thresh=1.0, sources=("predictions", "na_probs")):
    """`evaluate_v2` when some question is unanswerable or `na_probs` is given, else `evaluate_v1`.

    Example:
    >>> evaluate([GoldQuestion("q1", ["Paris"])], {"q1": "paris."})
    {'exact_match': 100.0, 'f1': 100.0}
    """
    if na_probs is not None or any(not question.answers for question in gold):
        return evaluate_v2(gold, predictions, na_probs, na_prob_thresh, sources)
    return evaluate_v1(gold, predictions)


def evaluate_v1(gold, predictions):
    """evaluate-v1.1.py's scores: {"exact_match": %, "f1": %}; a question without a prediction scores 0.

    Args:
        gold: `GoldQuestion`s (`read_gold`); each needs at least one answer.
        predictions: question id → answer text.

    Example:
    >>> gold = [GoldQuestion("q1", ["Denver Broncos", "the Broncos"]), GoldQuestion("q2", ["1990"])]
    >>> evaluate_v1(gold, {"q1": "Broncos"})
    {'exact_match': 50.0, 'f1': 50.0}
    """
    f1 = exact_match = total = 0
    for qid, ground_truths in gold:
        total += 1
        if qid not in predictions:
            logging.warning("Unanswered question %s will receive score 0.", qid)
            continue
        if not ground_truths:
            raise SquadError(f"question {qid!r} has no gold answer: score unanswerable questions with evaluate_v2")
        prediction = predictions[qid]
        exact_match += max(exact_match_score(prediction, ground_truth) for ground_truth in ground_truths)
        f1 += max(f1_score(prediction, ground_truth) for ground_truth in ground_truths)
    if not total:
        raise SquadError("no questions to evaluate")
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


def evaluate_v2(gold, predictions, na_probs=None, na_prob_thresh=1.0, sources=("predictions", "na_probs")):
    """evaluate-v2.0.py's scores, keys in its order.

    Args:
        gold: `GoldQuestion`s (`read_gold`); those without answers are unanswerable.
        predictions: question id → answer text ("" for no answer); needed for every question.
        na_probs: question id → probability (or any score) of no answer; adds best_exact, best_exact_thresh,
            best_f1 and best_f1_thresh. None: all 0.
        na_prob_thresh: a question whose `na_probs` exceeds this counts as answered "".
        sources: names of `predictions` and `na_probs` for error messages (e.g. their files).

    Returns {"exact", "f1", "total", then HasAns_* and NoAns_* where there are such questions, then best_*}.

    Example:
    >>> gold = [GoldQuestion("q1", ["Paris"]), GoldQuestion("q2", [])]
    >>> dict(evaluate_v2(gold, {"q1": "Paris", "q2": "Lyon"}))  # doctest: +NORMALIZE_WHITESPACE
    {'exact': 50.0, 'f1': 50.0, 'total': 2, 'HasAns_exact': 100.0, 'HasAns_f1': 100.0, 'HasAns_total': 1,
     'NoAns_exact': 0.0, 'NoAns_f1': 0.0, 'NoAns_total': 1}
    """
    qid_to_has_ans = {qid: bool(answers) for qid, answers in gold}
    missing = [qid for qid in qid_to_has_ans if qid not in predictions]
    if missing:
        raise SquadError(f"{sources[0]}: no prediction for {len(missing)} of {len(qid_to_has_ans)} questions "
                         f"(e.g. {missing[0]!r}); evaluate-v2.0 needs one for every question")
    use_na_probs = na_probs is not None
    if not use_na_probs:
        na_probs = {qid: 0.0 for qid in predictions}
    missing = [qid for qid in qid_to_has_ans if qid not in na_probs]
    if missing:
        raise SquadError(f"{sources[1]}: no no-answer probability for {len(missing)} of {len(qid_to_has_ans)} "
                         f"questions (e.g. {missing[0]!r})")
    has_ans_qids = [qid for qid, has_ans in qid_to_has_ans.items() if has_ans]
    no_ans_qids = [qid for qid, has_ans in qid_to_has_ans.items() if not has_ans]
    exact_raw, f1_raw = _raw_scores(gold, predictions)
    exact_thresh = _apply_no_ans_threshold(exact_raw, na_probs, qid_to_has_ans, na_prob_thresh)
    f1_thresh = _apply_no_ans_threshold(f1_raw, na_probs, qid_to_has_ans, na_prob_thresh)
    out_eval = _make_eval_dict(exact_thresh, f1_thresh, list(exact_thresh))
    for prefix, qids in (("HasAns", has_ans_qids), ("NoAns", no_ans_qids)):
        if qids:
            for key, value in _make_eval_dict(exact_thresh, f1_thresh, qids).items():
                out_eval[f"{prefix}_{key}"] = value
    if use_na_probs:
        out_eval["best_exact"], out_eval["best_exact_thresh"] = find_best_thresh(
            predictions, exact_raw, na_probs, qid_to_has_ans)
        out_eval["best_f1"], out_eval["best_f1_thresh"] = find_best_thresh(
            predictions, f1_raw, na_probs, qid_to_has_ans)
    return out_eval


def find_best_thresh(preds, scores, na_probs, qid_to_has_ans):
    """The no-answer threshold that maximizes the score, as evaluate-v2.0.py finds it; returns (score %, thresh).

    Starts from answering "" everywhere (every unanswerable question right), then lowers the threshold past
    one question at a time in increasing `na_probs` order, taking its prediction instead: + its score for an
    answerable question, −1 for an unanswerable one given a non-empty answer. The threshold is the `na_probs`
    of the question where the running score last rose strictly (0.0 if it never did).

    Args:
        preds: question id → predicted text.
        scores: question id → raw EM or F1 (0..1) of the prediction.
        na_probs: question id → no-answer probability.
        qid_to_has_ans: question id → whether it is answerable.

    Example: three questions by na_prob: a (0.1, answerable, right), b (0.4, unanswerable, answered "x"),
    c (0.7, answerable, right). Start 1 (b); after a 2 (new best, thresh 0.1), after b 1, after c 2 (not
    strictly better): 2 of 3 right at threshold 0.1.

    >>> find_best_thresh({"a": "x", "b": "x", "c": "x"}, {"a": 1, "b": 0, "c": 1}, {"a": 0.1, "b": 0.4, "c": 0.7},
    ...                  {"a": True, "b": False, "c": True})
    (66.66666666666667, 0.1)
    """
    num_no_ans = sum(1 for qid in qid_to_has_ans if not qid_to_has_ans[qid])
    cur_score = num_no_ans
    best_score = cur_score
    best_thresh = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        if qid_to_has_ans[qid]:
            diff = scores[qid]
        else:
            diff = -1 if preds[qid] else 0
        cur_score += diff
        if cur_score > best_score:
            best_score = cur_score
            best_thresh = na_probs[qid]
    return 100.0 * best_score / len(scores), best_thresh


def _raw_scores(gold, preds):
    exact_scores = {}
    f1_scores = {}
    for qid, answers in gold:
        # Gold answers that normalize to nothing don't count; a question left with none only accepts "".
        gold_answers = [answer for answer in answers if normalize_answer(answer)] or [""]
        a_pred = preds[qid]
        exact_scores[qid] = max(compute_exact(a, a_pred) for a in gold_answers)
        f1_scores[qid] = max(compute_f1(a, a_pred) for a in gold_answers)
    return exact_scores, f1_scores


def _apply_no_ans_threshold(scores, na_probs, qid_to_has_ans, na_prob_thresh):
    return {qid: float(not qid_to_has_ans[qid]) if na_probs[qid] > na_prob_thresh else s
            for qid, s in scores.items()}


def _make_eval_dict(exact_scores, f1_scores, qid_list):
    if not qid_list:
        raise SquadError("no questions to evaluate")
    total = len(qid_list)
    return collections.OrderedDict([
        ("exact", 100.0 * sum(exact_scores[k] for k in qid_list) / total),
        ("f1", 100.0 * sum(f1_scores[k] for k in qid_list) / total),
        ("total", total),
    ])


def _list(obj, key, source, where):
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, list):
        raise SquadError(f"{source}: {where}: expected an object with a {key!r} list")
    return value


def _read_mapping(path, value_types, what):
    mapping = json_files.read_json(path, f"an object mapping question ids to {what}")
    if not isinstance(mapping, dict):
        raise SquadError(f"{path}: expected an object mapping question ids to {what}, got {type(mapping).__name__}")
    for qid, value in mapping.items():
        if not isinstance(value, value_types) or isinstance(value, bool):
            raise SquadError(f"{path}: expected an object mapping question ids to {what}; {qid!r} maps to "
                             f"{type(value).__name__}")
    return mapping
