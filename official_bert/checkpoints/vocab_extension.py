"""Adding a domain's words to a released vocabulary and checkpoint (Devlin's recipe, google-research/bert #9, #396).

Each new word becomes one WordPiece entry, written over an `[unusedX]` entry (`mode="unused"`: the vocabulary size,
the config and every other id stay as they are) or appended (`mode="append"`: the word-embedding matrix and the
masked-LM output bias grow, and so does `vocab_size`). Its embedding row, and its masked-LM output bias when the
checkpoint has the head, start at the mean of those of the pieces the old vocabulary split it into.

What stays the same: every old token keeps its id; a text none of whose words begins with a new word tokenizes to the
same ids, so the encoder's outputs are bit for bit those of the old checkpoint, and so are the masked-LM logits over
the old entries in mode "unused" (in mode "append" they agree to float32 rounding: a wider output matrix changes how
the matrix product blocks its sums). A word that begins with a new word can change: WordPiece takes the longest
vocabulary entry that starts a word, so after adding "covid", "covidiot" starts with "covid" instead of the pieces it
started with before.
"""

import dataclasses
import json
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from official_bert.checkpoints import SAVE_FORMATS, case, detect, load_checkpoint, save_checkpoint
from official_bert.checkpoints.causal import resolve_causal_attention
from official_bert.checkpoints.convert import model_for
from official_bert.checkpoints.loading import model_config
from official_bert.checkpoints.names import entry
from official_bert.configs import BertConfig
from official_bert.errors import Error
from official_bert.io import atomic_directory, write_text
from official_bert.io.files import check_input_file, is_stale_temporary, listdir, remove_stale_temporaries
from official_bert.io.table_files import TableFileError, check_utf8
from official_bert.text import tokenization

MODES = ("unused", "append")
UNUSED = re.compile(r"^\[unused\d+\]$")
WORD_EMBEDDINGS = "bert/embeddings/word_embeddings"
MLM_BIAS = "cls/predictions/output_bias"
VOCAB_NAME = "vocab.txt"
CONFIG_NAME = "bert_config.json"
# Hugging Face tokenizer files copied beside a Hugging Face checkpoint, so that AutoTokenizer reads the new
# vocabulary with the old settings (casing, special tokens). tokenizer.json holds the vocabulary itself: rewritten.
_HF_TOKENIZER_FILES = ("tokenizer_config.json", "special_tokens_map.json")
_HF_FAST_TOKENIZER = "tokenizer.json"
# Checkpoint files of the input (its other steps, a training run's state file) and hidden files: no files to copy.
_CHECKPOINT_FILE = re.compile(r"(\.index|\.data-\d{5}-of-\d{5}|^checkpoint|\.safetensors|^\..*)$")


class VocabExtensionError(Error):
    """Words that cannot be added, or a vocabulary, checkpoint or output directory that does not allow it."""


@dataclasses.dataclass(frozen=True)
class NewWord:
    """One word to add and where it goes.

    Args:
        word: the entry as written in vocab.txt (lowercased and accent-stripped for an uncased model).
        id: its id in the new vocabulary.
        pieces: the old vocabulary's WordPiece tokens for it, whose rows' mean is its initial row.
        piece_ids: their ids.
        replaced: the `[unusedX]` entry it overwrote (mode "unused"), else None.

    Example:
    >>> NewWord("covid", 1, ("co", "##vid"), (20, 21), "[unused0]").replaced
    '[unused0]'
    """

    word: str
    id: int
    pieces: tuple
    piece_ids: tuple
    replaced: str = None


@dataclasses.dataclass(frozen=True)
class CorpusWord:
    """A whole word of a corpus that the vocabulary splits, as `frequent_split_words` ranks them.

    Args:
        word: the word after the basic tokenizer (lowercased for an uncased model).
        count: its occurrences in the corpus.
        pieces: the WordPiece tokens the vocabulary splits it into.

    Example:
    >>> CorpusWord("isthmus", 70, ("ist", "##hm", "##us")).score
    210
    """

    word: str
    count: int
    pieces: tuple

    @property
    def score(self):
        """Pieces × occurrences: the tokens the corpus spends on the word, which one entry would make `count`."""
        return len(self.pieces) * self.count


