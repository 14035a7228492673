"""Text files in, TFRecord files out, in three passes over the run, each in bounded memory.

1. Read documents in blocks; workers tokenize them; the ids go to a `TokenStore` (a temporary file).
2. Workers cut chunks of the stored documents `dupe_factor` times into masked examples, random next segments
   drawn from every document of the run, and deal the examples into shuffle buckets (temporary files).
3. Each bucket is shuffled in memory and written, round-robin, to the output files: the output order is a
   uniform shuffle of the whole run's examples, as the original's.

Temporary files are unnamed (they never appear in a directory listing and vanish with the process, even after
`kill -9`) and live beside the first output file (or in the system's temporary directory for a `scheme://`
output). Only the output files' own hidden names (`files.temporary_path`) can outlive a killed run, during
pass 3; the next run removes them first.
"""

import contextlib
import os
import tempfile

from absl import logging

from official_bert.io.files import is_remote, remove_stale_temporaries
from official_bert.io.utf8 import Utf8Decoder
from official_bert.pretraining_data.documents import iter_blocks, read_documents
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.files import write_error
from official_bert.pretraining_data.generator import Chunk
from official_bert.pretraining_data.parallel import OrderedWorkers
from official_bert.pretraining_data.progress import Progress
from official_bert.pretraining_data.sharded_writer import ShardedRecordWriter
from official_bert.pretraining_data.shuffle import BucketShuffle, num_buckets
from official_bert.pretraining_data.stats import RunStats
from official_bert.pretraining_data.token_store import TokenStore

CHUNK_VALUES = 1 << 16  # stored values (≈ tokens) per chunk of pass 2: about 256 KiB of the token store


def create_pretraining_data(input_files, output_files, generator, num_workers=1, gzip_compress=False,
                            progress=None, temp_dir=None, chunk_values=CHUNK_VALUES):
    """Writes the examples of `input_files` to `output_files` (round-robin) and returns the `RunStats`.

    The files appear only when the run succeeds; an error or interruption leaves none behind. The output is
    the same for any number of workers.

    Args:
        input_files: text files, read in order.
        output_files: TFRecord files to write.
        generator: an `InstanceGenerator`.
        num_workers: processes.
        gzip_compress: GZIP-compressed TFRecords.
        progress: a `Progress` to report to (default: one line every 10 s).
        temp_dir: where the temporary files go (default: beside the first output).
        chunk_values: size of pass 2's units of work (tests make it small).

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.pretraining_data.generator import InstanceGenerator
    >>> from official_bert.pretraining_data.options import PretrainingOptions
    >>> tmp = tempfile.mkdtemp()
    >>> vocab, corpus = os.path.join(tmp, "vocab.txt"), os.path.join(tmp, "corpus.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]))
    >>> _ = open(corpus, "w").write("a b\\nb a\\n\\nb b\\na\\n")
    >>> generator = InstanceGenerator(FullTokenizer(vocab), PretrainingOptions(dupe_factor=3))
    >>> stats = create_pretraining_data([corpus], [os.path.join(tmp, "out.tfrecord")], generator)
    >>> stats.documents, sorted(os.listdir(tmp))
    (2, ['corpus.txt', 'out.tfrecord', 'vocab.txt'])
    """
    progress = progress or Progress()
    for path in output_files:  # before this run's own temporary files need the space a killed run's hold
        remove_stale_temporaries(*os.path.split(path))
    temp_dir = temp_dir or _temporary_directory(output_files[0])
    with _temporary_writes(temp_dir):
        store = TokenStore(temp_dir)
    try:
        with OrderedWorkers(_Work(generator, store), num_workers) as workers:
            stats, chunks, estimated_bytes = _tokenize(input_files, generator, store, workers, progress,
                                                       chunk_values, temp_dir)
            buckets = num_buckets(estimated_bytes)
            logging.info("%s documents tokenized; cutting them %d times into examples (%d shuffle bucket%s)",
                         f"{stats.documents:,}", generator.options.dupe_factor, buckets, "s"[:buckets > 1])
            with _temporary_writes(temp_dir):
                shuffle = BucketShuffle(buckets, temp_dir, generator.random_seed)
            with contextlib.closing(shuffle):
                tasks = (Chunk(i, first, end, store.num_documents, buckets) for i, (first, end) in enumerate(chunks))
                for result in workers.map(tasks):
                    with _temporary_writes(temp_dir):
                        shuffle.add(result.buckets)
                    stats.add(result.stats)
                    progress.update(stats.documents, stats.instances)
                workers.close()  # their memory is free while the outputs are written
                with ShardedRecordWriter(output_files, gzip_compress) as writer:
                    writer.write_all(shuffle.records())
    finally:
        store.close()
    progress.update(stats.documents, stats.instances)
    return stats


