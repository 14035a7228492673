"""The NER scorer and tag schemes against conlleval itself: its startOfChunk/endOfChunk and its counting loop,
transcribed line by line from the Perl script (version 2004-01-26), and counts worked out by hand."""

import itertools
import random

import pytest

from official_bert.ner import chunks, count_chunks, detect_scheme, report, scores, to_scheme


# ---- conlleval, transcribed (only the B/I/E/O rules it has; "." and "[" "]" tags do not occur here) ----

def end_of_chunk(prev_tag, tag, prev_type, type_):
    return ((prev_tag == "B" and tag == "B") or (prev_tag == "B" and tag == "O") or
            (prev_tag == "I" and tag == "B") or (prev_tag == "I" and tag == "O") or
            (prev_tag == "E" and tag == "E") or (prev_tag == "E" and tag == "I") or
            (prev_tag == "E" and tag == "O") or (prev_tag == "I" and tag == "O") or
            (prev_tag != "O" and prev_tag != "." and prev_type != type_))


def start_of_chunk(prev_tag, tag, prev_type, type_):
    return ((prev_tag == "B" and tag == "B") or (prev_tag == "I" and tag == "B") or
            (prev_tag == "O" and tag == "B") or (prev_tag == "O" and tag == "I") or
            (prev_tag == "E" and tag == "E") or (prev_tag == "E" and tag == "I") or
            (prev_tag == "O" and tag == "E") or (prev_tag == "O" and tag == "I") or
            (tag != "O" and tag != "." and prev_type != type_))


def split(tag):
    prefix, dash, type_ = tag.partition("-")
    return (prefix, type_) if dash else (tag, "")


def conlleval(lines):
    """conlleval's main loop over (first column, gold, guessed) lines; a blank line is ("-X-", "O", "O")."""
    correct_chunk, found_correct, found_guessed, correct_tags, tokens = {}, {}, {}, 0, 0
    in_correct = False
    last_correct, last_correct_type, last_guessed, last_guessed_type = "O", "", "O", ""
    for first, gold, guess in lines:
        guessed, guessed_type = split(guess)
        correct, correct_type = split(gold)
        if first == "-X-":
            guessed = "O"
        if in_correct:
            gold_end = end_of_chunk(last_correct, correct, last_correct_type, correct_type)
            guess_end = end_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
            if gold_end and guess_end and last_guessed_type == last_correct_type:
                in_correct = False
                correct_chunk[last_correct_type] = correct_chunk.get(last_correct_type, 0) + 1
            elif gold_end != guess_end or guessed_type != correct_type:
                in_correct = False
        gold_start = start_of_chunk(last_correct, correct, last_correct_type, correct_type)
        guess_start = start_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
        if gold_start and guess_start and guessed_type == correct_type:
            in_correct = True
        if gold_start:
            found_correct[correct_type] = found_correct.get(correct_type, 0) + 1
        if guess_start:
            found_guessed[guessed_type] = found_guessed.get(guessed_type, 0) + 1
        if first != "-X-":
            correct_tags += correct == guessed and guessed_type == correct_type
            tokens += 1
        last_guessed, last_correct, last_guessed_type, last_correct_type = guessed, correct, guessed_type, correct_type
    if in_correct:
        correct_chunk[last_correct_type] = correct_chunk.get(last_correct_type, 0) + 1
    return tokens, correct_tags, found_correct, found_guessed, correct_chunk


def conlleval_lines(sentences):
    lines = []
    for gold, guessed in sentences:
        lines += [("w", g, p) for g, p in zip(gold, guessed)] + [("-X-", "O", "O")]
    return lines


def ours(sentences):
    counts = count_chunks(sentences)
    return (counts.tokens, counts.correct_tags, dict(counts.gold), dict(counts.guessed),
            {t: n for t, n in counts.correct.items() if n})


# ---- hand-counted cases, one per rule ----

