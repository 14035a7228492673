"""run_squad's task logic: the span model and its loss, training batches, and the model's logits for prediction."""

import keras
import numpy as np
import tensorflow as tf

from official_bert.models import BertSpanLabeler
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.finetuning.stream import training_batches
from official_bert.squad import RawResult
from official_bert.squad.records import batch_parser
from official_bert.training.options import MIXED_PRECISION_POLICIES

# The original's loss: the mean of the start and end positions' cross-entropies.
SPAN_LOSS_WEIGHTS = {"start_logits": 0.5, "end_logits": 0.5}


def span_model(config, mixed_precision=None):
    """A `BertSpanLabeler` on a new encoder (computing in `mixed_precision`; the logits are float32).

    Example:
    >>> from official_bert import BertConfig
    >>> model = span_model(BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                               intermediate_size=32))
    >>> sorted(model.output)
    ['end_logits', 'start_logits']
    """
    return BertSpanLabeler(BertEncoder(config, dtype=MIXED_PRECISION_POLICIES.get(mixed_precision)))


def span_loss():
    """Softmax cross-entropy of the start and of the end position (weighted by `SPAN_LOSS_WEIGHTS`)."""
    return {name: keras.losses.SparseCategoricalCrossentropy(from_logits=True) for name in SPAN_LOSS_WEIGHTS}


def span_metrics():
    """How often the start and the end position are right, reported while training."""
    # Keras prefixes the output's name: start_logits_accuracy, end_logits_accuracy.
    return {name: [keras.metrics.SparseCategoricalAccuracy("accuracy")] for name in SPAN_LOSS_WEIGHTS}


def squad_train_dataset_fn(path, num_features, seq_length, batch_size, seed, bucket_width=None,
                           bucket_by_length=False, shuffle_buffer_size=10000):
    """step → the training batches from that global step on: the stream of `stream.training_batches` over the
    features (pass k shuffled with seed + k, whole batches across passes), the same for the same step and seed.

    Args:
        path: the training TFRecords (`cached_train_features(...).path`).
        num_features: the records in it.
        seq_length: --max_seq_length.
        batch_size: the global batch.
        seed: --seed.
        bucket_width: pad each batch to its longest window, rounded up to a multiple of this
            (`batch_padding.padding_bucket_width`); None: every batch at seq_length.
        bucket_by_length: batch windows of similar lengths together.
        shuffle_buffer_size: records in the shuffle buffer (the examples were shuffled when cached, too).

    Batches are ({"input_word_ids", "input_mask", "input_type_ids"}, {"start_logits", "end_logits"}): the targets
    named after the outputs they train.
    """
    parse_features = batch_parser(seq_length, is_training=True)

    def parse(records):
        inputs, targets = parse_features(records)
        return inputs, {"start_logits": targets["start_positions"], "end_logits": targets["end_positions"]}

    def dataset(step):
        return training_batches(tf.data.TFRecordDataset(path), num_features, batch_size, seed, parse, step,
                                bucket_width, bucket_by_length, shuffle_buffer_size)

    return dataset


def predict_spans(predictor, features, batch_size):
    """The model's start and end logits for each prediction feature, as `RawResult`s in the features' order.

    Args:
        predictor: a `Predictor` of the `BertSpanLabeler`.
        features: `InputFeatures` (from `convert_examples_to_features(..., is_training=False)`), a list.
        batch_size: the global prediction batch (the features are padded to a multiple of it).

    Example:
    >>> from official_bert import BertConfig
    >>> from official_bert.finetuning.predict import Predictor
    >>> from official_bert.squad import InputFeatures
    >>> model = span_model(BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
    ...                               intermediate_size=32))
    >>> features = [InputFeatures(1000000000 + i, i, 0, [], {}, {}, [2, 5, 3, 0], [1, 1, 1, 0], [0, 0, 1, 0])
    ...             for i in range(3)]
    >>> results = predict_spans(Predictor(model, tf.distribute.get_strategy()), features, batch_size=2)
    >>> [result.unique_id for result in results], len(results[0].start_logits)
    ([1000000000, 1000000001, 1000000002], 4)
    """
    padding = -len(features) % batch_size
    arrays = {name: np.array([getattr(f, field) for f in features] + [[0] * len(features[0].input_ids)] * padding,
                             np.int32)
              for name, field in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                                  ("input_type_ids", "segment_ids"))}
    unique_ids = np.array([f.unique_id for f in features] + [0] * padding, np.int64)
    real = np.array([1.0] * len(features) + [0.0] * padding, np.float32)
    dataset = tf.data.Dataset.from_tensor_slices((arrays, unique_ids, real)).batch(batch_size)
    logits, unique_ids, real = predictor(dataset)
    return [RawResult(int(unique_id), start, end)
            for unique_id, start, end in zip(unique_ids[real > 0], logits["start_logits"][real > 0],
                                             logits["end_logits"][real > 0])]
