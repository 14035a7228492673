"""`TokenizerSpec`: how a model's text is tokenized, said once — the Python tokenizer for training features and the
in-graph layer for serving both come from it, so the two cannot drift apart.

A run resolves its spec once from its flags (--vocab_file or --spm_model_file, --do_lower_case,
--preserve_unused_tokens, --normalize_unicode, --tokenizer_ops), or, for a checkpoint of BERT's family (RoBERTa,
XLM-R, DistilBERT, ELECTRA) without those flags, from the tokenizer files beside it (`for_checkpoint`); every task,
every export and the Keras models take the spec, never the raw settings.
"""

import dataclasses
import functools
import json
import os
from typing import Optional

from official_bert import families
from official_bert.text.tokenization import VocabError

OPS = ("core", "tf_text")
NORMALIZATIONS = (None, "nfc")
# The tokenizer files of a Hugging Face directory, by the family's tokenizer: what `for_checkpoint` reads.
FAMILY_FILES = {families.WORDPIECE: ("vocab.txt",), families.BYTE_LEVEL_BPE: ("vocab.json", "merges.txt"),
                families.SENTENCEPIECE: ("sentencepiece.bpe.model",)}
_TOKENIZER_CONFIG = "tokenizer_config.json"


@dataclasses.dataclass(frozen=True)
class TokenizerSpec:
    """A model's tokenizer: the vocabulary (or SentencePiece model) and every option that changes its ids.

    Args:
        vocab_file: a WordPiece vocabulary, one token per line (or with `merges_file` a byte-level BPE's vocab.json) ...
        spm_model_file: ... or a SentencePiece model (exactly one of them).
        do_lower_case: lowercase and strip accents (uncased models); never for a byte-level BPE.
        preserve_unused_tokens: keep a whitespace-separated `[unused<n>]` of the vocabulary as one token
            (bert-tensorflow 1.0.4's option), in Python and in the graph alike.
        ops: the in-graph WordPiece's ops: "core" (TensorFlow's own: any TensorFlow serves the export) or "tf_text"
            (tensorflow-text's op, which the server then needs).
        normalize_unicode: None (the original's ids) or "nfc": compose the text first, so that decomposed input
            finds a cased vocabulary's composed tokens.
        merges_file: RoBERTa's merges.txt: `vocab_file` is then its vocab.json, a byte-level BPE.
        fairseq_ids: XLM-R's ids for `spm_model_file` (<s> 0, <pad> 1, </s> 2, <unk> 3, the model's pieces one
            higher) and RoBERTa's packing.
        max_chars_per_word: WordPiece's longest word before it is [UNK] (the original's 200; Hugging Face's 100).

    Example:
    >>> import os, tempfile, tensorflow as tf
    >>> from official_bert.text.tokenizer_spec import TokenizerSpec
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[unused0]\\nhi\\n")
    >>> spec = TokenizerSpec(vocab, preserve_unused_tokens=True).check()
    >>> spec.python_tokenizer().tokenize("Hi [unused0]")
    ['hi', '[unused0]']
    >>> spec.layer()(tf.constant(["Hi [unused0]"])).to_list()
    [[[5], [4]]]
    """

    vocab_file: Optional[str] = None
    spm_model_file: Optional[str] = None
    do_lower_case: bool = True
    preserve_unused_tokens: bool = False
    ops: str = "core"
    normalize_unicode: Optional[str] = None
    merges_file: Optional[str] = None
    fairseq_ids: bool = False
    max_chars_per_word: int = 200

    @property
    def file(self):
        """The vocabulary or SentencePiece model: what the tokenizer is read from (a BPE's merges besides)."""
        return self.vocab_file or self.spm_model_file

    @property
    def kind(self):
        """The tokenizer: "wordpiece", "byte_level_bpe" or "sentencepiece"."""
        if self.spm_model_file:
            return families.SENTENCEPIECE
        return families.BYTE_LEVEL_BPE if self.merges_file else families.WORDPIECE

    def files(self):
        """{name: path} of the files that make the tokenizer, under the names a Hugging Face directory gives them (a
        SentencePiece model of ours: spm.model), for copying beside a checkpoint.

        Example:
        >>> from official_bert.text.tokenizer_spec import TokenizerSpec
        >>> TokenizerSpec("v/vocab.json", merges_file="v/merges.txt").files()
        {'vocab.json': 'v/vocab.json', 'merges.txt': 'v/merges.txt'}
        """
        if self.spm_model_file:
            return {FAMILY_FILES[families.SENTENCEPIECE][0] if self.fairseq_ids else "spm.model": self.spm_model_file}
        if self.merges_file:
            return dict(zip(FAMILY_FILES[families.BYTE_LEVEL_BPE], (self.vocab_file, self.merges_file)))
        return {"vocab.txt": self.vocab_file}

    def check(self):
        """Raises `VocabError` (one line naming the flag) for a spec that Python and the graph could not both
        honour; returns self."""
        if bool(self.vocab_file) == bool(self.spm_model_file):
            raise VocabError("pass exactly one of --vocab_file and --spm_model_file")
        if self.ops not in OPS:
            raise VocabError(f"--tokenizer_ops={self.ops}: expected one of {', '.join(OPS)}")
        if self.normalize_unicode not in NORMALIZATIONS:
            raise VocabError(f"--normalize_unicode={self.normalize_unicode}: expected nfc (or no flag)")
        if self.spm_model_file and self.preserve_unused_tokens:
            raise VocabError("--preserve_unused_tokens keeps [unused*] tokens of a WordPiece --vocab_file whole; a "
                             "--spm_model_file has no such tokens")
        if self.spm_model_file and self.normalize_unicode:
            raise VocabError("--normalize_unicode: a --spm_model_file normalizes the text by its own rules (its "
                             "normalizer_spec); the flag is for WordPiece vocabularies")
        if self.merges_file:
            self._check_bpe()
        if self.fairseq_ids and not self.spm_model_file:
            raise VocabError("fairseq's ids (XLM-RoBERTa's) are for a SentencePiece model")
        if isinstance(self.max_chars_per_word, bool) or not isinstance(self.max_chars_per_word, int) or \
                self.max_chars_per_word < 1:
            raise VocabError(f"max_chars_per_word must be a positive integer, got {self.max_chars_per_word!r}")
        return self

    def _check_bpe(self):
        if self.do_lower_case:
            raise VocabError(f"--do_lower_case: {self.vocab_file} is a byte-level BPE vocabulary (RoBERTa's), which "
                             "tokenizes text as written, cased: pass --do_lower_case=false")
        for flag, given in (("--preserve_unused_tokens", self.preserve_unused_tokens),
                            ("--normalize_unicode", self.normalize_unicode), ("--tokenizer_ops=tf_text",
                                                                              self.ops == "tf_text")):
            if given:
                raise VocabError(f"{flag} is for WordPiece vocabularies; {self.vocab_file} is a byte-level BPE's "
                                 "(tokenized in core TensorFlow ops)")

    @functools.cached_property
    def _python_tokenizer(self):
        from official_bert.text.tokenizers import create_tokenizer

        return create_tokenizer(self.vocab_file, self.spm_model_file, self.do_lower_case,
                                preserve_unused_tokens=self.preserve_unused_tokens, merges_file=self.merges_file,
                                fairseq_ids=self.fairseq_ids, max_chars_per_word=self.max_chars_per_word,
                                **self._normalization())

    def python_tokenizer(self):
        """The Python tokenizer (`FullTokenizer`, `ByteLevelBPETokenizer` or `SentencePieceTokenizer`), built once per
        spec."""
        return self._python_tokenizer

    def layer(self, with_offsets=False, offsets_unit="BYTE"):
        """A new in-graph tokenizer layer giving `python_tokenizer()`'s ids (strings [batch] → int32 ids
        [batch, (words), (pieces)]).

        Args:
            with_offsets: the layer returns `(ids, starts, ends)`, each token's span of the input.
            offsets_unit: "BYTE" (into the UTF-8 input) or "UTF8_CHAR" (code points, Python str indices).
        """
        if self.spm_model_file:
            from absl import logging

            from official_bert.text.sentencepiece_layer import GraphSentencePieceTokenizer

            logging.warning("%s: SentencePiece in the graph uses tensorflow-text's ops; whoever serves this export "
                            "needs them too (WordPiece vocabularies need core TensorFlow only)", self.spm_model_file)
            return GraphSentencePieceTokenizer(self.spm_model_file, do_lower_case=self.do_lower_case,
                                               tokenize_with_offsets=with_offsets, offsets_unit=offsets_unit,
                                               fairseq_ids=self.fairseq_ids)
        if self.merges_file:
            from official_bert.text.bpe_layer import GraphByteLevelBPETokenizer

            return GraphByteLevelBPETokenizer(self.vocab_file, self.merges_file, tokenize_with_offsets=with_offsets,
                                              offsets_unit=offsets_unit)
        from official_bert.text.bert_tokenizer import BertTokenizer

        return BertTokenizer(self.vocab_file, do_lower_case=self.do_lower_case, tokenize_with_offsets=with_offsets,
                             offsets_unit=offsets_unit, wordpiece=self.ops,
                             preserve_unused_tokens=self.preserve_unused_tokens,
                             max_chars_per_word=self.max_chars_per_word, **self._normalization())

    def _normalization(self):
        return {"normalize_unicode": self.normalize_unicode} if self.normalize_unicode else {}


