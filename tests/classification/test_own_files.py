"""Your own files as examples, labels, class weights, metrics, thresholds, losses and predictions (#34)."""

import csv
import json
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from official_bert.classification import ClassificationDataError, feature_dataset, load_or_create_features
from official_bert.classification.label_metrics import (binary_cross_entropy, choose_thresholds, multi_label_metrics,
                                                        single_label_metrics)
from official_bert.classification.losses import ClassWeightedCrossentropy, MultiLabelCrossentropy
from official_bert.classification.own_files import (Columns, OwnFilesProcessor, class_weights, read_label_file,
                                                    write_label_file)
from official_bert.classification.predictions import write_predictions
from official_bert.errors import Error
from official_bert.tokenization import FullTokenizer

ROWS = [
    {"ticket": "t-1", "subject": "Login, again", "body": 'He said "it broke"', "tags": "bug|ui", "junk": "x"},
    {"ticket": "t-2", "subject": "multi\nline", "body": "crlf\r\ninside", "tags": "question", "junk": ""},
    {"ticket": "t-3", "subject": "tab\tand,comma", "body": "café — naïve", "tags": "", "junk": "y"},
    {"ticket": "t-4", "subject": '""', "body": "'single'", "tags": "ui | bug", "junk": "z"},
]


def write_csv(path, rows, fieldnames, bom=True):
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)
    return path


def test_examples_of_a_csv_module_file_equal_dict_reader_rows(tmp_path):
    path = write_csv(str(tmp_path / "train.csv"), ROWS, ["junk", "tags", "body", "ticket", "subject"])
    with open(path, encoding="utf-8-sig", newline="") as f:
        expected = list(csv.DictReader(f))
    processor = OwnFilesProcessor({"train": path}, Columns("subject", "body", "tags", "ticket"), label_separator="|")
    examples = processor.get_examples("train")
    assert [(e.text_a, e.text_b) for e in examples] == [(row["subject"], row["body"]) for row in expected]
    assert [e.label for e in examples] == [("bug", "ui"), ("question",), (), ("ui", "bug")]
    assert processor.label_list == ("bug", "question", "ui")
    assert list(processor.ids("train")) == [row["ticket"] for row in expected]
    assert processor.label_counts == {"bug": 2, "ui": 2, "question": 1} and processor.num_train_rows == 4


def test_kinds_and_label_order(tmp_path):
    single = write_jsonl(str(tmp_path / "s.jsonl"), [{"text": "a", "label": 10}, {"text": "b", "label": 2},
                                                     {"text": "c", "label": 2.0}])
    assert OwnFilesProcessor({"train": single}).label_list == ("2", "10")  # integers sorted as numbers
    multi = write_jsonl(str(tmp_path / "m.jsonl"), [{"text": "a", "label": ["z", "y"]}, {"text": "b", "label": []}])
    processor = OwnFilesProcessor({"train": multi})
    assert (processor.kind, processor.label_list, processor.placeholder_label) == ("multi_label", ("y", "z"), ())
    regression = write_jsonl(str(tmp_path / "r.jsonl"), [{"text": "a", "label": 0.25}, {"text": "b", "label": "4"}])
    processor = OwnFilesProcessor({"train": regression}, regression=True)
    assert processor.is_regression and [e.label for e in processor.get_examples("train")] == [0.25, 4.0]


def test_labels_saved_and_used_without_a_training_file(tmp_path):
    train = write_csv(str(tmp_path / "train.csv"), [{"text": "a", "label": "pos"}, {"text": "b", "label": "neg"}],
                      ["text", "label"])
    test = write_csv(str(tmp_path / "test.csv"), [{"text": "c"}], ["text"])
    run = str(tmp_path / "run")
    write_label_file(run, OwnFilesProcessor({"train": train}))
    processor = OwnFilesProcessor({"test": test}, saved=read_label_file(None, os.path.join(run, "ckpt-3")))
    assert processor.label_list == ("neg", "pos") and processor.get_examples("test")[0].label == "neg"
    with pytest.raises(ClassificationDataError, match="the labels are unknown: without --train_file"):
        OwnFilesProcessor({"test": test})


