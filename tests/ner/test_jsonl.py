"""run_ner's JSON Lines files read into the same sentences as the CoNLL file of the same data (#34, item 7)."""

import json

import numpy as np
import pytest

from official_bert.finetuning import FineTuningSettings
from official_bert.ner import label_map, read_conll
from official_bert.ner.errors import NerError
from official_bert.ner.jsonl import find_split_file, read_jsonl, read_sentences
from official_bert.tasks.ner import NerTask
from tests.cli.test_run_ner import FIXTURE, fixture_sentences, write_model_files

SENTENCES = [(["EU", "rejects", "German", "call"], ["B-ORG", "O", "B-MISC", "O"]),
             (["Peter", "Blackburn"], ["B-PER", "I-PER"]),
             (["BRUSSELS", "1996-08-22"], ["B-LOC", "O"])]


def test_jsonl_sentences_equal_conll_ones(tmp_path):
    conll = tmp_path / "train.txt"
    conll.write_text("".join("".join(f"{w} {t}\n" for w, t in zip(words, tags)) + "\n" for words, tags in SENTENCES))
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "words": words, "labels": tags}) + "\n"
                             for i, (words, tags) in enumerate(SENTENCES)))
    from_conll, from_jsonl = read_conll(str(conll)), read_sentences(str(jsonl), "words", "labels")
    assert [(s.words, s.tags) for s in from_jsonl] == [(s.words, s.tags) for s in from_conll]
    assert [s.lines for s in from_jsonl] == [[1] * 4, [2] * 2, [3] * 2]
    assert label_map(None, from_jsonl, str(jsonl)).labels == label_map(None, from_conll, str(conll)).labels


def test_split_files_of_either_format(tmp_path):
    (tmp_path / "train.jsonl").write_text("{}")
    (tmp_path / "validation.jsonl").write_text("{}")
    (tmp_path / "valid.txt").write_text("a O\n")
    assert find_split_file(str(tmp_path), "train").endswith("train.jsonl")
    assert find_split_file(str(tmp_path), "dev").endswith("valid.txt")  # CoNLL's first, as before


@pytest.mark.parametrize("line,expected", [
    ('{"tokens": ["a", "b"], "ner_tags": ["O"]}', ", row 1: 2 tokens but 1 tags"),
    ('{"tokens": ["a"], "ner_tags": [3]}', ", row 1: tag 3 is not a string; write the tag names (e.g. B-PER), not "
                                           "class ids"),
    ('{"tokens": ["a b"], "ner_tags": ["O"]}', ", row 1: token 'a b' is not a word without spaces"),
    ('{"tokens": ["a"], "ner_tags": ["PER"]}', ", row 1: "),
    ('{"tokens": ["a"]}', ", row 1: no column 'ner_tags' (its columns: tokens)"),
    ('{"tokens": ["a"], "ner_tags": ["O"]', ", row 1: not a JSON object"),
    ('{"tokens": [], "ner_tags": []}', ": no sentence in it"),
])
def test_bad_lines_name_file_and_row(tmp_path, line, expected):
    path = tmp_path / "dev.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(NerError) as raised:
        read_jsonl(str(path))
    assert str(raised.value).startswith(f"{path}{expected}") and "\n" not in str(raised.value)


def test_ner_task_reads_a_jsonl_data_dir_as_its_conll_twin(tmp_path):
    jsonl_dir = tmp_path / "jsonl"
    jsonl_dir.mkdir()
    for conll, jsonl in (("train.txt", "train.jsonl"), ("valid.txt", "validation.jsonl")):
        (jsonl_dir / jsonl).write_text("".join(json.dumps({"tokens": words, "ner_tags": tags}) + "\n"
                                               for words, tags in fixture_sentences(conll)), encoding="utf-8")
    paths = write_model_files(str(tmp_path / "model"))
    loaded = []
    for data_dir in (FIXTURE, str(jsonl_dir)):
        task = NerTask(data_dir)
        settings = FineTuningSettings(str(tmp_path / "out"), paths["config"], paths["vocab"], do_train=True,
                                      do_eval=True, do_lower_case=False, max_seq_length=24)
        task.load(settings, settings.tokenizer_spec())
        loaded.append(task)
    conll, jsonl = loaded
    assert jsonl.labels.labels == conll.labels.labels
    for split in ("train", "dev"):
        assert [(s.words, s.tags) for s in jsonl.data[split][1]] == [(s.words, s.tags) for s in conll.data[split][1]]
        assert jsonl.data[split][3] == conll.data[split][3]  # the tag scheme: IOB1, as the fixture's
    np.testing.assert_array_equal(jsonl.data["train"][2].labels, conll.data["train"][2].labels)
    np.testing.assert_array_equal(jsonl.data["train"][2].inputs["input_word_ids"],
                                  conll.data["train"][2].inputs["input_word_ids"])
