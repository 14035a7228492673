"""SQuAD 1.1 and 2.0 for run_squad.py: the original's data processing, post-processing and official scores.

Pipeline:
1. `read_squad_examples` → `SquadExample`s (whitespace words, answer positions; unfindable answers skipped).
2. `convert_examples_to_features` → `InputFeatures` (WordPiece windows with `doc_stride`, max-context flags,
   answer positions); `cached_train_features` / `write_feature_records` put them in TFRecords and
   `feature_dataset` reads them back under the models' input names.
3. The model's logits per feature as `RawResult`s → `compute_predictions` (n-best spans, original text,
   SQuAD 2.0 null answers) → `write_predictions` (predictions.json, nbest_predictions.json, null_odds.json).
4. `read_gold` + `evaluate` → the official evaluate-v1.1 / evaluate-v2.0 scores
   (also `python -m official_bert.squad_evaluate`).
"""

from official_bert.squad.cache import CachedFeatures, cached_train_features
from official_bert.squad.errors import SquadError
from official_bert.squad.evaluation import (GoldQuestion, evaluate, evaluate_v1, evaluate_v2, find_best_thresh,
                                          read_gold, read_na_probs, read_predictions)
from official_bert.squad.examples import SquadExample, SquadExamples, read_squad_examples
from official_bert.squad.features import InputFeatures, check_lengths, convert_examples_to_features
from official_bert.squad.postprocess import RawResult, SquadPredictions, compute_predictions, write_predictions
from official_bert.squad.records import feature_dataset, write_feature_records
