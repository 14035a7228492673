"""Text files in, TFRecord files out: read, group into blocks, process in parallel, write in order."""

from official_bert.pretraining_data.documents import PoolConfig, iter_blocks, read_documents
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.parallel import OrderedWorkers
from official_bert.pretraining_data.progress import Progress
from official_bert.pretraining_data.sharded_writer import ShardedRecordWriter
from official_bert.pretraining_data.stats import RunStats


def create_pretraining_data(input_files, output_files, processor, num_workers=1, gzip_compress=False,
                            pool=PoolConfig(), progress=None):
    """Writes the examples of `input_files` to `output_files` (round-robin) and returns the `RunStats`.

    Memory holds at most 2 × num_workers blocks in flight (see `PoolConfig`), whatever the corpus size.
    The files appear only when the run succeeds; an error or interruption leaves none behind.

    Args:
        input_files: text files, read in order.
        output_files: TFRecord files to write.
        processor: a `BlockProcessor`.
        num_workers: processes; the output is the same for any number.
        gzip_compress: GZIP-compressed TFRecords.
        pool: block sizes.
        progress: a `Progress` to report to (default: one line every 10 s).

    Example:
    >>> import os, tempfile
    >>> from official_bert.tokenization import FullTokenizer
    >>> from official_bert.pretraining_data.block_processor import BlockProcessor
    >>> from official_bert.pretraining_data.options import PretrainingOptions
    >>> tmp = tempfile.mkdtemp()
    >>> vocab, corpus = os.path.join(tmp, "vocab.txt"), os.path.join(tmp, "corpus.txt")
    >>> _ = open(vocab, "w").write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]))
    >>> _ = open(corpus, "w").write("a b\\nb a\\n\\nb b\\na\\n")
    >>> processor = BlockProcessor(FullTokenizer(vocab), PretrainingOptions(dupe_factor=3))
    >>> stats = create_pretraining_data([corpus], [os.path.join(tmp, "out.tfrecord")], processor)
    >>> stats.documents, stats.instances, sorted(os.listdir(tmp))
    (2, 8, ['corpus.txt', 'out.tfrecord', 'vocab.txt'])
    """
    progress = progress or Progress()
    reader = _CountingReader(read_documents(input_files, pool.max_document_bytes))
    blocks = iter_blocks(reader, pool, require_two_documents=not processor.options.no_nsp)
    stats = RunStats()
    with OrderedWorkers(processor, num_workers) as workers, \
            ShardedRecordWriter(output_files, gzip_compress) as writer:
        for result in workers.map(blocks):
            for record in result.records:
                writer.write(record)
            stats.add(result.stats)
            progress.update(reader.count, stats.instances)
        if stats.instances == 0:
            raise PretrainingDataError("--input_file: no line of the input has a token the vocabulary knows")
    return stats


class _CountingReader:
    """Passes documents through, counting them for progress lines."""

    def __init__(self, documents):
        self._documents = documents
        self.count = 0

    def __iter__(self):
        for document in self._documents:
            self.count += 1
            yield document