def for_checkpoint(directory, config, do_lower_case=None, ops="core"):
    """The `TokenizerSpec` of a checkpoint of BERT's family, from the tokenizer files beside it: RoBERTa's vocab.json +
    merges.txt, XLM-R's sentencepiece.bpe.model (fairseq's ids), DistilBERT's and ELECTRA's vocab.txt (Hugging Face's
    100-character words), each checked against the config's vocab_size.

    Args:
        directory: the checkpoint's directory.
        config: its `BertConfig` (of a family: `config.family` set).
        do_lower_case: None: the tokenizer's own (a WordPiece's from tokenizer_config.json, else from its vocabulary's
            casing; a byte-level BPE's and a SentencePiece model's: as written, and as the model normalizes). The
            spec's is always True or False.
        ops: the in-graph WordPiece's ops.

    Raises:
        VocabError: a tokenizer file missing (naming the ones there are), or a tokenizer whose size is not the
            config's vocab_size.

    Example:
    >>> import tempfile
    >>> from official_bert.configs import BertConfig
    >>> from official_bert.text.tokenizer_spec import for_checkpoint
    >>> d = tempfile.mkdtemp()
    >>> config = BertConfig.from_preset("tiny", vocab_size=30, family="roberta", pad_token_id=1, type_vocab_size=1)
    >>> for_checkpoint(d, config)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.text.tokenization.VocabError: .../vocab.json: no such file: a roberta checkpoint's directory holds its tokenizer as vocab.json and merges.txt; it holds nothing
    """
    family = config.family_traits
    names = FAMILY_FILES[family.tokenizer]
    paths = [os.path.join(directory, name) for name in names]
    from official_bert.io.files import exists, listdir

    for path in paths:
        if not exists(path):
            present = sorted(listdir(directory)) if exists(directory) else []
            hint = (" (transformers 5 saves tokenizer.json alone: write the classic files with "
                    "tokenizer.backend_tokenizer.model.save(directory), or copy them from the original checkpoint)"
                    if "tokenizer.json" in present else "")
            raise VocabError(f"{path}: no such file: a {family.model_type} checkpoint's directory holds its tokenizer "
                             f"as {' and '.join(names)}{hint}; it holds {', '.join(present[:10]) or 'nothing'}")
    if family.tokenizer == families.BYTE_LEVEL_BPE:
        spec = TokenizerSpec(paths[0], merges_file=paths[1], do_lower_case=bool(do_lower_case), ops="core")
    elif family.tokenizer == families.SENTENCEPIECE:
        spec = TokenizerSpec(spm_model_file=paths[0], do_lower_case=do_lower_case, fairseq_ids=True)
        if do_lower_case is None:  # as the model normalizes (XLM-R's keeps case)
            spec = dataclasses.replace(spec, do_lower_case=bool(spec.python_tokenizer().do_lower_case))
    else:
        if do_lower_case is None:
            do_lower_case = _stated_lower_case(directory)
        spec = TokenizerSpec(paths[0], do_lower_case=do_lower_case, ops=ops,
                             max_chars_per_word=family.max_chars_per_word)
        if do_lower_case is None:
            vocab = spec.python_tokenizer().vocab
            uncased = not any(t != t.lower() and not (t.startswith("[") and t.endswith("]")) for t in vocab)
            spec = dataclasses.replace(spec, do_lower_case=uncased)
    spec.check()
    size = len(spec.python_tokenizer().vocab)
    if size != config.vocab_size:
        raise VocabError(f"{spec.file}: {size} tokens, but the config's vocab_size is {config.vocab_size}: the "
                         "tokenizer and the model are not of one checkpoint")
    return spec


