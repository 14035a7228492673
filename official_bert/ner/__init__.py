"""Named-entity recognition's data for run_ner.py (the model and training: `official_bert.tasks.ner`), as the
paper's §5.3 fine-tunes BERT on CoNLL-2003.

Pipeline:
1. `read_conll` → `Sentence`s (words, tags, documents) of a CoNLL file; `label_map` → the model's IOB2 labels
   from --label_list or the training file, `check_tags` that a file fits them (tags in any of IOB1, IOB2, IOBES,
   BILOU: `tags`; `detect_file_scheme` says which line decided a file's scheme, and warns when it mixes them).
2. `convert_sentences_to_features` → `NerFeature`s: WordPiece windows, the first piece of each word labelled,
   optionally packed with document context (the training set's once, cached: `cached_train_windows`);
   `feature_arrays` makes them arrays.
3. `word_tags` → each word's tag from its max-context window; `in_scheme` writes them in the file's scheme,
   `write_predictions` the file conlleval reads.
4. `score` / `count_chunks` → conlleval's counts; `report` its text, `scores` its figures.
"""

from official_bert.ner.cache import TrainWindows, cached_train_windows
from official_bert.ner.conll import SPLIT_FILES, Sentence, detect_file_scheme, read_conll, split_path
from official_bert.ner.conlleval import ChunkCounts, count_chunks, report, scores
from official_bert.ner.errors import NerError
from official_bert.ner.features import IGNORE, NerFeature, check_window, convert_sentences_to_features, feature_arrays
from official_bert.ner.labels import LabelMap, check_tags, label_map
from official_bert.ner.predictions import in_scheme, score, word_tags, write_predictions
from official_bert.ner.tags import SCHEMES, chunks, detect_scheme, scheme_evidence, split_tag, to_scheme
