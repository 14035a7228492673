"""bert-extend-vocab from the command line: each refusal is one line and exit status 1 with nothing written; a run
prints each new word's id and pieces. The cases run in one process (as tests/cli/test_cli_bad_input.py does), so
that TensorFlow is imported once."""

import json
import os
import subprocess
import sys

import pytest

from official_bert import save_checkpoint
from tests.checkpoints.test_extend_vocab import TOKENS, random_pretrainer, write_vocab

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.slow  # about 15 s on 2 quiet cores: one TensorFlow start, a corpus counted in the graph

DRIVER = """
import contextlib, io, json, sys
from absl import flags
from official_bert.tools import extend_vocab
results = []
for argv in json.loads(sys.argv[1]):
    flags.FLAGS.unparse_flags()
    sys.argv = ["extend_vocab.py", *argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            extend_vocab.run()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""

# (name, words file lines or None, extra flags, expected exit status, expected last stderr line's or stdout's part)
CASES = [
    ("punctuation", ["covid-19"], [], 1, "words.txt: 'covid-19' is not one word to the basic tokenizer"),
    ("duplicate", ["Covid", "troponin", "COVID"], [], 1, "'Covid' and 'COVID' are the same word"),
    ("too_many", [f"w{i}" for i in range(5)], [], 1, "5 words to add but the vocabulary has 4 [unused] entries"),
    ("both_sources", ["covid"], ["--from_corpus={corpus}"], 1, "pass exactly one of --new_words and --from_corpus"),
    ("no_output_dir", ["covid"], ["--output_dir="], 1, "pass --output_dir (or --dry_run to only see the plan)"),
    ("taken_output_dir", ["covid"], ["--output_dir={taken}"], 1, "is not empty (it holds notes.txt)"),
    ("no_corpus", None, ["--from_corpus={work}/missing*.txt", "--num_new_words=2"], 1,
     "--from_corpus: no file matches"),
    ("no_words", [], [], 1, "no words in {work}/no_words/words.txt (expected one word per line)"),
    ("latin1_corpus", None, ["--from_corpus={latin1}", "--num_new_words=2", "--dry_run"], 1,
     "--from_corpus: {work}/latin1.txt, line 2: byte 0xe9 at byte offset 21 is not UTF-8"),
    ("added", ["covid", "The", "Troponin"], [], 0, "skipped 'The': already in the vocabulary (id 9)\n"
     "2 new words, 34 entries in all; wrote the checkpoint (google format) to {out}\n"
     "  covid -> id 1 (was [unused0]), starts as the mean of co ##vid\n"
     "  troponin -> id 2 (was [unused1]), starts as the mean of tr ##op ##oni ##n\n"),
    ("from_corpus", None, ["--from_corpus={corpus}", "--num_new_words=1", "--dry_run", "--mode=append"], 0,
     "the corpus's 1 words split into the most pieces x occurrences:\n  interleukin: 2 x 4 pieces "
     "(in ##ter ##leu ##kin)\n1 new words, 35 entries in all; dry run: nothing written\n"
     "  interleukin -> id 34, starts as the mean of in ##ter ##leu ##kin\n"),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    work = tmp_path_factory.mktemp("extend")
    save_checkpoint(random_pretrainer(), str(work / "bert"), "google", vocab_file=write_vocab(str(work)))
    (work / "corpus.txt").write_text("Interleukin and the covid level.\nInterleukin.\n")
    (work / "latin1.txt").write_bytes(b"the level.\nraised caf\xe9 interleukin.\n")
    (work / "taken").mkdir()
    (work / "taken" / "notes.txt").write_text("mine")
    paths = {"work": str(work), "corpus": str(work / "corpus.txt"), "taken": str(work / "taken"),
             "latin1": str(work / "latin1.txt")}
    argvs = []
    for name, words, extra, *_ in CASES:
        flags = [f"--init_checkpoint={work / 'bert'}", f"--output_dir={work / 'out' / name}"]
        if words is not None:
            (work / name).mkdir()
            (work / name / "words.txt").write_text("".join(w + "\n" for w in words))
            flags.append(f"--new_words={work / name / 'words.txt'}")
        argvs.append(flags + [flag.format(**paths) for flag in extra])
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(argvs)], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return work, dict(zip([case[0] for case in CASES], json.loads(done.stdout.strip().splitlines()[-1])))


@pytest.mark.parametrize("name,words,extra,code,expected", CASES, ids=[case[0] for case in CASES])
def test_extend_vocab_cli(results, name, words, extra, code, expected):
    work, outcomes = results
    status, stdout, stderr = outcomes[name]
    assert status == code, stderr[-2000:]
    assert "Traceback" not in stderr
    if code:
        lines = stderr.strip().splitlines()
        assert lines[-1].startswith("extend_vocab: error: ") and expected.format(work=work) in lines[-1], stderr[-2000:]
        assert not os.path.exists(work / "out" / name) and stdout == ""
        assert os.listdir(work / "taken") == ["notes.txt"]
    else:
        assert stdout == expected.format(out=work / "out" / name)
        if name == "added":
            tokens = (work / "out" / name / "vocab.txt").read_text().splitlines()
            assert tokens[:3] == ["[PAD]", "covid", "troponin"] and tokens[3:] == TOKENS[3:]
        else:
            assert not os.path.exists(work / "out" / name)