def for_run(bert_config_file, init_checkpoint=None, do_lower_case=None, ops="core"):
    """A tool's `TokenizerSpec` when no --vocab_file or --spm_model_file is given: for a config of BERT's family, the
    tokenizer files beside --bert_config_file, or else beside --init_checkpoint (`for_checkpoint`); None for BERT,
    which is tokenized by the flags' files.

    Args:
        bert_config_file: --bert_config_file.
        init_checkpoint: --init_checkpoint (a directory, or a file or prefix inside one), or None.
        do_lower_case: --do_lower_case where given, else None.
        ops: --tokenizer_ops.

    Example:
    >>> import json, tempfile
    >>> config = os.path.join(tempfile.mkdtemp(), "bert_config.json")
    >>> _ = open(config, "w").write(json.dumps(dict(vocab_size=9, hidden_size=8, num_hidden_layers=1,
    ...     num_attention_heads=1, intermediate_size=8, hidden_act="gelu", hidden_dropout_prob=0.1,
    ...     attention_probs_dropout_prob=0.1, max_position_embeddings=16, initializer_range=0.02)))
    >>> for_run(config) is None
    True
    """
    from official_bert.configs import BertConfig
    from official_bert.io.files import exists, isdir

    config = BertConfig.from_json_file(bert_config_file)
    if not config.family:
        return None
    directories = [os.path.dirname(bert_config_file) or "."]
    if init_checkpoint:
        directories.append(init_checkpoint if isdir(init_checkpoint) else os.path.dirname(init_checkpoint) or ".")
    first_file = FAMILY_FILES[config.family_traits.tokenizer][0]
    directory = next((d for d in directories if exists(os.path.join(d, first_file))), directories[0])
    return for_checkpoint(directory, config, do_lower_case=do_lower_case, ops=ops)


def _stated_lower_case(directory):
    """do_lower_case as a Hugging Face tokenizer_config.json states it, or None."""
    from official_bert.io.files import exists, open_file

    path = os.path.join(directory, _TOKENIZER_CONFIG)
    if not exists(path):
        return None
    try:
        with open_file(path) as f:
            stated = json.loads(f.read().decode("utf-8")).get("do_lower_case")
    except (ValueError, AttributeError):
        return None  # an unreadable tokenizer config is no evidence either way
    return None if stated is None else bool(stated)