@pytest.mark.parametrize("rows,settings,expected", [
    ([{"text": "a", "label": "pos"}, {"text": "b", "label": "meh"}], {},
     r"dev.jsonl, row 2: label 'meh' is not one of the labels neg, pos \(those of the training file\)"),
    ([{"text": "a", "label": 0.5}], {}, r"dev.jsonl, row 1: label 0.5 in column 'label' is a number, not a class; "
                                        "pass --regression"),
    ([{"text": "a", "label": "0.5"}], {}, r"row 1: label '0.5' in column 'label' is a number, not a class"),
    ([{"text": "a", "label": "pos"}], {"regression": True},
     r"train.jsonl, row 1: label 'pos' in column 'label' is not a number \(--regression expects float labels\)"),
    ([{"text": " ", "label": "pos"}], {}, r"dev.jsonl, row 1: column 'text' is an empty text"),
    ([{"text": "a", "label": ["pos"]}], {}, r"dev.jsonl, row 1: label \['pos'\] in column 'label' is a list"),
    ([{"text": "a", "label": "pos"}], {"multi_label": True}, r"train.jsonl, row 1: label 'pos' in column 'label' "
                                                             "is not a list of labels; give a JSON list, or "
                                                             "--label_separator"),
    ([{"text": "a", "labels": "pos"}], {}, r"dev.jsonl, row 1: no column 'label' \(its columns: text, labels\)"),
    ([{"text": None, "label": "pos"}], {}, r"dev.jsonl, row 1, column 'text' is None, not a text"),
    ([{"text": 12, "label": "pos"}], {}, r"dev.jsonl, row 1, column 'text' is a number \(12\), not a text"),
    ([{"text": ["a"], "label": "pos"}], {}, r"dev.jsonl, row 1, column 'text' is a list \['a'\], not a text"),
    ([{"text": "a", "label": None}], {}, r"dev.jsonl, row 1: label null in column 'label' is not a class name"),
    ([{"text": "a", "label": "  "}], {}, r"dev.jsonl, row 1, column 'label': the label is empty"),
    ([{"text": "a", "label": "Pos"}], {}, r"dev.jsonl, row 1: label 'Pos' is not one of the labels neg, pos \(those "
                                         r"of the training file\); 'Pos' and 'pos' differ only in case$"),
])
def test_bad_labels_and_texts_name_file_and_row(tmp_path, rows, settings, expected):
    train = write_jsonl(str(tmp_path / "train.jsonl"), [{"text": "x", "label": "neg"}, {"text": "y", "label": "pos"}]
                        if not settings else [{"text": "x", "label": rows[0].get("label")}])
    dev = write_jsonl(str(tmp_path / "dev.jsonl"), rows)
    with pytest.raises(Error) as raised:
        processor = OwnFilesProcessor({"train": train, "dev": dev}, **settings)
        processor.get_examples("dev")
    assert "\n" not in str(raised.value)
    assert re.search(expected, str(raised.value)), str(raised.value)


def test_balanced_class_weights_as_scikit_learn(tmp_path):
    labels = ["a"] * 95 + ["b"] * 5
    train = write_jsonl(str(tmp_path / "train.jsonl"), [{"text": "t", "label": c} for c in labels])
    # scikit-learn's compute_class_weight("balanced"): n_samples / (n_classes * np.bincount(y)).
    assert class_weights("balanced", OwnFilesProcessor({"train": train})) == pytest.approx([100 / 190, 100 / 10])
    with pytest.raises(ClassificationDataError, match=r"--class_weights=1,2,3: expected 'balanced' or 2 positive"):
        class_weights("1,2,3", OwnFilesProcessor({"train": train}))
    multi = write_jsonl(str(tmp_path / "m.jsonl"), [{"text": "t", "label": ["x"] if i < 2 else []} for i in range(8)]
                        + [{"text": "t", "label": ["y"]}] * 8)
    positive, negative = class_weights("balanced", OwnFilesProcessor({"train": multi}))
    assert positive == pytest.approx([16 / 4, 16 / 16]) and negative == pytest.approx([16 / 28, 16 / 16])


def brute_force_thresholds(labels, probabilities):
    """Every threshold among the midpoints, the best F1's nearest 0.5, by exhaustion."""
    chosen = []
    for j in range(labels.shape[1]):
        values = sorted(set(probabilities[:, j]) | {0.0})
        candidates = [(a + b) / 2 for a, b in zip(values, values[1:])] or [0.5]
        scored = []
        for t in candidates:
            predicted, truth = probabilities[:, j] >= t, labels[:, j] > 0
            tp, fp, fn = np.sum(predicted & truth), np.sum(predicted & ~truth), np.sum(~predicted & truth)
            scored.append((2 * tp / (2 * tp + fp + fn) if tp else 0.0, -abs(t - 0.5), t))
        chosen.append(max(scored)[2] if labels[:, j].any() else 0.5)
    return np.array(chosen)


