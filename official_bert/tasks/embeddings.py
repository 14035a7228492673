"""Sentence embeddings for search as a `FineTuningTask`: a `TextEmbedder` trained on pairs, triplets or scored pairs
with sentence-transformers' losses, evaluated by retrieval (a BEIR set: MRR@10, NDCG@10, MAP@100, recall@k) or STS
(Spearman of the cosine similarities) — run_embeddings.py's task logic.

    task = EmbeddingTask(train_file="pairs.jsonl", eval_dir="beir/", pooling="mean")
    run_task(task, FineTuningSettings("out", "config.json", "vocab.txt", init_checkpoint="all-MiniLM-L6-v2",
                                      do_train=True, do_eval=True, keep_best=True))

What `run_task` does for every task stays its: the training stream (shuffled passes, whole batches, per-batch
padding, resuming at any step), the schedule and optimizer, checkpoints, the best checkpoint by the task's metric,
evaluation after each epoch, the export. This module adds the rows (every column tokenized once, in the graph), the
loss, the model `fit` trains (each column embedded on its own; a cached loss's gradient in mini-batches), the
evaluation, and writes the trained model in output_dir as a sentence-transformers directory as well (config.json,
model.safetensors, modules.json, ...: `SentenceTransformer(output_dir)` and `TextEmbedder.from_checkpoint(output_dir)`
load it).

Duplicates: a text that is a row's anchor or positive is left out of that row's in-batch softmax wherever else it
appears in the batch (the loss compares the batch's text ids), rather than kept out of the batch as
sentence-transformers' NoDuplicatesBatchSampler does: the batches stay a function of the seed and the step, so a
resumed run reads the batches an uninterrupted one reads.
"""

import json
import os

import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.batch_padding import padding_bucket_width
from official_bert import families
from official_bert.checkpoints import kinds
from official_bert.configs import BertConfig
from official_bert.export.embedding import embedding_serving_spec
from official_bert.finetuning.stream import TrainingRecords
from official_bert.finetuning.task import FineTuningTask
from official_bert.io import write_text
from official_bert.keras_models.embedder import TextEmbedder
from official_bert.keras_models.preprocessor import TextPreprocessor
from official_bert.keras_models.text_model import packed_rows
from official_bert.retrieval import losses
from official_bert.retrieval.beir import read_beir
from official_bert.retrieval.contrastive_model import ContrastiveModel, stack_columns
from official_bert.retrieval.errors import RetrievalDataError
from official_bert.retrieval.evaluation import evaluate_retrieval, evaluate_similarity
from official_bert.retrieval.metrics import DEFAULT_CUTOFFS
from official_bert.retrieval.search import DEFAULT_CHUNK_SIZE
from official_bert.retrieval.training_files import PAIRS, SCORED, RowColumns, read_training_rows

# --loss: the sentence-transformers class each name is, and the rows it takes.
LOSSES = {"multiple_negatives_ranking": PAIRS, "cached_multiple_negatives_ranking": PAIRS, "cosent": SCORED,
          "cosine_similarity": SCORED}
RANKINGS_FILE = "test_rankings.jsonl"
_PACK_CHUNK = 4096  # texts tokenized at once when embedding
# The largest --scale: beyond it the softmax is a hard maximum, and scaled cosines near float32's range overflow.
MAX_SCALE = 1000.0


