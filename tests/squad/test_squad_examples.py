"""read_squad_examples against the original run_squad.py's rules, on a fixture with the hard cases."""

import json
import logging
import os

import pytest

from official_bert.squad import SquadError, read_squad_examples
from official_bert.squad.examples import split_paragraph

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "squad", "train-v2.0.json")

# The first paragraph, split by hand on space, tab, LF and U+202F only: U+00A0 stays inside "in Montréal.".
P1_WORDS = ["Café", "Zoë’s", "bakery", "(1895-1943)", "opened", "in\u00a0Montréal.", "Its", "founder,", "Zoë",
            "Dupont,", "was", "Japanese."]


def _write(tmp_path, value, name="data.json"):
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return str(path)


def _squad(qas, context="Ann ran home."):
    return {"data": [{"paragraphs": [{"context": context, "qas": qas}]}]}


def test_split_paragraph_maps_every_character_to_its_word():
    # a U+202F b U+00A0 c TAB d: U+202F and TAB split, U+00A0 does not; a space maps to the word before it.
    words, offsets = split_paragraph("a\u202fb\u00a0c\td")
    assert words == ["a", "b\u00a0c", "d"]
    assert offsets == [0, 0, 1, 1, 1, 1, 2]
    assert split_paragraph("  x") == (["x"], [-1, -1, 0])


def test_training_examples_with_unicode_whitespace_and_mid_word_answers(caplog):
    with caplog.at_level(logging.WARNING):
        examples = read_squad_examples(FIXTURE, is_training=True, version_2_with_negative=True)
    assert examples[0].doc_tokens == P1_WORDS
    got = {e.qas_id: (e.start_position, e.end_position, e.orig_answer_text, e.is_impossible) for e in examples}
    assert got == {
        "p1-year": (3, 3, "1895", False),  # starts after "(" inside "(1895-1943)"
        "p1-nationality": (11, 11, "Japan", False),  # a prefix of "Japanese."
        "p1-city": (5, 5, "Montréal", False),  # after a U+00A0 inside the word "in Montréal."
        "p1-name": (1, 2, "Zoë’s bakery", False),  # the context has U+202F where the answer has a space
        "p1-founder": (8, 9, "Zoë Dupont", False),
        "p1-impossible": (-1, -1, "", True),
        "p2-after-six": (6, 8, "seven eight nine", False),
        "p2-impossible": (-1, -1, "", True),
    }
    assert examples.num_skipped == 2
    messages = [r.getMessage() for r in caplog.records]
    assert any("p1-mismatch" in m and "Could not find answer: 'Café' vs. 'bread'" in m for m in messages)
    assert any("p1-out-of-range" in m and "Could not find answer" in m for m in messages)
    assert any("skipped 2 of 10 questions" in m and FIXTURE in m for m in messages)


def test_prediction_reads_every_question_without_answers():
    examples = read_squad_examples(FIXTURE, is_training=False, version_2_with_negative=True)
    assert [e.qas_id for e in examples] == ["p1-year", "p1-nationality", "p1-city", "p1-name", "p1-founder",
                                            "p1-mismatch", "p1-out-of-range", "p1-impossible", "p2-after-six",
                                            "p2-impossible"]
    assert examples.num_skipped == 0
    assert all(e.start_position is None and e.orig_answer_text is None and not e.is_impossible for e in examples)
    assert examples[0].question_text == "When did the bakery open?"


def test_version_1_training_needs_exactly_one_answer():
    # Without version_2_with_negative, is_impossible is ignored and an empty answer list is an error.
    with pytest.raises(SquadError, match=r"train-v2\.0\.json: data\[0\]\.paragraphs\[0\]\.qas\[7\] "
                                         r"\(id 'p1-impossible'\): .*exactly 1 answer, found 0"):
        read_squad_examples(FIXTURE, is_training=True, version_2_with_negative=False)


def test_answer_text_not_at_answer_start_is_skipped(tmp_path):
    qas = [{"id": "ok", "question": "Who?", "answers": [{"text": "Ann", "answer_start": 0}]},
           {"id": "shifted", "question": "Who?", "answers": [{"text": "Ann", "answer_start": 4}]},
           {"id": "empty", "question": "Who?", "answers": [{"text": " ", "answer_start": 3}]},
           {"id": "negative", "question": "Who?", "answers": [{"text": "home.", "answer_start": -5}]}]
    examples = read_squad_examples(_write(tmp_path, _squad(qas)), is_training=True)
    assert [e.qas_id for e in examples] == ["ok"]
    assert examples.num_skipped == 3


def test_answer_contained_in_the_words_is_kept(tmp_path):
    # The check is the original's: the answer must occur in the words its characters fall in. Here answer_start
    # is one too far ("nn " = characters 1-3), but those characters lie in the word "Ann", which holds the answer.
    qas = [{"id": "q", "question": "?", "answers": [{"text": "Ann", "answer_start": 1}]}]
    [example] = read_squad_examples(_write(tmp_path, _squad(qas)), is_training=True)
    assert (example.start_position, example.end_position) == (0, 0)


@pytest.mark.parametrize("content, message", [
    ('{"data": [', r"data\.json: not valid JSON \(line 1 column 11: Expecting value\); expected a SQuAD JSON file"),
    ('[1, 2]', r"data\.json: the top level: expected an object with a 'data' field"),
    ('{"data": {}}', r"data\.json: the top level\.data: expected a list, got dict"),
    ('{"data": [{"paragraphs": [{"qas": []}]}]}',
     r"data\.json: data\[0\]\.paragraphs\[0\]: expected an object with a 'context' field"),
    ('{"data": [{"paragraphs": [{"context": "x", "qas": [{"id": 7, "question": "?"}]}]}]}',
     r"data\.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]\.id: expected a string, got int"),
    ('{"data": [{"paragraphs": [{"context": "x", "qas": [{"id": "a", "question": "?", "answers": '
     '[{"text": "x", "answer_start": "0"}]}]}]}]}',
     r"qas\[0\]\.answers\[0\]\.answer_start: expected an integer, got str"),
])
def test_malformed_files_are_clear_errors(tmp_path, content, message):
    with pytest.raises(SquadError, match=message):
        read_squad_examples(_write(tmp_path, content), is_training=True)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(SquadError, match=r"nope\.json: file not found; expected a SQuAD JSON file"):
        read_squad_examples(str(tmp_path / "nope.json"), is_training=False)
