"""Long documents in run_classifier (--doc_stride): windows in Python and in the graph, training on every window,
a document predicted from the mean (or max) of its windows' logits."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert import BertClassifier, BertEncoder, distribution
from official_bert.classification import (InputExample, convert_single_example, feature_dataset, get_processor,
                                          load_or_create_features)
from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import MultipleChoiceExample
from official_bert.classification.features import convert_example_windows
from official_bert.classification.windows import document_outputs, pool_windows
from official_bert.export import TextPacker, classifier_serving_spec, export_classifier
from official_bert.export.windows import document_windows
from official_bert.finetuning import FineTuningRun, Predictor, fine_tuning_schedule
from official_bert.tasks.classification import (classifier_loss, classifier_metrics, evaluate_classifier,
                                                train_records)
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.tokenization import FullTokenizer
from tests.finetuning.test_run_classifier import options, tiny_config, write_model_files

TEXTS = [("the cat sat . the dog ran . a good film", None), ("", None), ("good", "the dog"),
         ("the cat sat . the dog ran . " * 3, "is it good ?"), ("a dull plot", ""), ("a dull plot", "\u200b"),
         ("very good", "the very good movie is not dull " * 3), ("the film was not good " * 4, "the plot " * 6)]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    return write_model_files(str(tmp_path_factory.mktemp("model")))[0]


def window_starts(num_tokens, room, stride):
    """The SQuAD scheme written out: starts every min(stride, room) tokens until a window reaches the end."""
    starts = [0]
    while starts[-1] + room < num_tokens:
        starts.append(starts[-1] + min(stride, room))
    return starts


@pytest.mark.parametrize("seq_length,doc_stride", [(8, 3), (10, 4), (8, 20), (12, 1)])
def test_windows_in_the_graph_equal_the_python_windows(vocab, seq_length, doc_stride):
    tokenizer = FullTokenizer(vocab)
    features = [convert_example_windows(InputExample(f"dev-{i}", a, b, "1"), ["0", "1"], seq_length, tokenizer,
                                        doc_stride, i) for i, (a, b) in enumerate(TEXTS)]
    windows = document_windows(TextPacker(TokenizerSpec(vocab).layer(), seq_length), seq_length, doc_stride,
                               tf.constant([a for a, _ in TEXTS]), tf.constant([b or "" for _, b in TEXTS]))
    flat = [w for document in features for w in document]
    assert windows.num_windows.numpy().tolist() == [len(document) for document in features]
    assert windows.example.numpy().tolist() == [w.example_index for w in flat]
    for name, field in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                        ("input_type_ids", "segment_ids")):
        assert windows.inputs[name].numpy().tolist() == [getattr(w, field) for w in flat]

    for (a, b), document in zip(TEXTS, features):
        # The first window is what truncation keeps: the original's features.
        truncated = convert_single_example(InputExample("x", a, b, "1"), ["0", "1"], seq_length, tokenizer)
        assert document[0].input_ids == truncated.input_ids and document[0].segment_ids == truncated.segment_ids
        # text_a's tokens, window after window, at the written-out starts; text_b whole in each.
        tokens_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(a))
        pieces = [[i for i, m, s in zip(w.input_ids, w.input_mask, w.segment_ids) if m and not s][1:-1]
                  for w in document]  # [CLS] A [SEP]
        tails = {tuple(i for i, s in zip(w.input_ids, w.segment_ids) if s == 1) for w in document}
        assert len(tails) == 1  # B [SEP], the same in every window (empty for a single text)
        room = seq_length - 2 - len(tails.pop())
        starts = window_starts(len(tokens_a), room, doc_stride)
        assert pieces == [tokens_a[s:s + room] for s in starts], (a, b)
    assert max(len(document) for document in features) >= 3


def test_multiple_choice_and_bad_pooling_are_refused(vocab):
    example = MultipleChoiceExample("dev-0", "the cat", ("sat", "ran"), "0")
    with pytest.raises(ClassificationDataError, match="--doc_stride=4: multiple-choice"):
        convert_example_windows(example, ["0", "1"], 8, FullTokenizer(vocab), 4)
    with pytest.raises(ClassificationDataError, match="--doc_stride=4: multiple-choice"):
        classifier_serving_spec(TokenizerSpec(vocab), 8, ["0", "1"], num_choices=2, doc_stride=4)
    with pytest.raises(ClassificationDataError, match="--window_pooling=sum"):
        classifier_serving_spec(TokenizerSpec(vocab), 8, ["0", "1"], doc_stride=4, window_pooling="sum")


def test_pooling_against_a_loop():
    rng = np.random.default_rng(0)
    index = np.sort(rng.integers(0, 5, 20))
    index[:5] = np.arange(5)
    index = np.sort(index)
    logits = rng.normal(size=(20, 3))
    for pooling, reduce in (("mean", np.mean), ("max", np.max)):
        want = [reduce(logits[index == e], axis=0) for e in range(5)]
        np.testing.assert_allclose(pool_windows(logits, index, 5, pooling), want)


# The synthetic task: every document is the same 72 tokens of filler, then the sentence that gives its label —
# past token 64, where a model of max_position_embeddings=64 cannot look without windows.
FILLER = "the cat sat . the dog ran . " * 9
ENDINGS = {"1": ["the movie is good , very good .", "a great story , a good film .", "she is nice , so nice ."],
           "0": ["the film was awful , very bad .", "a dull plot , a poor film .", "he is bad , so bad ."]}
SEQ_LENGTH, DOC_STRIDE = 32, 16


def write_documents(data_dir, repeat):
    os.makedirs(data_dir, exist_ok=True)
    rows = [(FILLER + ending, label) for label, endings in ENDINGS.items() for ending in endings]
    for name, count in (("train.tsv", repeat), ("dev.tsv", 1)):
        with open(os.path.join(data_dir, name), "w") as f:
            f.write("sentence\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in rows * count))
    with open(os.path.join(data_dir, "test.tsv"), "w") as f:
        f.write("index\tsentence\n" + "".join(f"{i}\t{text}\n" for i, (text, _) in enumerate(rows)))
    return rows


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny classifier trained on every window of the synthetic documents, with its features."""
    work = tmp_path_factory.mktemp("long_documents")
    vocab = write_model_files(str(work / "model"))[0]
    rows = write_documents(str(work / "data"), repeat=4)
    tokenizer = FullTokenizer(vocab)
    assert len(tokenizer.tokenize(FILLER)) == 72  # the label-bearing words start at token 72, past 64
    processor = get_processor("single", str(work / "data"), label_list="0,1")
    features = {(split, stride): load_or_create_features(
        processor, split, tokenizer, SEQ_LENGTH, str(work / "run"), tokenizer_file=vocab, do_lower_case=True,
        pad_to_multiple_of=1 if split == "train" else 4, doc_stride=stride)
        for split in ("train", "dev") for stride in (0, DOC_STRIDE)}
    train = features["train", DOC_STRIDE]
    assert train.num_windows == 5 * train.num_examples and train.num_examples == len(rows) * 4
    strategy = distribution.get_strategy("one_device")
    keras.utils.set_random_seed(11)
    config = tiny_config(max_position_embeddings=64)
    with strategy.scope():
        model = BertClassifier(BertEncoder(config), 2, dropout_rate=0.0)
    # The windows without the label (4 of 5) carry no signal: it takes some 300 steps to find the one that does.
    opts = options(str(work / "run"), train_batch_size=8, learning_rate=2e-3, seed=11)
    schedule = fine_tuning_schedule(train.num_features, 8, 24, 0.1)
    run = FineTuningRun(model, classifier_loss(processor), opts, schedule, strategy, classifier_metrics(processor))
    run.train(train_records(train).dataset_fn(8, 11))
    return dict(work=work, vocab=vocab, rows=rows, processor=processor, features=features, model=model,
                predictor=Predictor(model, strategy))


