"""The work of the worker processes: blocks of text into token ids, then chunks of the run's documents into
serialized, TFRecord-framed examples dealt into shuffle buckets."""

import array
import dataclasses
import random

from official_bert.pretraining_data import tfrecord
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.example_codec import ExampleEncoder
from official_bert.pretraining_data.instances import TrainingInstance, create_segment_pairs, create_single_segments
from official_bert.pretraining_data.line_tokenizer import LineTokenizer
from official_bert.pretraining_data.masking import Masker
from official_bert.pretraining_data.stats import RunStats
from official_bert.pretraining_data.token_store import pack_document


def tokens_by_id(vocab):
    """The vocabulary as a list indexed by id. A token listed twice takes the id of its last line, as in the
    original's load_vocab; the ids of its earlier lines hold "" (no text maps to them).

    >>> tokens_by_id({"[PAD]": 0, "a": 2, "b": 3})
    ['[PAD]', '', 'a', 'b']
    """
    tokens = [""] * (max(vocab.values()) + 1)
    for token, i in vocab.items():
        tokens[i] = token
    return tokens


def continuation_flags(tokens):
    """For each token (in id order): does it continue the word before it?

    WordPiece marks continuations with "##"; SentencePiece marks word starts with "▁" (U+2581), so there
    every other piece continues a word, except special tokens such as [CLS] or <unk>. Which marker a
    vocabulary uses is read from which one most of its tokens carry.

    >>> continuation_flags(["[CLS]", "un", "##aff"]), continuation_flags(["[CLS]", "\u2581un", "aff", "<unk>"])
    ([False, False, True], [False, False, True, False])
    """
    word_pieces = [token.startswith("##") for token in tokens]
    if sum(word_pieces) >= sum(token.startswith("\u2581") for token in tokens):
        return word_pieces
    return [not (token.startswith("\u2581") or token[:1] + token[-1:] in ("[]", "<>")) for token in tokens]


@dataclasses.dataclass
class TokenizedBlock:
    """A block's documents as `token_store.pack_document` values (their uint32 bytes, which cost a worker less to
    send and the store nothing to convert), with each document's size and the counts.

    Example:
    >>> TokenizedBlock(array.array("I", [1, 1, 7]).tobytes(), [3], RunStats(documents=1)).sizes
    [3]
    """

    values: list
    sizes: list
    stats: RunStats


@dataclasses.dataclass
class Chunk:
    """Documents first..end-1 of a run of `num_documents`, to cut into examples dealt into `num_buckets`.

    Example:
    >>> Chunk(index=0, first=0, end=40, num_documents=300, num_buckets=1).end
    40
    """

    index: int
    first: int
    end: int
    num_documents: int
    num_buckets: int


@dataclasses.dataclass
class ChunkResult:
    """TFRecord bytes of a chunk's examples, one string per shuffle bucket, and the chunk's counts.

    Example:
    >>> ChunkResult([b"", b""], RunStats(instances=0)).stats.instances
    0
    """

    buckets: list
    stats: RunStats