def _tokenize(input_files, generator, store, workers, progress, chunk_values, temp_dir):
    """Pass 1. Returns (stats, [(first, end) document range of each chunk], estimated output bytes)."""
    decoder = Utf8Decoder()
    reader = _CountingReader(read_documents(input_files, decoder=decoder))
    options = generator.options
    stats = RunStats()
    chunks, first, size, count = [], 0, 0, 0
    estimated_instances = 0.0
    for block in workers.map(iter_blocks(reader)):
        with _temporary_writes(temp_dir):
            store.append(block.values, block.sizes)
        for document_size in block.sizes:
            # The original's loop makes about one instance per target length of text, more only when random
            # next segments put sentences back: twice the tokens over max_num_tokens is a safe upper bound.
            estimated_instances += max(1.0, 2 * document_size / options.max_num_tokens)
            count += 1
            size += document_size
            if size >= chunk_values:
                chunks.append((first, count))
                first, size = count, 0
        stats.add(block.stats)
        progress.update(reader.count, 0)
    if count > first:
        chunks.append((first, count))
    with _temporary_writes(temp_dir):
        store.flush()
    stats.dropped_bytes, stats.first_dropped = decoder.bad_bytes, decoder.first
    if reader.count == 0:
        raise PretrainingDataError("--input_file: the input files hold no text (every line is blank)")
    if stats.documents == 0:
        raise PretrainingDataError("--input_file: no line of the input has a token the vocabulary knows")
    if stats.documents == 1 and not options.no_nsp:
        raise PretrainingDataError(
            f"{reader.first_path}: the whole corpus is one document (no blank line between documents); random "
            "next segments must come from another document: separate documents with a blank line, or pass "
            "--no_nsp")
    return stats, chunks, estimated_instances * options.dupe_factor * generator.max_record_bytes()


class _CountingReader:
    """Passes documents through, counting them for progress lines."""

    def __init__(self, documents):
        self._documents = documents
        self.count = 0
        self.first_path = None

    def __iter__(self):
        for document in self._documents:
            self.count += 1
            self.first_path = self.first_path or document.path
            yield document


class _Work:
    """What a worker does with an item: tokenize a `Block`, or make a `Chunk`'s examples from the store."""

    def __init__(self, generator, store):
        self._generator, self._store = generator, store

    def __call__(self, item):
        if not isinstance(item, Chunk):
            return self._generator.tokenize(item)
        documents = self._store.documents(item.first, item.end)
        pool = self._store.pool(item.num_documents, item.first, documents)
        return self._generator.encode_chunk(pool, item, documents)


def _temporary_directory(output_file):
    if is_remote(output_file):
        return tempfile.gettempdir()
    directory = os.path.dirname(os.path.abspath(output_file))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise write_error(output_file, e) from None
    return directory


@contextlib.contextmanager
def _temporary_writes(directory):
    """Turns a failed write of a temporary file (a full disk, ...) into one PretrainingDataError."""
    try:
        yield
    except OSError as e:
        raise PretrainingDataError(f"cannot write temporary files in {directory}: "
                                   f"{e.strerror or e}") from None
