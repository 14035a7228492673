"""`SquadExample`s → model inputs, exactly as the original run_squad.py's `convert_examples_to_features`.

Each example becomes one feature per window ("doc span") of its WordPiece-tokenized paragraph:
`[CLS] question [SEP] window [SEP]`, zero-padded to max_seq_length.
"""

import collections
import dataclasses

from official_bert.squad.errors import SquadError
from official_bert.text.packing import packing_of
from official_bert.text.tokenizers import word_piece_spans, word_pieces

FIRST_UNIQUE_ID = 1000000000

DocSpan = collections.namedtuple("DocSpan", ["start", "length"])


@dataclasses.dataclass
class InputFeatures:
    """One window of one example.

    Args:
        unique_id: the feature's id (from 1000000000, in order); a `RawResult` carries it back.
        example_index: index of the example in the list converted.
        doc_span_index: index of the window within the example.
        tokens: `[CLS] query [SEP] window [SEP]` as WordPiece tokens (unpadded).
        token_to_orig_map: position in `tokens` → index of the example's whitespace word, for window tokens.
        token_is_max_context: position in `tokens` → whether this window is the token's max-context window.
        input_ids: token ids, zero-padded to max_seq_length.
        input_mask: 1 for real tokens, 0 for padding.
        segment_ids: 0 for [CLS] query [SEP], 1 for window [SEP], 0 for padding.
        start_position: training label: the answer's first position, 0 ([CLS]) for an answer outside the
            window or an impossible question; None for prediction.
        end_position: the answer's last position, likewise.
        is_impossible: the example's `is_impossible`.
        token_spans: position in `tokens` → the window token's character span of the paragraph's words joined by
            single spaces, for a tokenizer of BERT's family (RoBERTa's, XLM-R's), whose answers are mapped back
            through them; None for WordPiece.

    Example:
    >>> feature = InputFeatures(FIRST_UNIQUE_ID, 0, 0, ["[CLS]", "[SEP]", "[SEP]"], {}, {}, [2, 3, 3, 0],
    ...                         [1, 1, 1, 0], [0, 0, 1, 0])
    >>> feature.unique_id, feature.start_position
    (1000000000, None)
    """

    unique_id: int
    example_index: int
    doc_span_index: int
    tokens: list
    token_to_orig_map: dict
    token_is_max_context: dict
    input_ids: list
    input_mask: list
    segment_ids: list
    start_position: int = None
    end_position: int = None
    is_impossible: bool = False
    token_spans: dict = None


def check_lengths(max_seq_length, doc_stride, max_query_length):
    """Raises SquadError, naming the flags, unless every window has room for a query and some of the paragraph.

    As the original, a --doc_stride as long as the room left for the paragraph, or longer, is allowed: the next
    window then starts where the last one ended (windows touch without overlapping).

    Args:
        max_seq_length, doc_stride, max_query_length: as for `convert_examples_to_features`.

    Example:
    >>> check_lengths(max_seq_length=128, doc_stride=128, max_query_length=64)
    >>> check_lengths(max_seq_length=64, doc_stride=128, max_query_length=61)
    Traceback (most recent call last):
    ...
    official_bert.squad.errors.SquadError: --max_seq_length=64 must be greater than --max_query_length=61 + 3 (for [CLS] and two [SEP]), to leave room for the paragraph
    """
    for name, value in (("max_seq_length", max_seq_length), ("doc_stride", doc_stride),
                        ("max_query_length", max_query_length)):
        if not isinstance(value, int) or value < 1:
            raise SquadError(f"--{name}={value}: expected a positive integer")
    if max_seq_length <= max_query_length + 3:
        raise SquadError(f"--max_seq_length={max_seq_length} must be greater than --max_query_length="
                         f"{max_query_length} + 3 (for [CLS] and two [SEP]), to leave room for the paragraph")


def convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride, max_query_length, is_training):
    """Yields the `InputFeatures` of `examples`, as the original (which called `output_fn` with each).

    A generator, so that a training set is written to TFRecords without holding every feature in memory;
    `list(...)` it for prediction, where post-processing needs them. The lengths are checked at once
    (`check_lengths`), not at the first feature.

    Args:
        examples: `SquadExample`s (from `read_squad_examples`).
        tokenizer: a `FullTokenizer` (anything with `tokenize` and `convert_tokens_to_ids`).
        max_seq_length: length of every feature, padded.
        doc_stride: distance between the starts of consecutive windows, in WordPiece tokens.
        max_query_length: questions are truncated to this many WordPiece tokens.
        is_training: compute `start_position` / `end_position`.

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.squad.examples import SquadExample
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "ann", "ran", "."]))
    >>> example = SquadExample("q1", "Who ran?", ["Ann", "ran."], "Ann", 0, 0)
    >>> [feature] = convert_examples_to_features([example], FullTokenizer(vocab), max_seq_length=10,
    ...                                          doc_stride=2, max_query_length=3, is_training=True)
    >>> feature.tokens, feature.start_position, feature.end_position
    (['[CLS]', 'who', 'ran', '[UNK]', '[SEP]', 'ann', 'ran', '.', '[SEP]'], 5, 5)
    >>> feature.input_ids, feature.segment_ids
    ([2, 4, 6, 1, 3, 5, 6, 7, 3, 0], [0, 0, 0, 0, 0, 1, 1, 1, 1, 0])
    """
    check_lengths(max_seq_length, doc_stride, max_query_length)
    try:
        layout = packing_of(tokenizer)
        tokenizer.convert_tokens_to_ids([layout.cls_token, layout.sep_token])
    except KeyError as e:
        raise SquadError(f"the vocabulary has no {e.args[0]} token, which SQuAD features need") from None
    return _features(examples, tokenizer, max_seq_length, doc_stride, max_query_length, is_training)


def _features(examples, tokenizer, max_seq_length, doc_stride, max_query_length, is_training):
    # [CLS] question [SEP] window [SEP], or RoBERTa's <s> question </s></s> window </s> (one token type).
    layout = packing_of(tokenizer)
    unique_id = FIRST_UNIQUE_ID
    for example_index, example in enumerate(examples):
        query_tokens = tokenizer.tokenize(example.question_text)[:max_query_length]

        tok_to_orig_index = []
        orig_to_tok_index = []
        all_doc_tokens = []
        # A byte-level BPE's words have the tokens they have in the paragraph's running text, each with its span.
        spans = word_piece_spans(tokenizer, example.doc_tokens)
        all_spans = None if spans is None else [span[1:] for word in spans for span in word]
        pieces = word_pieces(tokenizer, example.doc_tokens) if spans is None else [[s[0] for s in w] for w in spans]
        for i, sub_tokens in enumerate(pieces):
            orig_to_tok_index.append(len(all_doc_tokens))
            for sub_token in sub_tokens:
                tok_to_orig_index.append(i)
                all_doc_tokens.append(sub_token)

        tok_start_position = tok_end_position = None
        if is_training and not example.is_impossible:
            tok_start_position = orig_to_tok_index[example.start_position]
            if example.end_position < len(example.doc_tokens) - 1:
                tok_end_position = orig_to_tok_index[example.end_position + 1] - 1
            else:
                tok_end_position = len(all_doc_tokens) - 1
            tok_start_position, tok_end_position = improve_answer_span(
                all_doc_tokens, tok_start_position, tok_end_position, tokenizer, example.orig_answer_text)

        max_tokens_for_doc = max_seq_length - len(query_tokens) - layout.special_count(pair=True)
        if max_tokens_for_doc < 1:
            raise SquadError(f"--max_seq_length={max_seq_length} leaves no room for the paragraph beside a question "
                             f"of {len(query_tokens)} tokens and this tokenizer's "
                             f"{layout.special_count(pair=True)} special tokens")
        doc_spans = make_doc_spans(len(all_doc_tokens), max_tokens_for_doc, doc_stride)
        for doc_span_index, doc_span in enumerate(doc_spans):
            tokens = [layout.cls_token, *query_tokens, layout.sep_token]
            segment_ids = [0] * len(tokens)
            tokens += [layout.sep_token] * (layout.pair_separators - 1)
            segment_ids += [layout.second_segment_type] * (layout.pair_separators - 1)
            token_to_orig_map = {}
            token_is_max_context = {}
            token_spans = None if all_spans is None else {}
            for split_token_index in range(doc_span.start, doc_span.start + doc_span.length):
                if token_spans is not None:
                    token_spans[len(tokens)] = all_spans[split_token_index]
                token_to_orig_map[len(tokens)] = tok_to_orig_index[split_token_index]
                token_is_max_context[len(tokens)] = is_max_context(doc_spans, doc_span_index, split_token_index)
                tokens.append(all_doc_tokens[split_token_index])
                segment_ids.append(layout.second_segment_type)
            tokens.append(layout.sep_token)
            segment_ids.append(layout.second_segment_type)

            input_ids = tokenizer.convert_tokens_to_ids(tokens)
            padding = [0] * (max_seq_length - len(input_ids))
            input_mask = [1] * len(input_ids) + padding

            start_position = end_position = None
            if is_training:
                doc_start = doc_span.start
                doc_end = doc_span.start + doc_span.length - 1
                # An impossible question, or a window without the answer, points at [CLS].
                if example.is_impossible or not (tok_start_position >= doc_start and tok_end_position <= doc_end):
                    start_position = end_position = 0
                else:
                    doc_offset = len(query_tokens) + 1 + layout.pair_separators
                    start_position = tok_start_position - doc_start + doc_offset
                    end_position = tok_end_position - doc_start + doc_offset

            yield InputFeatures(
                unique_id=unique_id, example_index=example_index, doc_span_index=doc_span_index, tokens=tokens,
                token_to_orig_map=token_to_orig_map, token_is_max_context=token_is_max_context,
                input_ids=input_ids + padding, input_mask=input_mask, segment_ids=segment_ids + padding,
                start_position=start_position, end_position=end_position, is_impossible=example.is_impossible,
                token_spans=token_spans)
            unique_id += 1


