"""`official_bert.tokenization`: the original google-research/bert module's name and API, so that code written for
the original ports by changing one import. The tokenizer lives beside the project's other tokenizers, in
`official_bert/text/tokenization.py`.

Example:
>>> from official_bert import tokenization
>>> tokenization.BasicTokenizer(do_lower_case=True).tokenize("Héllo, World!")
['hello', ',', 'world', '!']
"""

from official_bert.text.tokenization import (BasicTokenizer, FullTokenizer, VocabError,  # noqa: F401
                                             WordpieceTokenizer, _is_control, _is_punctuation, _is_whitespace,
                                             check_special_tokens, convert_by_vocab, convert_ids_to_tokens,
                                             convert_to_unicode, convert_tokens_to_ids, load_vocab,
                                             printable_text, validate_case_matches_checkpoint, whitespace_tokenize)


def __getattr__(name):
    # create_tokenizer (not in the original's module) is imported on first use: it brings in SentencePiece, which
    # tools that only check casing through this module (query_saved_model) must not load.
    if name == "create_tokenizer":
        from official_bert.text.tokenizers import create_tokenizer
        return create_tokenizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
