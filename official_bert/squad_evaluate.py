"""The official SQuAD evaluation, standalone: the same JSON as evaluate-v1.1.py or evaluate-v2.0.py prints.

    python -m official_bert.squad_evaluate DATA_FILE PRED_FILE [--na_prob_file F] [--na_prob_thresh T]
        [--out_file F]

v1.1 data prints {"exact_match": ..., "f1": ...}. Data with unanswerable questions (SQuAD 2.0), or a
--na_prob_file (e.g. run_squad's null_odds.json), prints evaluate-v2.0's keys: exact, f1, total, HasAns_*,
NoAns_* and, with --na_prob_file, best_exact, best_exact_thresh, best_f1, best_f1_thresh. The official
scripts' dashed flag spellings (--na-prob-file, -n, ...) work too. Exit status 1 with a one-line message on
bad input.
"""

import argparse
import json
import sys

from official_bert.squad import evaluation, json_files
from official_bert.squad.errors import SquadError


def main(argv=None):
    """Runs the evaluation for command-line arguments `argv`; returns the exit status.

    Args:
        argv: the arguments after the program name (default: sys.argv[1:]).

    Example:
    >>> import json, os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> data, preds = os.path.join(work, "dev.json"), os.path.join(work, "predictions.json")
    >>> qas = [{"id": "q1", "question": "?", "answers": [{"text": "the Louvre", "answer_start": 0}]}]
    >>> _ = open(data, "w").write(json.dumps({"data": [{"paragraphs": [{"context": "the Louvre", "qas": qas}]}]}))
    >>> _ = open(preds, "w").write(json.dumps({"q1": "Louvre museum"}))
    >>> main([data, preds])
    {"exact_match": 0.0, "f1": 66.66666666666666}
    0
    """
    parser = argparse.ArgumentParser(prog="python -m official_bert.squad_evaluate",
                                     description="Official evaluation for SQuAD 1.1 and 2.0.")
    parser.add_argument("data_file", metavar="DATA_FILE", help="the SQuAD data JSON, e.g. dev-v1.1.json")
    parser.add_argument("pred_file", metavar="PRED_FILE", help="predictions JSON: question id -> answer")
    parser.add_argument("--na_prob_file", "--na-prob-file", "-n", metavar="F",
                        help="question id -> probability of no answer (e.g. null_odds.json); SQuAD 2.0 scoring")
    parser.add_argument("--na_prob_thresh", "--na-prob-thresh", "-t", type=float, default=1.0, metavar="T",
                        help='predict "" where the no-answer probability exceeds this (default 1.0)')
    parser.add_argument("--out_file", "--out-file", "-o", metavar="F",
                        help="write the scores to this file instead of printing them")
    args = parser.parse_args(argv)
    try:
        gold = evaluation.read_gold(args.data_file)
        predictions = evaluation.read_predictions(args.pred_file)
        na_probs = evaluation.read_na_probs(args.na_prob_file) if args.na_prob_file else None
        scores = evaluation.evaluate(gold, predictions, na_probs, args.na_prob_thresh,
                                   sources=(args.pred_file, args.na_prob_file))
    except SquadError as e:
        print(f"squad_evaluate: error: {e}", file=sys.stderr)
        return 1
    if args.out_file:
        json_files.write_json(args.out_file, scores, indent=None)
    elif "exact_match" in scores:
        print(json.dumps(scores))
    else:
        print(json.dumps(scores, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