@dataclasses.dataclass
class ExtensionPlan:
    """What `plan_extension` decided, before anything is written.

    Args:
        tokens: the new vocabulary, one entry per id.
        added: a `NewWord` per word to add, in the order given.
        skipped: (word, reason) for each word already in the vocabulary.
        vocab_size: the new vocabulary's size (the config's `vocab_size` after the extension).

    Example:
    >>> plan = plan_extension(["Genes"], ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "gene", "##s"], True, "append")
    >>> plan.tokens[-1], plan.vocab_size
    ('genes', 7)
    """

    tokens: list
    added: list
    skipped: list
    vocab_size: int


@dataclasses.dataclass
class ExtensionReport:
    """What `extend_vocabulary` did.

    Args:
        plan: what was planned: the new words, their ids and the pieces each starts from.
        output_dir: where it was written (None for a dry run).
        format: the checkpoint format written (or that would be).
        heads: the Google names of the tensors that got a row per new word: the word embeddings, and the masked-LM
            output bias when the checkpoint has it (empty for a dry run).
        corpus_words: the words chosen from a corpus (each with its count and old pieces), else empty.
        not_copied: files beside the input checkpoint that were not copied (they may describe the old vocabulary
            or another model; copy those that still apply by hand).

    Example:
    >>> import os, tempfile
    >>> from official_bert import BertConfig, BertEncoder, save_checkpoint
    >>> from official_bert.checkpoints.vocab_extension import extend_vocabulary
    >>> work = tempfile.mkdtemp()
    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "gene", "##s"]
    >>> _ = open(os.path.join(work, "vocab.txt"), "w").write("\\n".join(tokens) + "\\n")
    >>> _ = save_checkpoint(BertEncoder(BertConfig.from_preset("tiny", vocab_size=6, num_hidden_layers=1)), work)
    >>> report = extend_vocabulary(work, None, ["Genes"], mode="append")  # no output_dir: a dry run
    >>> print(report)
    1 new words, 7 entries in all; dry run: nothing written
      genes -> id 6, starts as the mean of gene ##s
    >>> report.output_dir, report.heads
    (None, [])
    """

    plan: ExtensionPlan
    output_dir: str
    format: str
    heads: list = dataclasses.field(default_factory=list)
    corpus_words: list = dataclasses.field(default_factory=list)
    not_copied: list = dataclasses.field(default_factory=list)

    def __str__(self):
        plan, lines = self.plan, []
        if self.corpus_words:
            lines.append(f"the corpus's {len(self.corpus_words)} words split into the most pieces x occurrences:")
            lines += [f"  {w.word}: {w.count:,} x {len(w.pieces)} pieces ({' '.join(w.pieces)})"
                      for w in self.corpus_words]
        lines += [f"skipped {word!r}: {reason}" for word, reason in plan.skipped]
        done = (f"wrote the checkpoint ({self.format} format) to {self.output_dir}" if self.output_dir
                else "dry run: nothing written")
        lines.append(f"{len(plan.added)} new words, {plan.vocab_size:,} entries in all; {done}")
        lines += [f"  {w.word} -> id {w.id}" + (f" (was {w.replaced})" if w.replaced else "")
                  + f", starts as the mean of {' '.join(w.pieces)}" for w in plan.added]
        if self.not_copied:
            lines.append(f"not copied from beside the input checkpoint: {', '.join(self.not_copied)}")
        return "\n".join(lines)


def read_vocab_lines(vocab_file):
    """The entries of a vocabulary file, one per id (line number), stripped as `load_vocab` strips them.

    Args:
        vocab_file: the vocabulary, on any tf.io.gfile filesystem.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("[PAD]\\n[unused0]\\nthe \\n")
    >>> read_vocab_lines(path)
    ['[PAD]', '[unused0]', 'the']
    """
    tokenization.load_vocab(vocab_file)  # its checks and messages: missing, empty, not UTF-8
    with tf.io.gfile.GFile(vocab_file, "rb") as f:
        text = f.read().decode("utf-8-sig")  # a leading BOM dropped, as load_vocab drops it
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.strip() for line in lines]


