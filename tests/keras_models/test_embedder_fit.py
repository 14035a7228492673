"""`TextEmbedder.fit` with sentence-transformers' losses, on rows of texts given as columns: the loss Keras reports is
the loss of the model's own embeddings (NumPy, from `predict`); in-batch negatives learn to retrieve a held-out
passage; the `.keras` file keeps the compiled loss; bad rows are refused in one line."""

import keras
import numpy as np
import pytest

from official_bert import BertConfig, BertEncoder
from official_bert.classification.validation import ValidationError
from official_bert.keras_models import TextEmbedder, TextPreprocessor
from official_bert.retrieval.losses import (CachedMultipleNegativesRankingLoss, CoSENTLoss, MatryoshkaLoss,
                                            MultipleNegativesRankingLoss)

WORDS = ["red", "blue", "green", "cat", "dog", "bird", "runs", "sleeps"]
# A passage says in other words what its query says: the model must learn which word stands for which.
SYNONYMS = ["crimson", "azure", "emerald", "feline", "hound", "sparrow", "sprints", "dozes"]
FILLER = ["the", "a", "of", "and"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + WORDS + SYNONYMS + FILLER


def embedder(dropout=0.1):
    keras.utils.set_random_seed(1)
    config = BertConfig.from_preset("tiny", vocab_size=len(VOCAB), num_hidden_layers=1, hidden_dropout_prob=dropout,
                                    attention_probs_dropout_prob=dropout)
    return TextEmbedder(BertEncoder(config), TextPreprocessor(VOCAB, sequence_length=12))


def pairs(count, seed=0):
    """Queries of two words, each positive their synonyms among filler words: a task in-batch negatives can learn
    and a random model cannot do."""
    rng = np.random.default_rng(seed)
    queries, positives = [], []
    for _ in range(count):
        a, b = rng.choice(len(WORDS), 2, replace=False)
        filler = rng.choice(FILLER, 2)
        queries.append(f"{WORDS[a]} {WORDS[b]}")
        positives.append(f"{filler[0]} {SYNONYMS[a]} {filler[1]} {SYNONYMS[b]}")
    return queries, positives


def numpy_ranking_loss(anchors, positives, scale=20.0):
    a = anchors / np.linalg.norm(anchors, axis=1, keepdims=True)
    p = positives / np.linalg.norm(positives, axis=1, keepdims=True)
    logits = scale * a @ p.T
    top = logits.max(axis=1, keepdims=True)
    return float(np.mean(np.log(np.exp(logits - top).sum(1)) + top[:, 0] - np.diag(logits)))


def numpy_cosent(a, b, scores, scale=20.0):
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    terms = [scale * (cos[i] - cos[j]) for i in range(len(cos)) for j in range(len(cos)) if scores[i] < scores[j]]
    return float(np.log1p(np.exp(terms).sum()))


@pytest.mark.slow  # about 10 s: two evaluations and a prediction, each tracing the tokenizer
def test_the_reported_loss_is_the_loss_of_the_models_embeddings():
    model = embedder()
    queries, positives = pairs(12)
    model.compile(loss=MultipleNegativesRankingLoss())
    reported = model.evaluate((queries, positives), batch_size=12, verbose=0)
    embeddings = model.predict(queries + positives, verbose=0)
    expected = numpy_ranking_loss(embeddings[:12], embeddings[12:])
    assert reported == pytest.approx(expected, rel=1e-5)
    scores = np.linspace(0, 1, 12)
    model.compile(loss=CoSENTLoss())
    reported = model.evaluate((queries, positives), scores, batch_size=12, verbose=0)
    expected = numpy_cosent(embeddings[:12], embeddings[12:], scores)
    assert reported == pytest.approx(expected, rel=1e-5)


@pytest.mark.slow  # about 15 s: a few hundred steps of a tiny model
@pytest.mark.parametrize("loss", [MultipleNegativesRankingLoss(),
                                  MatryoshkaLoss(CachedMultipleNegativesRankingLoss(mini_batch_size=4), [128, 32])])
def test_in_batch_negatives_learn_to_retrieve_held_out_passages(loss):
    model = embedder()
    queries, positives = pairs(16, seed=1)

    def mrr():
        both = model.predict(queries + positives, verbose=0)
        q, p = both[:len(queries)], both[len(queries):]
        q, p = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (q, p))
        ranks = (q @ p.T > np.diag(q @ p.T)[:, None]).sum(1)
        return float(np.mean(1.0 / (ranks + 1)))

    before = mrr()
    model.compile(loss=loss, learning_rate=1e-3)
    train_queries, train_positives = pairs(256, seed=2)
    history = model.fit((train_queries, train_positives), batch_size=16, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert mrr() > before + 0.2


@pytest.mark.slow  # about 30 s: fit, save, load and evaluate twice
def test_the_keras_file_keeps_the_compiled_loss(tmp_path):
    model = embedder()
    model.compile(loss=MatryoshkaLoss(MultipleNegativesRankingLoss(scale=10.0, symmetric=True), [128, 64]))
    model.fit(pairs(8), batch_size=4, verbose=0)
    model.save(str(tmp_path / "m.keras"))
    again = keras.saving.load_model(str(tmp_path / "m.keras"))
    loss = again._compile_arguments["loss"]
    assert isinstance(loss, MatryoshkaLoss) and loss.loss.scale == 10.0 and loss.loss.symmetric
    assert again.evaluate(pairs(8), batch_size=8, verbose=0) == pytest.approx(
        model.evaluate(pairs(8), batch_size=8, verbose=0), rel=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda m: m.fit((["red cat"], ["red cat runs"]), batch_size=1), "batch_size=1: in-batch negatives"),
    (lambda m: m.fit((["red cat", "dog"], ["red cat runs", " "])), r"texts\[1\]\[1\] is empty"),
    (lambda m: m.fit((["red cat", "dog"], ["red cat runs"])), "columns of unequal lengths"),
    (lambda m: m.fit(["red cat", "dog"]), "rows of texts as columns"),
    (lambda m: m.fit((["red cat", "dog"], ["a", "b"]), [1.0, 0.0]), "takes no labels"),
    (lambda m: m.fit((["red cat", None], ["a", "b"])), r"texts\[0\]\[1\] is None"),
    (lambda m: m.fit((["red cat", "dog"], ["a", "b"]), sample_weight=[1.0, 2.0]), "sample_weight"),
])
def test_bad_rows_are_refused_in_one_line(call, message):
    model = embedder()
    model.compile(loss=MultipleNegativesRankingLoss())
    with pytest.raises(ValidationError, match=message):
        call(model)


@pytest.mark.parametrize("args, message", [
    (((["red", "dog"], ["a", "b"]),), "2 pairs, no scores"),
    (((["red", "dog"], ["a", "b"]), [1.0, float("nan")]), r"y\[1\]"),
    (((["red", "dog"], ["a", "b"], ["c", "d"]), [1.0, 0.0]), "takes scored pairs"),
])
def test_bad_scored_pairs_are_refused_in_one_line(args, message):
    model = embedder()
    model.compile(loss=CoSENTLoss())
    with pytest.raises(ValidationError, match=message):
        model.fit(*args)
