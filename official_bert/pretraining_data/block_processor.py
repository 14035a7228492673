"""The work of one worker: a block of documents in, shuffled serialized examples and counts out."""

import dataclasses
import random

from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.example_codec import ExampleEncoder
from official_bert.pretraining_data.instances import TrainingInstance, create_segment_pairs, create_single_segments
from official_bert.pretraining_data.line_tokenizer import LineTokenizer
from official_bert.pretraining_data.masking import Masker
from official_bert.pretraining_data.stats import RunStats


@dataclasses.dataclass
class BlockResult:
    """What a worker returns for a block.

    Args:
        records: serialized tf.train.Examples, already shuffled.
        stats: the block's `RunStats`.

    Example:
    >>> BlockResult([b"..."], RunStats(instances=1)).stats.instances
    1
    """

    records: list
    stats: RunStats


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


class BlockProcessor:
    """Tokenizes a `Block`, cuts each document `dupe_factor` times, masks, shuffles and encodes.

    The block's documents are the pool that random next segments come from, and its randomness is
    seeded by (random_seed, block index) alone, so the output does not depend on how many processes
    share the work. Instances are shuffled within the block (the original shuffled the whole corpus).

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
    >>> processor = BlockProcessor(FullTokenizer(path), PretrainingOptions(dupe_factor=2))
    >>> block = Block(0, [Document("x.txt", 1, ["a b", "c"]), Document("x.txt", 4, ["b c a"])])
    >>> result = processor(block)
    >>> len(result.records), result.stats.documents, result.stats.instances
    (4, 2, 4)
    """

    def __init__(self, tokenizer, options, random_seed=12345, use_v2_feature_names=False):
        vocab = tokenizer.vocab
        for token in ("[CLS]", "[SEP]", "[MASK]"):
            if token not in vocab:
                raise PretrainingDataError(f"the vocabulary has no {token} token")
        self.options = options
        self._random_seed = random_seed
        self._line_tokenizer = LineTokenizer(tokenizer)
        self._cls_id, self._sep_id = vocab["[CLS]"], vocab["[SEP]"]
        self._masker = Masker(options, len(vocab), self._cls_id, self._sep_id, vocab["[MASK]"],
                              continuation_flags(sorted(vocab, key=vocab.get)))
        self._encoder = ExampleEncoder(options.max_seq_length, options.max_predictions_per_seq, len(vocab),
                                       use_v2_feature_names)

    def __call__(self, block):
        """Returns the block's `BlockResult` (serialized tf.train.Examples)."""
        instances, stats = self.instances(block)
        return BlockResult([self._encoder.encode(instance) for instance in instances], stats)

    def instances(self, block):
        """Returns (shuffled list of `TrainingInstance`, `RunStats`) for a block."""
        stats = RunStats()
        documents = self._tokenize(block, stats)
        rng = random.Random(f"{self._random_seed}/{block.index}")
        options, cls_id, sep_id = self.options, self._cls_id, self._sep_id
        instances = []
        for _ in range(options.dupe_factor):
            for index, document in enumerate(documents):
                if options.no_nsp:
                    pairs = [(segment, None, False) for segment in create_single_segments(
                        document, options.max_num_tokens, options.short_seq_prob, rng)]
                else:
                    pairs = create_segment_pairs(documents, index, options.max_num_tokens,
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
        rng.shuffle(instances)
        stats.instances = len(instances)
        return instances, stats

    def _tokenize(self, block, stats):
        """The block's documents as lists of non-empty id lists, as the original keeps them."""
        documents = []
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
                documents.append(sentences)
                stats.documents += 1
                stats.sentences += len(sentences)
                stats.one_sentence_documents += len(sentences) == 1
        return documents
