"""SentencePiece as the alternative to WordPiece: a tokenizer with FullTokenizer's interface, and training.

Casing is part of a SentencePiece model (its normalization rule), not of the tokenizer: `train` bakes
lowercasing in (rule `nmt_nfkc_cf`) when `do_lower_case`, so Python and the graph
(`official_bert.text.GraphSentencePieceTokenizer`) run the very same normalization.

XLM-RoBERTa's model (sentencepiece.bpe.model) is read with fairseq's ids (`fairseq_ids=True`), as transformers'
XLMRobertaTokenizer gives them: <s> 0, <pad> 1, </s> 2, <unk> 3, every other piece its SentencePiece id + 1, and
<mask> after the last piece; its sequences are packed as RoBERTa's.
"""

import collections
import io
import os

import sentencepiece
from absl import logging
from sentencepiece import sentencepiece_model_pb2

from official_bert.io.files import check_input_file
from official_bert.text import packing, tokenization

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
# Normalization rules that lowercase (case-fold) / that keep case, by their name in the model.
_LOWERCASING_RULES = ("nmt_nfkc_cf", "nfkc_cf")
_CASED_RULES = ("identity", "nfkc", "nmt_nfkc")


class SentencePieceError(tokenization.VocabError):
    """A SentencePiece model or training input that cannot be used; the message names the file."""


def read_model(model_file):
    """Returns the serialized model proto, raising SentencePieceError naming the file if it is not one."""
    check_input_file(model_file, "a SentencePiece model file (.model)", error=SentencePieceError)
    try:
        with open(model_file, "rb") as f:
            serialized = f.read()
    except FileNotFoundError:
        raise SentencePieceError(f"{model_file}: SentencePiece model file not found") from None
    proto = sentencepiece_model_pb2.ModelProto()
    try:
        proto.ParseFromString(serialized)
    except Exception:  # protobuf raises its own DecodeError, whose module path varies between versions
        proto = None
    if proto is None or not proto.pieces:
        raise SentencePieceError(f"{model_file}: not a SentencePiece model (expected a serialized ModelProto, "
                                 "e.g. from `train` or spm_train)")
    return serialized


def model_lowercases(serialized_model):
    """True/False if the model's normalization rule does/doesn't lowercase, None for a custom rule."""
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(serialized_model)
    name = proto.normalizer_spec.name
    if name in _LOWERCASING_RULES:
        return True
    if name in _CASED_RULES:
        return False
    return None


def check_case(model_file, serialized_model, do_lower_case):
    """Fails loudly when `do_lower_case` contradicts what the model's normalization does."""
    lowercases = model_lowercases(serialized_model)
    if do_lower_case is None:
        return
    if lowercases is None:
        logging.warning("%s: custom normalization rule: cannot check do_lower_case=%s against it", model_file,
                        do_lower_case)
    elif lowercases != do_lower_case:
        raise SentencePieceError(
            f"{model_file}: the model {'lowercases' if lowercases else 'keeps case'} (normalization rule "
            f"{'nmt_nfkc_cf' if lowercases else 'without case folding'}), but do_lower_case={do_lower_case}")


# fairseq's dictionary: these four first, then the model's pieces from its id 3 on (XLM-R's model has <unk>, <s>,
# </s> at 0-2), each one id higher than in the model.
FAIRSEQ_SPECIAL = ("<s>", "<pad>", "</s>", "<unk>")
FAIRSEQ_OFFSET = 1


def fairseq_ids(piece_ids):
    """SentencePiece ids → fairseq's (XLM-R's): the model's <unk> (0) → 3, every other id + 1.

    Example:
    >>> fairseq_ids([0, 3, 10])
    [3, 4, 11]
    """
    return [3 if i == 0 else i + FAIRSEQ_OFFSET for i in piece_ids]


