"""`TextPreprocessor`: strings (or pairs of strings) → the encoder's three inputs, as a Keras layer that saves its
vocabulary among the `.keras` file's assets, so that the file holds its tokenizer and not a path to it."""

import base64
import json
import os
import tempfile

import keras
import tensorflow as tf

from official_bert.errors import Error
from official_bert.export.text import TextPacker
from official_bert.io.files import open_file
from official_bert.text.tokenization import VocabError
from official_bert.text.packing import packing_of
from official_bert.text.tokenizer_spec import TokenizerSpec

_VOCAB_NAME = "vocab.txt"
_SPM_NAME = "spm.model"
# A byte-level BPE (RoBERTa's) is two files: the vocabulary names the asset, the merges lie beside it.
_BPE_NAME, _MERGES_NAME = "vocab.json", "merges.txt"
_DEFAULT_MAX_CHARS = 200


@keras.saving.register_keras_serializable(package="official_bert")
class TextPreprocessor(keras.layers.Layer):
    """Tokenizes and packs a batch of texts exactly as the Python features are packed (`[CLS] A [SEP] (B [SEP])`, the
    original's truncation), padded to the batch's longest row, at most `sequence_length`.

    Called on a string tensor [batch] (single sentences) or a pair `(text_a, text_b)` of them, it returns
    {"input_word_ids", "input_mask", "input_type_ids"}, int32 [batch, L], L ≤ sequence_length. A row whose text_b
    tokenizes to nothing is packed as a single sentence, as run_classifier.py packs its features.

    A `.keras` file holds the vocabulary (or the SentencePiece model) as an asset (`save_assets`) and every tokenizer
    option of the `TokenizerSpec` in its config: `keras.saving.load_model` rebuilds the same ids anywhere, without
    the original files, and the config stays small (a file whose config holds the vocabulary, as the first version
    wrote them, loads too). Build one with `from_spec`; `spec` gives the equivalent `TokenizerSpec` back (its file is
    a private copy), for the Python tokenizer and the exports.

    Args:
        vocabulary (list[str] | dict | None): the WordPiece vocabulary's tokens in id order (or, with `merges`, a
            byte-level BPE's vocab.json: token → id); or
        spm_model (str | None): a serialized SentencePiece model, base64 (exactly one of them, unless
            tokenizer_asset).
        sequence_length (int): the longest packed row, [CLS] and [SEP] included.
        do_lower_case (bool): lowercase and strip accents (uncased models).
        preserve_unused_tokens (bool): keep a whitespace-separated `[unused<n>]` of the vocabulary as one token.
        ops (str): the in-graph WordPiece's ops: "core" (TensorFlow's own) or "tf_text" (tensorflow-text's).
        normalize_unicode (str | None): None (the original's ids) or "nfc": compose the text first.
        fairseq_ids (bool), max_chars_per_word (int): as for `TokenizerSpec`.
        merges (list[str] | None): a byte-level BPE's merges.txt, its lines (RoBERTa's tokenizer).
        tokenizer_asset (str | None): set by `get_config`: the asset ("vocab.txt", "spm.model" or "vocab.json") the
            `.keras` file holds the tokenizer in, neither vocabulary nor spm_model given.
        **kwargs: passed to keras.layers.Layer (e.g. `name`).

    Example:
    >>> import tensorflow as tf
    >>> from official_bert import TextPreprocessor
    >>> layer = TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"], sequence_length=6)
    >>> packed = layer((tf.constant(["a a a a", "a"]), tf.constant(["b", ""])))
    >>> packed["input_word_ids"].numpy().tolist(), packed["input_type_ids"].numpy().tolist()
    ([[2, 4, 4, 3, 5, 3], [2, 4, 3, 0, 0, 0]], [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]])
    >>> layer(tf.constant(["b", "a b"]))["input_mask"].numpy().tolist()  # padded to the longest row only
    [[1, 1, 1, 0], [1, 1, 1, 1]]
    """

    def __init__(self, vocabulary=None, spm_model=None, sequence_length=128, do_lower_case=True,
                 preserve_unused_tokens=False, ops="core", normalize_unicode=None, tokenizer_asset=None, merges=None,
                 fairseq_ids=False, max_chars_per_word=_DEFAULT_MAX_CHARS, **kwargs):
        super().__init__(**kwargs)
        if tokenizer_asset not in (None, _VOCAB_NAME, _SPM_NAME, _BPE_NAME):
            raise ValueError(f"TextPreprocessor: tokenizer_asset must be {_VOCAB_NAME!r}, {_SPM_NAME!r} or "
                             f"{_BPE_NAME!r}, got {tokenizer_asset!r}")
        if tokenizer_asset is None and (vocabulary is None) == (spm_model is None):
            raise ValueError("TextPreprocessor: pass exactly one of vocabulary and spm_model")
        if not isinstance(sequence_length, int) or sequence_length < 3:
            raise ValueError(f"TextPreprocessor: sequence_length must be an int >= 3, got {sequence_length!r}")
        self.sequence_length = sequence_length
        self.do_lower_case = do_lower_case
        self.preserve_unused_tokens = preserve_unused_tokens
        self.ops = ops
        self.normalize_unicode = normalize_unicode
        self.fairseq_ids = fairseq_ids
        self.max_chars_per_word = max_chars_per_word
        self.vocabulary = self.spm_model = self.merges = None
        self._tokenizer_asset = tokenizer_asset
        # The in-graph tokenizers read a file (and attach it to SavedModels as an asset): a private copy of the
        # vocabulary, removed with this layer.
        self._files = tempfile.TemporaryDirectory(prefix="official_bert_preprocessor_")
        # The tokenizer and packer, out of Keras's tracking: they are made again from the file (in `load_assets`, once
        # the layer may be built) and hold no weights.
        self._tokenizing = _Tokenizing()
        if vocabulary is not None or spm_model is not None:
            self._set_tokenizer(vocabulary, spm_model, merges)

    def _set_tokenizer(self, vocabulary, spm_model, merges=None):
        if merges is not None:
            self.vocabulary = {str(token): int(i) for token, i in dict(vocabulary).items()}
            self.merges = [str(line) for line in merges]
            paths = [os.path.join(self._files.name, name) for name in (_BPE_NAME, _MERGES_NAME)]
            with open(paths[0], "w", encoding="utf-8") as f:
                json.dump(self.vocabulary, f, ensure_ascii=False)
            with open(paths[1], "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in self.merges))
            files = {"vocab_file": paths[0], "merges_file": paths[1], "fairseq_ids": False}
        elif vocabulary is not None:
            self.vocabulary = [str(token) for token in vocabulary]
            path = os.path.join(self._files.name, _VOCAB_NAME)
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(token + "\n" for token in self.vocabulary))
            files = {"vocab_file": path, "fairseq_ids": False}
        else:
            self.spm_model = spm_model
            path = os.path.join(self._files.name, _SPM_NAME)
            with open(path, "wb") as f:
                f.write(base64.b64decode(spm_model))
            files = {"spm_model_file": path, "fairseq_ids": self.fairseq_ids}
        spec = TokenizerSpec(**files, do_lower_case=self.do_lower_case,
                             preserve_unused_tokens=self.preserve_unused_tokens, ops=self.ops,
                             normalize_unicode=self.normalize_unicode,
                             max_chars_per_word=self.max_chars_per_word).check()
        tokenizer = spec.layer()
        packer = TextPacker(tokenizer, self.sequence_length, pad_to_longest=True)
        self._tokenizing = _Tokenizing(spec, tokenizer, packer)

    @classmethod
    def from_spec(cls, spec, sequence_length=128, **kwargs):
        """The preprocessor of a `TokenizerSpec`: its file read into the layer, its options kept.

        Args:
            spec (TokenizerSpec): the vocabulary or SentencePiece file and the tokenizer's options.
            sequence_length (int): the longest packed row, [CLS] and [SEP] included.
            **kwargs: passed to the constructor (e.g. `name`).

        Returns:
            TextPreprocessor: with the file's vocabulary inside it.

        Example:
        >>> import os, tempfile
        >>> import tensorflow as tf
        >>> from official_bert import TextPreprocessor
        >>> from official_bert.text.tokenizer_spec import TokenizerSpec
        >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
        >>> _ = open(vocab, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[unused0]\\nhi\\n")
        >>> layer = TextPreprocessor.from_spec(TokenizerSpec(vocab, preserve_unused_tokens=True), 8)
        >>> layer(tf.constant(["Hi [unused0]"]))["input_word_ids"].numpy().tolist()
        [[2, 5, 4, 3]]
        """
        spec.check()
        vocabulary, spm_model, merges = _read_files(spec.files())
        return cls(vocabulary, spm_model, sequence_length=sequence_length, do_lower_case=spec.do_lower_case,
                   preserve_unused_tokens=spec.preserve_unused_tokens, ops=spec.ops,
                   normalize_unicode=spec.normalize_unicode, merges=merges, fairseq_ids=spec.fairseq_ids,
                   max_chars_per_word=spec.max_chars_per_word, **kwargs)

    @property
    def spec(self):
        """The `TokenizerSpec` of this layer (over its private copy of the vocabulary)."""
        return self._ready().spec

    @property
    def tokenizer(self):
        """The in-graph tokenizer layer of `spec`."""
        return self._ready().tokenizer

    def _ready(self):
        if self._tokenizing.spec is None:
            raise ValueError("TextPreprocessor: no vocabulary yet: built from a config alone, it reads its vocabulary "
                             "from the .keras file's assets (load it with keras.saving.load_model)")
        return self._tokenizing

    def __call__(self, *args, **kwargs):
        self._ready()  # its error in one line, not wrapped in Keras's report of the call
        return super().__call__(*args, **kwargs)

    def call(self, inputs):
        packer = self._ready().packer
        if isinstance(inputs, (tuple, list)):
            if len(inputs) != 2:
                raise ValueError(f"TextPreprocessor takes texts or a pair (text_a, text_b), got {len(inputs)} inputs")
            return packer.pack(tf.convert_to_tensor(inputs[0]), tf.convert_to_tensor(inputs[1]))
        return packer.pack(tf.convert_to_tensor(inputs))

    def pack_masked(self, texts):
        """Packs texts holding literal `[MASK]`s (RoBERTa's and XLM-R's `<mask>`), each one the mask token (the
        tokenizer alone would split it into "[", "mask", "]"), as bert-fill-mask does in Python.
        RoBERTa's mask takes the whitespace before it, as transformers' `<mask>` does (`Packing.mask_takes_space`).

        Args:
            texts (tf.Tensor): strings [batch].

        Returns:
            dict[str, tf.Tensor]: the packed inputs plus `masked_lm_positions`, int32 [batch, most [MASK]s in a
                row] (0 pads them; a [MASK] cut off by sequence_length is dropped).

        Example:
        >>> import tensorflow as tf
        >>> from official_bert import TextPreprocessor
        >>> layer = TextPreprocessor(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat"], sequence_length=8)
        >>> packed = layer.pack_masked(tf.constant(["The [MASK] [MASK]", "[MASK] cat"]))
        >>> packed["input_word_ids"].numpy().tolist(), packed["masked_lm_positions"].numpy().tolist()
        ([[2, 5, 4, 4, 3], [2, 4, 6, 3, 0]], [[2, 3], [1, 0]])
        """
        special = self.tokenizer.get_special_tokens_dict()
        layout = packing_of(self.tokenizer)
        if "mask_id" not in special:
            raise ValueError(f"the vocabulary has no {layout.mask_token} token")
        mask_id = tf.constant(special["mask_id"], tf.int32)
        pieces = tf.strings.split(tf.convert_to_tensor(texts), layout.mask_token)  # [batch, (pieces)]
        text = pieces.flat_values
        if layout.mask_takes_space:
            before_mask = tf.ragged.range(pieces.row_lengths()).flat_values < tf.repeat(pieces.row_lengths() - 1,
                                                                                         pieces.row_lengths())
            text = tf.where(before_mask, tf.strings.regex_replace(text, r"\s+$", ""), text)
        tokens = self.tokenizer(text)
        tokens = tokens.merge_dims(1, -1) if tokens.ragged_rank > 1 else tokens
        # A [MASK] after every piece but a text's last.
        last = tf.ragged.range(pieces.row_lengths()).flat_values == tf.repeat(pieces.row_lengths() - 1,
                                                                              pieces.row_lengths())
        masks = tf.RaggedTensor.from_row_lengths(tf.fill([tf.reduce_sum(tf.cast(~last, tf.int32))], mask_id),
                                                 tf.cast(~last, tf.int64))
        tokens = tf.concat([tf.cast(tokens, tf.int32), masks], axis=1)
        packed = self._ready().packer.pack_tokens(tf.RaggedTensor.from_row_lengths(tokens, pieces.row_lengths()))
        is_mask = tf.equal(packed["input_word_ids"], mask_id)
        positions = tf.ragged.boolean_mask(tf.broadcast_to(tf.range(tf.shape(is_mask)[1]), tf.shape(is_mask)), is_mask)
        return {**packed, "masked_lm_positions": positions.to_tensor(0)}

    def save_assets(self, dir_path):
        """Writes the vocabulary (or SentencePiece model, or a BPE's vocab.json and merges.txt) into the `.keras`
        file's assets, not its config: the config stays small, and so do the errors that quote it."""
        tf.io.gfile.copy(self.spec.file, os.path.join(dir_path, self._asset_name()), overwrite=True)
        if self.spec.merges_file:
            tf.io.gfile.copy(self.spec.merges_file, os.path.join(dir_path, _MERGES_NAME), overwrite=True)

    def load_assets(self, dir_path):
        """Reads the vocabulary `save_assets` wrote (a file whose config holds its vocabulary, as the first version
        wrote them, has none to read). A vocabulary missing from the file, or one that is not a usable vocabulary, is
        refused here, at load, rather than at the first call (`refuse_load`)."""
        name = self._asset_name()
        path = os.path.join(dir_path, name) if dir_path else None
        if self._tokenizing.spec is not None and not (path and tf.io.gfile.exists(path)):
            return
        if path is None or not tf.io.gfile.exists(path):
            self.refuse_load(f"no {name} among the .keras file's assets: the vocabulary it reads at load")
        files = {name: path}
        if name == _BPE_NAME:
            files[_MERGES_NAME] = os.path.join(dir_path, _MERGES_NAME)
        try:
            self._set_tokenizer(*_read_files(files))
        except Error as e:
            cause = str(e)  # named by the file read or by this layer's own copy of it: the path says nothing here
            for copy in (dir_path, self._files.name):
                cause = cause.removeprefix(f"{os.path.join(copy, name)}: ")
            self.refuse_load(f"its {name} in the .keras file's assets is not usable: {cause}")

    def expect_assets(self, present):
        """Told by the model that holds this layer, as a .keras file loads, whether the file has assets at all: Keras
        calls `load_assets` only when it has, so a vocabulary missing with every asset is found in
        `load_own_variables`, which Keras calls on every layer (after the model's `load_assets`, if any)."""
        self._assets_in_file = present

    def load_own_variables(self, store):
        super().load_own_variables(store)
        if self._tokenizing.spec is None and getattr(self, "_assets_in_file", True) is False:
            self.refuse_load(f"the .keras file has no assets, so no {self._asset_name()}: the vocabulary it reads at "
                             "load")

    def refuse_load(self, problem):
        """Raises VocabError for a .keras file this layer cannot be loaded from; its repr says why from then on.

        Keras reports a layer's loading error under a first line that names the layer ("A total of 1 objects could
        not be loaded ... for object <repr>:"), so the repr carries the cause onto that line."""
        self._load_problem = problem
        raise VocabError(f"TextPreprocessor: {problem}")

    def __repr__(self):
        problem = getattr(self, "_load_problem", None)
        return super().__repr__() if problem is None else f"<TextPreprocessor name={self.name}: {problem}>"

    def _asset_name(self):
        if self.merges is not None:
            return _BPE_NAME
        if self.vocabulary is not None or self.spm_model is not None:
            return _VOCAB_NAME if self.vocabulary is not None else _SPM_NAME
        return self._tokenizer_asset

    def get_build_config(self):
        return None  # no weights: nothing to build on loading, so that load_assets may set the tokenizer

    def get_config(self):
        config = {**super().get_config(), "tokenizer_asset": self._asset_name(),
                  "sequence_length": self.sequence_length, "do_lower_case": self.do_lower_case,
                  "preserve_unused_tokens": self.preserve_unused_tokens, "ops": self.ops,
                  "normalize_unicode": self.normalize_unicode}
        # BERT's family's options only where set, so that a BERT preprocessor's config is as before.
        if self.fairseq_ids:
            config["fairseq_ids"] = True
        if self.max_chars_per_word != _DEFAULT_MAX_CHARS:
            config["max_chars_per_word"] = self.max_chars_per_word
        return config


class _Tokenizing:
    """A preprocessor's spec, tokenizer and packer (None until it has its vocabulary)."""

    def __init__(self, spec=None, tokenizer=None, packer=None):
        self.spec, self.tokenizer, self.packer = spec, tokenizer, packer


def _read_files(files):
    """(vocabulary, spm_model, merges) from a tokenizer's files ({name: path}, `TokenizerSpec.files`): a WordPiece
    vocabulary's lines as the original's load_vocab reads them (split at "\\n" only, a token's id its line number),
    a SentencePiece model in base64, or a byte-level BPE's vocab.json (token → id) and merges.txt's lines."""
    contents = {}
    for name, path in files.items():
        with open_file(path) as f:
            contents[name] = f.read()
    if _BPE_NAME in contents:
        return (json.loads(contents[_BPE_NAME].decode("utf-8")), None,
                [line for line in contents[_MERGES_NAME].decode("utf-8").split("\n") if line])
    if _VOCAB_NAME in contents:
        lines = contents[_VOCAB_NAME].decode("utf-8").split("\n")
        return (lines[:-1] if lines[-1] == "" else lines), None, None
    return None, base64.b64encode(next(iter(contents.values()))).decode("ascii"), None
