"""`TokenizerSpec`: how a model's text is tokenized, said once — the Python tokenizer for training features and the
in-graph layer for serving both come from it, so the two cannot drift apart.

A run resolves its spec once from its flags (--vocab_file or --spm_model_file, --do_lower_case,
--preserve_unused_tokens, --normalize_unicode, --tokenizer_ops); every task, every export and the Keras models take
the spec, never the raw settings.
"""

import dataclasses
import functools
from typing import Optional

from official_bert.text.tokenization import VocabError

OPS = ("core", "tf_text")
NORMALIZATIONS = (None, "nfc")


@dataclasses.dataclass(frozen=True)
class TokenizerSpec:
    """A model's tokenizer: the vocabulary (or SentencePiece model) and every option that changes its ids.

    Args:
        vocab_file: a WordPiece vocabulary, one token per line (or give spm_model_file).
        spm_model_file: a SentencePiece model, instead of vocab_file (exactly one of the two).
        do_lower_case: lowercase and strip accents (uncased models).
        preserve_unused_tokens: keep a whitespace-separated `[unused<n>]` of the vocabulary as one token
            (bert-tensorflow 1.0.4's option), in Python and in the graph alike.
        ops: the in-graph WordPiece's ops: "core" (TensorFlow's own: any TensorFlow serves the export) or "tf_text"
            (tensorflow-text's op, which the server then needs).
        normalize_unicode: None (the original's ids) or "nfc": compose the text first, so that decomposed input
            finds a cased vocabulary's composed tokens.

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

    @property
    def file(self):
        """The vocabulary or SentencePiece model: what the tokenizer is read from."""
        return self.vocab_file or self.spm_model_file

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
        return self

    @functools.cached_property
    def _python_tokenizer(self):
        from official_bert.text.tokenizers import create_tokenizer

        return create_tokenizer(self.vocab_file, self.spm_model_file, self.do_lower_case,
                                preserve_unused_tokens=self.preserve_unused_tokens, **self._normalization())

    def python_tokenizer(self):
        """The Python tokenizer (`FullTokenizer` or `SentencePieceTokenizer`), built once per spec."""
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
                                               tokenize_with_offsets=with_offsets, offsets_unit=offsets_unit)
        from official_bert.text.bert_tokenizer import BertTokenizer

        return BertTokenizer(self.vocab_file, do_lower_case=self.do_lower_case, tokenize_with_offsets=with_offsets,
                             offsets_unit=offsets_unit, wordpiece=self.ops,
                             preserve_unused_tokens=self.preserve_unused_tokens, **self._normalization())

    def _normalization(self):
        return {"normalize_unicode": self.normalize_unicode} if self.normalize_unicode else {}
