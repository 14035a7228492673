"""Named-entity recognition on CoNLL files, as the paper's §5.3 fine-tunes BERT on CoNLL-2003, as a
`FineTuningTask`: run_ner.py's task logic.

    task = NerTask("conll2003")
    run_task(task, FineTuningSettings("out", "bert_config.json", "vocab.txt", do_lower_case=False, do_train=True,
                                      do_eval=True))

The data (CoNLL files, tag schemes, windows and their cache, conlleval, prediction files) is
`official_bert.ner`'s; this module adds the model, its loss and metric, the training stream, tagging and the export.
"""

import functools

import keras
import numpy as np
import tensorflow as tf
from absl import logging
from keras import ops

from official_bert import families, ner
from official_bert.export.ner import ner_serving_spec
from official_bert.finetuning.stream import TrainingRecords
from official_bert.finetuning.task import FineTuningTask
from official_bert.models import BertTokenClassifier
from official_bert.ner.features import IGNORE, feature_arrays
from official_bert.ner.jsonl import find_split_file, read_sentences

# Windows start this many pieces apart by default; a --max_seq_length whose windows are not longer gets half a
# window instead (the default must fit every length the tool accepts).
DOC_STRIDE = 64
# Each split: its file's name in messages, and the prefix of its result files.
_SPLITS = (("dev", "eval"), ("test", "test"))


class NerTask(FineTuningTask):
    """run_ner.py's task: CoNLL files (train.txt, valid.txt or dev.txt, test.txt) in any tag scheme, a
    `BertTokenClassifier` over IOB2 labels, conlleval's scores, prediction files in the input's scheme and a
    SavedModel that tags raw text.

    Args:
        data_dir: --data_dir.
        label_list: --label_list (None: the entity types of train.txt, sorted).
        doc_stride: --doc_stride (None: 64, or half a window where 64 does not fit).
        document_context: --document_context (fill windows with the sentences around them).
        tokens_column, tags_column: the keys of JSON Lines files' token and tag lists (`ner.jsonl`).

    Example:
    >>> task = NerTask("conll2003")
    >>> task.metric, task.stride(128), task.stride(64), task.stride(32)
    ('f1', 64, 31, 15)
    """

    name = "ner"
    metric = "f1"
    per_token_outputs = True

    def __init__(self, data_dir, label_list=None, doc_stride=None, document_context=False, tokens_column="tokens",
                 tags_column="ner_tags"):
        self.data_dir, self.label_list = data_dir, label_list
        self.columns = (tokens_column, tags_column)
        self.doc_stride, self.document_context = doc_stride, document_context
        self.labels, self.data = None, {}

    def stride(self, max_seq_length):
        """--doc_stride, or its default for `max_seq_length`."""
        if self.doc_stride is not None:
            return self.doc_stride
        return DOC_STRIDE if DOC_STRIDE < max_seq_length - 2 else max(1, (max_seq_length - 2) // 2)

    def check(self, settings):
        ner.check_window(settings.max_seq_length, self.stride(settings.max_seq_length))
        if settings.export_dir and settings.spm_model_file:
            raise ner.NerError("--export_dir needs --vocab_file: the served model splits raw text into words and "
                               "WordPieces with the in-graph WordPiece tokenizer")
        kind = settings.tokenizer_spec().kind if settings.export_dir else families.WORDPIECE
        if kind != families.WORDPIECE:
            raise ner.NerError(f"--export_dir: the served NER model splits raw text into words with the in-graph "
                               f"WordPiece tokenizer's BasicTokenizer; this checkpoint's tokenizer is a {kind} "
                               "(RoBERTa's, XLM-R's), for which no raw-text NER export is made yet: leave --export_dir "
                               "out (its checkpoint tags CoNLL files with --do_predict)")

    def load(self, settings, tokenizer):
        tokenizer = tokenizer.python_tokenizer()
        # Every file needed, read and checked before anything is written; the training windows last, converted
        # once and cached (a sweep's runs share their sweep's).
        train_path = find_split_file(self.data_dir, "train") if settings.do_train or not self.label_list else None
        train = read_sentences(train_path, *self.columns) if train_path else None
        self.labels = ner.label_map(self.label_list, train, train_path)
        splits = {split: find_split_file(self.data_dir, split)
                  for split, wanted in (("dev", settings.do_eval), ("test", settings.do_predict),
                                        ("train", settings.do_train)) if wanted}
        stride = self.stride(settings.max_seq_length)
        for split, path in splits.items():
            sentences = train if split == "train" else read_sentences(path, *self.columns)
            ner.check_tags(sentences, path, self.labels, "--label_list" if self.label_list else train_path)
            convert = (functools.partial(ner.cached_train_windows, cache_dir=settings.cache_dir)
                       if split == "train" else ner.convert_sentences_to_features)
            features = convert(sentences, tokenizer, self.labels, settings.max_seq_length, stride,
                               self.document_context)
            scheme = ner.detect_file_scheme(sentences, path)  # logs the line that decided it, warns on a mix
            self.data[split] = (path, sentences, features, scheme)
            logging.info("%s: %d sentences, %d words in %d windows", path, len(sentences),
                         sum(len(sentence.words) for sentence in sentences), len(features))
        logging.info("labels: %s", ", ".join(self.labels.labels))

    def build_model(self, encoder):
        return BertTokenClassifier(encoder, len(self.labels))

    def loss(self):
        return token_loss()

    def metrics(self):
        return [TokenAccuracy()]

    def num_train_examples(self):
        return len(self.data["train"][2])

    def train_records(self):
        windows = self.data["train"][2]
        return TrainingRecords(tf.data.Dataset.from_tensor_slices((windows.inputs, windows.labels)),
                               len(windows.labels), lambda inputs, labels: (inputs, labels), per_token_targets=True)

    def evaluate(self, predictor, settings):
        return ner.scores(self._tag("dev", predictor, settings.eval_batch_size)[1])

    def write_outputs(self, predictor, settings, directory):
        tables = {}
        for split, prefix in _SPLITS:
            if split not in self.data:
                continue
            path, sentences = self.data[split][:2]
            predicted, counts = self._tag(split, predictor,
                                          settings.eval_batch_size if split == "dev" else settings.predict_batch_size)
            logging.info("conlleval on %s:\n%s", path, ner.report(counts))
            logging.info("wrote %s", ner.write_predictions(f"{directory}/{prefix}_predictions.txt", sentences,
                                                           predicted))
            tables[f"{prefix}_results"] = {**ner.scores(counts), "gold_entities": sum(counts.gold.values()),
                                           "predicted_entities": sum(counts.guessed.values()),
                                           "correct_entities": sum(counts.correct.values())}
        return tables

    def serving_spec(self, tokenizer, seq_length):
        return ner_serving_spec(tokenizer, seq_length, self.labels.labels, self.stride(seq_length))

    def _tag(self, split, predictor, batch_size):
        """The split's predicted tags (in its file's scheme) and conlleval's counts of them."""
        _, sentences, features, scheme = self.data[split]
        logits = predict_logits(predictor, features, batch_size)
        predicted = ner.in_scheme(ner.word_tags(features, logits, sentences, self.labels), scheme)
        return predicted, ner.score(sentences, predicted)


def token_loss():
    """Softmax cross-entropy averaged over the labelled positions (first pieces of words); `IGNORE` is skipped.

    Example:
    >>> import numpy as np
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]]], "float32"))
    >>> loss = float(token_loss()(np.array([[IGNORE, 0, 1]]), logits))
    >>> round(loss, 4), round(float(-np.log(0.9 * 0.8) / 2), 4)
    (0.1643, 0.1643)
    """
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=IGNORE)


