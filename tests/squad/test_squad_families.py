"""SQuAD with the tokenizers of BERT's family (RoBERTa's byte-level BPE, XLM-R's SentencePiece): the Python features
(<s> question </s></s> window </s>, one token type, the paragraph's words tokenized as in running text) against the
in-graph windows of the raw-text export, and the Python answers (mapped back through the tokenizer's text) against
the graph's (through its offsets)."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from official_bert.configs import BertConfig
from official_bert.export.squad import choose_answers, squad_tokenizer_layer, squad_windows
from official_bert.squad import RawResult, compute_predictions, convert_examples_to_features, read_squad_examples
from official_bert.text import tokenizer_spec

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "families")
SQUAD = os.path.join(REPO, "tests", "fixtures", "squad", "train-v2.0.json")


EXTRA = [("Where is the café?", "Le café de Zoë Dupont est à Montréal, près du fleuve (depuis 1895)."),
         ("Who said it?", "\"It's done,\" she said: don't ask twice—it's 3:45 p.m. already!")]


def pairs():
    """The fixture's questions and paragraphs, their words one space apart (the Python features tokenize the words
    so joined, as the original; the graph tokenizes the paragraph as written, and with runs of whitespace a
    byte-level BPE has more tokens there), and `EXTRA`."""
    with open(SQUAD, encoding="utf-8") as f:
        data = json.load(f)
    found = [(qa["question"], " ".join(paragraph["context"].split())) for article in data["data"]
             for paragraph in article["paragraphs"] for qa in paragraph["qas"]]
    return [(q, c) for q, c in found if c] + EXTRA


def examples(tmp_path, pairs):
    data = {"data": [{"paragraphs": [{"context": context, "qas": [{"id": f"q{i}", "question": question}]}
                                     for i, (question, context) in enumerate(pairs)]}]}
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return read_squad_examples(str(path), is_training=False)


def spec_of(family):
    directory = os.path.join(FIXTURES, family)
    return tokenizer_spec.for_checkpoint(directory, BertConfig.from_json_file(os.path.join(directory, "config.json")))


@pytest.mark.parametrize("family", ["roberta", "xlm-roberta"])
def test_windows_and_answers_equal_the_python_features_and_postprocessing(tmp_path, family):
    spec = spec_of(family)
    python, graph = spec.python_tokenizer(), squad_tokenizer_layer(spec)
    found = pairs()
    assert len(found) >= 5
    squad_examples = examples(tmp_path, found)
    features = list(convert_examples_to_features(squad_examples, python, 48, 16, 12, is_training=False))
    context = tf.constant([c for _, c in found])
    windows = squad_windows(graph, tf.constant([q for q, _ in found]), context, 48, 16, 12)
    assert len(features) == windows.example.shape[0] > len(found)  # several windows somewhere
    cls, sep = python.vocab["<s>"], python.vocab["</s>"]
    for w, feature in enumerate(features):
        assert windows.inputs["input_word_ids"][w].numpy().tolist() == feature.input_ids
        assert windows.inputs["input_mask"][w].numpy().tolist() == feature.input_mask
        assert feature.segment_ids == windows.inputs["input_type_ids"][w].numpy().tolist() == [0] * 48
        ids = feature.input_ids
        assert ids[0] == cls and ids[ids.index(sep) + 1] == sep  # <s> question </s></s>
    rng = np.random.default_rng(0)
    start_logits = rng.normal(0, 3, (len(features), 48)).astype(np.float32)
    end_logits = rng.normal(0, 3, (len(features), 48)).astype(np.float32)
    results = [RawResult(f.unique_id, s.tolist(), e.tolist()) for f, s, e in zip(features, start_logits, end_logits)]
    expected = compute_predictions(squad_examples, features, results, n_best_size=5, max_answer_length=4,
                                   do_lower_case=False)
    got = choose_answers(windows, context, tf.constant(start_logits), tf.constant(end_logits), n_best_size=5,
                         max_answer_length=4)
    answers = [a.decode("utf-8").strip() for a in got["answer"].numpy()]
    # "empty": the original's stand-in for no valid span.
    wanted = [expected.predictions[e.qas_id].replace("empty", "") for e in squad_examples]
    assert answers == wanted and sum(map(bool, answers)) >= len(answers) // 2
    # The answers are the paragraphs' own text, no space before them.
    assert all(answer in c and answer == answer.strip() for answer, (_, c) in zip(answers, found))


def test_a_question_that_leaves_no_room_for_the_paragraph_is_refused(tmp_path):
    from official_bert.squad import SquadError

    python = spec_of("roberta").python_tokenizer()
    # BERT's [CLS] q [SEP] p [SEP] would leave a token for the paragraph; RoBERTa's <s> q </s></s> p </s> none.
    with pytest.raises(SquadError, match="--max_seq_length=10 leaves no room for the paragraph beside a question of "
                                         "6 tokens and this tokenizer's 4 special tokens"):
        list(convert_examples_to_features(examples(tmp_path, [("a b c d e f", "text")]), python, 10, 2, 6,
                                          is_training=False))
