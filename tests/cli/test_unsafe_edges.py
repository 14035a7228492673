"""The last unsafe edges of the tools: what a killed run leaves behind, empty and misplaced inputs and outputs, a
vocabulary that does not fit the data, file names with glob characters, tag schemes mixed in one file, and
inputs that are not UTF-8. Each case checks the exit status, the last stderr line and the files left behind.
"""

import json
import logging
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file

from official_bert import BertConfig, BertEncoder, load_checkpoint, save_checkpoint
from official_bert.checkpoints import CheckpointError
from official_bert.checkpoints.convert import convert_checkpoint
from official_bert.ner import Sentence, detect_file_scheme, read_conll, scheme_evidence
from official_bert.pretraining_data import PretrainingDataError, expand_input_files
from official_bert.training import input_pipeline
from official_bert.training.monitor import read_scalars, write_scalars
from tests.cli.test_cli_bad_input import DRIVER
from tests.pretraining_data_corpus import real_vocab_file, write_corpus
from tests.training.test_run_pretraining import PREDICTIONS, SEQ_LENGTH, write_examples

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "the", "a", "cat", "dog", "sat", "ran", "on", "mat"]
CREATE = ["--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2", "--num_workers=1"]


def home(script):
    """Where the shim <script>.py lives: data_prep/ for the data tools, the repository's root for the others."""
    data_prep = os.path.join(REPO, "data_prep")
    return data_prep if os.path.exists(os.path.join(data_prep, script + ".py")) else REPO


def tool(script, *args, cwd=REPO):
    """Runs <script>.py (args may be bytes) as a user does."""
    return subprocess.run([sys.executable, os.path.join(home(script), script + ".py"), *args], cwd=cwd, env=ENV,
                          capture_output=True, timeout=300)


def in_one_process(script, cases):
    """Runs each argv of `cases` through the `run()` of <script>.py in one process, TensorFlow imported once;
    returns [(exit status, stderr)]."""
    result = subprocess.run([sys.executable, "-c", DRIVER, script, json.dumps(cases)], cwd=home(script), env=ENV,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return [tuple(case) for case in json.loads(result.stdout.splitlines()[-1])]


def last_line(stderr):
    stderr = stderr.decode("utf-8", "backslashreplace") if isinstance(stderr, bytes) else stderr
    return stderr.rstrip().splitlines()[-1]


def dead_pid():
    """The pid of a process that has ended and been reaped: no process has it now."""
    child = subprocess.Popen(["true"])
    child.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)
    return child.pid


def leave_temporary(directory, name, pid=None, suffix=""):
    """A temporary file of the output `name`, with some bytes in it, of the process `pid` (default: one that is
    dead, as a killed writer's); returns its name."""
    stale = f".{name}.incomplete-{dead_pid() if pid is None else pid}{suffix}"
    with open(os.path.join(directory, stale), "wb") as f:
        f.write(b"\0" * 4096)
    return stale


