"""Sentences → model inputs, labelled as the paper labels them: the first WordPiece of each word.

Each word is split into pieces (`tokenizer.tokenize(word)`); the first piece carries the word's label and loss,
continuation pieces, [CLS], [SEP] and padding carry none (label -1, `IGNORE`). A sentence whose pieces do not fit
in `max_seq_length - 2` is cut into windows `doc_stride` pieces apart (SQuAD's `make_doc_spans`), and each word
is predicted from the window where its first piece has the most context (SQuAD's `is_max_context`).

With `document_context`, a sentence that fits is packed with the pieces of the sentences around it in its
document, as many before as after where the document allows, until the window is full ("maximal document
context", the paper's §5.3); only the sentence's own words are labelled.
"""

import dataclasses

import numpy as np

from official_bert.ner.errors import NerError
from official_bert.squad.features import DocSpan, is_max_context, make_doc_spans
from official_bert.text.packing import packing_of
from official_bert.text.tokenizers import word_pieces

IGNORE = -1  # the label of positions without one: Keras' sparse cross-entropy ignores it (ignore_class)


@dataclasses.dataclass
class NerFeature:
    """One window of one sentence.

    Args:
        sentence_index: the sentence's index in the list converted.
        input_ids: [CLS] pieces [SEP] as ids, zero-padded to max_seq_length.
        input_mask: 1 for real tokens, 0 for padding.
        label_ids: the word's label id (IOB2, see `labels.LabelMap`) at the first piece of each of the sentence's
            words, `IGNORE` elsewhere.
        word_positions: position → index in the sentence of the word whose first piece is there.
        max_context: position → whether this window is that word's max-context window, where it is predicted.

    Example:
    >>> feature = NerFeature(0, [2, 5, 3, 0], [1, 1, 1, 0], [-1, 1, -1, -1], {1: 0}, {1: True})
    >>> feature.segment_ids
    [0, 0, 0, 0]
    """

    sentence_index: int
    input_ids: list
    input_mask: list
    label_ids: list
    word_positions: dict
    max_context: dict

    @property
    def segment_ids(self):
        return [0] * len(self.input_ids)


def check_window(max_seq_length, doc_stride):
    """Raises NerError, naming the flags, unless windows hold a piece and overlap.

    Example:
    >>> check_window(128, 64)
    >>> check_window(16, 14)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.ner.errors.NerError: --doc_stride=14 must be less than --max_seq_length - 2 = 14 (the pieces ...
    """
    for name, value in (("max_seq_length", max_seq_length), ("doc_stride", doc_stride)):
        if not isinstance(value, int) or value < 1:
            raise NerError(f"--{name}={value}: expected a positive integer")
    if max_seq_length < 4:
        raise NerError(f"--max_seq_length={max_seq_length}: expected at least 4 ([CLS], two pieces, [SEP]): "
                       "windows of one piece cannot overlap")
    if doc_stride >= max_seq_length - 2:
        raise NerError(f"--doc_stride={doc_stride} must be less than --max_seq_length - 2 = {max_seq_length - 2} "
                       "(the pieces in a window), or windows would not overlap")


