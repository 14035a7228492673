"""Every command-line tool on bad input: exit status 1, one line naming what is wrong, no output left behind.

The cases of one tool run in one process (`DRIVER`), each as the tool's `run()` with its own argv, so that
TensorFlow is imported once per tool rather than once per case.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from official_bert import BertConfig, BertEncoder, save_checkpoint
from official_bert.io import output_lock
from official_bert.training import PretrainingRun, TrainingError, TrainingOptions, prepare_output_dir
from tests.training.test_run_pretraining import one_device, write_examples

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.slow  # about 2 minutes on 2 quiet cores: one process per tool, and a 44 MB conversion

DRIVER = """
import contextlib, importlib, io, json, sys
from absl import flags
name, cases = sys.argv[1], json.loads(sys.argv[2])
tool = importlib.import_module(name)
results = []
for argv in cases:
    flags.FLAGS.unparse_flags()
    sys.argv = [name + ".py", *argv]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            tool.run()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    results.append([code, stderr.getvalue()])
print(json.dumps(results))
"""

WORDS = ["the", "good", "bad", "film", ".", "a", "plot", "dull", "fine", "who", "ran", "ann", "?"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
VOCAB_SIZE = 60


def tiny_config(**overrides):
    return BertConfig(**{**dict(vocab_size=VOCAB_SIZE, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=32, type_vocab_size=2), **overrides})


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def make_inputs(d):
    """The tools' inputs, good and bad; returns name → path."""
    vocab = SPECIALS + WORDS + [f"w{i}" for i in range(VOCAB_SIZE - len(SPECIALS) - len(WORDS))]
    p = {"vocab": write_lines(d / "vocab.txt", vocab),
         "no_unk": write_lines(d / "no_unk.txt", [t for t in vocab if t != "[UNK]"]),
         "no_cls": write_lines(d / "no_cls.txt", [t for t in vocab if t != "[CLS]"]),
         "dup": write_lines(d / "dup.txt", vocab[:20] + ["the"] + vocab[21:]),
         "config": str(d / "bert_config.json"), "short": str(d / "short.json"), "no_hidden": str(d / "no_hidden.json"),
         "dir": str(d), "file": write_lines(d / "a_file", ["not a directory"])}
    tiny_config().to_json_file(p["config"])
    tiny_config(max_position_embeddings=8).to_json_file(p["short"])
    values = tiny_config().to_dict()
    del values["hidden_size"]
    (d / "no_hidden.json").write_text(json.dumps(values))
    p["tfrecord"] = write_examples(d / "train.tfrecord", 16)
    for name, rows in (("data", ["the good film .\t1", "the bad film .\t0"]),
                       ("bad3col", ["the good film .\t1", "a dull\tplot .\t0"])):
        (d / name).mkdir()
        for split in ("train", "dev"):
            write_lines(d / name / f"{split}.tsv", ["sentence\tlabel"] + rows)
        p[name] = str(d / name)
    qas = [{"id": "q1", "question": "who ran ?", "answers": []}, {"id": "q1", "question": "who ?", "answers": []}]
    (d / "dup.json").write_text(json.dumps({"data": [{"paragraphs": [{"context": "ann ran .", "qas": qas}]}]}))
    p["squad_dup"] = str(d / "dup.json")
    p["ckpt"] = str(d / "ckpt")
    save_checkpoint(BertEncoder(tiny_config()), p["ckpt"], vocab_file=p["vocab"])
    # A pretraining run of one checkpoint, with the default --optimizer=adamw.
    p["adamw_run"] = str(d / "adamw_run")
    prepare_output_dir(p["adamw_run"], tiny_config(), p["vocab"])
    PretrainingRun(tiny_config(), TrainingOptions(p["adamw_run"], train_batch_size=4, num_train_steps=2,
                                                  num_warmup_steps=1), one_device()).checkpoints.save()
    p["locked"] = str(d / "locked")
    return p


def pretraining(p, out, **changes):
    flags = {"bert_config_file": p["config"], "input_file": p["tfrecord"], "output_dir": out, "vocab_file": p["vocab"],
             "max_seq_length": 16, "max_predictions_per_seq": 3, "train_batch_size": 4, "num_train_steps": 2,
             "num_warmup_steps": 1, **changes}
    return ["--do_train"] + [f"--{k}={v}" for k, v in flags.items()]


def classifier(p, out, **changes):
    flags = {"task_name": "sst-2", "data_dir": p["data"], "vocab_file": p["vocab"], "bert_config_file": p["config"],
             "output_dir": out, "max_seq_length": 16, "train_batch_size": 2, "num_train_epochs": 1, **changes}
    return ["--do_train"] + [f"--{k}={v}" for k, v in flags.items()]


