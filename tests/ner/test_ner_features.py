"""NER data: the CoNLL reader, the paper's first-piece labelling, windows with the SQuAD max-context rule and
document context, each checked against positions worked out by hand."""

import numpy as np
import pytest

from official_bert.ner import (IGNORE, LabelMap, NerError, Sentence, check_tags, convert_sentences_to_features,
                               label_map, read_conll, word_tags)
from official_bert.tokenization import FullTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "ann", "##a", "lives", "in", "oslo", "no", "##r", "##way", ".", "she",
         "works"]


@pytest.fixture
def tokenizer(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return FullTokenizer(str(path), do_lower_case=True)


def ids(*tokens):
    return [VOCAB.index(token) for token in tokens]


def sentence(text, document=0):
    words_tags = [item.rsplit("/", 1) for item in text.split()]
    return Sentence([[w, t] for w, t in words_tags], list(range(1, len(words_tags) + 1)), document)


LABELS = LabelMap(["PER", "LOC"])  # O 0, B-PER 1, I-PER 2, B-LOC 3, I-LOC 4


def test_first_piece_of_each_word_carries_the_label(tokenizer):
    # Anna → ann ##a, Norway → no ##r ##way: only ann and no are labelled.
    [feature] = convert_sentences_to_features([sentence("Anna/I-PER lives/O in/O Norway/I-LOC ./O")], tokenizer,
                                              LABELS, 16, 4)
    assert feature.input_ids[:10] == ids("[CLS]", "ann", "##a", "lives", "in", "no", "##r", "##way", ".", "[SEP]")
    assert feature.label_ids[:10] == [IGNORE, 1, IGNORE, 0, 0, 3, IGNORE, IGNORE, 0, IGNORE]
    assert feature.label_ids[10:] == [IGNORE] * 6 and feature.input_mask == [1] * 10 + [0] * 6
    assert feature.word_positions == {1: 0, 3: 1, 4: 2, 5: 3, 8: 4}
    assert all(feature.max_context.values())


def test_long_sentence_windows_and_max_context(tokenizer):
    # 8 pieces: ann ##a lives in no ##r ##way . ; windows of 4 pieces (max_seq_length 6), 2 apart:
    # [0-3] [2-5] [4-7]. Max context (SQuAD's rule, min(left, right) + 0.01 * length, earlier on ties):
    # ann(0) → w0; lives(2): w0 min(2,1)=1, w1 min(0,3)=0 → w0; in(3): w0 0, w1 min(1,2)=1 → w1;
    # no(4): w1 min(2,1)=1, w2 0 → w1; .(7): w2.
    features = convert_sentences_to_features([sentence("Anna/I-PER lives/O in/O Norway/I-LOC ./O")], tokenizer,
                                             LABELS, 6, 2)
    assert [f.input_ids for f in features] == [ids("[CLS]", "ann", "##a", "lives", "in", "[SEP]"),
                                               ids("[CLS]", "lives", "in", "no", "##r", "[SEP]"),
                                               ids("[CLS]", "no", "##r", "##way", ".", "[SEP]")]
    predicted_in = {}
    for index, feature in enumerate(features):
        for position, word in feature.word_positions.items():
            if feature.max_context[position]:
                predicted_in.setdefault(word, []).append(index)
    assert predicted_in == {0: [0], 1: [0], 2: [1], 3: [1], 4: [2]}
    # Every window labels every first piece it holds, for training.
    assert [f.label_ids for f in features][1] == [IGNORE, 0, 0, 3, IGNORE, IGNORE]


def test_document_context_fills_the_window_with_neighbours_only_the_sentence_labelled(tokenizer):
    doc = [sentence("She/O lives/O in/O Oslo/I-LOC ./O", 1), sentence("Anna/I-PER works/O ./O", 1),
           sentence("She/O lives/O in/O Norway/I-LOC ./O", 1), sentence("Anna/I-PER ./O", 2)]
    # Window of 8 pieces; sentence 1 has 4 (ann ##a works .): 2 before, 2 after.
    features = convert_sentences_to_features(doc, tokenizer, LABELS, 10, 4, document_context=True)
    second = features[1]
    assert second.input_ids == ids("[CLS]", "oslo", ".", "ann", "##a", "works", ".", "she", "lives", "[SEP]")
    assert second.label_ids == [IGNORE, IGNORE, IGNORE, 1, IGNORE, 0, 0, IGNORE, IGNORE, IGNORE]
    # The last document has one sentence: nothing to add; the first sentence has nothing before it, so the
    # sentences after it fill its window.
    assert features[3].input_ids[:5] == ids("[CLS]", "ann", "##a", ".", "[SEP]")
    assert features[0].input_ids == ids("[CLS]", "she", "lives", "in", "oslo", ".", "ann", "##a", "works", "[SEP]")


def test_word_tags_come_from_the_max_context_window(tokenizer):
    sentences = [sentence("Anna/I-PER lives/O in/O Norway/I-LOC ./O")]
    features = convert_sentences_to_features(sentences, tokenizer, LABELS, 6, 2)
    # Window k predicts label k + 1 everywhere: each word shows which window it was taken from.
    logits = np.stack([np.tile(np.eye(5)[k + 1], (6, 1)) for k in range(3)])
    assert word_tags(features, logits, sentences, LABELS) == [["B-PER", "B-PER", "I-PER", "I-PER", "B-LOC"]]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_reader_columns_documents_and_errors(tmp_path):
    path = write(tmp_path, "train.txt", "-DOCSTART- -X- -X- O\n\nEU NNP B-NP I-ORG\nrejects VBZ B-VP O\n\n"
                                       "-DOCSTART- -X- -X- O\n\nPeter NNP B-NP B-PER\n\n\n")
    sentences = read_conll(path)
    assert [(s.words, s.tags, s.document, s.lines) for s in sentences] == [
        (["EU", "rejects"], ["I-ORG", "O"], 1, [3, 4]), (["Peter"], ["B-PER"], 2, [8])]
    for text, message in [
            ("EU NNP B-NP I-ORG\nrejects VBZ B-VP\n", "bad.txt:2: expected 4 columns (word ... tag), as line 1 has"),
            ("EU I-ORG\nrejects X-FOO\n", "bad.txt:2: tag 'X-FOO' is neither O nor B-, I-, E-, S-, L- or U-"),
            ("\n\n", "bad.txt: no sentence in it"),
            ("", "bad.txt: no sentence in it"),
            ("EU\n", "bad.txt:1: expected a word and its tag (two or more columns)")]:
        bad = write(tmp_path, "bad.txt", text)
        with pytest.raises(NerError) as error:
            read_conll(bad)
        assert str(error.value).startswith(f"{tmp_path}/{message}"), str(error.value)


def test_labels_from_the_training_file_or_the_flag():
    train = [sentence("EU/I-ORG rejects/O Peter/B-PER"), sentence("Rome/S-LOC")]
    assert label_map(None, train, "train.txt").labels == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    flag = label_map("B-PER,I-PER,O,I-MISC", None, None)
    assert flag.labels == ["O", "B-PER", "I-PER", "B-MISC", "I-MISC"]
    with pytest.raises(NerError, match=r"^dev.txt:1: tag 'B-MISC' is not in --label_list"):
        check_tags([sentence("Cup/B-MISC")], "dev.txt", flag, "--label_list")
    with pytest.raises(NerError, match=r"^dev.txt:2: tag 'I-MISC' is of a type train.txt has no tag of"):
        check_tags([sentence("the/O Cup/I-MISC")], "dev.txt", label_map(None, train, "train.txt"), "train.txt")
