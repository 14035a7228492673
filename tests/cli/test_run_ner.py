"""run_ner.py as a command: a tiny model learns the NER fixture (tests/fixtures/ner, CoNLL-2003's layout and IOB1
tags) to entity F1 1.0, writes the predictions file conlleval reads, and its SavedModel finds the same entities in
raw text at the right character offsets; bad data gives one line naming the file and line, and writes nothing."""

import os
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401 (the exported tokenizer's ops, as a serving client needs them)

from official_bert import BertConfig
from official_bert.tokenization import BasicTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "run_ner.py")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "ner")
# The long sentence of each file has 26 pieces: with windows of 22 pieces it is cut in two.
SEQ_LENGTH, DOC_STRIDE = 24, 12
# Words split into WordPieces, so that continuation pieces occur (they carry no label).
PIECES = {"Montréal": ["Mont", "##réal"], "Nordbank": ["Nord", "##bank"], "Lefèvre": ["Lef", "##èvre"]}


def read_columns(path):
    with open(path, encoding="utf-8") as f:
        return [line.split() for line in f.read().splitlines()]


def fixture_sentences(name):
    """[(words, tags)] of a fixture file."""
    sentences, words, tags = [], [], []
    for columns in read_columns(os.path.join(FIXTURE, name)) + [[]]:
        if columns and columns[0] != "-DOCSTART-":
            words.append(columns[0])
            tags.append(columns[-1])
        elif words:
            sentences.append((words, tags))
            words, tags = [], []
    return sentences