class EmbeddingTask(FineTuningTask):
    """run_embeddings.py's task.

    Args:
        train_file: the training rows (--train_file): pairs or triplets for the ranking losses, scored pairs for
            cosent and cosine_similarity.
        columns: the `training_files.RowColumns` (--anchor_column, ..., --score_column); also the dev file's.
        input_format: "csv", "tsv" or "jsonl" (--input_format); None from each extension.
        loss: one of `LOSSES`.
        scale: the cosine similarities' multiplier (sentence-transformers' 20).
        symmetric: the ranking losses' backward term (each positive over the anchors) too.
        mini_batch_size: the cached loss's mini-batch.
        matryoshka_dims: train (and evaluate) at these widths too (`MatryoshkaLoss`); None: the full width only.
        matryoshka_weights: one weight a width; default 1 each.
        pooling, normalize: the embedding (a sentence-transformers --init_checkpoint's own by default).
        eval_dir: a BEIR directory (corpus.jsonl, queries.jsonl, qrels/) for --do_eval (`eval_split`) and
            --do_predict (`test_split`).
        eval_split, test_split: the qrels files' names.
        dev_file: scored pairs for an STS evaluation with --do_eval (instead of, or beside, eval_dir).
        best_metric: the dev results key --keep_best chooses by (without "eval_"); default ndcg@10 for retrieval,
            spearman_cosine for STS.
        corpus_chunk_size: passages embedded and searched at once.
        export_dimensions: the exported model serves the first this many dimensions; None: all.

    Example:
    >>> task = EmbeddingTask(train_file="pairs.jsonl", eval_dir="beir", matryoshka_dims=[384, 128])
    >>> task.metric, task.evaluation_names()[:3]
    ('eval_ndcg@10', ['eval_mrr@10', 'eval_ndcg@10', 'eval_map@100'])
    """

    name = "embeddings"
    # torch's AdamW, sentence-transformers' optimizer: BERT's omits Adam's bias correction, which makes the first few
    # hundred updates up to several times larger — a short fine-tuning at sentence-transformers' learning rates
    # would take other steps.
    optimizer_options = {"bias_correction": True}

    def __init__(self, train_file=None, columns=RowColumns(), input_format=None, loss="multiple_negatives_ranking",
                 scale=losses.SCALE, symmetric=False, mini_batch_size=32, matryoshka_dims=None,
                 matryoshka_weights=None, pooling="mean", normalize=True, eval_dir=None, eval_split="dev",
                 test_split="test", dev_file=None, best_metric=None, corpus_chunk_size=DEFAULT_CHUNK_SIZE,
                 export_dimensions=None):
        if loss not in LOSSES:
            raise RetrievalDataError(f"--loss={loss}: expected one of {', '.join(LOSSES)}")
        for flag, value in (("--mini_batch_size", mini_batch_size), ("--corpus_chunk_size", corpus_chunk_size)):
            if not (isinstance(value, int) and value >= 1):
                raise RetrievalDataError(f"{flag}={value}: expected a positive integer")
        if not (isinstance(scale, (int, float)) and 0 < scale <= MAX_SCALE):
            raise RetrievalDataError(f"--scale={scale}: expected a positive number up to {MAX_SCALE:g} (1 / the "
                                     "temperature; sentence-transformers' is 20)")
        self.train_file, self.columns, self.input_format = train_file, columns, input_format
        self.loss_name, self.kind = loss, LOSSES[loss]
        self.scale, self.symmetric, self.mini_batch_size = float(scale), symmetric, mini_batch_size
        self.matryoshka_dims = _widths(matryoshka_dims, "--matryoshka_dims")
        self.matryoshka_weights = None if matryoshka_weights is None else [float(w) for w in matryoshka_weights]
        if self.matryoshka_weights is not None:
            if not self.matryoshka_dims or len(self.matryoshka_weights) != len(self.matryoshka_dims):
                raise RetrievalDataError("--matryoshka_weights: expected one weight for each of --matryoshka_dims")
            if not all(0 <= w < float("inf") for w in self.matryoshka_weights) or not any(self.matryoshka_weights):
                raise RetrievalDataError(f"--matryoshka_weights={matryoshka_weights}: expected finite weights >= 0, "
                                         "not all 0")
        self.pooling, self.normalize = pooling, normalize
        self.eval_dir, self.eval_split, self.test_split, self.dev_file = eval_dir, eval_split, test_split, dev_file
        self.corpus_chunk_size = corpus_chunk_size
        self.export_dimensions = _widths([export_dimensions] if export_dimensions else None, "--export_dimensions")
        if best_metric and not (eval_dir or dev_file):
            raise RetrievalDataError(f"--best_metric={best_metric}: there is no evaluation to choose by (give "
                                     "--eval_dir or --dev_file)")
        metric = best_metric or ("ndcg@10" if eval_dir else "spearman_cosine")
        self.metric = f"eval_{metric.removeprefix('eval_')}" if (eval_dir or dev_file) else None
        if self.metric and self.metric not in self.evaluation_names():
            raise RetrievalDataError(f"--best_metric={best_metric}: not one of the evaluation's figures "
                                     f"({', '.join(n.removeprefix('eval_') for n in self.evaluation_names())})")
        self.preprocessor = self.rows = self.dev_set = self.dev_pairs = self.test_set = None
        self.records, self.bucket_width, self.trained = None, None, None

    def evaluation_names(self):
        """The keys of `evaluate`'s results."""
        widths = [None] + [d for d in self.matryoshka_dims or [] if d != max(self.matryoshka_dims)]
        names = []
        if self.eval_dir:
            names += [f"eval_{metric}@{k}" for metric, ks in DEFAULT_CUTOFFS.items() for k in ks]
        if self.dev_file:
            names += ["eval_pearson_cosine", "eval_spearman_cosine"]
        return [f"{name}{'' if width is None else f'_dim{width}'}" for width in widths for name in names]

    def check(self, settings):
        for flag, source, given in (("do_train", "--train_file", self.train_file),
                                    ("do_eval", "--eval_dir or --dev_file", self.eval_dir or self.dev_file),
                                    ("do_predict", "--eval_dir", self.eval_dir)):
            if getattr(settings, flag) and not given:
                raise RetrievalDataError(f"--{flag} needs {source}")
        if self.train_file and not settings.do_train:
            raise RetrievalDataError("--train_file is given but --do_train is not: pass --do_train, or leave "
                                     "--train_file out")
        width = BertConfig.from_json_file(settings.bert_config_file).hidden_size
        for flag, dims in (("--matryoshka_dims", self.matryoshka_dims), ("--export_dimensions",
                                                                         self.export_dimensions)):
            if dims and max(dims) > width:
                raise RetrievalDataError(f"{flag}={max(dims)}: wider than the model's embeddings ({width})")
        self._check_outputs(settings)
        self.bucket_width = padding_bucket_width(settings.length_bucket_width, None, settings.jit_compile)

    def load(self, settings, tokenizer):
        self.preprocessor = TextPreprocessor.from_spec(tokenizer, settings.max_seq_length)
        self._pack = text_packer(self.preprocessor)
        if settings.do_train:
            self.rows = read_training_rows(self.train_file, self.kind, self.columns, self.input_format)
            if self.kind == PAIRS and len(self.rows.columns) == 2 and settings.train_batch_size < 2:
                raise RetrievalDataError(f"--train_batch_size={settings.train_batch_size}: in-batch negatives need "
                                         "at least 2 pairs a batch (the other pairs' positives are the negatives)")
            logging.info("%s: %d rows of %s", self.train_file, len(self.rows), ", ".join(self.rows.columns))
        if settings.do_eval and self.eval_dir:
            self.dev_set = read_beir(self.eval_dir, self.eval_split)
        if settings.do_eval and self.dev_file:
            self.dev_pairs = read_training_rows(self.dev_file, SCORED, self.columns, self.input_format,
                                                flag="--dev_file")
        if settings.do_predict:
            self.test_set = read_beir(self.eval_dir, self.test_split)
        if settings.do_train:
            self.records = self._records()

    def build_model(self, encoder):
        """The `TextEmbedder` on `encoder`; the first one built is the model `run_task` trains and loads the
        weights to use into, which `write_outputs` writes as a sentence-transformers directory."""
        model = TextEmbedder(encoder, self.preprocessor, self.pooling, self.normalize)
        self.trained = self.trained or model
        return model

    def training_model(self, model):
        return ContrastiveModel(model, self.mini_batch_size if self.loss_name.startswith("cached") else None,
                                self.bucket_width)

    def loss(self):
        if self.kind == SCORED:
            loss = losses.CoSENTLoss(self.scale) if self.loss_name == "cosent" else losses.CosineSimilarityLoss()
        elif self.loss_name.startswith("cached"):
            loss = losses.CachedMultipleNegativesRankingLoss(self.mini_batch_size, self.scale, self.symmetric)
        else:
            loss = losses.MultipleNegativesRankingLoss(self.scale, self.symmetric)
        if self.matryoshka_dims:
            loss = losses.MatryoshkaLoss(loss, self.matryoshka_dims, self.matryoshka_weights)
        return loss

    def num_train_examples(self):
        return len(self.rows)

    def train_records(self):
        return self.records

    def evaluate(self, predictor, settings):
        embed = self.embedding_function(predictor, settings.eval_batch_size)
        dims = [d for d in self.matryoshka_dims or [] if d != max(self.matryoshka_dims)]
        figures = {}
        if self.dev_set:
            figures.update(evaluate_retrieval(self.dev_set, embed, corpus_chunk_size=self.corpus_chunk_size,
                                              dims=dims)[0])
        if self.dev_pairs:
            figures.update(evaluate_similarity(*self.dev_pairs.texts, self.dev_pairs.scores, embed, dims))
        return {f"eval_{name}": value for name, value in figures.items()}

    def write_outputs(self, predictor, settings, directory):
        tables = {"eval_results": self.evaluate(predictor, settings)} if settings.do_eval else {}
        if self.test_set:
            figures, (scores, rankings) = evaluate_retrieval(
                self.test_set, self.embedding_function(predictor, settings.predict_batch_size),
                corpus_chunk_size=self.corpus_chunk_size)
            tables["test_results"] = {f"test_{name}": value for name, value in figures.items()}
            lines = [json.dumps({"query_id": query_id, "results": [
                {"corpus_id": corpus_id, "score": round(float(score), 6)} for corpus_id, score in zip(ids, row)]})
                for query_id, ids, row in zip(self.test_set.query_ids, rankings, scores)]
            logging.info("wrote %s", write_text(os.path.join(directory, RANKINGS_FILE), "\n".join(lines) + "\n"))
        family, tokenizer = self.trained.encoder.config.family, self.preprocessor.spec.kind
        if family or tokenizer != families.WORDPIECE:
            logging.warning("a %s model has no sentence-transformers form here: none written", family or tokenizer)
            return tables
        self.trained.save_sentence_transformers(directory)
        logging.info("wrote the model as a sentence-transformers directory: %s", directory)
        return tables

    def serving_spec(self, tokenizer, seq_length):
        return embedding_serving_spec(tokenizer, seq_length, (self.export_dimensions or [None])[0], self.normalize)

    def embedding_function(self, predictor, batch_size):
        """texts → their embeddings from the model `predictor` runs (`embedding_function`)."""
        return embedding_function(predictor, self._pack, batch_size, self.trained.encoder.config.hidden_size)

    def _records(self):
        """One pass of the training rows: each column's token ids (tokenized once, unpadded), the rows' text ids
        and scores; the parser pads a batch's columns to its longest text as the encoder's inputs [B, C, L]."""
        rows = self.rows
        count, columns = len(rows), len(rows.columns)
        ids = packed_rows(self._pack, tf.constant([t.encode("utf-8") for column in rows.texts for t in column]))[
            "input_word_ids"]
        records = {"columns": tuple(ids[c * count:(c + 1) * count] for c in range(columns)),
                   "targets": rows.scores if rows.scores is not None else rows.text_ids}
        scored = rows.scores is not None

        def parse(batch):
            inputs = [{"input_word_ids": column.to_tensor(), "input_mask": tf.sequence_mask(
                column.row_lengths(), tf.shape(column.to_tensor())[1], tf.int32)} for column in batch["columns"]]
            for column in inputs:
                column["input_type_ids"] = tf.zeros_like(column["input_mask"])
            targets = batch["targets"] if scored else losses.batch_text_ids(batch["targets"])
            return stack_columns(inputs), targets

        return TrainingRecords(tf.data.Dataset.from_tensor_slices(records), count, parse)

    def _check_outputs(self, settings):
        """Refuses a run whose outputs would overwrite one of its inputs (a file it reads inside output_dir)."""
        written = {"config.json", "model.safetensors", "modules.json", "tokenizer.json", "tokenizer_config.json",
                   "vocab.txt", "sentence_bert_config.json", "config_sentence_transformers.json", "README.md",
                   RANKINGS_FILE, kinds.RECORD_NAME, "eval_results.txt", "eval_results.json", "test_results.txt",
                   "test_results.json", "bert_config.json"}
        inputs = {"--train_file": self.train_file, "--dev_file": self.dev_file}
        for flag, path in inputs.items():
            if path and os.path.dirname(os.path.abspath(path)) == os.path.abspath(settings.output_dir) and \
                    os.path.basename(path) in written:
                raise RetrievalDataError(f"{flag}={path} is a file the run writes in --output_dir: give another "
                                         "--output_dir")