def make_doc_spans(num_tokens, max_tokens_for_doc, doc_stride):
    """The original's sliding windows: `max_tokens_for_doc` long, `doc_stride` apart, the last one ending the text.

    Args:
        num_tokens: the paragraph's WordPiece tokens.
        max_tokens_for_doc: room for paragraph tokens in a feature (max_seq_length - query - 3).
        doc_stride: distance between window starts.

    Returns `DocSpan(start, length)`s.

    Example:
    >>> make_doc_spans(10, max_tokens_for_doc=4, doc_stride=3)
    [DocSpan(start=0, length=4), DocSpan(start=3, length=4), DocSpan(start=6, length=4)]
    """
    doc_spans = []
    start_offset = 0
    while start_offset < num_tokens:
        length = min(num_tokens - start_offset, max_tokens_for_doc)
        doc_spans.append(DocSpan(start=start_offset, length=length))
        if start_offset + length == num_tokens:
            break
        start_offset += min(length, doc_stride)
    return doc_spans


def improve_answer_span(doc_tokens, input_start, input_end, tokenizer, orig_answer_text):
    """Narrows a word-level answer span to the sub-tokens that spell the tokenized answer, when some do.

    SQuAD answers are character spans, projected onto whitespace words first: "1895" in "(1895-1943)." maps to
    the whole word, whose WordPieces are `( 1895 - 1943 ) .`; the span is narrowed to `1895`. An answer that is
    part of a WordPiece ("Japan" in "Japanese") keeps the whole span.

    Args:
        doc_tokens: the paragraph's WordPiece tokens.
        input_start: first token of the words holding the answer.
        input_end: last token of those words.
        tokenizer: the tokenizer that made `doc_tokens`.
        orig_answer_text: the annotated answer.

    Example:
    >>> class Splitter:
    ...     def tokenize(self, text):
    ...         return text.replace("(", " ( ").replace("-", " - ").split()
    >>> improve_answer_span(["(", "1895", "-", "1943"], 0, 3, Splitter(), "1895")
    (1, 1)
    """
    if hasattr(tokenizer, "tokenize_words"):  # as a byte-level BPE tokenizes the answer's words in the paragraph
        tok_answer_text = " ".join(p for word in word_pieces(tokenizer, orig_answer_text.split(), prefix_space=True)
                                   for p in word)
    else:
        tok_answer_text = " ".join(tokenizer.tokenize(orig_answer_text))
    for new_start in range(input_start, input_end + 1):
        for new_end in range(input_end, new_start - 1, -1):
            if " ".join(doc_tokens[new_start:new_end + 1]) == tok_answer_text:
                return new_start, new_end
    return input_start, input_end


def is_max_context(doc_spans, cur_span_index, position):
    """Whether window `cur_span_index` gives token `position` the most context of all windows holding it.

    Args:
        doc_spans: all windows of the paragraph (`make_doc_spans`).
        cur_span_index: the window asked about.
        position: a paragraph token's index.

    A token's context in a window is the smaller of its left and right context; ties go to the longer window
    (+0.01 per token), then to the earlier one.

    Example: in windows `the man went to the`, `to the store and bought`, `and bought a gallon of`, "bought"
    (position 7) has 4 left / 0 right tokens in the second and 1 / 3 in the third, which wins.

    >>> spans = [DocSpan(0, 5), DocSpan(3, 5), DocSpan(6, 5)]
    >>> [is_max_context(spans, i, 7) for i in range(3)]
    [False, False, True]
    """
    best_score = None
    best_span_index = None
    for span_index, doc_span in enumerate(doc_spans):
        end = doc_span.start + doc_span.length - 1
        if position < doc_span.start or position > end:
            continue
        score = min(position - doc_span.start, end - position) + 0.01 * doc_span.length
        if best_score is None or score > best_score:
            best_score = score
            best_span_index = span_index
    return cur_span_index == best_span_index