def squad(p, out, **changes):
    flags = {"vocab_file": p["vocab"], "bert_config_file": p["config"], "output_dir": out, "predict_file": p["squad_dup"],
             "max_seq_length": 32, "doc_stride": 8, "max_query_length": 8, **changes}
    return ["--do_predict"] + [f"--{k}={v}" for k, v in flags.items()]


def fill_mask(p, **changes):
    flags = {"bert_config_file": p["short"], "vocab_file": p["vocab"], "init_checkpoint": p["ckpt"],
             "text": "the [MASK] film . " + "the good film . " * 4, **changes}
    return [f"--{k}={v}" for k, v in flags.items()]


# (tool, case id, argv from the inputs and a fresh output path, exit status, fragment of the last stderr line,
# what must be left: None — nothing at the output path — or the name of an input directory that stays as it was).
CASES = [
    ("run_pretraining", "output_dir_is_a_file", lambda p, out: pretraining(p, p["file"]), 1,
     "a_file is a file; expected a directory", "file"),
    ("run_pretraining", "output_dir_unwritable", lambda p, out: pretraining(p, "/sys/official_bert_test/run"), 1,
     "--output_dir=/sys/official_bert_test/run: cannot create the directory", None),
    ("run_pretraining", "config_is_a_directory", lambda p, out: pretraining(p, out, bert_config_file=p["dir"]), 1,
     "is a directory; expected a BERT config file", None),
    ("run_pretraining", "config_without_hidden_size",
     lambda p, out: pretraining(p, out, bert_config_file=p["no_hidden"]), 1,
     "no_hidden.json: missing required keys ['hidden_size']", None),
    ("run_pretraining", "seq_length_beyond_positions", lambda p, out: pretraining(p, out, bert_config_file=p["short"]),
     1, "--max_seq_length=16 exceeds max_position_embeddings=8", None),
    ("run_pretraining", "vocab_without_unk", lambda p, out: pretraining(p, out, vocab_file=p["no_unk"]), 1,
     "no_unk.txt: no [UNK] in it: not a BERT vocabulary", None),
    ("run_pretraining", "vocab_with_duplicates", lambda p, out: pretraining(p, out, vocab_file=p["dup"]), 1,
     "dup.txt:6: this line's token is listed again further down (1 such lines)", None),
    ("run_pretraining", "output_dir_in_use", lambda p, out: pretraining(p, p["locked"]), 1,
     f"is in use by another run (pid {os.getpid()} on this host", "locked"),
    # A run directory written by the library alone has no run.json: which flags and inputs made it is unknown, so
    # no tool resumes it (a run of the tool is resumed only with its own flags: tests/hostile/).
    ("run_pretraining", "resume_a_run_of_unknown_flags",
     lambda p, out: pretraining(p, p["adamw_run"], optimizer="lamb"), 1,
     "holds checkpoints but no run.json (a run of an older version, or not made by this tool)", "adamw_run"),
    ("run_classifier", "vocab_without_cls", lambda p, out: classifier(p, out, vocab_file=p["no_cls"]), 1,
     "no_cls.txt: no [CLS] in it: not a BERT vocabulary", None),
    ("run_classifier", "data_dir_is_a_file", lambda p, out: classifier(p, out, data_dir=p["file"]), 1,
     "a_file: is a file; expected the directory holding the task's files", None),
    ("run_classifier", "three_columns_in_a_single_sentence_tsv",
     lambda p, out: classifier(p, out, data_dir=p["bad3col"]), 1,
     "train.tsv:3: expected 2 tab-separated columns (sentence label), found 3", None),
    ("run_classifier", "config_is_a_directory", lambda p, out: classifier(p, out, bert_config_file=p["dir"]), 1,
     "is a directory; expected a BERT config file", None),
    ("run_classifier", "output_dir_is_a_file", lambda p, out: classifier(p, p["file"]), 1,
     "is a file; expected a directory", "file"),
    ("run_classifier", "output_dir_in_use", lambda p, out: classifier(p, p["locked"]), 1,
     f"is in use by another run (pid {os.getpid()} on this host", "locked"),
    ("run_squad", "duplicate_question_ids", lambda p, out: squad(p, out), 1,
     "dup.json: data[0].paragraphs[0].qas[1]: duplicate question id 'q1' (first at data[0].paragraphs[0].qas[0])",
     None),
    ("run_squad", "output_dir_unwritable", lambda p, out: squad(p, "/sys/official_bert_test/squad"), 1,
     "cannot create the directory", None),
    ("convert_checkpoint", "stray_argument",
     lambda p, out: [f"--input_path={p['ckpt']}", f"--output_path={out}", "extra"], 1,
     "unexpected arguments: extra", None),
    ("convert_checkpoint", "into_a_run_directory",
     lambda p, out: [f"--input_path={p['ckpt']}", f"--output_path={p['adamw_run']}", "--output_format=huggingface"], 1,
     "is not empty (it holds bert_config.json, checkpoint, ckpt-0.data-00000-of-00001, ckpt-0.index, vocab.txt): "
     "a converted checkpoint there would shadow", "adamw_run"),
    ("convert_checkpoint", "output_path_is_a_file",
     lambda p, out: [f"--input_path={p['ckpt']}", f"--output_path={p['file']}"], 1,
     "a_file is a file; expected a directory", "file"),
    ("fill_mask", "text_longer_than_the_model", lambda p, out: fill_mask(p), 1,
     "with [CLS] and [SEP], more than max_seq_length=8", None),
    ("fill_mask", "config_is_a_directory", lambda p, out: fill_mask(p, bert_config_file=p["dir"]), 1,
     "is a directory; expected a BERT config file", None),
]


