"""Start/end logits → answers, exactly as the original run_squad.py's `write_predictions`.

For each example, candidate spans come from every window: the `n_best_size` best start and end positions,
kept when the span lies in the paragraph part, start ≤ end, it is at most `max_answer_length` tokens and
the window is the start token's max-context window. Candidates are ranked by start + end logit, mapped back
to the original text (`get_final_text`) and deduplicated. SQuAD 2.0 adds the null answer, scored by the
[CLS] logits of the window where they are smallest, and predicts "" when that score exceeds the best
non-null one by more than `null_score_diff_threshold`.
"""

import collections
import dataclasses
import math
import os

from official_bert.squad import json_files
from official_bert.squad.errors import SquadError
from official_bert.squad.final_text import get_final_text

RawResult = collections.namedtuple("RawResult", ["unique_id", "start_logits", "end_logits"])
RawResult.__doc__ = """The model's output for one feature: its `unique_id` and start/end logits per position."""

_Candidate = collections.namedtuple("_Candidate", ["feature_index", "start_index", "end_index", "start_logit",
                                                   "end_logit"])
_NbestEntry = collections.namedtuple("_NbestEntry", ["text", "start_logit", "end_logit"])

# The original's starting point for the smallest null score over windows: larger than any real one.
_NO_NULL_SCORE = 1000000


@dataclasses.dataclass
class SquadPredictions:
    """What `write_predictions` writes: one answer, n-best list and (SQuAD 2.0) null odds per question id.

    Args:
        predictions: qas_id → answer text ("" for no answer); predictions.json.
        nbest: qas_id → list of {"text", "probability", "start_logit", "end_logit"}, best first;
            nbest_predictions.json.
        null_odds: qas_id → null score minus the best non-null score (SQuAD 2.0; empty for 1.1);
            null_odds.json, the evaluator's `na_prob_file`.

    Example:
    >>> SquadPredictions({"q1": "Ann"}, {"q1": []}, {}).predictions["q1"]
    'Ann'
    """

    predictions: dict
    nbest: dict
    null_odds: dict


def compute_predictions(examples, features, results, n_best_size, max_answer_length, do_lower_case,
                        version_2_with_negative=False, null_score_diff_threshold=0.0, verbose_logging=False):
    """The answers to `examples` given the model's logits for their `features`.

    Args:
        examples: the `SquadExample`s (from `read_squad_examples(..., is_training=False)`).
        features: their `InputFeatures` (from `convert_examples_to_features(..., is_training=False)`).
        results: a `RawResult` per feature, in any order.
        n_best_size: candidate start and end positions per window, and entries per n-best list.
        max_answer_length: longest answer, in WordPiece tokens.
        do_lower_case: as the tokenizer's (for mapping answers back to the original text).
        version_2_with_negative: consider the null answer (SQuAD 2.0).
        null_score_diff_threshold: predict "" when null score − best non-null score exceeds this.
        verbose_logging: log why an answer could not be mapped back character by character.

    Returns `SquadPredictions`. Raises SquadError when a feature has no result.

    Example:
    >>> from official_bert.squad.examples import SquadExample
    >>> from official_bert.squad.features import InputFeatures
    >>> example = SquadExample("q1", "Who ran?", ["Ann", "ran."])
    >>> feature = InputFeatures(1000000000, 0, 0, ["[CLS]", "who", "ran", "?", "[SEP]", "ann", "ran", ".", "[SEP]"],
    ...                         {5: 0, 6: 1, 7: 1}, {5: True, 6: True, 7: True}, [], [], [])
    >>> logits = [0, 0, 0, 0, 0, 3, 1, 0, 0]
    >>> out = compute_predictions([example], [feature], [RawResult(1000000000, logits, logits)], n_best_size=3,
    ...                           max_answer_length=30, do_lower_case=True)
    >>> out.predictions
    {'q1': 'Ann'}
    >>> [(e["text"], e["start_logit"], e["end_logit"]) for e in out.nbest["q1"]]
    [('Ann', 3.0, 3.0), ('Ann ran', 3.0, 1.0), ('ran', 1.0, 1.0)]
    """
    example_index_to_features = collections.defaultdict(list)
    for feature in features:
        example_index_to_features[feature.example_index].append(feature)
    unique_id_to_result = {result.unique_id: result for result in results}

    out = SquadPredictions({}, {}, {})
    for example_index, example in enumerate(examples):
        example_features = example_index_to_features[example_index]
        logits = []
        for feature in example_features:
            result = unique_id_to_result.get(feature.unique_id)
            if result is None:
                raise SquadError(f"no model output (RawResult) for feature {feature.unique_id} of question "
                                 f"{example.qas_id!r}")
            logits.append(([float(x) for x in result.start_logits], [float(x) for x in result.end_logits]))
        candidates, null, score_null = _candidates(example_features, logits, n_best_size, max_answer_length,
                                                   version_2_with_negative)
        nbest = _nbest(example, example_features, candidates, null, n_best_size, do_lower_case,
                       version_2_with_negative, verbose_logging)
        probs = _compute_softmax([entry.start_logit + entry.end_logit for entry in nbest])
        out.nbest[example.qas_id] = [
            {"text": entry.text, "probability": prob, "start_logit": entry.start_logit, "end_logit": entry.end_logit}
            for entry, prob in zip(nbest, probs)]
        if not version_2_with_negative:
            out.predictions[example.qas_id] = nbest[0].text
            continue
        best_non_null = next((entry for entry in nbest if entry.text), None)
        # With no non-null candidate at all (e.g. an empty paragraph) the original crashed; the answer is "",
        # its odds the null score's.
        score_diff = score_null
        if best_non_null is not None:
            score_diff = score_null - best_non_null.start_logit - best_non_null.end_logit
        out.null_odds[example.qas_id] = score_diff
        if best_non_null is None or score_diff > null_score_diff_threshold:
            out.predictions[example.qas_id] = ""
        else:
            out.predictions[example.qas_id] = best_non_null.text
    return out


