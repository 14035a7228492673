"""SQuAD served from raw text: question and context → the answer, with windows and span choice in the graph.

The graph does what run_squad.py does in Python, so that a SavedModel answers as the trained model does there:
the context is cut into the windows `squad.features` makes (`[CLS] question [SEP] window [SEP]`, `doc_stride`
apart, each token marked in the window where it has the most context), the model scores every window, and
`choose_answers` picks the span `squad.postprocess` picks: among the `n_best_size` best starts and ends of each
window, the valid span (in the context, start ≤ end, at most `max_answer_length` tokens, starting in its
max-context window) with the largest start + end logit, the earliest on ties; for SQuAD 2.0, "" when the null
score (the smallest [CLS] start + end logit over windows) beats it by more than the threshold.

The one difference: the answer is the context's own text between the span's first and last character (from the
tokenizer's offsets), where the original re-aligns tokens with whitespace-separated words; the two agree up to
whitespace (the original joins words with one space).

The raw-text signature pads a request's windows to the longest of them, not to seq_length: a short context costs
its own length. Padding is masked, so every logit is the fixed-length one; but the original's `n_best_size` best
positions of a window can include padding positions (never a valid span), which then crowd out real ones. Here
only padding up to the request's longest window competes, so when padding beyond it would have been among a
window's best positions the served answer is the best valid span of a larger candidate set: it scores at least as
high as the fixed-length answer, and is the same one otherwise.
"""

import collections

import tensorflow as tf

from official_bert import families
from official_bert.export.saved_model import ServingSpec, export_saved_model
from official_bert.squad.features import check_lengths
from official_bert.text import BertTokenizer
from official_bert.text.packing import packing_of

SquadWindows = collections.namedtuple("SquadWindows", [
    "inputs", "example", "num_windows", "doc_offset", "doc_length", "doc_start", "max_context", "token_starts",
    "token_ends"])
SquadWindows.__doc__ = """The windows of a batch of (question, context) pairs, in example order.

Fields (W windows of B examples, T = seq_length):
    inputs: {"input_word_ids", "input_mask", "input_type_ids"}, int32 [W, T].
    example: int64 [W], the example each window belongs to.
    num_windows: int64 [B].
    doc_offset: int64 [W], the position of the window's first context token (query length + 2).
    doc_length: int64 [W], the number of context tokens in the window.
    doc_start: int64 [W], the index of its first context token among all the batch's context tokens.
    max_context: bool [W, T], the positions holding a context token that has the most context in this window.
    token_starts, token_ends: int64 [N], each context token's byte span in its context (N tokens in all).
"""


