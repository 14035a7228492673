"""Learning a WordPiece vocabulary that fits `tokenization.FullTokenizer`.

Words are counted in a streaming pass with the in-graph BasicTokenizer (identical to the Python one,
many times faster), then tensorflow-text's WordPiece learner (the algorithm behind its
`bert_vocab_from_dataset`) picks the pieces. Only the word counts are held in memory. The input is read as
create_pretraining_data reads it (`pretraining_data.read_documents`'s rules): bytes that are not UTF-8 are
dropped, as the original's `convert_to_unicode` drops them, with a warning that counts them.
"""

import collections
import math
import os
import re
import time

import tensorflow as tf
from absl import logging
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from official_bert.errors import Error
from official_bert.io import atomic_path
from official_bert.io.files import open_file
from official_bert.io.utf8 import Utf8Decoder
from official_bert.text.basic_tokenizer import GraphBasicTokenizer

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class CorpusError(Error):
    """Training input that cannot be used; the message names the file."""


def reserved_tokens(num_unused_tokens=0):
    """[PAD] [UNK] [CLS] [SEP] [MASK] then `[unused0]`.. slots (ids 0.. in the vocabulary)."""
    return list(SPECIAL_TOKENS) + [f"[unused{i}]" for i in range(num_unused_tokens)]


_UNUSED = re.compile(r"(?<!\S)\[unused(\d+)\](?!\S)")