CASES = {
    # I- after O starts a chunk (IOB1): gold I-PER I-PER is one person; the guess splits it with B-.
    "I after O": ([(["O", "I-PER", "I-PER", "O"], ["O", "I-PER", "B-PER", "O"])],
                  dict(gold={"PER": 1}, guessed={"PER": 2}, correct={})),
    # A type change inside a chunk ends it and starts another: I-ORG I-LOC is two chunks, not one.
    "type change": ([(["I-ORG", "I-ORG", "O"], ["I-ORG", "I-LOC", "O"])],
                    dict(gold={"ORG": 1}, guessed={"ORG": 1, "LOC": 1}, correct={})),
    # B- of a one-word chunk, right after a chunk of its type (IOB1's only B-): two chunks; both found.
    "B of a one-word chunk": ([(["I-PER", "B-PER", "O"], ["B-PER", "B-PER", "O"])],
                              dict(gold={"PER": 2}, guessed={"PER": 2}, correct={"PER": 2})),
    # IOB1 gold against IOB2 guesses of the same chunks: every chunk correct, but only some tags.
    "IOB1 vs IOB2": ([(["I-LOC", "O", "I-PER", "I-PER", "B-PER"], ["B-LOC", "O", "B-PER", "I-PER", "B-PER"])],
                     dict(gold={"LOC": 1, "PER": 2}, guessed={"LOC": 1, "PER": 2}, correct={"LOC": 1, "PER": 2})),
    # Nothing predicted: precision 0 (not a division by zero), recall 0.
    "empty predictions": ([(["I-MISC", "O", "I-ORG"], ["O", "O", "O"])],
                          dict(gold={"MISC": 1, "ORG": 1}, guessed={}, correct={})),
    # A guess that ends late is wrong; a chunk at the sentence's end is closed by the sentence break.
    "boundaries": ([(["I-PER", "O", "O"], ["I-PER", "I-PER", "O"]), (["O", "I-LOC"], ["O", "I-LOC"])],
                   dict(gold={"PER": 1, "LOC": 1}, guessed={"PER": 1, "LOC": 1}, correct={"LOC": 1})),
}


@pytest.mark.parametrize("name", CASES)
def test_hand_counted_chunks(name):
    sentences, expected = CASES[name]
    _, _, gold, guessed, correct = ours(sentences)
    assert (gold, guessed, correct) == (expected["gold"], expected["guessed"], expected["correct"])
    assert ours(sentences) == conlleval(conlleval_lines(sentences))


def test_empty_predictions_score_zero_and_report_as_conlleval():
    counts = count_chunks(CASES["empty predictions"][0])
    assert scores(counts) == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "accuracy": 33.33, "MISC_precision": 0.0,
                              "MISC_recall": 0.0, "MISC_f1": 0.0, "ORG_precision": 0.0, "ORG_recall": 0.0,
                              "ORG_f1": 0.0}
    assert report(counts).splitlines()[:2] == [
        "processed 3 tokens with 2 phrases; found: 0 phrases; correct: 0.",
        "accuracy:  33.33%; precision:   0.00%; recall:   0.00%; FB1:   0.00"]


def test_figures_by_hand():
    # gold: PER(0-2) LOC(3) ORG(5-7); guessed: PER(0-2) LOC(3-5) ORG(5-7): 2 of 3 right each way.
    gold = ["I-PER", "I-PER", "O", "I-LOC", "O", "I-ORG", "I-ORG"]
    guess = ["B-PER", "I-PER", "O", "I-LOC", "I-LOC", "I-ORG", "I-ORG"]
    results = scores(count_chunks([(gold, guess)]))
    assert (results["precision"], results["recall"], results["f1"]) == (66.67, 66.67, 66.67)
    assert results["accuracy"] == round(100 * 5 / 7, 2) and results["LOC_f1"] == 0.0 and results["PER_f1"] == 100.0
    assert report(count_chunks([(gold, guess)])).splitlines()[2] == (
        "              LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  1")


def test_random_iob_sequences_score_as_conlleval():
    """Every IOB1/IOB2 sequence conlleval can meet, valid or not, counted as it counts them."""
    rng = random.Random(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    for _ in range(300):
        sentences = []
        for _ in range(rng.randint(1, 4)):
            length = rng.randint(1, 8)
            sentences.append(([rng.choice(tags) for _ in range(length)], [rng.choice(tags) for _ in range(length)]))
        assert ours(sentences) == conlleval(conlleval_lines(sentences)), sentences


def test_schemes_keep_every_chunk():
    for sequence in itertools.product(["O", "B-PER", "I-PER", "I-LOC"], repeat=4):
        sequence = list(sequence)
        for scheme in ("iob1", "iob2", "iobes", "bilou"):
            converted = to_scheme(sequence, scheme)
            assert chunks(converted) == chunks(sequence), (sequence, scheme, converted)
            assert detect_scheme([converted]) == scheme or not chunks(sequence) or scheme == "iob1"
    assert to_scheme(["I-PER", "I-PER", "B-PER", "I-LOC"], "iobes") == ["B-PER", "E-PER", "S-PER", "S-LOC"]
    assert to_scheme(["B-PER", "E-PER", "S-PER"], "iob1") == ["I-PER", "I-PER", "B-PER"]
    # conlleval's E- rules: E-X ends its chunk, I-X after it starts one.
    assert chunks(["B-PER", "E-PER", "I-PER", "E-PER"]) == [("PER", 0, 2), ("PER", 2, 4)]