def squad_windows(tokenizer, question, context, seq_length, doc_stride, max_query_length, pad_to_longest=False):
    """Tokenizes and windows a batch of questions and contexts as `convert_examples_to_features` does.

    Args:
        tokenizer: a `BertTokenizer` with `tokenize_with_offsets=True` (offsets in bytes).
        question: string [B].
        context: string [B].
        seq_length, doc_stride, max_query_length: as for `convert_examples_to_features`.
        pad_to_longest: pad the windows to the longest of the batch instead of to seq_length (T is then that
            length); the windows themselves do not change.

    Returns `SquadWindows`.

    Example:
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "a", "b", "c", "d"]))
    >>> tokenizer = BertTokenizer(vocab, tokenize_with_offsets=True)
    >>> windows = squad_windows(tokenizer, tf.constant(["who"]), tf.constant(["a b c d"]), 7, 1, 2)
    >>> windows.inputs["input_word_ids"].numpy().tolist()
    [[2, 4, 3, 5, 6, 7, 3], [2, 4, 3, 6, 7, 8, 3]]

    "b" has more context in the first window, "c" in the second:

    >>> windows.max_context.numpy().astype(int).tolist()
    [[0, 0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 0]]

    A short context padded to its own length:

    >>> short = squad_windows(tokenizer, tf.constant(["who"]), tf.constant(["a"]), 7, 1, 2, pad_to_longest=True)
    >>> short.inputs["input_word_ids"].numpy().tolist(), short.inputs["input_mask"].numpy().tolist()
    ([[2, 4, 3, 5, 3]], [[1, 1, 1, 1, 1]])
    """
    special = tokenizer.get_special_tokens_dict()
    # [CLS] question [SEP] window [SEP], or RoBERTa's <s> question </s></s> window </s> (one token type).
    layout = packing_of(tokenizer)
    query = _tokens(tokenizer(question)[0])[:, :max_query_length]
    doc_ids, token_starts, token_ends = (_tokens(tokens) for tokens in tokenizer(context))
    num_tokens = doc_ids.row_lengths()
    room = seq_length - query.row_lengths() - layout.special_count(pair=True)
    # Windows start every doc_stride tokens until one reaches the end (an empty context still gets one); as the
    # original, a stride longer than a window moves by the window, so that windows touch.
    stride = tf.minimum(tf.constant(doc_stride, tf.int64), room)
    num_windows = 1 + tf.maximum(tf.constant(0, tf.int64), (num_tokens - room + stride - 1) // stride)
    example = tf.repeat(tf.range(tf.size(num_windows, out_type=tf.int64)), num_windows)
    index = tf.ragged.range(num_windows).flat_values
    start = index * tf.gather(stride, example)
    doc_length = tf.minimum(tf.gather(num_tokens, example) - start, tf.gather(room, example))
    doc_start = tf.gather(doc_ids.row_starts(), example) + start
    doc = tf.gather(doc_ids.values, tf.ragged.range(doc_start, doc_start + doc_length))

    def column(token):
        return tf.fill([tf.size(example), 1], tf.constant(token, tf.int32))

    separators = [column(special["end_of_segment_id"])] * layout.pair_separators
    word_ids = tf.concat([column(special["start_of_sequence_id"]), tf.gather(query, example), *separators, doc,
                          column(special["end_of_segment_id"])], axis=1)
    doc_offset = tf.gather(query.row_lengths(), example) + 1 + layout.pair_separators
    # A window's final [SEP] sits at doc_offset + doc_length; an empty batch has no positions.
    width = (tf.maximum(tf.reduce_max(doc_offset + doc_length) + 1, 0) if pad_to_longest else seq_length)
    position = tf.range(width, dtype=tf.int64)[None, :]
    doc_end = (doc_offset + doc_length)[:, None]
    in_doc = (position >= doc_offset[:, None]) & (position < doc_end)
    second_segment = (position >= doc_offset[:, None]) & (position <= doc_end)
    inputs = {"input_word_ids": word_ids.to_tensor(0, shape=[None, seq_length])[:, :width],
              "input_mask": tf.cast(position <= doc_end, tf.int32),
              "input_type_ids": tf.cast(second_segment if layout.second_segment_type else tf.zeros_like(second_segment),
                                        tf.int32)}

    best = _max_context_window(doc_ids, num_tokens, room, num_windows, stride)
    flat = tf.clip_by_value(doc_start[:, None] + position - doc_offset[:, None], 0,
                            tf.maximum(tf.size(best, out_type=tf.int64) - 1, 0))
    best_here = tf.gather(tf.concat([best, [-1]], 0), flat) == index[:, None]
    return SquadWindows(inputs, example, num_windows, doc_offset, doc_length, doc_start, in_doc & best_here,
                        token_starts.values, token_ends.values)


def _max_context_window(doc_ids, num_tokens, room, num_windows, stride):
    """For every context token, the index of its max-context window (`features.is_max_context`'s rule)."""
    example = doc_ids.value_rowids()
    token = tf.range(tf.size(example, out_type=tf.int64)) - tf.gather(doc_ids.row_starts(), example)
    window = tf.range(tf.reduce_max(num_windows))[None, :]
    start = window * tf.gather(stride, example)[:, None]
    length = tf.minimum(tf.gather(num_tokens, example)[:, None] - start, tf.gather(room, example)[:, None])
    token = token[:, None]
    holds = (window < tf.gather(num_windows, example)[:, None]) & (token >= start) & (token < start + length)
    # float64, as the original's Python floats: 0.01 * length decides ties.
    score = (tf.cast(tf.minimum(token - start, start + length - 1 - token), tf.float64)
             + 0.01 * tf.cast(length, tf.float64))
    return _first_max(tf.where(holds, score, tf.constant(-float("inf"), tf.float64)))


def _first_max(values):
    """Index of the largest value of each row, the first one on ties (tf.argmax does not promise which)."""
    is_max = values >= tf.reduce_max(values, axis=-1, keepdims=True)
    column = tf.range(tf.shape(values, out_type=tf.int64)[-1])
    return tf.reduce_min(tf.where(is_max, column, tf.int64.max), axis=-1)


def choose_answers(windows, context, start_logits, end_logits, n_best_size=20, max_answer_length=30,
                   version_2_with_negative=False, null_score_diff_threshold=0.0):
    """Each example's answer from its windows' logits, as `squad.compute_predictions` chooses it.

    Args:
        windows: the `SquadWindows` of the batch.
        context: string [B], the contexts they were cut from.
        start_logits, end_logits: float [W, T], the model's logits for the windows.
        n_best_size: candidate starts and ends per window.
        max_answer_length: longest answer, in WordPiece tokens.
        version_2_with_negative: answer "" when the null score wins (SQuAD 2.0).
        null_score_diff_threshold: by how much it must win.

    Returns {"answer": string [B], "score": float32 [B]}: the answer's start + end logit ("" with the null score
    for SQuAD 2.0, or with 0 when no span is valid), plus for SQuAD 2.0 "null_odds": the null score minus the
    best span's, as in null_odds.json.

    Example (one window `[CLS] who [SEP] a b [SEP]`, logits favouring "b"):
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "a", "b"]))
    >>> tokenizer = BertTokenizer(vocab, tokenize_with_offsets=True)
    >>> context = tf.constant(["A  B"])
    >>> windows = squad_windows(tokenizer, tf.constant(["who"]), context, 8, 2, 4)
    >>> logits = tf.constant([[0.0, 0, 0, 1, 3, 0, 0, 0]])
    >>> answers = choose_answers(windows, context, logits, logits)
    >>> answers["answer"].numpy().tolist(), answers["score"].numpy().tolist()
    ([b'B'], [6.0])
    """
    # T is static for windows padded to seq_length, dynamic for windows padded to the batch's longest.
    seq_length = start_logits.shape[-1] or tf.shape(start_logits)[-1]
    k = min(n_best_size, seq_length) if isinstance(seq_length, int) else tf.minimum(n_best_size, seq_length)
    starts, ends = tf.math.top_k(start_logits, k), tf.math.top_k(end_logits, k)
    k = tf.cast(k, tf.int64)
    start_index = tf.cast(starts.indices, tf.int64)[:, :, None]
    end_index = tf.cast(ends.indices, tf.int64)[:, None, :]
    in_doc = ((end_index >= windows.doc_offset[:, None, None])
              & (end_index < (windows.doc_offset + windows.doc_length)[:, None, None]))
    valid = (tf.gather(windows.max_context, starts.indices, batch_dims=1)[:, :, None] & in_doc
             & (end_index >= start_index) & (end_index - start_index + 1 <= max_answer_length))
    # float64, as the original sums the logits as Python floats.
    score = (tf.cast(starts.values, tf.float64)[:, :, None] + tf.cast(ends.values, tf.float64)[:, None, :])
    score = tf.where(valid, score, tf.constant(-float("inf"), tf.float64))
    # The candidates of an example in the original's order: window by window, starts then ends by rank.
    grid = k * k
    per_example = tf.RaggedTensor.from_row_lengths(tf.reshape(score, [-1]), windows.num_windows * grid)
    candidates = per_example.to_tensor(-float("inf"))
    best = _first_max(candidates)
    best_score = tf.reduce_max(candidates, axis=-1)
    has_span = best_score > -float("inf")

    window = per_example.row_starts() // grid + best // grid
    window = tf.clip_by_value(window, 0, tf.maximum(tf.size(windows.example, out_type=tf.int64) - 1, 0))
    start = tf.gather(tf.reshape(starts.indices, [-1]), window * k + best % grid // k)
    end = tf.gather(tf.reshape(ends.indices, [-1]), window * k + best % k)
    offset = tf.gather(windows.doc_start, window) - tf.gather(windows.doc_offset, window)
    last_token = tf.maximum(tf.size(windows.token_starts, out_type=tf.int64) - 1, 0)
    token_starts = tf.concat([windows.token_starts, [0]], 0)
    token_ends = tf.concat([windows.token_ends, [0]], 0)
    first_byte = tf.gather(token_starts, tf.clip_by_value(offset + tf.cast(start, tf.int64), 0, last_token))
    end_byte = tf.gather(token_ends, tf.clip_by_value(offset + tf.cast(end, tf.int64), 0, last_token))
    # Without a valid span the positions above are meaningless: take no text.
    first_byte = tf.where(has_span, first_byte, 0)
    end_byte = tf.where(has_span, end_byte, 0)
    answer = tf.strings.substr(context, first_byte, end_byte - first_byte, unit="BYTE")
    score = tf.where(has_span, best_score, 0.0)
    outputs = {}
    if version_2_with_negative:
        null = tf.math.segment_min(tf.cast(start_logits[:, 0], tf.float64) + tf.cast(end_logits[:, 0], tf.float64),
                                   windows.example)
        null_odds = tf.where(has_span, null - best_score, null)
        is_null = ~has_span | (null_odds > null_score_diff_threshold)
        answer = tf.where(is_null, "", answer)
        score = tf.where(is_null, null, score)
        outputs["null_odds"] = tf.cast(null_odds, tf.float32)
    return {"answer": answer, "score": tf.cast(score, tf.float32), **outputs}


def squad_serving_spec(tokenizer, seq_length, doc_stride=128, max_query_length=64, n_best_size=20,
                       max_answer_length=30, version_2_with_negative=False, null_score_diff_threshold=0.0,
                       pad_to_longest=True):
    """The `ServingSpec` of a `BertSpanLabeler`: serving_default takes `question` and `context` strings [batch]
    and returns `answer` and `score` (and `null_odds` for SQuAD 2.0); the tensor signatures return the
    `start_logits` and `end_logits` of each window.

    Args:
        tokenizer: the model's `TokenizerSpec` (a WordPiece vocabulary, or a RoBERTa's or XLM-R's tokenizer).
        seq_length, doc_stride, max_query_length: run_squad.py's flags (the windows).
        n_best_size, max_answer_length, version_2_with_negative, null_score_diff_threshold: run_squad.py's
            flags (the span choice; see `choose_answers`).
        pad_to_longest: serving_default pads each request's windows to the longest of them, not to seq_length
            (see the module's docstring for the one effect on the answers).

    Example:
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n")
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> sorted(squad_serving_spec(TokenizerSpec(vocab), 384).text_inputs)
    ['context', 'question']
    """
    check_lengths(seq_length, doc_stride, max_query_length)
    # SentencePiece's pieces ("▁word") span the space before them: the answer is stripped of it.
    strip = tokenizer.kind == families.SENTENCEPIECE
    tokenizer = squad_tokenizer_layer(tokenizer)

    def serve_text(call_model, question, context):
        windows = squad_windows(tokenizer, question, context, seq_length, doc_stride, max_query_length,
                                pad_to_longest)
        logits = call_model(windows.inputs)
        answers = choose_answers(windows, context, logits["start_logits"], logits["end_logits"], n_best_size,
                                 max_answer_length, version_2_with_negative, null_score_diff_threshold)
        return {**answers, "answer": tf.strings.strip(answers["answer"])} if strip else answers

    def postprocess(logits):
        return {"start_logits": logits["start_logits"], "end_logits": logits["end_logits"]}

    text = tf.TensorSpec([None], tf.string)
    return ServingSpec({"question": text, "context": text}, serve_text, postprocess, (seq_length,), (tokenizer,))


def _tokens(ids):
    """A tokenizer's [batch, (words), (pieces)] (or SentencePiece's [batch, (pieces)]) as [batch, (tokens)]."""
    return ids.merge_dims(1, 2) if ids.ragged_rank > 1 else ids


def squad_tokenizer_layer(tokenizer):
    """The in-graph tokenizer SQuAD serving needs from the `TokenizerSpec`: its ids, with byte offsets into the
    context."""
    return tokenizer.layer(with_offsets=True)


def export_squad(export_dir, model, tokenizer, seq_length, **options):
    """Exports a trained `BertSpanLabeler` as the next version in export_dir; returns its path.

    Args:
        export_dir: the directory of versions (TF Serving's --model_base_path).
        model: the model.
        tokenizer: the model's `TokenizerSpec`.
        seq_length: --max_seq_length.
        **options: run_squad.py's flags of the same names: `doc_stride`, `max_query_length` (the windows),
            `n_best_size`, `max_answer_length`, `version_2_with_negative`, `null_score_diff_threshold` (the span
            choice) and `pad_to_longest` (serving_default pads each request's windows to the longest of them).
    """
    return export_saved_model(export_dir, model, squad_serving_spec(tokenizer, seq_length, **options))