def count_words(input_files, do_lower_case=True, batch_lines=4096, log_every_s=10.0, preserved=frozenset()):
    """Counts the BasicTokenizer words of the corpus files, streaming them in batches of lines.

    Args:
        input_files: text files.
        do_lower_case: see `GraphBasicTokenizer`.
        batch_lines: lines tokenized per call.
        log_every_s: seconds between progress lines.
        preserved: `[unused<n>]` tokens that `--preserve_unused_tokens` keeps whole: they are taken out of
            the text (they are tokens already), instead of being counted as "[", "unused<n>", "]".
    """
    tokenizer = GraphBasicTokenizer(do_lower_case)
    tokenize = tf.function(lambda lines: tokenizer.tokenize(lines).words.flat_values,
                           input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    decoder = Utf8Decoder()
    counts = collections.Counter()
    lines_read = bytes_read = 0
    last_log = time.monotonic()
    for path in input_files:
        line_in_file = 0
        with open_file(path) as f:
            while True:
                raw = [line for line in (f.readline() for _ in range(batch_lines)) if line]
                if not raw:
                    break
                batch = [decoder.decode(line, path, line_in_file + i + 1) for i, line in enumerate(raw)]
                line_in_file += len(raw)
                if preserved:
                    batch = [_UNUSED.sub(lambda m: "" if m.group(0) in preserved else m.group(0), line)
                             if "[unused" in line else line for line in batch]
                counts.update(tokenize(tf.constant([line.encode("utf-8") for line in batch])).numpy())
                lines_read += len(batch)
                bytes_read += sum(len(line) for line in raw)
                if time.monotonic() - last_log >= log_every_s:
                    last_log = time.monotonic()
                    logging.info("%s: %d lines, %.1f MB, %d distinct words so far", path, lines_read,
                                 bytes_read / 1e6, len(counts))
    if decoder.warning():
        logging.warning("%s", decoder.warning())
    if not counts:
        raise CorpusError(f"{', '.join(input_files)}: no words found (expected text, one sentence per line)")
    logging.info("counted %d words (%d distinct) in %d lines", sum(counts.values()), len(counts), lines_read)
    return {word.decode("utf-8"): count for word, count in counts.items()}


def learn_vocab(word_counts, vocab_size, reserved, max_unique_chars=1000, slack_ratio=0.05):
    """Learns at most `vocab_size` tokens: `reserved` first, then single characters, then pieces by count.

    tensorflow-text's `learner.learn`, with its binary search over the count threshold written out so
    that each step is logged, a lower bound of 1 so that small corpora reach the requested size, and geometric
    steps while the bounds are more than a factor of 2 apart: counts span orders of magnitude and every step is
    a pass over all the words, so halving the ratio finds the threshold in about half the steps (6 instead of
    15 on the demo's corpus, the same threshold).
    """
    if vocab_size <= len(reserved):
        raise CorpusError(f"--vocab_size={vocab_size} leaves no room after {len(reserved)} reserved tokens")
    params = learner.Params(upper_thresh=int(1e7), lower_thresh=1, num_iterations=4, max_input_tokens=int(5e6),
                            max_token_length=50, max_unique_chars=max_unique_chars, vocab_size=vocab_size,
                            slack_ratio=slack_ratio, include_joiner_token=True, joiner="##",
                            reserved_tokens=reserved)
    items = list(word_counts.items())
    upper, lower = learner.get_search_threshs(items, params.upper_thresh, params.lower_thresh)
    counts = learner.get_input_words(items, reserved, params.max_token_length)
    counts = learner.filter_input_words(counts, learner.get_allowed_chars(counts, max_unique_chars),
                                        params.max_input_tokens)
    largest_fitting = None
    while True:
        threshold = math.isqrt(upper * lower) if upper > 2 * lower else (upper + lower) // 2
        vocab = learner.learn_with_thresh(counts, threshold, params)
        logging.info("pieces seen at least %d times: %d tokens", threshold, len(vocab))
        if len(vocab) <= vocab_size and (largest_fitting is None or len(vocab) > len(largest_fitting)):
            largest_fitting = vocab
        if vocab_size * (1 - slack_ratio) <= len(vocab) <= vocab_size or lower >= upper or threshold <= 1:
            break
        if len(vocab) > vocab_size:
            lower = threshold + 1
        else:
            upper = threshold - 1
    # The search can end one threshold too low: dropping the rarest pieces of that vocabulary would drop single
    # characters too (and turn words into [UNK]), so a smaller one that fits wins.
    vocab = largest_fitting or vocab
    if len(vocab) > vocab_size:
        logging.warning("the smallest vocabulary found has %d tokens; dropping the %d rarest",
                        len(vocab), len(vocab) - vocab_size)
        vocab = vocab[:vocab_size]
    return vocab


def write_vocab(tokens, path):
    """Writes one token per line, atomically (`io.atomic_path`: a failed write leaves nothing and raises
    `io.OutputError` naming `path`)."""
    if os.path.dirname(path):
        tf.io.gfile.makedirs(os.path.dirname(path))
    with atomic_path(path) as tmp:
        with tf.io.gfile.GFile(tmp, "w") as f:
            f.write("".join(token + "\n" for token in tokens))


def build_vocab(input_files, output_file, vocab_size, do_lower_case=True, num_unused_tokens=0,
                max_unique_chars=1000, preserve_unused_tokens=False):
    """Counts words, learns a vocabulary and writes it; returns the tokens.

    With `preserve_unused_tokens`, the corpus's `[unused<n>]` that are among the vocabulary's slots are kept
    whole, as FullTokenizer(preserve_unused_tokens=True) keeps them, so they add no "[", "]" or "unused" pieces.

    Example:
    >>> import os, tempfile
    >>> from official_bert.text.vocab_builder import build_vocab
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "c.txt"), "w").write("Walking and talking.\\nThe walker talked.\\n\\nWalk!\\n")
    >>> tokens = build_vocab([os.path.join(d, "c.txt")], os.path.join(d, "vocab.txt"), vocab_size=60)
    >>> tokens[:6]
    ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '!']
    """
    reserved = reserved_tokens(num_unused_tokens)
    word_counts = count_words(input_files, do_lower_case,
                              preserved=frozenset(reserved[len(SPECIAL_TOKENS):] if preserve_unused_tokens else ()))
    logging.info("learning a vocabulary of at most %d tokens from %d distinct words", vocab_size, len(word_counts))
    tokens = learn_vocab(word_counts, vocab_size, reserved, max_unique_chars)
    write_vocab(tokens, output_file)
    logging.info("wrote %d tokens to %s", len(tokens), output_file)
    return tokens
