"""The training files and BEIR sets as users write them: pairs, triplets with any number of negatives, scored pairs in
CSV, TSV and JSON Lines; equal texts share an id across columns; every unusable row refused in one line naming the
file, row and column."""

import json

import numpy as np
import pytest

from official_bert.errors import Error
from official_bert.retrieval.beir import read_beir
from official_bert.retrieval.errors import RetrievalDataError
from official_bert.retrieval.training_files import PAIRS, SCORED, RowColumns, read_training_rows


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_triplets_with_two_negatives_in_csv(tmp_path):
    path = write(tmp_path / "t.csv", "id,anchor,positive,negative_1,negative_2\n"
                                     '1,"a cat, purring",cats purr,dogs bark,birds sing\n'
                                     "2,a dog,dogs bark,cats purr,fish swim\n")
    rows = read_training_rows(path)
    assert rows.columns == ["anchor", "positive", "negative_1", "negative_2"] and len(rows) == 2
    assert rows.texts[0] == ["a cat, purring", "a dog"]
    assert rows.text_ids.tolist() == [[0, 1, 2, 3], [4, 2, 1, 5]]


def test_scored_pairs_in_tsv_and_jsonl(tmp_path):
    tsv = write(tmp_path / "s.tsv", "text_a\ttext_b\tscore\nA man plays.\tA man is playing.\t4.5\nx\ty\t0\n")
    rows = read_training_rows(tsv, SCORED)
    assert rows.scores.tolist() == [4.5, 0.0] and rows.columns == ["text_a", "text_b"]
    jsonl = write(tmp_path / "s.jsonl", '{"s1": "a", "s2": "b", "label": 0.25}\n')
    rows = read_training_rows(jsonl, SCORED, RowColumns(text_a="s1", text_b="s2", score="label"))
    assert rows.scores.tolist() == [0.25]


@pytest.mark.parametrize("name, text, kind, columns, message", [
    ("empty.csv", "anchor,positive\na cat,\n", PAIRS, RowColumns(), r"row 1, column 'positive': an empty text"),
    ("spaces.jsonl", '{"anchor": "a", "positive": "  "}\n', PAIRS, RowColumns(), "an empty text"),
    ("none.jsonl", '{"anchor": "a", "positive": null}\n', PAIRS, RowColumns(), "column 'positive' is None"),
    ("triplets.csv", "anchor,positive\na,b\n", PAIRS, RowColumns(negatives=("negative",)), "no column 'negative'"),
    ("nan.tsv", "text_a\ttext_b\tscore\na\tb\tnan\n", SCORED, RowColumns(), "not a finite number"),
    ("word.tsv", "text_a\ttext_b\tscore\na\tb\thigh\n", SCORED, RowColumns(), "score 'high' is not a number"),
    ("same.csv", "anchor,positive\na,b\n", PAIRS, RowColumns(positive="anchor"), "named for two texts"),
    ("blank.csv", "", PAIRS, RowColumns(), "empty"),
])
def test_bad_rows_are_refused(tmp_path, name, text, kind, columns, message):
    path = write(tmp_path / name, text)
    with pytest.raises(Error, match=message):
        read_training_rows(path, kind, columns)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(RetrievalDataError, match="--train_file=.*: no such file"):
        read_training_rows(str(tmp_path / "nothing.csv"))


def beir(tmp_path, qrels, corpus=None, queries=None):
    (tmp_path / "qrels").mkdir(exist_ok=True)
    corpus = corpus or [{"_id": "b", "title": "Title", "text": "two"}, {"_id": "a", "text": "one"},
                        {"_id": 10, "text": "ten"}]
    queries = queries or [{"_id": "q2", "text": "second"}, {"_id": "q1", "text": "first"}, {"_id": "q3", "text": "x"}]
    write(tmp_path / "corpus.jsonl", "".join(json.dumps(row) + "\n" for row in corpus))
    write(tmp_path / "queries.jsonl", "".join(json.dumps(row) + "\n" for row in queries))
    write(tmp_path / "qrels" / "dev.tsv", "query-id\tcorpus-id\tscore\n" + qrels)
    return str(tmp_path)


def test_beir_set_in_id_order_with_the_judged_queries(tmp_path):
    found = read_beir(beir(tmp_path, "q1\ta\t1\nq2\tb\t2\nq2\t10\t1\nq3\ta\t0\n"), "dev")
    assert found.corpus_ids == ["10", "a", "b"] and found.corpus_texts == ["ten", "one", "Title two"]
    assert found.query_ids == ["q2", "q1"] and found.relevant == [{"b", "10"}, {"a"}]  # q3: none relevant


@pytest.mark.parametrize("qrels, corpus, queries, message", [
    ("q1\tz\t1\n", None, None, r"row 1: corpus-id 'z' is not in .*corpus.jsonl"),
    ("q9\ta\t1\n", None, None, r"row 1: query-id 'q9' is not in .*queries.jsonl"),
    ("q1\ta\t0\n", None, None, "no query has a relevant passage"),
    ("q1\ta\tyes\n", None, None, "score 'yes' is not a number"),
    ("q1\ta\t1\n", [{"_id": "a", "text": "x"}, {"_id": "a", "text": "y"}], None, "_id 'a' is given twice"),
    ("q1\ta\t1\n", [{"_id": "a", "title": "", "text": " "}], None, "an empty text"),
    ("q1\ta\t1\n", [{"text": "x"}], None, "no column '_id'"),
    ("q1\ta\t1\n", None, [{"_id": "q1", "text": None}], "is None"),
])
def test_bad_beir_sets_are_refused(tmp_path, qrels, corpus, queries, message):
    with pytest.raises(Error, match=message):
        read_beir(beir(tmp_path, qrels, corpus, queries), "dev")


def test_a_missing_qrels_file_names_the_layout(tmp_path):
    with pytest.raises(RetrievalDataError, match=r"no qrels/test.tsv \(expected BEIR's layout"):
        read_beir(beir(tmp_path, "q1\ta\t1\n"), "test")


