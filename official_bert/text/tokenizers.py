"""`create_tokenizer`: the Python tokenizer a tool's --vocab_file or --spm_model_file names (or a checkpoint
directory's tokenizer files, `TokenizerSpec.for_checkpoint`)."""

from official_bert.text.byte_level_bpe import ByteLevelBPETokenizer
from official_bert.text.sentencepiece_tokenizer import SentencePieceTokenizer
from official_bert.text.tokenization import FullTokenizer, VocabError, check_special_tokens

DEFAULT_MAX_CHARS_PER_WORD = 200


def create_tokenizer(vocab_file=None, spm_model_file=None, do_lower_case=True, preserve_unused_tokens=False,
                     normalize_unicode=None, merges_file=None, fairseq_ids=False,
                     max_chars_per_word=DEFAULT_MAX_CHARS_PER_WORD):
    """Returns a FullTokenizer for `vocab_file`, a ByteLevelBPETokenizer for `vocab_file` (vocab.json) with
    `merges_file`, or a SentencePieceTokenizer for `spm_model_file` (with XLM-R's ids when `fairseq_ids`).

    All have `tokenize`, `convert_tokens_to_ids`, `convert_ids_to_tokens`, `vocab` and `inv_vocab`. A
    SentencePiece model lowercases (or not) by itself; `do_lower_case` must agree with it, and a byte-level BPE never
    lowercases. `preserve_unused_tokens` (WordPiece only) keeps `[unused*]` vocabulary tokens whole, as
    bert-tensorflow 1.0.4. A WordPiece vocabulary must hold [UNK], [CLS] and [SEP] (`check_special_tokens`).
    `normalize_unicode="nfc"` (WordPiece only: a SentencePiece model normalizes by its own rules) composes the text
    first; `max_chars_per_word` is WordPiece's longest word (longer ones are [UNK]).

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
        return SentencePieceTokenizer(spm_model_file, do_lower_case=do_lower_case, fairseq_ids=fairseq_ids)
    if merges_file:
        return ByteLevelBPETokenizer(vocab_file, merges_file, do_lower_case=do_lower_case)
    tokenizer = FullTokenizer(vocab_file, do_lower_case=do_lower_case, preserve_unused_tokens=preserve_unused_tokens,
                              normalize_unicode=normalize_unicode, max_input_chars_per_word=max_chars_per_word)
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
    options = {"normalize_unicode": getattr(tokenizer, "normalize_unicode", None),
               "preserve_unused_tokens": bool(getattr(basic, "preserve_unused_tokens", False))}
    # The options BERT's family adds, only where they are not BERT's, so that BERT's cache keys stay as they were.
    wordpiece = getattr(tokenizer, "wordpiece_tokenizer", None)
    if wordpiece is not None and wordpiece.max_input_chars_per_word != DEFAULT_MAX_CHARS_PER_WORD:
        options["max_chars_per_word"] = wordpiece.max_input_chars_per_word
    if getattr(tokenizer, "fairseq_ids", False):
        options["fairseq_ids"] = True
    if hasattr(tokenizer, "cache_options"):
        options.update(tokenizer.cache_options())
    return options


def word_pieces(tokenizer, words, prefix_space=False):
    """The tokens of each word of a text given as words (NER's sentences, SQuAD's paragraphs split at whitespace): a
    WordPiece tokenizer's of each word alone, as the original; a byte-level BPE's and an XLM-R SentencePiece's of the
    words joined by single spaces, grouped by word through their offsets, so that a word has the tokens it has in
    running text (RoBERTa's "Ġword" after a space). `prefix_space`: a space before the first word too, as
    transformers' token classification tokenizes words (`is_split_into_words` with `add_prefix_space=True`).

    Example:
    >>> import os, tempfile
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[UNK]\\n[CLS]\\n[SEP]\\nnew\\n##s\\n")
    >>> word_pieces(FullTokenizer(vocab), ["News", "new"])
    [['new', '##s'], ['new']]
    """
    if hasattr(tokenizer, "tokenize_words"):
        return tokenizer.tokenize_words(words, prefix_space=prefix_space)
    return [tokenizer.tokenize(word) for word in words]


def word_piece_spans(tokenizer, words):
    """`word_pieces` with each token's span of the words joined by single spaces, [[(token, start, end)]], for a
    tokenizer with offsets (a byte-level BPE's, an XLM-R SentencePiece's); None for a WordPiece tokenizer, whose
    pieces the original maps back to the words' text by their letters instead (`squad.final_text`).

    Example:
    >>> word_piece_spans(object(), ["a"]) is None
    True
    """
    # The tokenizers of BERT's family are those with a packing of their own (RoBERTa's).
    if not hasattr(tokenizer, "tokenize_with_offsets") or not getattr(tokenizer, "packing", None):
        return None
    from official_bert.text.byte_level_bpe import group_by_word

    return group_by_word(tokenizer, words, with_spans=True)