def read_words_file(path):
    """The words of a words file: one per line, blank lines skipped; a tab ends the word (so a table whose first
    column holds the words can be passed as it is). A file without a word is refused.

    Args:
        path: the file, on any tf.io.gfile filesystem.

    Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "words.txt")
    >>> _ = open(path, "w").write("interleukin\\t12\\n\\n  troponin \\n")
    >>> read_words_file(path)
    ['interleukin', 'troponin']
    """
    if not tf.io.gfile.exists(path):
        raise VocabExtensionError(f"--new_words={path}: no such file (expected one word per line)")
    check_input_file(path, "a file of one word per line", "--new_words", VocabExtensionError)
    words = []
    with tf.io.gfile.GFile(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise VocabExtensionError(f"{path}:{number}: not UTF-8 ({e.reason} at byte {e.start})") from None
            word = line.split("\t")[0].strip()
            if word:
                words.append(word)
    if not words:
        raise VocabExtensionError(f"--new_words={path}: no words in {path} (expected one word per line)")
    return words


def frequent_split_words(word_counts, vocab, num_words):
    """The `num_words` whole words of a corpus on which the vocabulary spends the most tokens: those it splits into
    the most pieces × occurrences. Words it cannot cover at all ([UNK]: a character missing from the vocabulary)
    are left out, as no pieces give them a starting row; add such a word with a words file.

    Args:
        word_counts: the corpus's basic-tokenizer words (under the model's casing) → occurrences, as
            `text.vocab_builder.count_words` counts them.
        vocab: the old vocabulary (token → id).
        num_words: how many to return.

    Returns:
        `CorpusWord`s, highest score first (ties: more occurrences, then alphabetical).

    Example:
    >>> vocab = {t: i for i, t in enumerate(["[UNK]", "the", "cell", "in", "##ter", "##leu", "##kin", "il", "##6"])}
    >>> counts = {"the": 9, "interleukin": 2, "il6": 3, "ж": 5}
    >>> [(w.word, w.count, w.pieces, w.score) for w in frequent_split_words(counts, vocab, 5)]
    [('interleukin', 2, ('in', '##ter', '##leu', '##kin'), 8), ('il6', 3, ('il', '##6'), 6)]
    """
    wordpiece = tokenization.WordpieceTokenizer(vocab)
    found = []
    for word, count in word_counts.items():
        pieces = tuple(wordpiece.tokenize(word))
        if len(pieces) > 1 and "[UNK]" not in pieces:
            found.append(CorpusWord(word, count, pieces))
    found.sort(key=lambda w: (-w.score, -w.count, w.word))
    return found[:num_words]


def plan_extension(words, tokens, do_lower_case, mode="unused", vocab_size=None, source="the new words"):
    """Checks the words to add and decides each one's id and initial pieces; writes nothing.

    Refused (`VocabExtensionError`, naming the first offending word): a word the basic tokenizer would split
    (punctuation inside it, whitespace, CJK ideographs) or drops (control characters only); one longer than 200
    characters (WordPiece maps those to [UNK]); two words that are the same under the model's casing; more words
    than free `[unused]` entries in mode "unused"; no word at all. A word already in the vocabulary is skipped
    (and listed in `skipped`).

    Args:
        words: the words, as given.
        tokens: the old vocabulary, one entry per id (`read_vocab_lines`).
        do_lower_case: the model's casing: an uncased model's entries are lowercased and accent-stripped words.
        mode: "unused" (over the `[unusedX]` entries, in id order) or "append" (after the last id).
        vocab_size: the model's vocabulary size (the config's); defaults to `len(tokens)`. In mode "append" the
            vocabulary must have exactly that many entries.
        source: what to call the words in messages (a file name, a flag).

    Returns:
        an `ExtensionPlan`.

    Example:
    >>> tokens = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "co", "##vid", "##19", "the"]
    >>> plan = plan_extension(["COVID19", "the"], tokens, do_lower_case=True)
    >>> [(w.word, w.id, w.pieces, w.replaced) for w in plan.added], plan.skipped
    ([('covid19', 1, ('co', '##vid', '##19'), '[unused0]')], [('the', 'already in the vocabulary (id 9)')])
    >>> plan_extension(["covid-19"], tokens, do_lower_case=True)
    Traceback (most recent call last):
    ...
    official_bert.checkpoints.vocab_extension.VocabExtensionError: the new words: 'covid-19' is not one word to \
the basic tokenizer (it splits it into 'covid', '-', '19'); a vocabulary entry can only be a whole word
    """
    if mode not in MODES:
        raise VocabExtensionError(f"unknown mode {mode!r}; expected one of {list(MODES)}")
    vocab_size = len(tokens) if vocab_size is None else vocab_size
    if len(tokens) > vocab_size:
        raise VocabExtensionError(f"the vocabulary has {len(tokens):,} entries, more than the model's vocab_size "
                                  f"{vocab_size:,}: not this model's vocabulary")
    if mode == "append" and len(tokens) != vocab_size:
        raise VocabExtensionError(f"the vocabulary has {len(tokens):,} entries but the model {vocab_size:,} rows: "
                                  "appended words would not get the ids of their rows; use --mode=unused")
    vocab = {token: i for i, token in enumerate(tokens)}
    basic = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    wordpiece = tokenization.WordpieceTokenizer(vocab)
    normalized, skipped, first_given = [], [], {}
    for given in words:
        split = basic.tokenize(given)
        if len(split) != 1:
            parts = ", ".join(repr(s) for s in split) if split else "nothing"
            raise VocabExtensionError(f"{source}: {given!r} is not one word to the basic tokenizer (it splits it "
                                      f"into {parts}); a vocabulary entry can only be a whole word")
        word = split[0]
        if len(word) > wordpiece.max_input_chars_per_word:
            raise VocabExtensionError(f"{source}: {given[:40]!r}... has {len(word)} characters; WordPiece maps "
                                      f"words over {wordpiece.max_input_chars_per_word} to [UNK]")
        if word in first_given:
            same = "" if first_given[word] == given else f" (both are {word!r} to an uncased model)"
            raise VocabExtensionError(f"{source}: {first_given[word]!r} and {given!r} are the same word{same}; "
                                      "list each word once")
        first_given[word] = given
        if word in vocab:
            skipped.append((given, f"already in the vocabulary (id {vocab[word]})"))
        else:
            normalized.append(word)
    if not normalized:
        raise VocabExtensionError(f"{source}: no word to add" + (" (every one is in the vocabulary already)"
                                                                 if skipped else ""))
    if mode == "unused":
        slots = [i for i, token in enumerate(tokens) if UNUSED.match(token)]
        if len(normalized) > len(slots):
            raise VocabExtensionError(f"{source}: {len(normalized):,} words to add but the vocabulary has "
                                      f"{len(slots):,} [unused] entries; add fewer words or use --mode=append")
        ids = slots[:len(normalized)]
    else:
        ids = list(range(vocab_size, vocab_size + len(normalized)))
    new_tokens = list(tokens) + [None] * (len(ids) if mode == "append" else 0)
    added = []
    for word, new_id in zip(normalized, ids):
        pieces = tuple(wordpiece.tokenize(word))
        added.append(NewWord(word, new_id, pieces, tuple(vocab[p] for p in pieces),
                             tokens[new_id] if mode == "unused" else None))
        new_tokens[new_id] = word
    return ExtensionPlan(new_tokens, added, skipped, max(vocab_size, len(new_tokens)))


def extended_rows(table, plan):
    """`table` (a [vocab, ...] array: the word embeddings, or the masked-LM output bias) with each new word's row
    set to the mean of its pieces' rows, grown to the plan's vocabulary size.

    Example:
    >>> plan = ExtensionPlan(tokens=[], added=[NewWord("ab", 3, ("a", "##b"), (0, 1))], skipped=[], vocab_size=4)
    >>> extended_rows(np.array([[1.0, 2.0], [3.0, 6.0], [9.0, 9.0]], np.float32), plan).tolist()
    [[1.0, 2.0], [3.0, 6.0], [9.0, 9.0], [2.0, 4.0]]
    """
    grown = np.zeros((plan.vocab_size,) + table.shape[1:], dtype=table.dtype)
    grown[:len(table)] = table
    for word in plan.added:
        grown[word.id] = np.mean(table[list(word.piece_ids)], axis=0, dtype=np.float64).astype(table.dtype)
    return grown


def extend_vocabulary(init_checkpoint, output_dir=None, words=(), corpus_files=(), num_new_words=None,
                      mode="unused", vocab_file=None, bert_config_file=None, do_lower_case=None, output_format=None,
                      source="the new words"):
    """Writes a checkpoint whose vocabulary holds new words as whole entries (see the module's docstring).

    Everything is checked before anything is written, and `output_dir` appears whole or not at all (it is written
    under a temporary name beside it, then renamed; what a killed run left there is removed by the next).

    Args:
        init_checkpoint: the checkpoint to extend: Google's TF1, Hugging Face or this project's (anything
            `load_checkpoint` reads), with or without the pretraining heads.
        output_dir: a new or empty directory; receives vocab.txt, bert_config.json and the checkpoint (a Hugging
            Face one also config.json and the tokenizer files beside the input, tokenizer.json's vocabulary
            rewritten). None: a dry run, which checks and plans but writes nothing.
        words: the words to add; a word the basic tokenizer would split, two words that are one under the
            model's casing, or more words than `[unused]` entries are refused in one line.
        corpus_files: instead of `words`: UTF-8 text files whose `num_new_words` words the vocabulary splits into
            the most pieces x occurrences are added; a byte that is not UTF-8 is refused, naming its file and
            offset.
        num_new_words: how many words to take from `corpus_files`.
        mode: "unused" or "append".
        vocab_file: the old vocabulary; default: the vocab.txt beside the checkpoint.
        bert_config_file: the model's config; default: the one beside the checkpoint. A left-to-right checkpoint
            stays one, its record kept in the output, whether the config has the key or not.
        do_lower_case: the model's casing; default: uncased when the vocabulary has no uppercase entry.
        output_format: "official_bert", "huggingface" or "google"; default: the input's ("official_bert" for a
            .keras file).
        source: what to call `words` in messages (a file name).

    Returns:
        an `ExtensionReport`.

    Example:
    >>> import os, tempfile
    >>> from official_bert import BertConfig, BertEncoder, save_checkpoint
    >>> from official_bert.checkpoints.vocab_extension import extend_vocabulary
    >>> work, out = tempfile.mkdtemp(), os.path.join(tempfile.mkdtemp(), "genes")
    >>> tokens = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "gene", "##s", "ge", "##ne"]
    >>> _ = open(os.path.join(work, "vocab.txt"), "w").write("\\n".join(tokens) + "\\n")
    >>> config = BertConfig.from_preset("tiny", vocab_size=len(tokens), num_hidden_layers=1)
    >>> _ = save_checkpoint(BertEncoder(config), work, "google")
    >>> print(extend_vocabulary(work, out, ["Genes"], mode="append"))  # doctest: +ELLIPSIS
    1 new words, 11 entries in all; wrote the checkpoint (google format) to /.../genes
      genes -> id 10, starts as the mean of gene ##s
    >>> sorted(name for name in os.listdir(out) if not name.startswith("."))[:3]
    ['bert_config.json', 'bert_model.ckpt.data-00000-of-00001', 'bert_model.ckpt.index']
    """
    if bool(words) == bool(corpus_files):
        raise VocabExtensionError("pass the words to add or a corpus to choose them from (one of the two)")
    if corpus_files and not (num_new_words or 0) > 0:
        raise VocabExtensionError(f"--num_new_words={num_new_words}: say how many words to take from the corpus "
                                  "(a positive number)")
    located = detect.locate(init_checkpoint)
    vocab_file = vocab_file or located.vocab_file
    config_file = bert_config_file or located.config_file
    if vocab_file is None:
        raise VocabExtensionError(f"{init_checkpoint}: no vocab.txt beside the checkpoint; pass --vocab_file")
    if config_file is None:
        raise VocabExtensionError(f"{init_checkpoint}: no bert_config.json or config.json beside the checkpoint; "
                                  "pass --bert_config_file")
    output_format = output_format or ("official_bert" if located.format == "keras" else located.format)
    if output_format not in SAVE_FORMATS:
        raise VocabExtensionError(f"unknown output format {output_format!r}; expected one of {list(SAVE_FORMATS)}")
    if output_dir:
        _check_output_dir(output_dir)
    tokens = read_vocab_lines(vocab_file)
    tokenization.check_special_tokens(set(tokens), vocab_file)
    if do_lower_case is None:
        do_lower_case = case.vocab_casing(tokens) != "cased"
    else:
        case.check_case(do_lower_case, dataclasses.replace(located, vocab_file=vocab_file),
                        f"--init_checkpoint={init_checkpoint}")
    # A left-to-right checkpoint is extended as one (its marker and config key kept) even under a config without
    # the key, as run_classifier and convert_checkpoint follow it; a config that contradicts it is refused.
    config = resolve_causal_attention(BertConfig.from_json_file(config_file), None, config_file, [init_checkpoint])
    corpus_words = []
    if corpus_files:
        for path in corpus_files:
            # Refused rather than counted: a word whose bytes were dropped would become a vocabulary entry.
            try:
                check_utf8(path)
            except TableFileError as e:
                raise VocabExtensionError(f"--from_corpus: {e}") from None
        # Imported here: vocab_builder brings in tensorflow-text (the "text" extra), which only a corpus needs.
        from official_bert.text.vocab_builder import count_words

        vocab = {token: i for i, token in enumerate(tokens)}
        corpus_words = frequent_split_words(count_words(corpus_files, do_lower_case), vocab, num_new_words)
        if not corpus_words:
            raise VocabExtensionError(f"{', '.join(corpus_files)}: the vocabulary splits none of its words; "
                                      "nothing to add")
        words, source = [w.word for w in corpus_words], ", ".join(corpus_files)
    plan = plan_extension(words, tokens, do_lower_case, mode, config.vocab_size, source)
    if not output_dir:
        return ExtensionReport(plan, None, output_format, corpus_words=corpus_words)

    old = model_for(detect.open_source(located), config)
    load_checkpoint(old, located.path)
    new = old if mode == "unused" else model_for(detect.open_source(located), config.replace(
        vocab_size=plan.vocab_size))
    heads = []
    for old_variable, new_variable in zip(old.weights, new.weights):
        google_name = entry(old_variable.path).google_names[0]
        value = old_variable.numpy()
        if google_name in (WORD_EMBEDDINGS, MLM_BIAS):
            value = extended_rows(value, plan)
            heads.append(google_name)
        new_variable.assign(value)

    with atomic_directory(output_dir) as tmp:
        save_checkpoint(new, tmp, output_format)
        write_text(os.path.join(tmp, VOCAB_NAME), "".join(token + "\n" for token in plan.tokens))
        if not tf.io.gfile.exists(os.path.join(tmp, CONFIG_NAME)):  # beside a Hugging Face config.json
            model_config(new).to_json_file(os.path.join(tmp, CONFIG_NAME))
        if output_format == "huggingface":
            _write_hf_tokenizer(located.directory, tmp, plan)
        written = set(tf.io.gfile.listdir(tmp))
    read = {os.path.basename(p) for p in (located.path, vocab_file, config_file, output_dir.rstrip("/"))}
    not_copied = sorted(n.rstrip("/") for n in tf.io.gfile.listdir(located.directory)
                        if n.rstrip("/") not in written | read and not _CHECKPOINT_FILE.search(n))
    return ExtensionReport(plan, output_dir, output_format, heads, corpus_words, not_copied)


def _check_output_dir(output_dir):
    remove_stale_temporaries(output_dir)  # a killed run's: as big as the checkpoint, and no content
    if tf.io.gfile.exists(output_dir) and not tf.io.gfile.isdir(output_dir):
        raise VocabExtensionError(f"--output_dir={output_dir} is a file; expected a new or empty directory")
    present = sorted(n for n in listdir(output_dir) if not is_stale_temporary(n)) if tf.io.gfile.isdir(
        output_dir) else []
    if present:
        raise VocabExtensionError(f"--output_dir={output_dir} is not empty (it holds {', '.join(present[:5])}"
                                  f"{', ...' if len(present) > 5 else ''}); pass a new or empty directory")


def _write_hf_tokenizer(input_dir, output_dir, plan):
    for name in _HF_TOKENIZER_FILES:
        if tf.io.gfile.exists(os.path.join(input_dir, name)):
            tf.io.gfile.copy(os.path.join(input_dir, name), os.path.join(output_dir, name))
    fast = os.path.join(input_dir, _HF_FAST_TOKENIZER)
    if not tf.io.gfile.exists(fast):
        return
    with tf.io.gfile.GFile(fast, "rb") as f:
        values = json.loads(f.read().decode("utf-8"))
    model = values.get("model") or {}
    if model.get("type") != "WordPiece" or not isinstance(model.get("vocab"), dict):
        logging.warning("%s: not a WordPiece tokenizer.json; not copied (transformers builds one from vocab.txt)",
                        fast)
        return
    model["vocab"] = {token: i for i, token in enumerate(plan.tokens)}
    replaced = {word.id for word in plan.added}
    values["added_tokens"] = [t for t in values.get("added_tokens", []) if t.get("id") not in replaced]
    write_text(os.path.join(output_dir, _HF_FAST_TOKENIZER), json.dumps(values, ensure_ascii=False))
