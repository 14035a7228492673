"""The fine-tuning tasks, one module each, every one a `FineTuningTask` that `finetuning.run_task` drives:

- `classification.ClassificationTask`: GLUE, XNLI, SWAG, STS-B and your own TSVs (run_classifier.py);
- `own_files.OwnFilesTask`: your own CSV, TSV or JSON Lines files with named columns, single-label, multi-label or
  regression (run_classifier.py --train_file ...);
- `squad.SquadTask`: SQuAD 1.1 and 2.0 (run_squad.py);
- `ner.NerTask`: CoNLL named-entity recognition (run_ner.py);
- `embeddings.EmbeddingTask`: sentence embeddings for search, sentence-transformers' losses (run_embeddings.py).

A new task is a new module here and a new tool in `official_bert/tools/` (docs/guides/adding-a-task.md).
"""

from official_bert.tasks.classification import ClassificationTask
from official_bert.tasks.embeddings import EmbeddingTask
from official_bert.tasks.ner import NerTask
from official_bert.tasks.own_files import OwnFilesTask
from official_bert.tasks.squad import SquadTask

__all__ = ["ClassificationTask", "EmbeddingTask", "NerTask", "OwnFilesTask", "SquadTask"]