def test_thresholds_maximise_each_labels_f1():
    rng = np.random.default_rng(0)
    labels = rng.random((60, 4)) < [0.1, 0.3, 0.5, 0.0]
    probabilities = np.round(np.clip(labels * 0.3 + rng.random((60, 4)) * 0.7, 0, 1), 2)
    np.testing.assert_allclose(choose_thresholds(labels, probabilities), brute_force_thresholds(labels,
                                                                                                probabilities))


def test_metrics_against_hand_counts():
    labels = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
    probabilities = np.array([[0.9, 0.1, 0.4], [0.2, 0.7, 0.1], [0.6, 0.3, 0.6], [0.1, 0.2, 0.3]])
    figures = multi_label_metrics(["a", "b", "c"], labels, probabilities, [0.5, 0.5, 0.5])
    # a: tp 2; b: tp 1 fn 1; c: fn 1 fp 1 → micro tp 3 fp 1 fn 2: 6 / 9.
    assert figures["micro_f1"] == pytest.approx(6 / 9)
    assert figures["macro_f1"] == pytest.approx((1.0 + 2 / 3 + 0.0) / 3)
    assert figures["subset_accuracy"] == 0.5 and figures["recall_b"] == 0.5 and figures["precision_c"] == 0.0
    single = single_label_metrics(["x", "y", "z"], [0, 1, 2, 2], np.log([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1],
                                                                         [0.5, 0.1, 0.4], [0.1, 0.1, 0.8]]),
                                  class_weights=[1.0, 1.0, 2.0])
    assert single["recall_z"] == 0.5 and single["accuracy"] == 0.75
    assert single["loss"] == pytest.approx(-(np.log(0.7) + np.log(0.8) + 2 * np.log(0.4) + 2 * np.log(0.8)) / 4)


def test_losses_equal_numpy():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(6, 3)).astype("float32")
    multi_hot = (rng.random((6, 3)) < 0.4).astype("float32")
    loss = MultiLabelCrossentropy([2.0, 1.0, 5.0], [0.5, 1.0, 1.0])
    assert float(loss(multi_hot, logits)) == pytest.approx(
        binary_cross_entropy(multi_hot, logits, [2.0, 1.0, 5.0], [0.5, 1.0, 1.0]), rel=1e-5)
    ids = np.array([0, 2, 1, 2, 2, 0])
    weighted = ClassWeightedCrossentropy([1.0, 4.0, 0.5])
    assert float(weighted(ids, logits)) == pytest.approx(
        single_label_metrics(["a", "b", "c"], ids, logits, [1.0, 4.0, 0.5])["loss"], rel=1e-5)
    for original in (loss, weighted):
        restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(original))
        assert type(restored) is type(original) and restored.get_config() == original.get_config()
        targets = multi_hot if original is loss else ids
        assert float(restored(targets, logits)) == float(original(targets, logits))