class SentencePieceTokenizer:
    """FullTokenizer's interface over a SentencePiece model.

    Args:
        model_file: a `.model` file, e.g. from build_vocab.py --spm_model_file or spm_train.
        do_lower_case: what the caller expects; must match the model's normalization (None: don't check).
        fairseq_ids: XLM-R's ids and special tokens (module docstring) instead of the model's own.

    Example:
    >>> import os, tempfile
    >>> from official_bert.text.sentencepiece_tokenizer import SentencePieceTokenizer, train
    >>> d = tempfile.mkdtemp()
    >>> corpus = os.path.join(d, "corpus.txt")
    >>> _ = open(corpus, "w").write("The cat sat on the mat.\\nThe dog sat too.\\n\\nA new document here.\\n" * 20)
    >>> train([corpus], os.path.join(d, "sp.model"), vocab_size=40, do_lower_case=True)
    >>> tok = SentencePieceTokenizer(os.path.join(d, "sp.model"), do_lower_case=True)
    >>> pieces = tok.tokenize("THE CAT")
    >>> "".join(pieces).replace("\\u2581", " ").strip()
    'the cat'
    >>> tok.convert_tokens_to_ids(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    [0, 1, 2, 3, 4]
    """

    def __init__(self, model_file, do_lower_case=None, fairseq_ids=False):
        serialized = read_model(model_file)
        check_case(model_file, serialized, do_lower_case)
        self.model_file = model_file
        self.do_lower_case = model_lowercases(serialized)
        self.fairseq_ids = fairseq_ids
        self.sp_model = sentencepiece.SentencePieceProcessor(model_proto=serialized)
        pieces = [self.sp_model.id_to_piece(i) for i in range(self.sp_model.get_piece_size())]
        if fairseq_ids:
            check_fairseq_layout(model_file, self.sp_model)
            self.packing = packing.ROBERTA
            pieces = [*FAIRSEQ_SPECIAL, *pieces[3:], packing.ROBERTA.mask_token]
        self.vocab = collections.OrderedDict((piece, i) for i, piece in enumerate(pieces))
        self.inv_vocab = {v: k for k, v in self.vocab.items()}

    def tokenize(self, text):
        return self.sp_model.encode(tokenization.convert_to_unicode(text), out_type=str)

    def tokenize_with_offsets(self, text):
        """(pieces, [(start, end)]): each piece's span of `text`, in characters (SentencePiece aligns the normalized
        text to the input, and its Python module gives a str's offsets in characters)."""
        pieces = self.sp_model.encode(tokenization.convert_to_unicode(text), out_type="immutable_proto").pieces
        return [p.piece for p in pieces], [(p.begin, p.end) for p in pieces]

    def tokenize_words(self, words, prefix_space=False):
        """The pieces of each word of `words`: with XLM-R's ids, as the words joined by single spaces tokenize,
        grouped by word through their offsets (transformers' way; SentencePiece
        starts every word with "▁" either way); else each word's own, as the original tokenizes words."""
        if not self.fairseq_ids:
            return [self.tokenize(word) for word in words]
        from official_bert.text.byte_level_bpe import group_by_word

        return group_by_word(self, words, prefix_space)

    def detokenize(self, tokens):
        """The text of `tokens` ("▁" as a space, a leading one dropped)."""
        return self.sp_model.decode_pieces(list(tokens))

    def convert_tokens_to_ids(self, tokens):
        # piece_to_id, not vocab[...]: the piece of an unknown character is its surface text, id [UNK].
        if self.fairseq_ids:
            special = {token: i for i, token in enumerate(FAIRSEQ_SPECIAL)}
            return [special[t] if t in special else fairseq_ids([self.sp_model.piece_to_id(t)])[0]
                    if t != packing.ROBERTA.mask_token else self.vocab[t] for t in tokens]
        return [self.sp_model.piece_to_id(token) for token in tokens]

    def convert_ids_to_tokens(self, ids):
        return tokenization.convert_by_vocab(self.inv_vocab, ids)


def check_fairseq_layout(model_file, sp_model):
    """Raises SentencePieceError unless the model starts as XLM-R's, <unk> <s> </s>: fairseq's ids assume it."""
    first = [sp_model.id_to_piece(i) for i in range(min(3, sp_model.get_piece_size()))]
    if first != ["<unk>", "<s>", "</s>"] or not sp_model.is_unknown(0):
        raise SentencePieceError(f"{model_file}: its first pieces are {first}, not XLM-R's <unk> <s> </s>: fairseq's "
                                 "ids (XLM-RoBERTa's) do not apply to it")


def _sentences(input_files):
    """Yields the non-blank lines of the one-sentence-per-line corpus, streaming."""
    for path in input_files:
        with open(path, encoding="utf-8", errors="ignore") as f:
            for line in f:
                line = line.strip()
                if line:
                    yield line


def train(input_files, model_file, vocab_size, do_lower_case=True, model_type="unigram",
          input_sentence_size=10_000_000, character_coverage=0.9995):
    """Trains a SentencePiece model on a corpus (one sentence per line, blank line between documents).

    Ids 0-4 are `[PAD] [UNK] [CLS] [SEP] [MASK]`; `[CLS]`, `[SEP]` and `[MASK]` are control symbols, never
    produced from text. At most `input_sentence_size` sentences (sampled) are held in memory. The model is written
    atomically to `model_file`.

    Args:
        input_files: corpus files.
        model_file: output path.
        vocab_size: pieces in the model, special tokens included (an upper bound on tiny corpora).
        do_lower_case: bake lowercasing into the model's normalization.
        model_type: "unigram" or "bpe".
        input_sentence_size: sentences sampled for training.
        character_coverage: share of characters the model covers without [UNK].

    Example:
    >>> import os, tempfile
    >>> from official_bert.text.sentencepiece_tokenizer import SentencePieceTokenizer, train
    >>> work = tempfile.mkdtemp()
    >>> _ = open(os.path.join(work, "corpus.txt"), "w").write("The cat sat on the mat.\\nA dog sat.\\n" * 50)
    >>> train([os.path.join(work, "corpus.txt")], os.path.join(work, "sp.model"), vocab_size=40)
    >>> SentencePieceTokenizer(os.path.join(work, "sp.model")).tokenize("THE CAT")[0].startswith("▁")
    True
    """
    for path in input_files:
        if not os.path.isfile(path):
            raise SentencePieceError(f"{path}: input file not found")
    if not any(True for _ in _sentences(input_files)):
        raise SentencePieceError(f"{', '.join(input_files)}: no text to train on (expected one sentence per line)")
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=_sentences(input_files), model_writer=model, vocab_size=vocab_size,
        model_type=model_type, hard_vocab_limit=False, character_coverage=character_coverage,
        input_sentence_size=input_sentence_size, shuffle_input_sentence=True,
        normalization_rule_name="nmt_nfkc_cf" if do_lower_case else "nmt_nfkc",
        pad_id=0, pad_piece="[PAD]", unk_id=1, unk_piece="[UNK]", bos_id=-1, eos_id=-1,
        control_symbols=",".join(SPECIAL_TOKENS[2:]), minloglevel=2)
    from official_bert.io import atomic_local_path  # here: the tokenizer itself loads without TensorFlow

    with atomic_local_path(model_file) as tmp, open(tmp, "wb") as f:
        f.write(model.getvalue())
