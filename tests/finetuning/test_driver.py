"""`run_task` in-process with a fake task: the run-level flags reach what the driver builds — --mixed_precision the
encoder, --length_bucket_width / --bucket_by_length the training stream, --do_lower_case and
--preserve_unused_tokens both the features' tokenizer and the served one — without the task reading them."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier
from official_bert.export.saved_model import ServingSpec
from official_bert.export.text import TextPacker
from official_bert.finetuning import FineTuningSettings, FineTuningTask, driver, run_task, stream
from official_bert.finetuning.stream import TrainingRecords

SEQ_LENGTH = 16
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "hi", "Hi", "there", "[", "]", "unused0", "a"]
# Lengths 3..10 words: per-batch padding has something to cut.
TEXTS = [" ".join(["a"] * n) + " Hi [unused0]" for n in range(1, 9)] * 2


class FakeTask(FineTuningTask):
    """Labels each text by its length's parity; records what the driver hands it."""

    name, metric = "fake", "accuracy"

    def __init__(self):
        self.encoders = []

    def load(self, settings, tokenizer):
        self.tokenizer = tokenizer
        python = tokenizer.python_tokenizer()
        rows = [[2] + python.convert_tokens_to_ids(python.tokenize(text))[:SEQ_LENGTH - 2] + [3] for text in TEXTS]
        self.ids = np.array([row + [0] * (SEQ_LENGTH - len(row)) for row in rows], np.int32)
        self.labels = np.array([len(row) % 2 for row in rows], np.int32)

    def build_model(self, encoder):
        self.encoders.append(encoder)
        return BertClassifier(encoder, 2)

    def loss(self):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def num_train_examples(self):
        return len(self.labels)

    def train_records(self):
        inputs = {"input_word_ids": self.ids, "input_mask": np.sign(self.ids),
                  "input_type_ids": np.zeros_like(self.ids)}
        return TrainingRecords(tf.data.Dataset.from_tensor_slices((inputs, self.labels)), len(self.labels),
                               lambda batch_inputs, labels: (batch_inputs, labels))

    def evaluate(self, predictor, settings):
        return {"accuracy": 0.0}

    def write_outputs(self, predictor, settings, directory):
        return {}

    def serving_spec(self, tokenizer, seq_length):
        packer = TextPacker(tokenizer.layer(), seq_length, pad_to_longest=True)

        def serve_text(call_model, text):
            packed = packer.pack(text)
            return {"input_word_ids": packed["input_word_ids"], "logits": call_model(packed)}

        return ServingSpec({"text": tf.TensorSpec([None], tf.string)}, serve_text, lambda logits: {"logits": logits},
                           (seq_length,), (packer.tokenizer,))


@pytest.fixture
def model_files(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(token + "\n" for token in VOCAB))
    config = tmp_path / "bert_config.json"
    config.write_text(json.dumps({"vocab_size": len(VOCAB), "hidden_size": 16, "num_hidden_layers": 1,
                                  "num_attention_heads": 2, "intermediate_size": 32,
                                  "max_position_embeddings": 32, "type_vocab_size": 2, "hidden_act": "gelu",
                                  "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
                                  "initializer_range": 0.02}))
    return str(vocab), str(config)


def test_run_level_flags_reach_the_model_the_stream_and_the_served_tokenizer(tmp_path, model_files, monkeypatch):
    vocab, config = model_files
    streams = []
    dataset_fn = stream.TrainingRecords.dataset_fn

    def recording(records, batch_size, seed, bucket_width=None, bucket_by_length=False):
        streams.append((bucket_width, bucket_by_length))
        return dataset_fn(records, batch_size, seed, bucket_width, bucket_by_length)

    monkeypatch.setattr(stream.TrainingRecords, "dataset_fn", recording)
    task = FakeTask()
    settings = FineTuningSettings(str(tmp_path / "out"), config, vocab, do_lower_case=False,
                                  preserve_unused_tokens=True, max_seq_length=SEQ_LENGTH, do_train=True,
                                  train_batch_size=4, num_train_epochs=1, length_bucket_width=4,
                                  bucket_by_length=True, mixed_precision="bf16", log_steps=1,
                                  export_dir=str(tmp_path / "export"), export_precision="fp32",
                                  export_tflite_dir=str(tmp_path / "lite"))
    lines = []
    monkeypatch.setattr(driver.logging, "info", lambda message, *args: lines.append(message % args))
    run_task(task, settings)

    # The model: the encoder computes in --mixed_precision; the export's, in --export_precision, and the run says so.
    assert [encoder.get_layer("pooler").dtype_policy.name for encoder in task.encoders] == ["mixed_bfloat16",
                                                                                            "float32"]
    assert lines[-1] == "the export computed in float32 (--export_precision=fp32); trained in bfloat16"
    # The stream: per-batch padding to a multiple of 4, length buckets.
    assert streams == [(4, True)]
    widths = {int(inputs["input_mask"].shape[1]) for inputs, _ in dataset_fn(task.train_records(), 4, 1, 4, True)(0)
              .take(4)}
    assert widths <= {4, 8, 12, 16} and len(widths) > 1
    # The features' tokenizer: cased, [unused0] whole ("Hi" is 7, "[unused0]" 5, "a" 12).
    assert task.ids[0].tolist()[:5] == [2, 12, 7, 5, 3]
    # The served tokenizer: the same ids from raw text.
    served = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    assert served(text=tf.constant(["a Hi [unused0]"]))["input_word_ids"].numpy().tolist() == [[2, 12, 7, 5, 3]]
    # --export_tflite_dir: the export, converted.
    assert (tmp_path / "lite" / "model.tflite").read_bytes()[4:8] == b"TFL3"


def test_the_spec_is_checked_before_anything_is_written(tmp_path, model_files):
    from official_bert.text.tokenization import VocabError

    vocab, config = model_files
    settings = FineTuningSettings(str(tmp_path / "out"), config, spm_model_file=str(tmp_path / "m.model"),
                                  preserve_unused_tokens=True, do_train=True)
    with pytest.raises(VocabError, match="--preserve_unused_tokens"):
        run_task(FakeTask(), settings)
    assert not (tmp_path / "out").exists()