def test_multi_hot_labels_through_the_feature_cache(tmp_path):
    vocab = str(tmp_path / "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "red", "blue"]))
    dev = write_jsonl(str(tmp_path / "dev.jsonl"), [{"text": "red", "label": ["r"]}, {"text": "blue red",
                                                                                         "label": ["b", "r"]}])
    processor = OwnFilesProcessor({"dev": dev}, label_list="b,g,r", multi_label=True)
    cached = load_or_create_features(processor, "dev", FullTokenizer(vocab), 8, str(tmp_path), tokenizer_file=vocab,
                                     do_lower_case=True, pad_to_multiple_of=4)
    assert cached.multi_hot == 3
    again = load_or_create_features(processor, "dev", FullTokenizer(vocab), 8, str(tmp_path), tokenizer_file=vocab,
                                    do_lower_case=True, pad_to_multiple_of=4)
    assert again == cached
    _, labels, real = next(iter(feature_dataset(cached, 4, with_sample_weights=True)))
    assert labels.numpy().tolist() == [[0, 0, 1], [1, 0, 1], [0, 0, 0], [0, 0, 0]]
    assert real.numpy().tolist() == [1, 1, 0, 0] and labels.dtype == tf.float32


def test_predictions_keep_every_row_in_order_with_ids(tmp_path):
    ids = [f"row-{i}" for i in range(10_000)]
    probabilities = np.random.default_rng(2).dirichlet([1, 1, 1], size=len(ids))
    jsonl, csv_path = write_predictions(str(tmp_path), iter(ids), ["a", "b", "c"], probabilities, csv_too=True)
    rows = [json.loads(line) for line in open(jsonl, encoding="utf-8")]
    assert [row["id"] for row in rows] == ids
    assert [row["label"] for row in rows] == [["a", "b", "c"][i] for i in probabilities.argmax(-1)]
    np.testing.assert_allclose([list(row["probabilities"].values()) for row in rows], probabilities, atol=1e-6)
    with open(csv_path, newline="") as f:
        table = list(csv.DictReader(f))
    assert [row["id"] for row in table] == ids and list(table[0]) == ["id", "label", "prob_a", "prob_b", "prob_c"]
    with pytest.raises(ClassificationDataError, match="3 ids for 4 predictions"):
        write_predictions(str(tmp_path / "short"), ids[:3], ["a", "b", "c"], probabilities[:4])
    assert not os.path.exists(tmp_path / "short" / "predictions.jsonl")
    multi = write_predictions(str(tmp_path / "m"), [7], ["x", "y"], [[0.6, 0.2]], thresholds=[0.5, 0.1],
                              csv_too=True)
    assert open(multi[1]).read().splitlines()[1] == "7,x|y,0.6,0.2"


def test_windows_of_multi_label_documents_pool_to_one_row_each(tmp_path):
    from official_bert.classification.cache import FeatureFile
    from official_bert.classification.features import InputFeatures, padding_features
    from official_bert.classification.records import serialize_features
    from official_bert.classification.windows import document_outputs

    path = str(tmp_path / "dev.tf_record")
    labels = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]  # document 0 in two windows, document 1 in one
    with tf.io.TFRecordWriter(path) as writer:
        for index, label in zip((0, 0, 1), labels):
            writer.write(serialize_features(InputFeatures([2, 3], [1, 1], [0, 0], label, example_index=index)))
        writer.write(serialize_features(padding_features(1, 2, multi_hot=2)[0]))
    feature_file = FeatureFile(path, 2, 1, 2, None, False, doc_stride=1, num_windows=3, multi_hot=2)
    _, read_labels, real = next(iter(feature_dataset(feature_file, 4, with_sample_weights=True)))
    logits = np.array([[1.0, -1.0], [3.0, -3.0], [-2.0, 2.0], [0.0, 0.0]])
    pooled, document_labels = document_outputs(feature_file, logits, read_labels.numpy(), real.numpy())
    assert pooled.tolist() == [[2.0, -2.0], [-2.0, 2.0]] and document_labels.tolist() == [[1, 0], [0, 1]]


ERAS = ["ancient", "medieval", "modern"]


def era_rows(spell):
    """Nine rows, three per era, each label as `spell(era, i)` writes it."""
    return [{"id": f"r{i}", "text": f"text {i}", "label": spell(ERAS[i % 3], i)} for i in range(9)]


def padded(era, i):
    return [era, era + " ", " " + era, "\t" + era + "  "][i % 4]  # "pos " beside "pos", as exports write them


@pytest.mark.parametrize("name", ["train.csv", "train.tsv", "train.jsonl"])
@pytest.mark.parametrize("multi", [False, True])
def test_labels_that_differ_by_surrounding_whitespace_are_one_class(tmp_path, name, multi):
    rows = era_rows(lambda era, i: [padded(era, i), " modern"] if multi and name.endswith(".jsonl")
                    else f"{padded(era, i)}| modern" if multi else padded(era, i))
    settings = {"label_separator": "|"} if multi and not name.endswith(".jsonl") else {}
    files = {}
    for split in ("train", "dev", "test"):
        path = str(tmp_path / name.replace("train", split))
        if name.endswith(".jsonl"):
            write_jsonl(path, rows)
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                writer = csv.DictWriter(f, ["id", "text", "label"], delimiter="\t" if name.endswith(".tsv") else ",")
                writer.writeheader()
                writer.writerows(rows)
        files[split] = path
    processor = OwnFilesProcessor(files, Columns(id="id"), **settings)
    expected = [tuple(sorted({era, "modern"})) if multi else era for era in (ERAS[i % 3] for i in range(9))]
    assert processor.label_list == tuple(ERAS)  # three classes, not one per spelling
    for split in ("train", "dev", "test"):
        assert [e.label for e in processor.get_examples(split)] == expected
    given = OwnFilesProcessor(files, Columns(id="id"), label_list=" modern, ancient ,medieval", **settings)
    assert given.label_list == ("modern", "ancient", "medieval")
    assert [e.label for e in given.get_examples("dev")] == expected