# About a minute on 2 quiet cores, most of it the fixture's 360 training steps.
@pytest.mark.slow
def test_a_label_past_the_window_is_found_with_windows_and_missed_without(trained):
    evaluate = {stride: evaluate_classifier(trained["predictor"], trained["processor"],
                                            {"dev": trained["features"]["dev", stride]}, 4)
                for stride in (0, DOC_STRIDE)}
    assert evaluate[DOC_STRIDE]["eval_accuracy"] == 1.0
    # Truncated, every document is the same filler: one answer for all, right for half of them.
    assert evaluate[0]["eval_accuracy"] == 0.5


@pytest.mark.slow
def test_the_export_gives_the_python_per_document_probabilities(trained):
    dev = trained["features"]["dev", DOC_STRIDE]
    logits, labels, real = trained["predictor"](feature_dataset(dev, 4, with_sample_weights=True))
    texts = tf.constant([text for text, _ in trained["rows"]])
    python = {}
    for pooling in ("mean", "max"):
        documents, document_labels = document_outputs(dev, logits, labels, real, pooling)
        assert documents.shape == (len(trained["rows"]), 2)
        assert document_labels.tolist() == [int(label) for _, label in trained["rows"]]
        python[pooling] = documents
    # Every document has 5 windows, in order, then the batch padding.
    assert dev.num_windows == 5 * dev.num_examples and dev.num_padding == -dev.num_windows % 4
    np.testing.assert_allclose(python["mean"], logits[:dev.num_windows].reshape(-1, 5, 2).mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(python["max"], logits[:dev.num_windows].reshape(-1, 5, 2).max(axis=1), rtol=1e-6)

    path = export_classifier(str(trained["work"] / "export"), trained["model"], TokenizerSpec(trained["vocab"]),
                             SEQ_LENGTH, ["0", "1"], doc_stride=DOC_STRIDE)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    served = serve(text_a=texts)
    np.testing.assert_allclose(served["logits"].numpy(), python["mean"], atol=1e-5)
    np.testing.assert_allclose(served["probabilities"].numpy(), tf.nn.softmax(python["mean"]).numpy(), atol=1e-5)
    assert served["label"].numpy().tolist() == [label.encode() for _, label in trained["rows"]]
    one = serve(text_a=texts[-1:])  # a request of one document
    np.testing.assert_allclose(one["probabilities"].numpy(), tf.nn.softmax(python["mean"][-1:]).numpy(), atol=1e-5)

    # --window_pooling=max, through the same graph code as the export.
    spec = classifier_serving_spec(TokenizerSpec(trained["vocab"]), SEQ_LENGTH, ["0", "1"], doc_stride=DOC_STRIDE,
                                   window_pooling="max")
    served = spec.serve_text(lambda inputs: trained["model"](inputs, training=False), text_a=texts)
    np.testing.assert_allclose(served["logits"].numpy(), python["max"], atol=1e-5)
