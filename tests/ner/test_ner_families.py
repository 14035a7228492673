"""NER with the tokenizers of BERT's family: each word tokenized as transformers' token classification tokenizes it
(RoBERTa's each after a space), its first token labelled and the rest ignored, and conlleval's scores as for BERT."""

import os

import numpy as np
import pytest

from official_bert.configs import BertConfig
from official_bert.ner import IGNORE, convert_sentences_to_features, label_map, read_conll, word_tags
from official_bert.ner.conlleval import scores
from official_bert.ner.predictions import score
from official_bert.text import tokenizer_spec

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "families")
NER_FILE = os.path.join(REPO, "tests", "fixtures", "ner", "train.txt")
KINDS = {"bpe": "roberta", "spm": "xlm-roberta", "wordpiece": "electra"}


def tokenizer_of(family):
    directory = os.path.join(FIXTURES, family)
    config = BertConfig.from_json_file(os.path.join(directory, "config.json"))
    return tokenizer_spec.for_checkpoint(directory, config).python_tokenizer()


@pytest.fixture(scope="module")
def reference():
    with np.load(os.path.join(FIXTURES, "tokenizer_ids.npz")) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_features_are_transformers_token_classification_inputs(reference, kind):
    """Each sentence's ids are those transformers gives its words (is_split_into_words), and exactly the first token
    of each word carries the word's label."""
    sentences = [s for s in read_conll(NER_FILE) if s.words]
    labels = label_map(None, sentences, NER_FILE)
    features = convert_sentences_to_features(sentences, tokenizer_of(KINDS[kind]), labels, 128, 32)
    assert [f.sentence_index for f in features] == list(range(len(sentences)))  # one window each
    values, lengths = reference[f"{kind}/ner_ids"], reference[f"{kind}/ner_ids_lengths"]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    word_ids = reference[f"{kind}/ner_word_ids"]
    for feature, sentence, a, b in zip(features, sentences, starts[:-1], starts[1:]):
        n = b - a
        assert feature.input_ids[:n] == values[a:b].tolist() and sum(feature.input_mask) == n
        theirs = word_ids[a:b]
        first = {p: int(w) for p, w in enumerate(theirs) if w >= 0 and (p == 0 or theirs[p - 1] != w)}
        assert feature.word_positions == first
        assert [feature.label_ids[p] for p in first] == labels.ids(sentence.tags)
        assert all(label == IGNORE for p, label in enumerate(feature.label_ids) if p not in first)


@pytest.mark.parametrize("kind", ["bpe", "spm"])
def test_conlleval_scores_the_words_from_their_first_tokens(kind):
    """Logits right at every word's first token and wrong everywhere else score 100: the other tokens are ignored;
    wrong at the first tokens, they score less."""
    sentences = [s for s in read_conll(NER_FILE) if s.words]
    labels = label_map(None, sentences, NER_FILE)
    features = convert_sentences_to_features(sentences, tokenizer_of(KINDS[kind]), labels, 128, 32)
    num_labels = len(labels.labels)
    right = np.zeros((len(features), 128, num_labels), np.float32)
    for i, feature in enumerate(features):
        for position, label in enumerate(feature.label_ids):
            # The gold label at a first token; elsewhere a label that would break every chunk it touched.
            right[i, position, label if label != IGNORE else num_labels - 1] = 1
    f1 = scores(score(sentences, word_tags(features, right, sentences, labels)))["f1"]
    assert f1 == 100
    wrong = right.copy()
    for i, feature in enumerate(features):
        for position in feature.word_positions:
            wrong[i, position] = np.roll(wrong[i, position], 1)
    assert scores(score(sentences, word_tags(features, wrong, sentences, labels)))["f1"] < 50