@pytest.mark.parametrize("labels,settings,expected", [
    (["pos", "neg", "Pos"], {}, "train.jsonl, row 3: label 'Pos' and label 'pos' (row 1) differ only in case: one "
                                "class or two? Write them alike, or give --label_list naming both to keep two classes"),
    (["1", "0", "1.0"], {}, "train.jsonl, row 3: label '1.0' and label '1' (row 1) are the same number"),
    (["2", "0", "02"], {}, "train.jsonl, row 3: label '02' and label '2' (row 1) are the same number"),
    ([["bug"], ["ui", "Bug"]], {}, "train.jsonl, row 2: label 'Bug' and label 'bug' (row 1) differ only in case"),
    (["café", "cafe\u0301"], {}, "row 2: label 'cafe\u0301' and label 'café' (row 1) differ only in case or "
                                "Unicode form ('cafe\\u0301' beside 'caf\\xe9')"),
    (["pos", "neg", "Pos"], {"label_list": "pos,neg"},
     "train.jsonl: label 'Pos' is not in --label_list (pos, neg); 'Pos' and 'pos' differ only in case"),
])
def test_two_spellings_of_a_label_are_refused_naming_both(tmp_path, labels, settings, expected):
    train = write_jsonl(str(tmp_path / "train.jsonl"), [{"text": "t", "label": label} for label in labels])
    with pytest.raises(ClassificationDataError) as raised:
        OwnFilesProcessor({"train": train}, **settings)
    assert expected in str(raised.value) and "\n" not in str(raised.value)


def test_a_label_list_naming_both_spellings_keeps_two_classes(tmp_path):
    train = write_jsonl(str(tmp_path / "train.jsonl"), [{"text": "t", "label": label} for label in
                                                        ["pos", "neg", "Pos", "1", "1.0"]])
    processor = OwnFilesProcessor({"train": train}, label_list="neg,pos,Pos,1,1.0")
    assert [e.label for e in processor.get_examples("train")] == ["pos", "neg", "Pos", "1", "1.0"]
    assert processor.label_counts == {"pos": 1, "neg": 1, "Pos": 1, "1": 1, "1.0": 1}


def test_numbers_as_labels_are_their_digits(tmp_path):
    train = write_jsonl(str(tmp_path / "train.jsonl"), [{"text": "t", "label": label} for label in
                                                        [1, "0", 1.0, " 2 ", 0, "1"]])
    processor = OwnFilesProcessor({"train": train})
    assert processor.label_list == ("0", "1", "2")
    assert [e.label for e in processor.get_examples("train")] == ["1", "0", "1", "2", "0", "1"]


def test_a_multi_label_file_without_any_label_is_refused(tmp_path):
    train = write_jsonl(str(tmp_path / "train.jsonl"), [{"text": "t", "label": []}, {"text": "u", "label": [" "]}])
    with pytest.raises(ClassificationDataError) as raised:
        OwnFilesProcessor({"train": train})
    assert str(raised.value) == (f"{train}: no row has a label (every label list is empty); a multi-label task needs "
                                 "at least one")
    with_one = write_jsonl(str(tmp_path / "one.jsonl"), [{"text": "t", "label": []}, {"text": "u", "label": ["x"]}])
    assert [e.label for e in OwnFilesProcessor({"train": with_one}).get_examples("train")] == [(), ("x",)]


def test_a_cell_longer_than_the_csv_modules_default_limit_is_read(tmp_path):
    document = "a long document , " * 10_000  # 180,000 characters: over csv's default 131,072
    train = write_csv(str(tmp_path / "train.csv"), [{"text": document, "label": "pos"}, {"text": "b", "label": "neg"}],
                      ["text", "label"])
    previous = csv.field_size_limit(131_072)  # the default, whatever an earlier reader in this process set
    try:
        processor = OwnFilesProcessor({"train": train})
        assert [e.text_a for e in processor.get_examples("train")] == [document, "b"]
    finally:
        csv.field_size_limit(previous)


