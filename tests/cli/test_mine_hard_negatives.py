"""mine_hard_negatives.py: the negatives are those the rule gives on the model's own embeddings (NumPy, brute force:
positives left out, the margin and the rank range applied), written as triplets run_embeddings.py reads; bad input is
one line, exit status 1, nothing written."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from official_bert.keras_models import TextEmbedder
from official_bert.retrieval.training_files import read_training_rows
from tests.cli.test_cli_bad_input import DRIVER
from tests.cli.test_run_embeddings import MODEL, REPO, environment, make_data

pytestmark = pytest.mark.slow  # about 40 s: TensorFlow starts twice


def expected_negatives(pairs, count, range_min, range_max, margin):
    """The rule in NumPy on the model's embeddings: for each distinct anchor, the corpus (every positive once) by
    cosine similarity, its best range_max + (most positives a query has) searched; its positives dropped, then the
    candidates within `margin` of its positive's score, then ranks range_min onwards, the first `count`."""
    model = TextEmbedder.from_checkpoint(MODEL)
    corpus = list(dict.fromkeys(pairs["positive"]))
    anchors = list(dict.fromkeys(pairs["anchor"]))
    vectors = model.predict(corpus + anchors, verbose=0)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    passages, queries = vectors[:len(corpus)], vectors[len(corpus):]
    found, most = {}, max(pairs["anchor"].count(anchor) for anchor in anchors)
    for q, anchor in enumerate(anchors):
        own = {corpus.index(p) for a, p in zip(pairs["anchor"], pairs["positive"]) if a == anchor}
        scores = passages @ queries[q]
        positive = min(scores[i] for i in own)
        order = np.lexsort((np.arange(len(corpus)), -scores))[:range_max + most]
        kept = [i for i in order if i not in own and scores[i] + margin <= positive + 1e-6]
        found[anchor] = [corpus[i] for i in kept[range_min:range_max][:count]]
    return found


def test_mined_negatives_follow_the_rule_and_train(tmp_path):
    data = make_data(tmp_path)
    rows = [json.loads(line) for line in open(data["train"])]
    pairs = {name: [row[name] for row in rows] for name in ("anchor", "positive")}
    out = tmp_path / "triplets.jsonl"
    done = subprocess.run([sys.executable, os.path.join(REPO, "mine_hard_negatives.py"), f"--init_checkpoint={MODEL}",
                           f"--input_file={data['train']}", f"--output_file={out}", "--num_negatives=2",
                           "--range_min=1", "--range_max=20", "--absolute_margin=0.01", "--output_format=n-tuple"],
                          env=environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    mined = [json.loads(line) for line in open(out)]
    expected = expected_negatives(pairs, 2, 1, 20, 0.01)
    assert len(mined) == sum(len(expected[a]) == 2 for a in pairs["anchor"])
    for row in mined:
        assert [row["negative_1"], row["negative_2"]] == expected[row["anchor"]]
    assert read_training_rows(str(out)).columns == ["anchor", "positive", "negative_1", "negative_2"]


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    data = make_data(tmp_path)
    before = open(data["train"], "rb").read()
    out = str(tmp_path / "out.jsonl")
    base = [f"--init_checkpoint={MODEL}", f"--input_file={data['train']}"]
    empty_text = tmp_path / "empty_text.jsonl"
    empty_text.write_text(json.dumps({"anchor": "the cat", "positive": "a cat sat"}) + "\n"
                          + json.dumps({"anchor": " ", "positive": "a dog ran"}) + "\n")
    (tmp_path / "empty.jsonl").write_text("")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("anchor,positive\ncaf\xe9,a cat sat\n".encode("latin-1"))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a cat sat on the mat\n")
    before_corpus = corpus.read_bytes()
    cases = [
        ([*base, f"--output_file={data['train']}"], f"--output_file={data['train']} is the --input_file"),
        ([*base, f"--output_file={corpus}", f"--corpus_file={corpus}"], "is the --corpus_file"),
        ([*base, f"--output_file={MODEL}/triplets.jsonl"], "is inside --init_checkpoint="),
        ([*base, f"--output_file={tmp_path}"], "is a directory; expected a file"),
        ([*base, f"--output_file={out}", "--num_negatives=0"], "--num_negatives=0: expected an integer in [1, "),
        ([*base, f"--output_file={out}", "--num_negatives=1000000000000000"], "--num_negatives=1000000000000000"),
        ([*base, f"--output_file={out}", "--range_min=5", "--range_max=6", "--num_negatives=2"],
         "--num_negatives=2: only 1 candidates between --range_min=5 and --range_max=6"),
        ([*base, f"--output_file={out}", "--absolute_margin=nan"], "--absolute_margin=nan: expected a finite number"),
        ([*base, f"--output_file={out}", "--relative_margin=1.5"], "--relative_margin=1.5: expected a finite number "
         "in [0, 1]"),
        ([*base, f"--output_file={out}", "--min_score=-inf"], "--min_score=-inf: expected a finite number in [-1, 1]"),
        ([*base, f"--output_file={out}", "--positive_column=passage"], "no column 'passage'"),
        ([*base, f"--output_file={out}", f"--corpus_file={tmp_path / 'none.txt'}"], "--corpus_file="),
        ([*base[:1], f"--input_file={empty_text}", f"--output_file={out}"], "empty_text.jsonl, row 2, column "
         "'anchor': an empty text"),
        ([*base[:1], f"--input_file={tmp_path / 'empty.jsonl'}", f"--output_file={out}"], "empty.jsonl"),
        ([*base[:1], f"--input_file={latin}", f"--output_file={out}"], "latin.csv"),
    ]
    done = subprocess.run([sys.executable, "-c", DRIVER, "mine_hard_negatives", json.dumps([c[0] for c in cases])],
                          env=environment(), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for case, (code, stderr) in zip(cases, json.loads(done.stdout.strip().splitlines()[-1])):
        last = stderr.strip().splitlines()[-1]
        assert code == 1 and "Traceback" not in stderr and last.startswith("mine_hard_negatives: error: "), stderr
        assert case[1] in last, (case[1], last)
    assert open(data["train"], "rb").read() == before and corpus.read_bytes() == before_corpus
    assert not os.path.exists(out) and not os.path.exists(os.path.join(MODEL, "triplets.jsonl"))
