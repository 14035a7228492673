"""TFRecord files written round-robin under temporary names, renamed only when the run completes."""

import os

import tensorflow as tf

from official_bert.pretraining_data.errors import PretrainingDataError


def output_paths(output_file, num_output_shards=1):
    """The files named by --output_file (comma-separated) or, with N shards, PATH-0000i-of-0000N.

    >>> output_paths("a.tfrecord,b.tfrecord")
    ['a.tfrecord', 'b.tfrecord']
    >>> output_paths("out/train.tfrecord", 2)
    ['out/train.tfrecord-00000-of-00002', 'out/train.tfrecord-00001-of-00002']
    """
    paths = [p.strip() for p in output_file.split(",") if p.strip()]
    if not paths:
        raise PretrainingDataError("--output_file: no output file given")
    if num_output_shards < 1:
        raise PretrainingDataError(f"--num_output_shards={num_output_shards}: expected at least 1")
    if num_output_shards > 1:
        if len(paths) > 1:
            raise PretrainingDataError("--num_output_shards needs a single --output_file to number, "
                                       f"got {len(paths)} files")
        paths = [f"{paths[0]}-{i:05d}-of-{num_output_shards:05d}" for i in range(num_output_shards)]
    if len(set(paths)) != len(paths):
        raise PretrainingDataError(f"--output_file names a file twice: {output_file}")
    return paths


def _temporary_path(path):
    # Hidden and suffixed: globs such as out/*.tfrecord never pick up an unfinished file.
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.incomplete-{os.getpid()}")


class ShardedRecordWriter:
    """Writes records to `paths` in turn; on success renames them into place, on error deletes them.

    Args:
        paths: the final file names (their directories are created).
        gzip_compress: write GZIP-compressed TFRecords.

    Example:
    >>> import os, tempfile
    >>> out = tempfile.mkdtemp()
    >>> with ShardedRecordWriter([os.path.join(out, "a"), os.path.join(out, "b")]) as writer:
    ...     for record in (b"1", b"2", b"3"):
    ...         writer.write(record)
    >>> sorted(os.listdir(out)), writer.counts
    (['a', 'b'], [2, 1])
    """

    def __init__(self, paths, gzip_compress=False):
        self._paths = list(paths)
        self._options = "GZIP" if gzip_compress else ""
        self._writers = []
        self._next = 0
        self.counts = [0] * len(self._paths)

    def __enter__(self):
        try:
            for path in self._paths:
                directory = os.path.dirname(path)
                if directory:
                    tf.io.gfile.makedirs(directory)
                self._writers.append(tf.io.TFRecordWriter(_temporary_path(path), self._options))
        except (OSError, tf.errors.OpError) as e:
            self._discard()
            raise PretrainingDataError(f"--output_file: cannot write {path}: {e}") from None
        return self

    def write(self, record):
        self._writers[self._next].write(record)
        self.counts[self._next] += 1
        self._next = (self._next + 1) % len(self._writers)

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is not None:
            self._discard()
            return
        for writer in self._writers:
            writer.close()
        for path in self._paths:
            tf.io.gfile.rename(_temporary_path(path), path, overwrite=True)

    def _discard(self):
        for writer, path in zip(self._writers, self._paths):
            writer.close()
            tf.io.gfile.remove(_temporary_path(path))