def write_model_files(directory):
    """vocab.txt (every word of the fixture, cased, some as pieces) and bert_config.json; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    words = set()
    for name in ("train.txt", "valid.txt", "test.txt"):
        for sentence_words, _ in fixture_sentences(name):
            words.update(BasicTokenizer(do_lower_case=False).tokenize(" ".join(sentence_words)))
    tokens = set()
    for word in words:
        tokens.update(PIECES.get(word, [word]))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(tokens)
    paths = {"vocab": os.path.join(directory, "vocab.txt"), "config": os.path.join(directory, "bert_config.json")}
    with open(paths["vocab"], "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=SEQ_LENGTH, hidden_dropout_prob=0.0,
               attention_probs_dropout_prob=0.0).to_json_file(paths["config"])
    return paths


def command(paths, data_dir, output_dir, *extra):
    return [sys.executable, SCRIPT, f"--data_dir={data_dir}", f"--vocab_file={paths['vocab']}",
            f"--bert_config_file={paths['config']}", f"--output_dir={output_dir}", "--do_lower_case=False",
            f"--max_seq_length={SEQ_LENGTH}", f"--doc_stride={DOC_STRIDE}", "--train_batch_size=8",
            "--eval_batch_size=8", "--predict_batch_size=8", "--learning_rate=3e-3", "--warmup_proportion=0.1",
            "--iterations_per_loop=10", "--log_steps=50", "--save_checkpoints_steps=50", "--seed=2", *extra]


def run(argv, timeout=600):
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)


def raw_text(sentences):
    """The sentences as one text a person would write ("Dupont-Lefèvre", "東京", "Oslo."), with each word's
    character span, and the gold entities as (type, text, start, end)."""
    text, entities = "", []
    for words, tags in sentences:
        spans = []
        for i, word in enumerate(words):
            previous = words[i - 1] if i else None
            cjk = previous is not None and all("\u4e00" <= w[0] <= "\u9fff" for w in (previous, word))
            glued = word in (".", ",", ":", "-") or previous == "-" or cjk
            if text and not (i and glued):
                text += " "
            spans.append((len(text), len(text) + len(word)))
            text += word
        for entity_type, start, end in ner_chunks(tags):
            entities.append((entity_type, text[spans[start][0]:spans[end - 1][1]], spans[start][0], spans[end - 1][1]))
    return text, entities


def ner_chunks(tags):
    """IOB1 chunks, counted by hand: I- after O or another type, or B-, starts one."""
    found, previous = [], "O"
    for i, tag in enumerate(tags):
        if tag != "O" and (tag.startswith("B-") or previous == "O" or previous[2:] != tag[2:]):
            found.append([tag[2:], i, i + 1])
        elif tag != "O":
            found[-1][2] = i + 1
        previous = tag
    return found


def served(export_dir, texts):
    serve = tf.saved_model.load(os.path.join(export_dir, "1")).signatures["serving_default"]
    outputs = {name: value.numpy() for name, value in serve(text=tf.constant(texts)).items()}
    rows = []
    for row in range(len(texts)):
        rows.append([(t.decode(), x.decode(), int(s), int(e)) for t, x, s, e in
                     zip(outputs["entity_type"][row], outputs["entity_text"][row], outputs["entity_start"][row],
                         outputs["entity_end"][row]) if t])
    return rows, outputs


@pytest.mark.slow
def test_learns_the_fixture_and_serves_its_entities_from_raw_text(tmp_path):
    paths = write_model_files(str(tmp_path / "model"))
    output_dir, export_dir = tmp_path / "run", tmp_path / "export"
    result = run(command(paths, FIXTURE, output_dir, "--do_train", "--do_eval", "--do_predict",
                         "--num_train_epochs=40", f"--export_dir={export_dir}"))
    assert result.returncode == 0, result.stderr[-3000:]
    for prefix, name in (("eval", "valid.txt"), ("test", "test.txt")):
        with open(output_dir / f"{prefix}_results.txt", encoding="utf-8") as f:
            results = dict(line.split(" = ") for line in f.read().splitlines())
        gold = sum(len(ner_chunks(tags)) for _, tags in fixture_sentences(name))
        assert (results["f1"], results["precision"], results["recall"]) == ("100.0", "100.0", "100.0"), results
        assert results["gold_entities"] == results["correct_entities"] == str(gold)
        # The input, each line with a predicted tag appended (the gold one, all being right); -DOCSTART- gets O.
        expected = [columns + [columns[-1]] if columns else [] for columns in read_columns(os.path.join(FIXTURE,
                                                                                                        name))]
        assert read_columns(output_dir / f"{prefix}_predictions.txt") == expected
    assert f"processed {sum(len(c) > 0 for c in read_columns(os.path.join(FIXTURE, 'test.txt')))} tokens" in \
        result.stderr

    # The SavedModel, from raw text: one text per sentence, and the whole test file as one text (whose long
    # sentence needs two windows).
    sentences = fixture_sentences("test.txt")
    texts, expected = zip(*(raw_text([sentence]) for sentence in sentences))
    document, document_entities = raw_text(sentences)
    rows, outputs = served(str(export_dir), list(texts) + [document])
    assert rows == list(expected) + [document_entities]
    assert any("東京" in e[1] for e in document_entities) and any("Dupont-Lefèvre" in e[1] for e in document_entities)
    assert all(document[start:end] == entity_text for _, entity_text, start, end in rows[-1])
    # Per-word tags of the first text: its words, tagged with the same chunks (in IOB2).
    words = [w.decode() for w in outputs["word"][0] if w]
    assert words == sentences[0][0]
    assert ner_chunks([t.decode() for t in outputs["tag"][0][:len(words)]]) == ner_chunks(sentences[0][1])


def bad_data(tmp_path, name, text):
    data_dir = tmp_path / "data"
    shutil.copytree(FIXTURE, data_dir)
    (data_dir / name).write_text(text, encoding="utf-8")
    return data_dir


@pytest.mark.parametrize("name, text, extra, message", [
    ("valid.txt", "EU NNP I-NP I-ORG\nrejects VBZ I-VP\n\n", [],
     "valid.txt:2: expected 4 columns (word ... tag), as line 1 has; got 3: 'rejects VBZ I-VP'"),
    ("valid.txt", "EU NNP I-NP I-ORG\nCup NNP I-NP I-MISC\n\n", [],
     "valid.txt:2: tag 'I-MISC' is of a type {train} has no tag of (its types: LOC, ORG, PER)"),
    ("test.txt", "EU NNP I-NP I-ORG\nOslo NNP I-NP B-LOC\n", ["--label_list=O,I-PER,B-PER,I-ORG,I-LOC"],
     "test.txt:2: tag 'B-LOC' is not in --label_list (B-PER, I-LOC, I-ORG, I-PER, O)"),
    ("train.txt", "", [], "train.txt: no sentence in it (expected one word and its tag per line, a blank line "
                          "after each sentence)"),
])
def test_bad_data_is_one_line_naming_the_file_and_line_and_writes_nothing(tmp_path, name, text, extra, message):
    data_dir = bad_data(tmp_path, name, text)
    paths = write_model_files(str(tmp_path / "model"))
    output_dir, export_dir = tmp_path / "run", tmp_path / "export"
    result = run(command(paths, data_dir, output_dir, "--do_train", "--do_eval", "--do_predict",
                         f"--export_dir={export_dir}", *extra), timeout=300)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("run_ner: error:")]
    assert error_lines == [f"run_ner: error: {data_dir}/" + message.format(train=f"{data_dir}/train.txt")]
    assert not output_dir.exists() and not export_dir.exists()