def text_packer(preprocessor):
    """`preprocessor` as a `tf.function` of a string tensor [N] of any N: traced once (the tokenizer's graph takes
    seconds to trace), whatever the number of texts."""
    return tf.function(preprocessor, input_signature=[tf.TensorSpec([None], tf.string)])


def embedding_function(predictor, pack, batch_size, width):
    """texts → their embeddings [n, width] (float32), in the texts' order: tokenized in the graph a few thousand at a
    time, batched by length (less padding), run by `predictor`.

    Args:
        predictor: a `finetuning.Predictor` of a `TextEmbedder`.
        pack: its `TextPreprocessor` as `text_packer` makes it (once: each new one traces the tokenizer anew).
        batch_size: texts a batch.
        width: the embeddings' width.
    """
    def embed(texts):
        parts = [np.zeros([0, width], np.float32)]
        for start in range(0, len(texts), _PACK_CHUNK):
            chunk = tf.constant([t.encode("utf-8") for t in texts[start:start + _PACK_CHUNK]], tf.string)
            packed = packed_rows(pack, chunk)
            order = np.argsort(packed["input_mask"].row_lengths().numpy(), kind="stable")
            inputs = {name: value.to_tensor().numpy()[order] for name, value in packed.items()}
            vectors = np.empty([len(order), width], np.float32)
            vectors[order] = predictor.predict_arrays(inputs, batch_size)
            parts.append(vectors)
        return np.concatenate(parts)

    return embed


def _widths(values, flag):
    if values is None:
        return None
    widths = [int(v) if isinstance(v, (int, np.integer)) or (isinstance(v, float) and v.is_integer()) else v
              for v in values]
    if not widths or not all(isinstance(w, int) and w >= 1 for w in widths) or len(set(widths)) < len(widths):
        raise RetrievalDataError(f"{flag}={','.join(map(str, values))}: expected distinct positive widths")
    return widths
