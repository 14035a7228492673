"""Vocabulary learning: the library and data_prep/build_vocab.py."""

import os
import subprocess
import sys

import pytest

from official_bert import pretraining_data
from official_bert.text import vocab_builder
from official_bert.tokenization import FullTokenizer, load_vocab
from tests.tokenization_helpers import english_lines

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    lines = english_lines(1500) + ["Ünïcödé wörds, 中文字 and émoji 😀 — «quotes»."] * 5
    path.write_text("\n".join(line + ("\n" if i % 10 == 9 else "") for i, line in enumerate(lines)) + "\n",
                    encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def uncased_vocab(corpus, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("vocab") / "vocab.txt")
    return path, vocab_builder.build_vocab([corpus], path, vocab_size=800, num_unused_tokens=3)


def test_reserved_tokens_come_first(uncased_vocab):
    path, tokens = uncased_vocab
    assert tokens[:8] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]", "[unused2]"]
    assert list(load_vocab(path)) == tokens
    assert 0.9 * 800 <= len(tokens) <= 800


def test_learned_vocab_covers_its_corpus(uncased_vocab, corpus):
    tokenizer = FullTokenizer(uncased_vocab[0], do_lower_case=True)
    with open(corpus, encoding="utf-8") as f:
        pieces = [piece for line in f for piece in tokenizer.tokenize(line)]
    assert len(pieces) > 10_000
    assert pieces.count("[UNK]") <= 0.001 * len(pieces)
    # Frequent words are whole tokens; rarer ones are split into pieces.
    assert tokenizer.tokenize("The statement") == ["the", "statement"]
    assert any(piece.startswith("##") for piece in pieces)


def test_uncased_vocab_has_no_capitals_and_cased_keeps_them(uncased_vocab, corpus, tmp_path):
    assert not any(t.lower() != t for t in uncased_vocab[1][8:])
    cased = vocab_builder.build_vocab([corpus], str(tmp_path / "cased.txt"), vocab_size=800, do_lower_case=False)
    assert "The" in cased and "the" in cased
    assert FullTokenizer(str(tmp_path / "cased.txt"), do_lower_case=False).tokenize("The")[0] == "The"


def test_input_errors_name_the_file(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n\x00\n")
    with pytest.raises(vocab_builder.CorpusError, match=f"{empty}: no words found"):
        vocab_builder.build_vocab([str(empty)], str(tmp_path / "v.txt"), vocab_size=100)
    with pytest.raises(vocab_builder.CorpusError, match="--vocab_size=5 leaves no room after 5 reserved tokens"):
        vocab_builder.learn_vocab({"a": 1}, 5, vocab_builder.reserved_tokens())
    assert sorted(os.listdir(tmp_path)) == ["empty.txt"]


def test_globs_and_lists_of_input_files(tmp_path):
    for name in ("a.txt", "b.txt", "c.md"):
        (tmp_path / name).write_text("x\n")
    assert pretraining_data.expand_input_files(f"{tmp_path}/*.txt,{tmp_path}/c.md") == [
        str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), str(tmp_path / "c.md")]


def test_non_utf8_bytes_are_dropped_and_counted_as_create_pretraining_data_does(tmp_path, caplog):
    path = tmp_path / "latin1.txt"
    path.write_bytes("fine words\n\ncaf\xe9 au lait\nthe \xff\xfe end\n".encode("latin-1"))
    with caplog.at_level("WARNING"):
        counts = vocab_builder.count_words([str(path)])
    assert counts == {"fine": 1, "words": 1, "caf": 1, "au": 1, "lait": 1, "the": 1, "end": 1}
    assert f"dropped 3 bytes that are not UTF-8, as the original does (the first on {path}:3)" in caplog.text
    documents = list(pretraining_data.read_documents([str(path)]))  # create_pretraining_data reads the same words
    assert [line.split() for d in documents for line in d.lines] == [["fine", "words"], ["caf", "au", "lait"],
                                                                      ["the", "end"]]


def test_preserve_unused_tokens_keeps_the_reserved_slots_out_of_the_counts(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a [unused0] b\n[unused0] [unused9]\nx[unused0]\n")
    counts = vocab_builder.count_words([str(path)], preserved=frozenset(["[unused0]"]))
    assert counts == {"a": 1, "b": 1, "[": 2, "unused9": 1, "]": 2, "x": 1, "unused0": 1}


def _run(*args):
    return subprocess.run([sys.executable, os.path.join(REPO, "data_prep", "build_vocab.py"), *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_writes_a_wordpiece_vocab_and_a_sentencepiece_model(corpus, tmp_path):
    result = _run(f"--input_file={corpus}", f"--output_file={tmp_path}/vocab.txt", "--vocab_size=300",
                  "--num_unused_tokens=2")
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stderr
    tokens = list(load_vocab(str(tmp_path / "vocab.txt")))
    assert tokens[:7] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]"]
    assert len(tokens) <= 300

    result = _run(f"--input_file={corpus}", f"--spm_model_file={tmp_path}/sp.model", "--vocab_size=300")
    assert result.returncode == 0, result.stderr
    from official_bert.text.sentencepiece_tokenizer import SentencePieceTokenizer

    assert SentencePieceTokenizer(str(tmp_path / "sp.model"), do_lower_case=True).vocab["[MASK]"] == 4


def test_cli_errors_exit_1_with_one_line(tmp_path):
    result = _run(f"--input_file={tmp_path}/missing.txt", f"--output_file={tmp_path}/vocab.txt")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"build_vocab: error: --input_file: no file matches '{tmp_path}/missing.txt'")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("output, message", [
    ("{tmp}", "--output_file={tmp} is a directory; expected a file path"),
    ("{tmp}/corpus.txt/vocab.txt", "--output_file={tmp}/corpus.txt/vocab.txt is inside {tmp}/corpus.txt, which "
                                   "--input_file reads; write it elsewhere"),
    ("/sys/vocab.txt", "--output_file: cannot write /sys/vocab.txt: the directory /sys is not writable"),
])
def test_cli_checks_the_output_before_the_work(tmp_path, corpus, output, message):
    (tmp_path / "corpus.txt").write_text(open(corpus).read())
    result = _run(f"--input_file={tmp_path}/corpus.txt", f"--output_file={output.format(tmp=tmp_path)}",
                  "--vocab_size=300")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"build_vocab: error: {message.format(tmp=tmp_path)}")
    assert "counted" not in result.stderr  # refused before reading the corpus
    assert os.listdir(tmp_path) == ["corpus.txt"]


@pytest.mark.slow
def test_cli_write_failure_is_one_line_and_leaves_nothing(tmp_path, corpus):
    import resource
    import signal

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

    result = subprocess.run([sys.executable, os.path.join(REPO, "data_prep", "build_vocab.py"),
                             f"--input_file={corpus}", f"--output_file={tmp_path}/out/vocab.txt", "--vocab_size=300"],
                            capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"build_vocab: error: {tmp_path}/out/vocab.txt: cannot write it") and "large" in last
    assert os.listdir(tmp_path / "out") == []