def write_predictions(predictions, output_dir):
    """Writes predictions.json, nbest_predictions.json and, for SQuAD 2.0, null_odds.json; returns their paths.

    Each file appears only when complete. The layout is the original's (JSON, 4-space indent).

    Example:
    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> paths = write_predictions(SquadPredictions({"q1": ""}, {"q1": []}, {"q1": 1.5}), out)
    >>> sorted(os.listdir(out))
    ['nbest_predictions.json', 'null_odds.json', 'predictions.json']
    """
    outputs = {"predictions.json": predictions.predictions, "nbest_predictions.json": predictions.nbest}
    if predictions.null_odds:
        outputs["null_odds.json"] = predictions.null_odds
    paths = []
    for name, value in outputs.items():
        paths.append(os.path.join(output_dir, name))
        json_files.write_json(paths[-1], value)
    return paths


def _candidates(features, logits, n_best_size, max_answer_length, version_2_with_negative):
    """The valid spans of every window, best first; the null candidate and its score (SQuAD 2.0)."""
    candidates = []
    score_null = _NO_NULL_SCORE
    null = _Candidate(0, 0, 0, 0.0, 0.0)
    for feature_index, (feature, (start_logits, end_logits)) in enumerate(zip(features, logits)):
        if version_2_with_negative and start_logits[0] + end_logits[0] < score_null:
            score_null = start_logits[0] + end_logits[0]
            null = _Candidate(feature_index, 0, 0, start_logits[0], end_logits[0])
        for start_index in _get_best_indexes(start_logits, n_best_size):
            for end_index in _get_best_indexes(end_logits, n_best_size):
                # Spans that start or end in the question or padding, are reversed or too long, or whose start
                # has more context in another window are not answers.
                if (start_index >= len(feature.tokens) or end_index >= len(feature.tokens)
                        or start_index not in feature.token_to_orig_map or end_index not in feature.token_to_orig_map
                        or not feature.token_is_max_context.get(start_index, False) or end_index < start_index
                        or end_index - start_index + 1 > max_answer_length):
                    continue
                candidates.append(_Candidate(feature_index, start_index, end_index, start_logits[start_index],
                                             end_logits[end_index]))
    if version_2_with_negative:
        candidates.append(null)
    candidates.sort(key=lambda c: c.start_logit + c.end_logit, reverse=True)
    return candidates, null, score_null


def _nbest(example, features, candidates, null, n_best_size, do_lower_case, version_2_with_negative,
           verbose_logging):
    """The best `n_best_size` distinct answer texts, with the null answer kept or added for SQuAD 2.0. A feature
    of a tokenizer of BERT's family has its tokens' spans (`token_spans`): the answer is the words' text between
    them, as transformers' question answering takes the context between its tokens' offsets."""
    seen = set()
    nbest = []
    for candidate in candidates:
        if len(nbest) >= n_best_size:
            break
        if candidate.start_index > 0:
            feature = features[candidate.feature_index]
            if feature.token_spans is not None:
                start, end = feature.token_spans[candidate.start_index][0], feature.token_spans[candidate.end_index][1]
                text = " ".join(example.doc_tokens)[start:end].strip()
            else:
                tok_text = " ".join(feature.tokens[candidate.start_index:candidate.end_index + 1])
                tok_text = " ".join(tok_text.replace(" ##", "").replace("##", "").split())
                orig_doc_start = feature.token_to_orig_map[candidate.start_index]
                orig_doc_end = feature.token_to_orig_map[candidate.end_index]
                orig_text = " ".join(example.doc_tokens[orig_doc_start:orig_doc_end + 1])
                text = get_final_text(tok_text, orig_text, do_lower_case, verbose_logging)
            if text in seen:
                continue
        else:
            text = ""
        seen.add(text)
        nbest.append(_NbestEntry(text, candidate.start_logit, candidate.end_logit))
    if version_2_with_negative and "" not in seen:
        nbest.append(_NbestEntry("", null.start_logit, null.end_logit))
    # The original's stand-in when no span is valid, so that every question gets an answer.
    if not nbest:
        nbest.append(_NbestEntry("empty", 0.0, 0.0))
    return nbest


def _get_best_indexes(logits, n_best_size):
    """Indexes of the `n_best_size` largest logits, largest first (ties: lower index first)."""
    return [i for i, _ in sorted(enumerate(logits), key=lambda x: x[1], reverse=True)[:n_best_size]]


def _compute_softmax(scores):
    """Softmax of a list of floats, in plain Python as the original (so probabilities match it exactly)."""
    if not scores:
        return []
    max_score = max(scores)
    exp_scores = [math.exp(score - max_score) for score in scores]
    total_sum = 0.0
    for score in exp_scores:  # not sum(): Python 3.12's compensated sum() rounds differently
        total_sum += score
    return [score / total_sum for score in exp_scores]
