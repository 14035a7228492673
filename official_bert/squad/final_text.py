"""Projecting a predicted WordPiece span back onto the paragraph's original characters (the original's
`get_final_text`), so that answers keep their original case, accents, punctuation and spacing."""

from absl import logging

from official_bert import tokenization


def get_final_text(pred_text, orig_text, do_lower_case, verbose_logging=False):
    """The part of `orig_text` that `pred_text` (the detokenized prediction) came from.

    `orig_text` is the whole of the original words the predicted tokens fall in, e.g. "Steve Smith's" for the
    prediction "steve smith": the result is "Steve Smith". `orig_text` is re-tokenized with `BasicTokenizer`;
    when, spaces removed, it has as many characters as the original (so they align one to one), the
    prediction's first and last characters are mapped back. When that fails the whole `orig_text` is returned.

    Args:
        pred_text: the predicted tokens joined, "##" pieces merged, whitespace normalized.
        orig_text: the original words the predicted tokens came from, joined by single spaces.
        do_lower_case: as the tokenizer's.
        verbose_logging: log why an alignment failed.

    Example:
    >>> get_final_text("steve smith", "Steve Smith's", do_lower_case=True)
    'Steve Smith'
    >>> get_final_text("1895", "(1895-1943).", do_lower_case=True)
    '1895'
    """
    tok_text = " ".join(tokenization.BasicTokenizer(do_lower_case=do_lower_case).tokenize(orig_text))
    start_position = tok_text.find(pred_text)
    if start_position == -1:
        if verbose_logging:
            logging.info("Unable to find text: '%s' in '%s'", pred_text, orig_text)
        return orig_text
    end_position = start_position + len(pred_text) - 1

    orig_ns_text, orig_ns_to_s_map = _strip_spaces(orig_text)
    tok_ns_text, tok_ns_to_s_map = _strip_spaces(tok_text)
    if len(orig_ns_text) != len(tok_ns_text):
        if verbose_logging:
            logging.info("Length not equal after stripping spaces: '%s' vs '%s'", orig_ns_text, tok_ns_text)
        return orig_text

    tok_s_to_ns_map = {tok_index: i for i, tok_index in tok_ns_to_s_map.items()}
    orig_start_position = orig_ns_to_s_map.get(tok_s_to_ns_map.get(start_position))
    if orig_start_position is None:
        if verbose_logging:
            logging.info("Couldn't map start position")
        return orig_text
    orig_end_position = orig_ns_to_s_map.get(tok_s_to_ns_map.get(end_position))
    if orig_end_position is None:
        if verbose_logging:
            logging.info("Couldn't map end position")
        return orig_text
    return orig_text[orig_start_position:orig_end_position + 1]


def _strip_spaces(text):
    """`text` without spaces (" " only, as the original), and a map from its indexes to `text`'s."""
    ns_chars = []
    ns_to_s_map = {}
    for i, char in enumerate(text):
        if char == " ":
            continue
        ns_to_s_map[len(ns_chars)] = i
        ns_chars.append(char)
    return "".join(ns_chars), ns_to_s_map
