"""run_embeddings.py as a command, on a tiny sentence-transformers directory (tests/fixtures/sentence_transformers_tiny,
saved by sentence-transformers itself): it trains with in-batch negatives, keeps the best epoch by NDCG@10, reports the
metrics the model's own embeddings give (brute force in NumPy), writes a directory TextEmbedder and the export serve
alike (the export cut to a Matryoshka width), resumes after a kill to the weights of an uninterrupted run, and refuses
bad input — empty texts, a missing negatives column, qrels naming unknown ids, batch size 1, numbers out of range,
outputs that alias inputs, reruns with other flags or data — in one line, exit status 1, nothing written."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from official_bert.checkpoints import CheckpointError
from official_bert.keras_models import TextClassifier, TextEmbedder
from official_bert.retrieval.metrics import ranking_metrics
from tests.cli.test_cli_bad_input import DRIVER, contents

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(REPO, "tests", "fixtures", "sentence_transformers_tiny")
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "runs", "in", "park", "cats", "and", "dogs", "is", "green",
         "red"]


# The trained run's training flags (beside `argv`'s).
TRAINED = ("--matryoshka_dims=32,16", "--loss=cached_multiple_negatives_ranking", "--mini_batch_size=3")


def environment():
    return dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def make_data(directory):
    """Training pairs (a query of three words, its passage of eight) and a BEIR set of 30 passages, dev and test
    queries 15 each, written from the tiny model's words."""
    rng = np.random.default_rng(0)

    def sentence(n):
        return " ".join(rng.choice(WORDS, n))

    pairs = []
    for _ in range(48):
        passage = sentence(8)
        pairs.append({"anchor": " ".join(passage.split()[2:5]), "positive": passage})
    passages = [sentence(8) for _ in range(30)]
    write_jsonl(directory / "beir" / "corpus.jsonl", [{"_id": f"p{i:02d}", "text": p} for i, p in enumerate(passages)])
    write_jsonl(directory / "beir" / "queries.jsonl",
                [{"_id": f"q{i:02d}", "text": " ".join(p.split()[3:6])} for i, p in enumerate(passages)])
    (directory / "beir" / "qrels").mkdir()
    for split, ids in (("dev", range(15)), ("test", range(15, 30))):
        (directory / "beir" / "qrels" / f"{split}.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"q{i:02d}\tp{i:02d}\t1\n" for i in ids))
    return {"train": write_jsonl(directory / "train.jsonl", pairs), "beir": str(directory / "beir")}


def argv(data, output_dir, *extra):
    return [f"--init_checkpoint={MODEL}", f"--train_file={data['train']}", f"--eval_dir={data['beir']}",
            f"--output_dir={output_dir}", "--do_train", "--train_batch_size=8", "--learning_rate=1e-3",
            "--num_train_epochs=2", "--log_steps=3", "--save_checkpoints_steps=3", *extra]


def run(arguments, **kwargs):
    return subprocess.run([sys.executable, os.path.join(REPO, "run_embeddings.py"), *arguments], env=environment(),
                          capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    work = tmp_path_factory.mktemp("embeddings")
    data = make_data(work)
    out = work / "run"
    done = run(argv(data, out, "--do_eval", "--do_predict", "--keep_best", *TRAINED, f"--export_dir={work / 'export'}",
                    "--export_dimensions=16", "--mixed_precision=fp32"))
    assert done.returncode == 0, done.stderr[-3000:]
    return work, data, out, done.stderr


@pytest.mark.slow  # about 80 s: trains, evaluates twice and exports a tiny model
def test_training_evaluates_keeps_the_best_and_writes_a_loadable_model(trained):
    work, data, out, log = trained
    with open(out / "eval_results.json") as f:
        results = json.load(f)
    for name in ("mrr@10", "ndcg@10", "map@100", "recall@1", "recall@10", "recall@100", "ndcg@10_dim16"):
        assert 0 <= results[f"eval_{name}"] <= 1
    state = json.load(open(out / "best_checkpoint.json"))
    assert state["metric"] == "eval_ndcg@10" and len(state["evaluations"]) == 2
    assert results["eval_ndcg@10"] == max(e["eval_ndcg@10"] for e in state["evaluations"])
    assert "step" in log and "left" in log  # progress lines with the time left
    # The run records what it is: an embedding model, an encoder without a task head, which a classifier does not
    # take for its own; and the flags and inputs it was made with.
    assert json.load(open(out / "model_kind.json")) == {"model": "BertEncoder"}
    with pytest.raises(CheckpointError, match="is an encoder without a task head, not a sentence classifier"):
        TextClassifier.from_checkpoint(str(out), sequence_length=32)
    assert json.load(open(out / "run.json"))["settings"]["loss"] == "cached_multiple_negatives_ranking"
    # The directory is the best model; its own embeddings give the reported figures (brute force, NumPy).
    model = TextEmbedder.from_checkpoint(str(out))
    assert (model.pooling, model.normalize, model.preprocessor.sequence_length) == ("mean", True, 32)
    corpus = [json.loads(line) for line in open(os.path.join(data["beir"], "corpus.jsonl"))]
    queries = [json.loads(line) for line in open(os.path.join(data["beir"], "queries.jsonl"))]
    vectors = model.predict([row["text"] for row in corpus + queries], verbose=0)
    passages, asked = vectors[:len(corpus)], vectors[len(corpus):]
    ids = np.array([row["_id"] for row in corpus])
    for split, rows, prefix in (("dev", range(15), "eval"), ("test", range(15, 30), "test")):
        scores = asked[list(rows)] @ passages.T
        order = np.lexsort((np.broadcast_to(ids, scores.shape), -scores), axis=1)
        figures = ranking_metrics([list(ids[o]) for o in order], [{f"p{i:02d}"} for i in rows])
        expected = json.load(open(out / f"{prefix}_results.json"))
        for name, value in figures.items():
            assert expected[f"{prefix}_{name}"] == pytest.approx(value, abs=1e-6), (split, name)
    rankings = [json.loads(line) for line in open(out / "test_rankings.jsonl")]
    assert [r["query_id"] for r in rankings] == [f"q{i}" for i in range(15, 30)] and len(rankings[0]["results"]) == 30
    # The export serves the first 16 dimensions, renormalised.
    served = tf.saved_model.load(str(work / "export" / "1")).signatures["serving_default"](
        text=tf.constant([row["text"] for row in queries[:4]]))["embedding"].numpy()
    cut = asked[:4, :16] / np.linalg.norm(asked[:4, :16], axis=1, keepdims=True)
    np.testing.assert_allclose(served, cut, atol=1e-5)


@pytest.mark.slow  # about 2 minutes: two runs, one killed
def test_a_killed_run_resumes_to_the_weights_of_an_uninterrupted_one(tmp_path):
    data = make_data(tmp_path)
    whole = run(argv(data, tmp_path / "whole", "--mixed_precision=fp32"))
    assert whole.returncode == 0, whole.stderr[-2000:]
    killed = subprocess.Popen([sys.executable, os.path.join(REPO, "run_embeddings.py"),
                               *argv(data, tmp_path / "killed", "--mixed_precision=fp32")], env=environment(),
                              stderr=subprocess.PIPE, text=True)
    for line in killed.stderr:
        if "step 3/12" in line:  # the first progress line: step 3 is checkpointed
            killed.send_signal(signal.SIGTERM)
            break
    killed.wait(timeout=120)
    assert killed.returncode == 130 and tf.train.latest_checkpoint(str(tmp_path / "killed"))
    resumed = run(argv(data, tmp_path / "killed", "--mixed_precision=fp32"))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    a, b = (TextEmbedder.from_checkpoint(str(tmp_path / name)) for name in ("whole", "killed"))
    for x, y in zip(a.encoder.weights, b.encoder.weights):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def bad_cases(work, data, run_dir):
    """(name, argv, the expected message, the path that must stay as it was or not exist)."""
    bad = work / "bad"
    empty = write_jsonl(bad / "empty.jsonl", [{"anchor": "the cat", "positive": "a cat sat"},
                                              {"anchor": "a dog", "positive": " "}])
    triplets = write_jsonl(bad / "pairs.jsonl", [{"anchor": "the cat", "positive": "a cat sat"}])
    unknown = bad / "unknown_beir"
    shutil.copytree(data["beir"], unknown)
    (unknown / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq00\tp99\t1\n")
    copied_model = bad / "model"
    shutil.copytree(MODEL, copied_model)
    changed = bad / "train.jsonl"  # the same name, other rows
    shutil.copy(data["train"], changed)
    with open(changed, "a") as f:
        f.write(json.dumps({"anchor": "red dog", "positive": "the red dog runs in the park"}) + "\n")
    holding = bad / "holding"  # a directory with a file of the name of one the run writes
    holding.mkdir()
    shutil.copy(os.path.join(MODEL, "config.json"), holding / "vocab.txt")
    out = str(bad / "out")
    # The trained run's flags that change its result, but for the one a case changes.
    same = ["--keep_best", "--mixed_precision=fp32", "--do_eval", f"--eval_dir={data['beir']}"]
    cases = [
        ("empty text", [f"--train_file={empty}"], r"empty.jsonl, row 2, column 'positive': an empty text", out),
        ("no negatives column", [f"--train_file={triplets}", "--negative_columns=negative"],
         "pairs.jsonl, row 1: no column 'negative'", out),
        ("qrels naming unknown ids", [f"--eval_dir={unknown}", "--do_eval"],
         "dev.tsv, row 1: corpus-id 'p99' is not in", out),
        ("batch size 1", ["--train_batch_size=1"], "--train_batch_size=1: in-batch negatives need at least 2", out),
        ("output is the model", [f"--init_checkpoint={copied_model}", f"--output_dir={copied_model}"],
         f"--output_dir={copied_model} is --init_checkpoint={copied_model}, which this run reads", str(copied_model)),
        ("training file among the outputs", [f"--train_file={holding}/vocab.txt", f"--output_dir={holding}"],
         "vocab.txt is a file the run writes in --output_dir", str(holding)),
        ("rerun with another learning rate", [f"--output_dir={run_dir}", *same, *TRAINED, "--learning_rate=5e-4"],
         "holds a run made with --learning_rate=0.001 (now 0.0005)", str(run_dir)),
        ("rerun with another loss", [f"--output_dir={run_dir}", *same, "--matryoshka_dims=32,16"],
         "holds a run made with --loss=cached_multiple_negatives_ranking (now multiple_negatives_ranking)",
         str(run_dir)),
        ("rerun with other training data", [f"--output_dir={run_dir}", *same, *TRAINED, f"--train_file={changed}"],
         f"holds a run made with another --train_file: {data['train']} then, {changed} now, with other content",
         str(run_dir)),
        ("best metric unknown", ["--best_metric=accuracy", "--do_eval"], "--best_metric=accuracy: not one of", out),
        ("matryoshka wider than the model", ["--matryoshka_dims=64,16"], "--matryoshka_dims=64: wider than", out),
        ("matryoshka twice one width", ["--matryoshka_dims=32,32"], "--matryoshka_dims=32,32: expected distinct", out),
        ("export wider than the model", ["--export_dimensions=33", "--export_dir=x"], "--export_dimensions=33: wider",
         out),
        ("zero export width", ["--export_dimensions=-2", "--export_dir=x"],
         "--export_dimensions=-2: expected an integer in [1, 65536]", out),
        ("matryoshka zero", ["--matryoshka_dims=32,0"], "--matryoshka_dims=32,0: expected comma-separated numbers, "
         "each integer in [1, 65536]", out),
        ("matryoshka nan weight", ["--matryoshka_dims=32,16", "--matryoshka_weights=1,nan"],
         "--matryoshka_weights=1,nan: expected comma-separated numbers, each finite number in [0, 1000]", out),
        ("matryoshka zero weights", ["--matryoshka_dims=32,16", "--matryoshka_weights=0,0"],
         "--matryoshka_weights=[0.0, 0.0]: expected finite weights >= 0, not all 0", out),
        ("matryoshka words", ["--matryoshka_dims=32,big"], "--matryoshka_dims=32,big: expected comma-separated", out),
        *[(f"scale {value}", [f"--scale={value}"], f"--scale={shown}: expected a finite number in (0, 1000]", out)
          for value, shown in (("nan", "nan"), ("inf", "inf"), ("0", "0.0"), ("-20", "-20.0"), ("1e999", "inf"),
                               ("1e30", "1e+30"))],
        *[(f"mini batch {value}", ["--loss=cached_multiple_negatives_ranking", f"--mini_batch_size={value}"],
           f"--mini_batch_size={value}: expected an integer in [1, 1048576]", out) for value in (0, -3)],
        ("corpus chunk 0", ["--corpus_chunk_size=0", "--do_eval"], "--corpus_chunk_size=0: expected an integer", out),
        ("scored loss on pairs", ["--loss=cosent"], "no column 'text_a'", out),
        ("train file without do_train", ["--nodo_train", "--do_eval"], "--train_file is given but --do_train", out),
    ]
    return [(name, argv(data, out, *extra) if not any(e.startswith("--output_dir") for e in extra) else
             [a for a in argv(data, out) if not a.startswith("--output_dir")] + extra, message, kept)
            for name, extra, message, kept in cases]


@pytest.mark.slow  # about 60 s: TensorFlow once, then each case in the same process
def test_bad_input_is_one_line_and_writes_nothing(trained, tmp_path):
    work, data, run_dir, _ = trained
    cases = bad_cases(tmp_path, data, run_dir)
    before = {kept: contents(kept) for _, _, _, kept in cases if os.path.exists(kept)}
    done = subprocess.run([sys.executable, "-c", DRIVER, "run_embeddings",
                           json.dumps([case[1] for case in cases])], env=environment(), cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    for (name, _, message, kept), (code, stderr) in zip(cases, outcomes):
        last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        assert code == 1 and "Traceback" not in stderr, (name, stderr[-1500:])
        assert last.startswith("run_embeddings: error: ") and message in last, (name, last)
        if kept in before:
            assert contents(kept) == before[kept], name
        else:
            assert not os.path.exists(kept), name


@pytest.mark.slow  # about 60 s: trains and evaluates a tiny model
def test_scored_pairs_train_with_cosent_and_report_the_models_spearman(tmp_path):
    rng = np.random.default_rng(1)

    def pairs(count):
        rows = []
        while len(rows) < count:
            a = " ".join(rng.choice(WORDS, 5))
            shared = int(rng.integers(0, 5))  # the more words the two texts share, the higher the score
            b = " ".join(a.split()[:shared] + list(rng.choice(WORDS, 5 - shared)))
            if b != a:  # two equal texts' cosine is 1 up to rounding: such ties would rank as rounding falls
                rows.append({"text_a": a, "text_b": b, "score": shared / 5})
        return rows

    train = write_jsonl(tmp_path / "train.jsonl", pairs(64))
    dev = write_jsonl(tmp_path / "dev.jsonl", pairs(24))
    out = tmp_path / "run"
    done = run([f"--init_checkpoint={MODEL}", f"--train_file={train}", f"--dev_file={dev}", f"--output_dir={out}",
                "--do_train", "--do_eval", "--loss=cosent", "--train_batch_size=8", "--learning_rate=1e-3",
                "--num_train_epochs=1", "--mixed_precision=fp32"])
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.load(open(out / "eval_results.json"))
    rows = [json.loads(line) for line in open(dev)]
    model = TextEmbedder.from_checkpoint(str(out))
    a = model.predict([r["text_a"] for r in rows], verbose=0)
    b = model.predict([r["text_b"] for r in rows], verbose=0)
    cosines = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    scores = np.array([r["score"] for r in rows])

    def ranks(x):  # average ranks of ties
        order = np.argsort(x, kind="stable")
        ranked = np.empty(len(x))
        ranked[order] = np.arange(len(x))
        return np.array([ranked[x == value].mean() for value in x])

    assert results["eval_spearman_cosine"] == pytest.approx(np.corrcoef(ranks(cosines), ranks(scores))[0, 1],
                                                            abs=1e-6)
    assert results["eval_pearson_cosine"] == pytest.approx(np.corrcoef(cosines, scores)[0, 1], abs=1e-6)