def convert_sentences_to_features(sentences, tokenizer, label_map, max_seq_length, doc_stride,
                                  document_context=False):
    """The `NerFeature`s of `sentences`, sentence by sentence, window by window.

    Args:
        sentences: `conll.Sentence`s of one file, in order (document context comes from their neighbours).
        tokenizer: a `FullTokenizer` (anything with `tokenize`, `convert_tokens_to_ids` and `vocab`).
        label_map: the `labels.LabelMap`; every tag's type must be in it.
        max_seq_length: the length of every feature, padded.
        doc_stride: pieces between the starts of a long sentence's windows.
        document_context: fill each window with the sentences around it in its document.

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.ner.conll import Sentence
    >>> from official_bert.ner.labels import LabelMap
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "jo", "##hn", "ran", "."]))
    >>> sentences = [Sentence([["John", "B-PER"], ["ran", "O"]], [1, 2], 0), Sentence([[".", "O"]], [4], 0)]
    >>> features = convert_sentences_to_features(sentences, FullTokenizer(vocab), LabelMap(["PER"]), 8, 2)
    >>> features[0].input_ids, features[0].label_ids, features[0].word_positions
    ([2, 4, 5, 6, 3, 0, 0, 0], [-1, 1, -1, 0, -1, -1, -1, -1], {1: 0, 3: 1})

    With document context the second sentence's window holds the first sentence too, unlabelled:

    >>> features = convert_sentences_to_features(sentences, FullTokenizer(vocab), LabelMap(["PER"]), 8, 2,
    ...                                          document_context=True)
    >>> features[1].input_ids, features[1].label_ids
    ([2, 4, 5, 6, 7, 3, 0, 0], [-1, -1, -1, -1, 0, -1, -1, -1])
    """
    check_window(max_seq_length, doc_stride)
    layout = packing_of(tokenizer)
    for token in (layout.cls_token, layout.sep_token, layout.unk_token):
        if token not in tokenizer.vocab:
            raise NerError(f"the vocabulary has no {token} token, which NER features need")
    room = max_seq_length - 2
    pieces = [_sentence_pieces(sentence, tokenizer) for sentence in sentences]
    features = []
    for index, sentence in enumerate(sentences):
        words, first_piece = pieces[index]
        labels = label_map.ids(sentence.tags)
        if document_context and len(words) <= room:
            before, after = _neighbours(sentences, pieces, index, room - len(words))
            windows = [(before, words, after, [DocSpan(0, len(words))], 0)]
        else:
            spans = make_doc_spans(len(words), room, doc_stride)
            windows = [([], words[span.start:span.start + span.length], [], spans, i) for i, span in enumerate(spans)]
        for before, window, after, spans, span_index in windows:
            span = spans[span_index]
            tokens = [layout.cls_token, *before, *window, *after, layout.sep_token]
            offset = 1 + len(before) - span.start  # position of sentence piece p: p + offset
            label_ids = [IGNORE] * max_seq_length
            word_positions, max_context = {}, {}
            for word, piece in enumerate(first_piece):
                if span.start <= piece < span.start + span.length:
                    position = piece + offset
                    label_ids[position] = labels[word]
                    word_positions[position] = word
                    max_context[position] = is_max_context(spans, span_index, piece)
            input_ids = tokenizer.convert_tokens_to_ids(tokens)
            padding = [0] * (max_seq_length - len(input_ids))
            features.append(NerFeature(index, input_ids + padding, [1] * len(input_ids) + padding, label_ids,
                                       word_positions, max_context))
    return features


def _sentence_pieces(sentence, tokenizer):
    """The sentence's pieces and the index of each word's first piece; a word of no piece (only characters the
    tokenizer drops) stands as [UNK], so that every word is predicted. A byte-level BPE's and an XLM-R
    SentencePiece's words are tokenized as transformers' token classification tokenizes them: each after a space
    (`text.tokenizers.word_pieces`)."""
    pieces, first_piece = [], []
    unk = packing_of(tokenizer).unk_token
    for pieces_of_word in word_pieces(tokenizer, sentence.words, prefix_space=True):
        first_piece.append(len(pieces))
        pieces.extend(pieces_of_word or [unk])
    return pieces, first_piece


def _neighbours(sentences, pieces, index, room):
    """The pieces of the document around sentence `index` that fill `room`: half before it, half after it, and
    what one side cannot use to the other."""
    document = sentences[index].document
    before, after = [], []
    i = index - 1
    while i >= 0 and sentences[i].document == document and len(before) < room:
        before[:0] = pieces[i][0]
        i -= 1
    i = index + 1
    while i < len(sentences) and sentences[i].document == document and len(after) < room:
        after.extend(pieces[i][0])
        i += 1
    num_after = min(len(after), max(room // 2, room - len(before)))
    num_before = min(len(before), room - num_after)
    return before[len(before) - num_before:], after[:num_after]


def feature_arrays(features, padding=0):
    """The features' inputs as int32 arrays {"input_word_ids", "input_mask", "input_type_ids"} [N + padding, T]
    and their label ids [N + padding, T]; padding rows are all zeros, their labels all `IGNORE`.

    Example:
    >>> inputs, labels = feature_arrays([NerFeature(0, [2, 5, 3], [1, 1, 1], [-1, 1, -1], {1: 0}, {1: True})], 1)
    >>> inputs["input_word_ids"].tolist(), labels.tolist()
    ([[2, 5, 3], [0, 0, 0]], [[-1, 1, -1], [-1, -1, -1]])
    """
    length = len(features[0].input_ids)
    inputs = {"input_word_ids": [f.input_ids for f in features], "input_mask": [f.input_mask for f in features],
              "input_type_ids": [f.segment_ids for f in features]}
    inputs = {name: np.array(rows + [[0] * length] * padding, np.int32) for name, rows in inputs.items()}
    labels = np.array([f.label_ids for f in features] + [[-1] * length] * padding, np.int32)
    return inputs, labels
