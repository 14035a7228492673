"""`create_tokenizer`: the Python tokenizer a tool's --vocab_file or --spm_model_file names."""

from official_bert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from official_bert.text.tokenization import FullTokenizer, VocabError, check_special_tokens


def create_tokenizer(vocab_file=None, spm_model_file=None, do_lower_case=True, preserve_unused_tokens=False,
                     normalize_unicode=None):
    """Returns a FullTokenizer for `vocab_file`, or a SentencePieceTokenizer for `spm_model_file`.

    Both have `tokenize`, `convert_tokens_to_ids`, `convert_ids_to_tokens`, `vocab` and `inv_vocab`. A
    SentencePiece model lowercases (or not) by itself; `do_lower_case` must agree with it.
    `preserve_unused_tokens` (WordPiece only) keeps `[unused*]` vocabulary tokens whole, as bert-tensorflow 1.0.4.
    A WordPiece vocabulary must hold [UNK], [CLS] and [SEP] (`check_special_tokens`). `normalize_unicode="nfc"`
    (WordPiece only: a SentencePiece model normalizes by its own rules) composes the text first.

    Example:
    >>> create_tokenizer()
    Traceback (most recent call last):
    ...
    official_bert.text.tokenization.VocabError: pass exactly one of --vocab_file and --spm_model_file
    """
    if bool(vocab_file) == bool(spm_model_file):
        raise VocabError("pass exactly one of --vocab_file and --spm_model_file")
    if spm_model_file and normalize_unicode:
        raise VocabError("--normalize_unicode: a --spm_model_file normalizes the text by its own rules (its "
                         "normalizer_spec); the flag is for WordPiece vocabularies")
    if spm_model_file:
        return SentencePieceTokenizer(spm_model_file, do_lower_case=do_lower_case)
    tokenizer = FullTokenizer(vocab_file, do_lower_case=do_lower_case, preserve_unused_tokens=preserve_unused_tokens,
                              normalize_unicode=normalize_unicode)
    check_special_tokens(tokenizer.vocab, vocab_file)
    return tokenizer


def tokenizer_options(tokenizer):
    """What besides its class, vocabulary and casing changes a Python tokenizer's ids: the feature caches key on it,
    so that features made under other options are never reused.

    Example:
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[UNK]\\n[CLS]\\n[SEP]\\n")
    >>> tokenizer_options(FullTokenizer(vocab, preserve_unused_tokens=True))
    {'normalize_unicode': None, 'preserve_unused_tokens': True}
    """
    basic = getattr(tokenizer, "basic_tokenizer", None)
    return {"normalize_unicode": getattr(tokenizer, "normalize_unicode", None),
            "preserve_unused_tokens": bool(getattr(basic, "preserve_unused_tokens", False))}
