"""TFRecord files written round-robin under temporary names (`files.temporary_path`), renamed only when the run
completes; the temporaries a killed run left of the same files are removed first."""

import gzip
import os

from official_bert.io import files
from official_bert.io.files import temporary_path
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.files import write_error


def output_paths(output_file, num_output_shards=1):
    """The files named by --output_file (comma-separated) or, with N shards, PATH-0000i-of-0000N.

    >>> output_paths("a.tfrecord,b.tfrecord")
    ['a.tfrecord', 'b.tfrecord']
    >>> output_paths("out/train.tfrecord", 2)
    ['out/train.tfrecord-00000-of-00002', 'out/train.tfrecord-00001-of-00002']
    """
    paths = [p.strip() for p in (output_file or "").split(",") if p.strip()]
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


class ShardedRecordWriter:
    """Writes TFRecord-framed records to `paths` in turn; on success renames them into place, on error deletes them.

    Args:
        paths: the final file names (their directories are created).
        gzip_compress: write GZIP-compressed TFRecords.

    Example:
    >>> import os, tempfile
    >>> from official_bert.pretraining_data import tfrecord
    >>> out = tempfile.mkdtemp()
    >>> with ShardedRecordWriter([os.path.join(out, "a"), os.path.join(out, "b")]) as writer:
    ...     for record in (b"1", b"2", b"3"):
    ...         writer.write(tfrecord.frame([record]))
    >>> sorted(os.listdir(out)), writer.counts
    (['a', 'b'], [2, 1])
    """

    def __init__(self, paths, gzip_compress=False):
        self._paths = list(paths)
        self._gzip = gzip_compress
        self._files = []  # what records are written to: the raw files, or gzip streams over them
        self._raw = []
        self._next = 0
        self.counts = [0] * len(self._paths)

    def __enter__(self):
        path = self._paths[0]
        try:
            for path in self._paths:
                directory = os.path.dirname(path)
                if directory:
                    files.makedirs(directory)
                files.remove_stale_temporaries(directory, os.path.basename(path))
                raw = files.open_file(temporary_path(path), "wb")
                self._raw.append(raw)
                # No name and no time in the gzip header: the bytes depend on the records alone.
                self._files.append(gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=raw, mtime=0)
                                   if self._gzip else raw)
        except Exception as e:
            self._discard()
            raise write_error(path, e) from None
        return self

    def write(self, framed_record):
        """Appends one record, already framed (`tfrecord.frame`)."""
        self.write_all([framed_record])

    def write_all(self, framed_records, records_per_write=4096):
        """Appends each record of an iterable, round-robin as `write` does, joining up to `records_per_write` of a
        file's records into one write (a call per record cost more than making the record did)."""
        pending = [[] for _ in self._files]
        for record in framed_records:
            shard = self._next
            pending[shard].append(record)
            self._next = (shard + 1) % len(self._files)
            if len(pending[shard]) == records_per_write:
                self._write(shard, pending[shard])
        for shard, records in enumerate(pending):
            if records:
                self._write(shard, records)

    def _write(self, shard, records):
        try:
            self._files[shard].write(b"".join(records))
        except Exception as e:
            raise write_error(self._paths[shard], e) from None
        self.counts[shard] += len(records)
        records.clear()

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is not None:
            self._discard()
            return
        path = self._paths[0]
        try:
            for file in self._files + self._raw:
                file.close()  # a GzipFile leaves the file it writes to open
            for path in self._paths:
                files.rename(temporary_path(path), path)
        except Exception as e:
            self._discard()
            raise write_error(path, e) from None

    def _discard(self):
        for file in self._files + self._raw:
            try:
                file.close()
            except Exception:  # the disk that failed a write may fail the flush too: the file goes anyway
                pass
        for path in self._paths:
            files.remove(temporary_path(path))

