"""run_squad.py as a command: a tiny model learns a few questions and answers them exactly, through the CLI's
predictions and scores and through the exported SavedModel; bad input gives one clear line."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401 (the exported tokenizer's ops, as a serving client needs them)

from official_bert import BertConfig
from official_bert.tokenization import BasicTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "run_squad.py")
SEQ_LENGTH, DOC_STRIDE, MAX_QUERY_LENGTH = 40, 8, 10

# (context, [(question, answer or None for unanswerable)]); the answers start mid-word, keep their case and
# punctuation, and the second context needs several windows of SEQ_LENGTH.
PARAGRAPHS = [
    ("Café Zoë’s\u202fbakery (1895-1943) opened in Montréal. Its founder, Zoë Dupont, was Japanese.",
     [("When did the bakery open?", "1895"), ("Where did it open?", "Montréal"),
      ("Who founded the bakery?", "Zoë Dupont"), ("Who sold the bakery?", None)]),
    ("The river rises in the north hills and flows south past the old mill, then through three small towns, "
     "Ashford, Bexley and Corby, before it meets the sea at a wide muddy estuary full of birds in the winter.",
     [("Where does the river rise?", "north hills"), ("Which towns does it flow through?", "Ashford, Bexley and Corby"),
      ("What is the estuary full of?", "birds"), ("How deep is the river?", None)]),
    ("In 1969 the crew of Apollo 11 landed on the Moon; Armstrong stepped out first.",
     [("Who stepped out first?", "Armstrong"), ("What did the crew land on?", "the Moon")]),
]


def squad_json(version_2, mismatched_answer=False):
    """The paragraphs as a SQuAD file (2.0's is_impossible for unanswerable questions, else they are left out)."""
    paragraphs = []
    for p, (context, questions) in enumerate(PARAGRAPHS):
        qas = []
        for q, (question, answer) in enumerate(questions):
            if answer is None and not version_2:
                continue
            qa = {"id": f"p{p}q{q}", "question": question,
                  "answers": [] if answer is None else [{"text": answer, "answer_start": context.index(answer)}]}
            if version_2:
                qa["is_impossible"] = answer is None
            qas.append(qa)
        paragraphs.append({"context": context, "qas": qas})
    if mismatched_answer:  # the original warns "Could not find answer" and skips it
        paragraphs[0]["qas"].append({"id": "bad", "question": "What?", "answers": [{"text": "bread",
                                                                                   "answer_start": 3}]})
    return {"version": "v2.0" if version_2 else "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}


def write_inputs(directory, version_2):
    """vocab.txt (every word of the data), bert_config.json, train.json and dev.json; returns their paths."""
    os.makedirs(directory, exist_ok=True)
    words = set()
    for context, questions in PARAGRAPHS:
        for text in [context, "What?"] + [question for question, _ in questions]:
            words.update(BasicTokenizer(do_lower_case=True).tokenize(text))
    paths = {name: os.path.join(directory, name) for name in ("vocab.txt", "bert_config.json", "train.json",
                                                               "dev.json")}
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(words)
    with open(paths["vocab.txt"], "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
               attention_probs_dropout_prob=0.0).to_json_file(paths["bert_config.json"])
    for name, data in (("train.json", squad_json(version_2, mismatched_answer=True)),
                       ("dev.json", squad_json(version_2))):
        with open(paths[name], "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False)
    return paths


def command(paths, output_dir, *extra):
    return [sys.executable, SCRIPT, f"--vocab_file={paths['vocab.txt']}",
            f"--bert_config_file={paths['bert_config.json']}", f"--output_dir={output_dir}",
            f"--train_file={paths['train.json']}", f"--predict_file={paths['dev.json']}",
            f"--max_seq_length={SEQ_LENGTH}", f"--doc_stride={DOC_STRIDE}", f"--max_query_length={MAX_QUERY_LENGTH}",
            "--train_batch_size=4", "--predict_batch_size=4", "--learning_rate=2e-3", "--warmup_proportion=0.05",
            "--iterations_per_loop=10", "--log_steps=50", "--seed=3", *extra]


def run(argv, timeout=600):
    env = dict(os.environ, PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def served_answers(export_dir, version_2):
    """The exported model's answers to every dev question, asked as raw text."""
    versions = sorted(os.listdir(export_dir))
    serve = tf.saved_model.load(os.path.join(export_dir, versions[-1])).signatures["serving_default"]
    pairs = [(f"p{p}q{q}", question, context) for p, (context, questions) in enumerate(PARAGRAPHS)
             for q, (question, answer) in enumerate(questions) if version_2 or answer is not None]
    outputs = serve(question=tf.constant([q for _, q, _ in pairs]), context=tf.constant([c for _, _, c in pairs]))
    return {qid: answer.decode("utf-8") for (qid, _, _), answer in zip(pairs, outputs["answer"].numpy())}, outputs


def gold_answers(version_2):
    return {f"p{p}q{q}": answer or "" for p, (_, questions) in enumerate(PARAGRAPHS)
            for q, (_, answer) in enumerate(questions) if version_2 or answer is not None}


@pytest.mark.slow
def test_squad_v1_learns_the_questions_and_serves_the_answers(tmp_path):
    paths = write_inputs(str(tmp_path / "data"), version_2=False)
    output_dir, export_dir = tmp_path / "run", tmp_path / "export"
    result = run(command(paths, output_dir, "--do_train", "--do_predict", "--do_eval", "--num_train_epochs=150",
                         f"--export_dir={export_dir}"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "skipped 1 of 9 questions whose answer text was not found" in result.stderr
    assert any(name.startswith("squad_train_") for name in os.listdir(output_dir))  # cached features

    gold = gold_answers(version_2=False)
    assert read_json(output_dir / "predictions.json") == gold
    nbest = read_json(output_dir / "nbest_predictions.json")
    assert set(nbest) == set(gold) and all(entries[0]["text"] == gold[qid] for qid, entries in nbest.items())
    assert not (output_dir / "null_odds.json").exists()
    scores = read_json(output_dir / "eval_results.json")
    assert scores["exact_match"] == 100.0 and scores["f1"] == 100.0
    # The original's step count: int(questions / batch × epochs), 8 questions kept (over more windows).
    assert scores["global_step"] == int(8 / 4 * 150)

    served, outputs = served_answers(str(export_dir), version_2=False)
    assert served == gold
    assert set(outputs) == {"answer", "score"} and all(outputs["score"].numpy() > 0)
    serve_tensors = tf.saved_model.load(str(export_dir / "1")).signatures["serve_tensors"]
    zeros = tf.zeros([1, SEQ_LENGTH], tf.int32)
    logits = serve_tensors(input_word_ids=zeros, input_mask=zeros, input_type_ids=zeros)
    assert {name: t.shape.as_list() for name, t in logits.items()} == {"start_logits": [1, SEQ_LENGTH],
                                                                       "end_logits": [1, SEQ_LENGTH]}

    # The standalone scorer agrees with eval_results.json.
    scored = subprocess.run([sys.executable, "-m", "official_bert.squad_evaluate", paths["dev.json"],
                             str(output_dir / "predictions.json")], capture_output=True, text=True, cwd=REPO)
    assert json.loads(scored.stdout) == {"exact_match": 100.0, "f1": 100.0}


@pytest.mark.slow
def test_squad_v2_chooses_the_null_threshold_and_answers_unanswerable_questions_with_nothing(tmp_path):
    paths = write_inputs(str(tmp_path / "data"), version_2=True)
    output_dir, export_dir = tmp_path / "run", tmp_path / "export"
    result = run(command(paths, output_dir, "--version_2_with_negative", "--do_train", "--do_eval",
                         "--find_best_threshold", "--num_train_epochs=300", f"--export_dir={export_dir}"))
    assert result.returncode == 0, result.stderr[-3000:]

    gold = gold_answers(version_2=True)
    assert read_json(output_dir / "predictions.json") == gold
    null_odds = read_json(output_dir / "null_odds.json")
    scores = read_json(output_dir / "eval_results.json")
    threshold = scores["null_score_diff_threshold"]
    assert scores["exact"] == 100.0 and scores["f1"] == 100.0 and scores["HasAns_total"] == 8
    assert scores["NoAns_total"] == 2 and scores["best_f1_thresh"] == threshold
    # The threshold separates the questions: null odds above it exactly where there is no answer.
    assert {qid for qid, odds in null_odds.items() if odds > threshold} == {q for q, a in gold.items() if not a}

    served, outputs = served_answers(str(export_dir), version_2=True)
    assert served == gold
    assert sorted(outputs) == ["answer", "null_odds", "score"]
    served_odds = dict(zip(gold, outputs["null_odds"].numpy().tolist()))
    assert served_odds == pytest.approx(null_odds, abs=1e-4)


BAD_INPUTS = [
    (["--do_predict", "--max_seq_length=40", "--max_query_length=40"], "--max_seq_length=40 must be greater than"),
    (["--do_predict", "--doc_stride=0"], "--doc_stride=0: expected an integer in [1, 8192]"),
    (["--do_train", "--train_file="], "--do_train needs --train_file"),
    (["--do_eval", "--find_best_threshold"], "--find_best_threshold needs --do_eval and --version_2_with_negative"),
    (["--do_predict", "--n_best_size=0"], "--n_best_size=0: expected an integer in [1, 10000]"),
    (["--do_predict", "--max_seq_length=128"], "--max_seq_length=128 exceeds max_position_embeddings=64"),
]


@pytest.mark.parametrize("extra,message", BAD_INPUTS)
def test_bad_flags_are_one_clear_line(tmp_path, extra, message):
    paths = write_inputs(str(tmp_path / "data"), version_2=False)
    result = run(command(paths, tmp_path / "run", *extra))
    assert result.returncode == 1
    assert message in result.stderr and "Traceback" not in result.stderr


def test_malformed_json_names_the_file_and_writes_nothing(tmp_path):
    paths = write_inputs(str(tmp_path / "data"), version_2=False)
    with open(paths["dev.json"], "w") as f:
        f.write('{"data": [{"paragraphs": [{"context": "x", "qas": [{"id": 1}]}]}]}')
    result = run(command(paths, tmp_path / "run", "--do_predict"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"run_squad: error: {paths['dev.json']}: data[0].paragraphs[0].qas[0].id: expected a string" in result.stderr
    assert not (tmp_path / "run" / "predictions.json").exists()