def tiny_config():
    return BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=32)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A tiny encoder saved as a Google checkpoint with its vocabulary, and its word embeddings."""
    work = tmp_path_factory.mktemp("model")
    encoder = BertEncoder(tiny_config())
    (work / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    save_checkpoint(encoder, str(work / "model"), format="google", vocab_file=str(work / "vocab.txt"))
    embeddings = next(w.numpy() for w in encoder.weights if tuple(w.shape) == (len(VOCAB), 16))
    return dict(dir=str(work / "model"), embeddings=embeddings)


@pytest.fixture(scope="module")
def pretraining_file(tmp_path_factory):
    """A file create_pretraining_data made with the standard uncased vocabulary; its records' count and the
    masked positions in its first 1,024 records."""
    work = tmp_path_factory.mktemp("pretraining")
    corpus = write_corpus(str(work / "corpus.txt"), num_documents=30)
    result = tool("create_pretraining_data", f"--input_file={corpus}", "--output_file=train.tfrecord",
                  f"--vocab_file={real_vocab_file()}", *CREATE, cwd=work)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(str(work / "train.tfrecord"))]
    masked = sum(sum(w > 0 for w in r.features.feature["masked_lm_weights"].float_list.value) for r in records[:1024])
    return dict(path=str(work / "train.tfrecord"), records=len(records), masked=masked)


# ---------------------------------------------------------------- 1. temporaries a killed run left

def test_convert_checkpoint_removes_a_killed_runs_temporaries_and_writes_the_checkpoint(model, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    stale = [leave_temporary(out, "model.safetensors"), leave_temporary(out, "bert_model.ckpt", suffix=".index")]
    result = tool("convert_checkpoint", f"--input_path={model['dir']}", f"--output_path={out}",
                  "--output_format=huggingface")
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(out)) == ["config.json", "model.safetensors", "vocab.txt"]
    assert not set(stale) & set(os.listdir(out))
    weights = load_file(str(out / "model.safetensors"))
    word_embeddings = [v for k, v in weights.items() if "word_embeddings" in k]
    assert len(word_embeddings) == 1
    np.testing.assert_array_equal(word_embeddings[0], model["embeddings"])


@pytest.mark.slow  # a 30 MB conversion, killed, then run again: about 15 s on 2 cores
def test_convert_checkpoint_after_sigkill_the_rerun_cleans_up(tmp_path):
    big = BertConfig(vocab_size=30000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=1024, max_position_embeddings=32)
    save_checkpoint(BertEncoder(big), str(tmp_path / "src"), format="google")
    out = tmp_path / "out"
    args = [sys.executable, os.path.join(REPO, "convert_checkpoint.py"), f"--input_path={tmp_path / 'src'}",
            f"--output_path={out}", "--output_format=huggingface"]
    process = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None:
        if out.exists() and any(".incomplete-" in name for name in os.listdir(out)):
            break
        time.sleep(0.005)
    assert process.poll() is None, "the conversion ended before a temporary file was seen"
    process.kill()
    process.wait()
    leftovers = [name for name in os.listdir(out) if ".incomplete-" in name]
    assert leftovers and all(name.endswith(f".incomplete-{process.pid}") for name in leftovers)
    result = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(out)) == ["config.json", "model.safetensors"]
    assert load_file(str(out / "model.safetensors"))  # whole: it parses


def test_convert_checkpoints_not_empty_check_ignores_a_killed_runs_temporaries(model, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    stale = leave_temporary(out, "model.safetensors")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(CheckpointError, match=rf"^--output_path={out} is not empty \(it holds notes.txt\): "):
        convert_checkpoint(model["dir"], str(out), "huggingface")
    assert sorted(os.listdir(out)) == ["notes.txt"]  # the leftover went anyway: it is nobody's
    os.remove(out / "notes.txt")
    leave_temporary(out, "model.safetensors")
    convert_checkpoint(model["dir"], str(out), "huggingface")  # only a leftover in it: an empty directory
    assert sorted(os.listdir(out)) == ["config.json", "model.safetensors", "vocab.txt"]
    assert stale not in os.listdir(out)


def test_create_pretraining_data_removes_its_outputs_stale_temporaries_only(tmp_path):
    corpus = write_corpus(str(tmp_path / "corpus.txt"), num_documents=8)
    out = tmp_path / "out"
    out.mkdir()
    stale = leave_temporary(out, "train.tfrecord")
    live = leave_temporary(out, "train.tfrecord", pid=os.getpid())  # another writer, still running: not ours
    other = leave_temporary(out, "dev.tfrecord")  # a stale temporary of another output: not this run's to judge
    result = tool("create_pretraining_data", f"--input_file={corpus}", f"--output_file={out / 'train.tfrecord'}",
                  f"--vocab_file={real_vocab_file()}", *CREATE)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(out)) == sorted([live, other, "train.tfrecord"]) and stale not in os.listdir(out)
    records = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(str(out / "train.tfrecord"))]
    assert records and all(r.features.feature["input_ids"].int64_list.value[0] == 101 for r in records)  # [CLS]


def test_extract_features_cleans_up_creates_the_output_directory_and_refuses_an_empty_input(model, tmp_path):
    (tmp_path / "input.txt").write_text("the cat sat\n\na dog ||| the mat\n")
    (tmp_path / "empty.txt").write_bytes(b"")
    out = tmp_path / "out"
    out.mkdir()
    stale = leave_temporary(out, "features.jsonl")
    flags = [f"--bert_config_file={model['dir']}/bert_config.json", f"--vocab_file={model['dir']}/vocab.txt",
             f"--init_checkpoint={model['dir']}", "--max_seq_length=16", "--layers=-1"]
    results = in_one_process("extract_features", [
        [f"--input_file={tmp_path / 'input.txt'}", f"--output_file={out / 'features.jsonl'}", *flags],
        [f"--input_file={tmp_path / 'input.txt'}", f"--output_file={tmp_path / 'new' / 'dir' / 'f.jsonl'}", *flags],
        [f"--input_file={tmp_path / 'empty.txt'}", f"--output_file={tmp_path / 'none' / 'f.jsonl'}", *flags],
    ])
    assert [code for code, _ in results] == [0, 0, 1], results
    assert os.listdir(out) == ["features.jsonl"] and stale not in os.listdir(out)
    for path in (out / "features.jsonl", tmp_path / "new" / "dir" / "f.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert [line["linex_index"] for line in lines] == [0, 1, 2]
        assert [f["token"] for f in lines[1]["features"]] == ["[CLS]", "[SEP]"]
    assert os.listdir(tmp_path / "new" / "dir") == ["f.jsonl"]
    assert last_line(results[2][1]) == (f"extract_features: error: --input_file={tmp_path / 'empty.txt'}: the file "
                                        "is empty; expected one text per line")
    assert not (tmp_path / "none").exists()


# ---------------------------------------------------------------- 3. a vocabulary the data contradicts

def write_vocab(path, swaps):
    """The standard vocabulary with the tokens of `swaps` ({token: token}) exchanged; returns it and the ids."""
    tokens = open(real_vocab_file(), encoding="utf-8").read().splitlines()
    position = {token: i for i, token in enumerate(tokens)}
    for a, b in swaps.items():
        tokens[position[a]] = b
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return str(path), {token: tokens.index(token) for token in ("[CLS]", "[SEP]", "[MASK]")}


def test_inspect_pretraining_data_refuses_a_vocabulary_the_records_contradict(pretraining_file, tmp_path):
    # The same size, the special tokens moved: [SEP] where [CLS] was, [MASK] where [SEP] was, [CLS] where [MASK]
    # was; and one with only [MASK] moved.
    rotated, ids = write_vocab(tmp_path / "rotated.txt", {"[CLS]": "[SEP]", "[SEP]": "[MASK]", "[MASK]": "[CLS]"})
    assert ids == {"[CLS]": 103, "[SEP]": 101, "[MASK]": 102}
    moved_mask, mask_ids = write_vocab(tmp_path / "mask.txt", {"[MASK]": "[unused0]", "[unused0]": "[MASK]"})
    results = in_one_process("inspect_pretraining_data", [
        [f"--input_file={pretraining_file['path']}", f"--vocab_file={real_vocab_file()}"],
        [f"--input_file={pretraining_file['path']}", f"--vocab_file={rotated}"],
        [f"--input_file={pretraining_file['path']}", f"--vocab_file={moved_mask}"],
    ])
    assert [code for code, _ in results] == [0, 1, 1], results
    n, masked = min(pretraining_file["records"], 1024), pretraining_file["masked"]
    assert pretraining_file["masked"] >= 100  # enough for the [MASK] check to judge
    start = "inspect_pretraining_data: error: --vocab_file={}: not the vocabulary the records were made with: in the " \
            f"first {n:,} records, "
    assert last_line(results[1][1]) == start.format(rotated) + (
        f"{n} of {n} records do not start with its [CLS] (id 103; the first starts with id 101); {n} of {n} records "
        f"do not end each segment with its [SEP] (id 101); 0 % of {masked} masked positions hold its [MASK] (id 102), "
        "not about 80 %")
    assert last_line(results[2][1]) == start.format(moved_mask) + (
        f"0 % of {masked} masked positions hold its [MASK] (id {mask_ids['[MASK]']}), not about 80 %")


# ---------------------------------------------------------------- 4. names with glob characters

def test_an_existing_path_is_taken_literally_before_it_is_globbed(tmp_path):
    directory = tmp_path / "data[1]"
    directory.mkdir()
    # corpus[1].txt as a pattern matches corpus1.txt, a one-document file the tool would refuse.
    literal = write_corpus(str(directory / "corpus[1].txt"), num_documents=6)
    (directory / "corpus1.txt").write_text("one document only.\n")
    assert expand_input_files(literal) == [literal]
    assert expand_input_files(f"{directory}/corpus1.txt") == [f"{directory}/corpus1.txt"]
    assert expand_input_files(f"{directory}/corpus*.txt") == [f"{directory}/corpus1.txt", literal]
    with pytest.raises(PretrainingDataError, match="no file matches"):  # a path that does not exist is a pattern
        expand_input_files(f"{directory}/corpus[2].txt")
    result = tool("create_pretraining_data", f"--input_file={literal}", f"--output_file={tmp_path / 'out.tfrecord'}",
                  f"--vocab_file={real_vocab_file()}", *CREATE)
    assert result.returncode == 0, result.stderr[-3000:]
    assert b"from 6 documents" in result.stderr


def test_tensorflow_side_expansion_and_directory_globs_take_names_literally(tmp_path):
    path = write_examples(tmp_path / "train[1].tfrecord", 8)
    write_examples(tmp_path / "train1.tfrecord", 8, seq_length=SEQ_LENGTH * 2)  # what the pattern would match
    files = input_pipeline.open_pretraining_files(path, SEQ_LENGTH, PREDICTIONS)
    assert files.paths == (path,) and files.seq_length == SEQ_LENGTH
    logs = tmp_path / "logs[1]"
    write_scalars(str(logs), {"loss": 2.5}, step=3)
    assert read_scalars(str(logs)) == {"loss": {3: 2.5}}


def test_a_checkpoint_in_a_directory_with_glob_characters_loads(tmp_path):
    # Safetensors: TensorFlow's own checkpoint reader globs a TF checkpoint's prefix, so that one cannot load there.
    directory = tmp_path / "run[1]"
    source = BertEncoder(tiny_config())
    save_checkpoint(source, str(directory), format="huggingface")
    os.rename(directory / "model.safetensors", directory / "step-7.safetensors")  # found by its *.safetensors glob
    encoder = BertEncoder(tiny_config())
    load_checkpoint(encoder, str(directory))
    for ours, theirs in zip(encoder.weights, source.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---------------------------------------------------------------- 5. tag schemes

def test_scheme_evidence_names_the_deciding_tag_and_the_mixed_schemes():
    iob1 = scheme_evidence([["O", "O"], ["I-PER", "I-PER", "B-PER", "O"]])
    assert (iob1.scheme, iob1.decided_by.sentence, iob1.decided_by.word, iob1.mixed) == ("iob1", 1, 0, [])
    iobes = scheme_evidence([["B-PER", "E-PER", "O", "S-LOC"]])
    assert (iobes.scheme, iobes.decided_by.word, iobes.mixed) == ("iobes", 1, [])  # IOBES's B- is IOB2's too
    mixed = scheme_evidence([["I-ORG", "O"], ["O", "O", "E-PER"]])
    assert (mixed.scheme, mixed.mixed) == ("iobes", ["iob1", "iobes"])
    assert scheme_evidence([["I-ORG", "O", "B-PER"]]).mixed == ["iob1", "iob2"]
    assert scheme_evidence([["S-ORG", "U-PER"]]).mixed == ["iobes", "bilou"]
    assert scheme_evidence([["O"]]).decided_by is None and scheme_evidence([["O"]]).scheme == "iob2"


def test_a_file_that_mixes_schemes_is_warned_about_naming_its_lines(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="absl")
    path = tmp_path / "train.txt"
    path.write_text("-DOCSTART- O\n\nEU I-ORG\nrejects O\n\nPeter I-PER\nBlackburn E-PER\n")
    assert detect_file_scheme(read_conll(str(path)), str(path)) == "iobes"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"{path} mixes tag schemes: IOB1 ({path}:3: I-ORG starts a chunk); IOBES ({path}:7: E-PER "
                        f"is an E-/S- tag); it is read as IOBES (chunks by conlleval's rules) and predictions are "
                        "written in IOBES: check its tags"]
    caplog.clear()
    sentences = [Sentence([["EU", "O"], ["Peter", "I-PER"]], [4, 5], 0)]
    assert detect_file_scheme(sentences, "dev.txt") == "iob1"
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "dev.txt: IOB1 tags (dev.txt:5: I-PER starts a chunk)")]


# ---------------------------------------------------------------- 6. query_saved_model's non-UTF-8 inputs

class _Lengths(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(self, text):
        return {"length": tf.strings.length(text)}


def test_query_saved_model_names_the_input_that_is_not_utf8(tmp_path):
    module = _Lengths()
    tf.saved_model.save(module, str(tmp_path / "model"), signatures={"serving_default": module.serve})
    (tmp_path / "flags.txt").write_bytes(b"--input=text=ok\n--input=text=caf\xe9\n")
    base = [f"--saved_model_dir={tmp_path / 'model'}"]
    good = tool("query_saved_model", *base, "--input=text=café")
    assert good.returncode == 0, good.stderr[-3000:]
    assert "length: 5" in good.stdout.decode()  # bytes: é is two
    bad = tool("query_saved_model", *base, b"--input=text=ok", b"--input=text=caf\xe9")
    assert bad.returncode == 1
    assert last_line(bad.stderr) == ("query_saved_model: error: --input number 2 (text=caf\\xe9): byte 0xe9 at "
                                     "offset 8 is not UTF-8; inputs must be UTF-8 text")
    flagfile = tool("query_saved_model", *base, f"--flagfile={tmp_path / 'flags.txt'}")
    assert flagfile.returncode == 1 and b"Traceback" not in flagfile.stderr
    assert last_line(flagfile.stderr) == (f"query_saved_model: error: {tmp_path / 'flags.txt'}:2: byte 0xe9 at offset "
                                          "16 is not UTF-8; a --flagfile must be UTF-8 text")


def test_the_window_defaults_fit_every_max_seq_length_the_tools_accept():
    # run_ner's --doc_stride and run_squad's --max_query_length default from --max_seq_length: none of the lengths
    # the tools accept (NER from 4: two pieces a window; SQuAD from 5: a query piece and a paragraph piece) is
    # refused by a default, and each keeps the original's 64 where 64 fits.
    from types import SimpleNamespace

    from official_bert.tasks.ner import NerTask
    from official_bert.tasks.squad import SquadTask
    ner, squad = NerTask("data"), SquadTask(predict_file="dev.json")
    for length in range(4, 513):
        ner.check(SimpleNamespace(max_seq_length=length, export_dir=None, vocab_file="vocab.txt"))
        assert ner.stride(length) == (64 if length > 66 else max(1, (length - 2) // 2))
    for length in range(5, 513):
        squad.check(SimpleNamespace(max_seq_length=length, spm_model_file=None, do_train=False, do_predict=True,
                                    do_eval=False, train_file=None, predict_file="dev.json"))
        assert squad.query_length(length) == (64 if length > 67 else (length - 3) // 2)
