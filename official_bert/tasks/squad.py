"""SQuAD 1.1 / 2.0 question answering as a `FineTuningTask`: run_squad.py's task logic.

    task = SquadTask(train_file="train-v1.1.json", predict_file="dev-v1.1.json")
    run_task(task, FineTuningSettings("out", "bert_config.json", "vocab.txt", max_seq_length=384, do_train=True,
                                      do_eval=True))

The data (examples, windows and their cache, post-processing, the official scores) is `official_bert.squad`'s;
this module adds the span model, its loss, the training stream, the predictions and the export.
"""

import math

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from official_bert import squad
from official_bert.export.squad import squad_serving_spec
from official_bert.finetuning.stream import TrainingRecords
from official_bert.finetuning.task import FineTuningTask
from official_bert.models import BertSpanLabeler
from official_bert.squad import RawResult
from official_bert.squad.records import batch_parser

# The original's run_squad.py has no question longer than this by default; a shorter --max_seq_length gets half of
# its positions for the question instead (the default must fit every length the tool accepts).
MAX_QUERY_LENGTH = 64
# The original's loss: the mean of the start and end positions' cross-entropies.
SPAN_LOSS_WEIGHTS = {"start_logits": 0.5, "end_logits": 0.5}


class SquadTask(FineTuningTask):
    """run_squad.py's task: SQuAD JSON files, a `BertSpanLabeler`, the original's prediction files, the official
    scores and a SavedModel that answers raw (question, context) pairs. SQuAD's dev set is its test set: a run
    trains for its whole schedule (no checkpoint is chosen on dev).

    Args:
        train_file: --train_file (with --do_train).
        predict_file: --predict_file (with --do_predict or --do_eval).
        doc_stride: --doc_stride.
        max_query_length: --max_query_length (None: 64, or half of the room besides [CLS] and two [SEP] where 64
            leaves no room for the paragraph).
        n_best_size, max_answer_length, verbose_logging, version_2_with_negative, null_score_diff_threshold:
            the original's flags.
        find_best_threshold: choose the SQuAD 2.0 null threshold that maximizes F1 on predict_file (with
            --do_eval), predict and export with it.

    Example:
    >>> task = SquadTask(predict_file="dev-v1.1.json")
    >>> task.metric, task.query_length(128), task.query_length(64)
    ('f1', 64, 30)
    """

    name = "squad"
    metric = "f1"
    loss_weights = SPAN_LOSS_WEIGHTS
    per_token_outputs = True

    def __init__(self, train_file=None, predict_file=None, doc_stride=128, max_query_length=None, n_best_size=20,
                 max_answer_length=30, verbose_logging=False, version_2_with_negative=False,
                 null_score_diff_threshold=0.0, find_best_threshold=False):
        self.train_file, self.predict_file = train_file, predict_file
        self.doc_stride, self.max_query_length = doc_stride, max_query_length
        self.n_best_size, self.max_answer_length = n_best_size, max_answer_length
        self.verbose_logging = verbose_logging
        self.version_2_with_negative = version_2_with_negative
        self.threshold = null_score_diff_threshold
        self.find_best_threshold = find_best_threshold
        self.train = self.examples = self.features = None

    def query_length(self, max_seq_length):
        """--max_query_length, or its default for `max_seq_length`."""
        if self.max_query_length is not None:
            return self.max_query_length
        return MAX_QUERY_LENGTH if max_seq_length > MAX_QUERY_LENGTH + 3 else max(1, (max_seq_length - 3) // 2)

    def check(self, settings):
        """The original's validate_flags_or_throw, and the added flags' rules."""
        if settings.spm_model_file:
            raise squad.SquadError("--spm_model_file: run_squad.py tokenizes with a WordPiece --vocab_file (the "
                                   "answers are mapped back to the text through its pieces)")
        if settings.do_train and not self.train_file:
            raise squad.SquadError("--do_train needs --train_file (a SQuAD JSON file)")
        if (settings.do_predict or settings.do_eval) and not self.predict_file:
            raise squad.SquadError("--do_predict and --do_eval need --predict_file (a SQuAD JSON file)")
        if self.find_best_threshold and not (settings.do_eval and self.version_2_with_negative):
            raise squad.SquadError("--find_best_threshold needs --do_eval and --version_2_with_negative: it "
                                   "chooses the SQuAD 2.0 null threshold on --predict_file's answers")
        squad.check_lengths(settings.max_seq_length, self.doc_stride, self.query_length(settings.max_seq_length))
        for name, value in (("n_best_size", self.n_best_size), ("max_answer_length", self.max_answer_length)):
            if value < 1:
                raise squad.SquadError(f"--{name}={value}: expected a positive integer")

    def load(self, settings, tokenizer):
        self.do_lower_case, self.seq_length = tokenizer.do_lower_case, settings.max_seq_length
        tokenizer = tokenizer.python_tokenizer()
        lengths = dict(max_seq_length=settings.max_seq_length, doc_stride=self.doc_stride,
                       max_query_length=self.query_length(settings.max_seq_length))
        # The training features are converted once and cached (shuffled with the original's fixed seed, not
        # --seed: a sweep's runs share them); the prediction features stay in memory, where post-processing
        # needs them.
        if settings.do_train:
            self.train = squad.cached_train_features(self.train_file, tokenizer, settings.cache_dir,
                                                     version_2_with_negative=self.version_2_with_negative, **lengths)
            logging.info("training on %d features of %d questions (%d skipped: answer not found in the text)",
                         self.train.num_features, self.train.num_examples, self.train.num_skipped)
        if settings.do_predict or settings.do_eval:
            self.examples = squad.read_squad_examples(self.predict_file, is_training=False)
            self.features = list(squad.convert_examples_to_features(self.examples, tokenizer, is_training=False,
                                                                    **lengths))
            logging.info("predicting %d questions in %d features", len(self.examples), len(self.features))
            if not self.features:
                raise squad.SquadError(f"--predict_file={self.predict_file}: no question to answer")

    def build_model(self, encoder):
        return BertSpanLabeler(encoder)

    def loss(self):
        return span_loss()

    def metrics(self):
        return span_metrics()

    def num_train_examples(self):
        return self.train.num_examples  # the original counts steps from the questions, not their windows

    def train_records(self):
        # Per-batch padding is off by default (--length_bucket_width=0): the original's softmax covers every
        # position.
        return squad_train_records(self.train.path, self.train.num_features, self.seq_length)

    def evaluate(self, predictor, settings):
        return self._predict(predictor, settings, directory=None)

    def write_outputs(self, predictor, settings, directory):
        if not (settings.do_predict or settings.do_eval):
            return {}
        scores = self._predict(predictor, settings, directory)
        return {"eval_results": scores} if settings.do_eval else {}

    def serving_spec(self, tokenizer, seq_length):
        return squad_serving_spec(tokenizer, seq_length, doc_stride=self.doc_stride,
                                  max_query_length=self.query_length(seq_length), n_best_size=self.n_best_size,
                                  max_answer_length=self.max_answer_length,
                                  version_2_with_negative=self.version_2_with_negative,
                                  null_score_diff_threshold=self.threshold)

    def _predict(self, predictor, settings, directory):
        """Answers predict_file's questions; with `directory`, writes the prediction files there. Returns the
        official scores (with --do_eval; with --find_best_threshold the threshold chosen, which the export then
        uses), else {}."""
        results = predict_spans(predictor, self.features, settings.predict_batch_size)
        version_2 = self.version_2_with_negative

        def predictions(threshold):
            return squad.compute_predictions(self.examples, self.features, results, self.n_best_size,
                                             self.max_answer_length, self.do_lower_case, version_2, threshold,
                                             self.verbose_logging)

        gold = squad.read_gold(self.predict_file) if settings.do_eval else None
        if self.find_best_threshold:
            # Every question's best span with its null odds, so that the search sees every possible threshold.
            candidates = predictions(math.inf)
            self.threshold = squad.evaluate(gold, candidates.predictions, candidates.null_odds)["best_f1_thresh"]
            logging.info("best --null_score_diff_threshold on %s: %s", self.predict_file, self.threshold)
        answers = predictions(self.threshold)
        if directory is not None:
            for path in squad.write_predictions(answers, directory):
                logging.info("wrote %s", path)
        if not settings.do_eval:
            return {}
        scores = dict(squad.evaluate(gold, answers.predictions, answers.null_odds if version_2 else None))
        if version_2:
            scores["null_score_diff_threshold"] = self.threshold
        return scores


def span_loss():
    """Softmax cross-entropy of the start and of the end position (weighted by `SPAN_LOSS_WEIGHTS`)."""
    return {name: keras.losses.SparseCategoricalCrossentropy(from_logits=True) for name in SPAN_LOSS_WEIGHTS}


def span_metrics():
    """How often the start and the end position are right, reported while training."""
    # Keras prefixes the output's name: start_logits_accuracy, end_logits_accuracy.
    return {name: [keras.metrics.SparseCategoricalAccuracy("accuracy")] for name in SPAN_LOSS_WEIGHTS}


def squad_train_records(path, num_features, seq_length):
    """The training windows' `TrainingRecords`: batches are ({"input_word_ids", "input_mask", "input_type_ids"},
    {"start_logits", "end_logits"}), the targets named after the outputs they train.

    Args:
        path: the training TFRecords (`cached_train_features(...).path`).
        num_features: the records in it.
        seq_length: --max_seq_length.
    """
    parse_features = batch_parser(seq_length, is_training=True)

    def parse(records):
        inputs, targets = parse_features(records)
        return inputs, {"start_logits": targets["start_positions"], "end_logits": targets["end_positions"]}

    return TrainingRecords(tf.data.TFRecordDataset(path), num_features, parse)


def predict_spans(predictor, features, batch_size):
    """The model's start and end logits for each prediction feature, as `RawResult`s in the features' order.

    Args:
        predictor: a `Predictor` of the `BertSpanLabeler`.
        features: `InputFeatures` (from `convert_examples_to_features(..., is_training=False)`), a list.
        batch_size: the global prediction batch (the features are padded to a multiple of it).

    Example:
    >>> from official_bert import BertConfig, BertEncoder
    >>> from official_bert.finetuning.predict import Predictor
    >>> from official_bert.squad import InputFeatures
    >>> model = BertSpanLabeler(BertEncoder(BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1,
    ...                                                num_attention_heads=2, intermediate_size=32)))
    >>> features = [InputFeatures(1000000000 + i, i, 0, [], {}, {}, [2, 5, 3, 0], [1, 1, 1, 0], [0, 0, 1, 0])
    ...             for i in range(3)]
    >>> results = predict_spans(Predictor(model, tf.distribute.get_strategy()), features, batch_size=2)
    >>> [result.unique_id for result in results], len(results[0].start_logits)
    ([1000000000, 1000000001, 1000000002], 4)
    """
    arrays = {name: np.array([getattr(f, field) for f in features], np.int32)
              for name, field in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                                  ("input_type_ids", "segment_ids"))}
    logits = predictor.predict_arrays(arrays, batch_size)
    return [RawResult(f.unique_id, start, end)
            for f, start, end in zip(features, logits["start_logits"], logits["end_logits"])]