class InstanceGenerator:
    """Tokenizes documents (`tokenize`) and cuts, masks and encodes instances (`instances`, `encode_chunk`), as
    the original's create_training_instances does.

    Random next segments come from the whole run: a chunk's documents are cut against a pool (a `TokenStore`
    pool) that holds every document of the run. A chunk's randomness is seeded by (random_seed, chunk index)
    alone, so the output does not depend on how many processes share the work.

    Args:
        tokenizer: a `tokenization.FullTokenizer` or another tokenizer with `vocab`, `tokenize` and
            `convert_tokens_to_ids`.
        options: a `PretrainingOptions`.
        random_seed: the run's seed.
        use_v2_feature_names: see `ExampleEncoder`.

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.pretraining_data.documents import Block, Document
    >>> from official_bert.pretraining_data.options import PretrainingOptions
    >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(path, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"]))
    >>> generator = InstanceGenerator(FullTokenizer(path), PretrainingOptions(dupe_factor=2))
    >>> block = generator.tokenize(Block(0, [Document("x.txt", 1, ["a b", "c"]), Document("x.txt", 4, ["b c a"])]))
    >>> list(array.array("I", block.values)), block.sizes
    ([2, 2, 1, 5, 6, 7, 1, 3, 6, 7, 5], [6, 5])
    >>> documents = [[[5, 6], [7]], [[6, 7, 5]]]
    >>> instances, stats = generator.instances(documents, Chunk(0, 0, 2, 2, 1), documents)
    >>> len(instances), stats.instances
    (4, 4)
    """

    def __init__(self, tokenizer, options, random_seed=12345, use_v2_feature_names=False):
        vocab = tokenizer.vocab
        for token in ("[CLS]", "[SEP]", "[MASK]"):
            if token not in vocab:
                raise PretrainingDataError(f"the vocabulary has no {token} token")
        self.options = options
        self.random_seed = random_seed
        self._line_tokenizer = LineTokenizer(tokenizer)
        self._cls_id, self._sep_id = vocab["[CLS]"], vocab["[SEP]"]
        tokens = self._tokens = tokens_by_id(vocab)
        # Random replacements are drawn among the vocabulary's tokens, as the original's vocab_words: with a
        # token listed twice, the ids of its earlier lines are not among them.
        random_ids = None if len(tokens) == len(vocab) else sorted(vocab.values())
        self._masker = Masker(options, len(tokens), self._cls_id, self._sep_id, vocab["[MASK]"],
                              continuation_flags(tokens), random_ids=random_ids)
        self._encoder = ExampleEncoder(options.max_seq_length, options.max_predictions_per_seq, len(tokens),
                                       use_v2_feature_names)

    def max_record_bytes(self):
        """The size of the largest example this generator can write, TFRecord framing included."""
        last = len(self._tokens) - 1
        length, predictions = self.options.max_seq_length, self.options.max_predictions_per_seq
        instance = TrainingInstance([last] * length, 1, list(range(predictions)), [last] * predictions, True)
        return len(self._encoder.encode(instance)) + 16

    def tokenize(self, block):
        """A `Block`'s documents as a `TokenizedBlock`; lines without a known token and documents without such
        a line are dropped, as the original drops them."""
        stats = RunStats()
        values, sizes = [], []
        max_num_tokens = self.options.max_num_tokens
        for document in block.documents:
            sentences = []
            for offset, line in enumerate(document.lines):
                ids = self._line_tokenizer.ids(line)
                if not ids:
                    continue
                sentences.append(ids)
                if len(ids) > max_num_tokens:
                    stats.long_sentences += 1
                    stats.first_long_sentence = stats.first_long_sentence or \
                        f"{document.path}:{document.line_number + offset}"
            if sentences:
                packed = pack_document(sentences)
                values.extend(packed)
                sizes.append(len(packed))
                stats.documents += 1
                stats.sentences += len(sentences)
                stats.one_sentence_documents += len(sentences) == 1
        return TokenizedBlock(array.array("I", values).tobytes(), sizes, stats)

    def instances(self, pool, chunk, documents):
        """Returns (list of `TrainingInstance`, `RunStats`) for a `Chunk`: its `documents` (documents
        chunk.first.. of `pool`) cut `dupe_factor` times, in order, with random next segments drawn from `pool`."""
        stats = RunStats()
        rng = random.Random(f"{self.random_seed}/{chunk.index}")
        options, cls_id, sep_id = self.options, self._cls_id, self._sep_id
        instances = []
        for _ in range(options.dupe_factor):
            for offset, document in enumerate(documents):
                if options.no_nsp:
                    pairs = [(segment, None, False) for segment in create_single_segments(
                        document, options.max_num_tokens, options.short_seq_prob, rng)]
                else:
                    pairs = create_segment_pairs(pool, chunk.first + offset, options.max_num_tokens,
                                                 options.short_seq_prob, rng)
                for tokens_a, tokens_b, is_random_next in pairs:
                    ids = [cls_id, *tokens_a, sep_id]
                    segment_a_length = len(ids)
                    if tokens_b is not None:
                        ids += [*tokens_b, sep_id]
                    masked_ids, positions, labels = self._masker(ids, rng)
                    instances.append(
                        TrainingInstance(masked_ids, segment_a_length, positions, labels, is_random_next))
                    stats.tokens += len(ids)
                    stats.masked += len(positions)
                    stats.random_next += is_random_next
        stats.instances = len(instances)
        return instances, stats

    def encode_chunk(self, pool, chunk, documents):
        """The `ChunkResult` of a `Chunk`: each example goes to a uniformly random bucket (drawn from a generator
        seeded by the chunk alone), framed as a TFRecord."""
        instances, stats = self.instances(pool, chunk, documents)
        framed = tfrecord.frame_each(list(map(self._encoder.encode, instances)))
        rng = random.Random(f"{self.random_seed}/{chunk.index}/buckets")
        buckets = [[] for _ in range(chunk.num_buckets)]
        random_value, n = rng.random, chunk.num_buckets
        for record in framed:
            buckets[int(random_value() * n)].append(record)
        return ChunkResult([b"".join(records) for records in buckets], stats)