def contents(path):
    """The files under a directory with their bytes, or a file's bytes."""
    if not os.path.isdir(path):
        return open(path, "rb").read()
    return {os.path.relpath(os.path.join(d, f), path): open(os.path.join(d, f), "rb").read()
            for d, _, names in os.walk(path) for f in names}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Runs every case, grouped by tool; returns case id → (exit status, stderr), the inputs, and the contents of
    the inputs that must stay as they were, before and after."""
    d = tmp_path_factory.mktemp("inputs")
    p = make_inputs(d)
    kept = {case[-1] for case in CASES if case[-1]}
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
    results = {}
    with output_lock(p["locked"]):  # held by this process while the tools try it
        before = {name: contents(p[name]) for name in kept}
        for tool in dict.fromkeys(case[0] for case in CASES):
            cases = [case for case in CASES if case[0] == tool]
            argvs = [argv(p, str(d / "out" / name)) for _, name, argv, *_ in cases]
            done = subprocess.run([sys.executable, "-c", DRIVER, tool, json.dumps(argvs)], env=env, cwd=REPO,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            for (_, name, *_), (code, stderr) in zip(cases, json.loads(done.stdout.strip().splitlines()[-1])):
                results[f"{tool}-{name}"] = (code, stderr)
        after = {name: contents(p[name]) for name in kept}
    return results, d, before, after


@pytest.mark.parametrize("tool,name,argv,code,fragment,kept", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_bad_input_gives_one_line_and_leaves_nothing(outcomes, tool, name, argv, code, fragment, kept):
    results, d, before, after = outcomes
    status, stderr = results[f"{tool}-{name}"]
    lines = stderr.strip().splitlines()
    assert status == code, stderr[-2000:]
    assert lines and lines[-1].startswith(f"{tool}: error: ") and fragment in lines[-1], stderr[-2000:]
    assert "Traceback" not in stderr
    assert not os.path.exists(d / "out" / name)
    if kept:
        assert after[kept] == before[kept]
    assert not [f for f in contents(str(d)) if ".incomplete-" in f or "_temp" in f]


def test_a_failed_checkpoint_write_keeps_the_last_good_one_and_removes_its_temporaries(tmp_path):
    run = PretrainingRun(tiny_config(), TrainingOptions(str(tmp_path), train_batch_size=4, num_train_steps=2,
                                                        num_warmup_steps=1), one_device())
    run.checkpoints.save()
    run.model.optimizer.iterations.assign(1)
    (tmp_path / "ckpt-1_temp").write_text("")  # TensorFlow's shard directory for ckpt-1 cannot be created
    with pytest.raises(TrainingError, match=rf"{tmp_path}/ckpt-1: cannot write the checkpoint \(.*\); the last "
                                            rf"good one is {tmp_path}/ckpt-0$"):
        run.checkpoints.save()
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-0")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-0.data-00000-of-00001", "ckpt-0.index"]


def test_convert_checkpoint_killed_mid_write_leaves_no_temporary_file(tmp_path):
    big = tiny_config(vocab_size=30000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                      intermediate_size=1024)
    save_checkpoint(BertEncoder(big), str(tmp_path / "src"), format="google")
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "convert_checkpoint.py", f"--input_path={tmp_path / 'src'}",
                                f"--output_path={out}", "--output_format=huggingface"], cwd=REPO,
                               env=dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None:
        if out.exists() and any(".incomplete-" in name for name in os.listdir(out)):
            break
        time.sleep(0.005)
    assert process.poll() is None, "the conversion ended before a temporary file was seen"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert stderr.strip().splitlines()[-1] == "convert_checkpoint: interrupted; nothing saved"
    assert not out.exists() or not [name for name in os.listdir(out) if ".incomplete-" in name]