def test_a_tab_separated_file_named_csv_shows_its_header_and_the_flag(tmp_path):
    train = str(tmp_path / "train.csv")
    with open(train, "w", encoding="utf-8") as f:
        f.write("text\tlabel\ngood\tpos\nbad\tneg\n")
    with pytest.raises(Error) as raised:
        OwnFilesProcessor({"train": train})
    assert str(raised.value) == (f"{train}: no column 'text' (header is 'text\\tlabel': a tab-separated file? give "
                                 "--input_format=tsv)")
    assert OwnFilesProcessor({"train": train}, input_format="tsv").label_list == ("neg", "pos")


def own_task_run(tmp_path, files, **flags):
    """An OwnFilesTask checked and loaded as run_task would, with a tiny vocabulary; returns (task, settings)."""
    from official_bert.finetuning import FineTuningSettings
    from official_bert.tasks.own_files import OwnFilesTask

    vocab = str(tmp_path / "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad"]) + "\n")
    settings = FineTuningSettings(str(tmp_path / "run"), "bert_config.json", vocab, max_seq_length=8, **flags)
    task = OwnFilesTask(files)
    task.check(settings)
    task.load(settings, settings.tokenizer_spec())
    return task, settings


@pytest.mark.parametrize("bad_split", ["dev", "test"])
def test_every_file_is_checked_before_any_feature_is_written(tmp_path, bad_split):
    good = write_jsonl(str(tmp_path / "good.jsonl"), [{"text": "good", "label": "pos"},
                                                     {"text": "bad", "label": "neg"}])
    bad = write_jsonl(str(tmp_path / "bad.jsonl"), [{"text": "good", "label": "pos"}, {"text": "", "label": "neg"}])
    files = {"train": good, "dev": good, "test": good, bad_split: bad}
    with pytest.raises(ClassificationDataError, match=r"bad.jsonl, row 2: column 'text' is an empty text"):
        own_task_run(tmp_path, files, do_train=True, do_eval=True, do_predict=True)
    assert not os.path.exists(tmp_path / "run")  # no feature_cache/ with the training features
    task, _ = own_task_run(tmp_path, {"train": good, "dev": good, "test": good}, do_train=True, do_eval=True,
                           do_predict=True)
    cached = sorted(os.listdir(tmp_path / "run" / "feature_cache"))
    assert [name.split("-")[1] for name in cached] == ["dev", "dev", "test", "test", "train", "train"]
    assert (task.train_file.num_examples, task.dev_files["dev"].num_examples, task.test_files["test"].num_examples) \
        == (2, 2, 2)


@pytest.mark.parametrize("files,flags,expected", [
    ({"train": "T"}, {"do_eval": True}, "--train_file is given but --do_train is not: pass --do_train, or leave "
                                        "--train_file out"),
    ({"train": "T", "test": "T"}, {"do_predict": True}, "--train_file is given but --do_train is not"),
    ({"train": "T", "dev": "T"}, {"do_train": True}, "--dev_file is given but --do_eval is not: pass --do_eval, or "
                                                     "leave --dev_file out"),
    ({"train": "T", "test": "T"}, {"do_train": True}, "--test_file is given but --do_predict is not"),
    ({"train": "T"}, {"do_train": True, "do_eval": True}, "--do_eval needs --dev_file"),
])
def test_a_file_without_its_step_is_refused_naming_both_flags(tmp_path, files, flags, expected):
    train = write_jsonl(str(tmp_path / "t.jsonl"), [{"text": "good", "label": "pos"}, {"text": "bad", "label": "neg"}])
    write_label_file(str(tmp_path / "run"), OwnFilesProcessor({"train": train}))  # a run to continue: its labels
    with pytest.raises(ClassificationDataError) as raised:
        own_task_run(tmp_path, {split: train for split in files}, **flags)
    assert str(raised.value).startswith(expected) and "\n" not in str(raised.value)
    assert os.listdir(tmp_path / "run") == ["labels.json"]


def test_a_repeated_header_is_refused_not_read_as_a_class(tmp_path):
    # K7: the class 'label' appeared beside the real ones, and the run exited 0.
    rows = [{"id": str(i), "text": f"t {i}", "label": "ab"[i % 2]} for i in range(4)]
    path = str(tmp_path / "train.csv")
    write_csv(path, rows, ["id", "text", "label"], bom=False)
    with open(path, "a", encoding="utf-8") as f:
        f.write("id,text,label\n4,t 4,a\n")
    with pytest.raises(Error, match=r"train.csv, row 5 \(line 6\): the header row again \('id,text,label'\): two "
                                    r"files joined into one\?"):
        OwnFilesProcessor({"train": path}, Columns(id="id"))