@keras.saving.register_keras_serializable(package="official_bert")
class TokenAccuracy(keras.metrics.Metric):
    """How many labelled positions (label ≠ `IGNORE`) the arg-max predicts right.

    Args:
        name: the metric's name.

    Example:
    >>> import numpy as np
    >>> metric = TokenAccuracy()
    >>> metric.update_state(np.array([[IGNORE, 0, 1]]), np.array([[[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]]))
    >>> float(metric.result())
    0.5
    """

    def __init__(self, name="accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.correct = self.add_variable(shape=(), initializer="zeros", dtype="float32", name="correct")
        self.total = self.add_variable(shape=(), initializer="zeros", dtype="float32", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labelled = ops.cast(ops.not_equal(y_true, IGNORE), "float32")
        right = ops.cast(ops.equal(ops.argmax(y_pred, axis=-1), ops.cast(y_true, "int64")), "float32")
        self.correct.assign_add(ops.sum(right * labelled))
        self.total.assign_add(ops.sum(labelled))

    def result(self):
        return ops.divide_no_nan(self.correct, self.total)

    def reset_state(self):
        self.correct.assign(0.0)
        self.total.assign(0.0)

    def get_config(self):
        return {"name": self.name}


def predict_logits(predictor, features, batch_size):
    """The model's logits [N, T, num_labels] for the features, in order.

    Args:
        predictor: a `finetuning.Predictor` of the model.
        features: `NerFeature`s.
        batch_size: the global prediction batch.
    """
    inputs, _ = feature_arrays(features)
    return predictor.predict_arrays(inputs, batch_size)
