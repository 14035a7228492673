"""Labels that print alike are one class or one refusal, never two classes: the whitespace and invisible format
characters around a label are stripped (zero-width space, no-break space, byte-order mark, word joiner), and labels
that still differ only in case, Unicode form or an invisible character inside are refused side by side, by the
command-line readers and the Keras models alike (`classification.validation`)."""

import json

import pytest

from official_bert import BertEncoder
from official_bert.classification.own_files import Columns, OwnFilesProcessor
from official_bert.classification.validation import ValidationError
from official_bert.errors import Error
from official_bert.keras_models import TextClassifier, TextPreprocessor
from tests.finetuning.test_run_classifier import VOCAB, tiny_config

AROUND = ["\u200b", "\u00a0", "\ufeff", "\u2060", " ", "\u200d"]


def write_jsonl(path, labels, key="label"):
    path.write_text("".join(json.dumps({"text": f"text {i}", key: label}) + "\n" for i, label in enumerate(labels)),
                    encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("mark", AROUND, ids=[f"U+{ord(m):04X}" for m in AROUND])
def test_a_label_with_an_invisible_character_around_it_is_the_same_class(tmp_path, mark):
    # K9b: every 4th label followed by U+200B gave 6 classes for 3.
    labels = [("pos", "neg", "mid")[i % 3] + (mark if i % 4 == 0 else "") for i in range(24)]
    train = write_jsonl(tmp_path / "train.jsonl", labels)
    dev = write_jsonl(tmp_path / "dev.jsonl", [mark + "pos", "neg" + mark])
    processor = OwnFilesProcessor({"train": train, "dev": dev})
    assert processor.label_list == ("mid", "neg", "pos")
    assert [example.label for example in processor.get_examples("train")] == [label.strip(mark) for label in labels]
    assert [example.label for example in processor.get_examples("dev")] == ["pos", "neg"]


def test_a_label_list_and_multi_labels_drop_them_too(tmp_path):
    train = write_jsonl(tmp_path / "train.jsonl", ["pos\u200b", "neg", "pos"])
    assert OwnFilesProcessor({"train": train}, label_list="neg\u200b, pos").label_list == ("neg", "pos")
    multi = write_jsonl(tmp_path / "multi.jsonl", ["bug|\u200b", "ui\u00a0|bug", "ui"], key="label")
    processor = OwnFilesProcessor({"train": multi}, label_separator="|")
    assert processor.label_list == ("bug", "ui")
    assert [e.label for e in processor.get_examples("train")] == [("bug",), ("ui", "bug"), ("ui",)]


@pytest.mark.parametrize("first,second,how", [
    ("pos", "po\u200bs", "differ only in an invisible character ('po\\u200bs' beside 'pos')"),
    ("pos", "Pos", "differ only in case"),
    ("caf\u00e9", "cafe\u0301", "differ only in case or Unicode form ('cafe\\u0301' beside 'caf\\xe9')"),
])
def test_labels_that_still_print_alike_are_refused_naming_both(tmp_path, first, second, how):
    train = write_jsonl(tmp_path / "train.jsonl", [first, "neg", second])
    with pytest.raises(Error) as raised:
        OwnFilesProcessor({"train": train}, Columns())
    assert str(raised.value) == (f"{train}, row 3: label {second!r} and label {first!r} (row 1) {how}: one class or "
                                 "two? Write them alike, or give --label_list naming both to keep two classes")


def test_keras_strips_them_and_shows_both_forms_of_a_label_it_does_not_know():
    model = TextClassifier(BertEncoder(tiny_config()), TextPreprocessor(VOCAB, sequence_length=16), 3,
                           label_list=["caf\u00e9\u200b", "th\u00e9", "eau"])
    assert model.labels == ["caf\u00e9", "th\u00e9", "eau"]
    assert model.targets(["eau\ufeff", "\u00a0th\u00e9", "caf\u00e9"]).tolist() == [2, 1, 0]
    # J6: the message showed 'café' is not in ['café', 'thé', 'eau'], the two forms printed alike.
    with pytest.raises(ValidationError) as raised:
        model.targets(["eau", "cafe\u0301"])
    assert str(raised.value) == ("y[1]: label 'cafe\u0301' is not in label_list ['caf\u00e9', 'th\u00e9', 'eau']; "
                                 "'cafe\u0301' and 'caf\u00e9' differ only in case or Unicode form ('cafe\\u0301' "
                                 "beside 'caf\\xe9')")
