"""A uniform shuffle of every example of a run in bounded memory: a two-pass external shuffle.

Pass one deals each example into one of `num_buckets` unnamed temporary files, uniformly at random; pass two
reads one bucket at a time, shuffles it in memory and hands its examples on. Given the bucket sizes, every
assignment of examples to buckets is equally likely and each bucket's order is uniform, so the concatenated
order is a uniform permutation, as the original's `rng.shuffle(instances)`. Memory holds one bucket.
"""

import math
import random
import resource
import tempfile

from official_bert.pretraining_data import tfrecord

BUCKET_BYTES = 64 << 20
MAX_BUCKETS = 1024


def num_buckets(estimated_bytes, bucket_bytes=BUCKET_BYTES, max_buckets=MAX_BUCKETS):
    """Buckets of about `bucket_bytes` for an output of `estimated_bytes`, at most `max_buckets` (and at most what
    the open-file limit allows: each bucket is an open file).

    >>> num_buckets(10 << 20), num_buckets(1 << 30), num_buckets(1 << 50)
    (1, 16, 1024)
    """
    wanted = max(1, min(max_buckets, math.ceil(estimated_bytes / bucket_bytes)))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted + 64:
        target = wanted + 64 if hard == resource.RLIM_INFINITY else min(hard, wanted + 64)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
        wanted = max(1, min(wanted, soft - 64))
    return wanted


class BucketShuffle:
    """Collects TFRecord-framed examples in buckets (`add`), then yields them in a uniformly random order.

    Args:
        num_buckets: see `num_buckets`.
        directory: where the unnamed temporary files live.
        random_seed: seeds each bucket's in-memory shuffle (with the bucket's number).

    Example:
    >>> shuffle = BucketShuffle(2, tempfile.gettempdir(), random_seed=1)
    >>> shuffle.add([tfrecord.frame([b"a", b"b"]), tfrecord.frame([b"c"])])
    >>> sorted(bytes(record)[12:-4] for record in shuffle.records())
    [b'a', b'b', b'c']
    """

    def __init__(self, num_buckets, directory, random_seed=12345):
        self._random_seed = random_seed
        self._files = []
        try:
            for _ in range(num_buckets):
                self._files.append(tempfile.TemporaryFile(dir=directory))
        except BaseException:
            self.close()
            raise

    def add(self, buckets):
        """Appends one string of framed records to each bucket (`buckets[i]` to bucket i)."""
        for file, data in zip(self._files, buckets):
            if data:
                file.write(data)

    def records(self):
        """Yields every framed record (a memoryview), bucket after bucket, each bucket shuffled; a bucket's file
        is closed (and its space freed) once read."""
        for index, file in enumerate(self._files):
            file.flush()
            file.seek(0)
            data = file.read()
            file.close()
            records = tfrecord.split_framed(data)
            random.Random(f"{self._random_seed}/shuffle/{index}").shuffle(records)
            yield from records
            del records, data

    def close(self):
        for file in self._files:
            file.close()
