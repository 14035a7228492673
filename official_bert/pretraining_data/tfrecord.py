"""TFRecord framing in NumPy: records in, the bytes of a TFRecord file out, without importing TensorFlow.

A TFRecord is: length (uint64, little-endian), masked CRC-32C of those 8 bytes, the data, masked CRC-32C of
the data. Importing TensorFlow costs more than the whole run on a corpus of a few MB, so the checksums are
computed here, for many records at once: CRC-32C is linear, so a record's checksum (before the standard
initial value and final XOR) is the XOR of one table entry per byte, picked by the byte and its distance from
the record's end. A gather and a few XOR reductions then frame thousands of records.
"""

import sys

import numpy as np

_POLYNOMIAL = 0x82F63B78  # CRC-32C (Castagnoli), reflected
_MASK_DELTA = 0xA282EAD8


def _byte_table():
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLYNOMIAL), table >> 1).astype(np.uint32)
    return table


_TABLE = _byte_table()


class _Tables:
    """contributions[d, b]: the CRC state that byte b leaves when d zero bytes follow it; ones[n]: the state that
    the initial 0xFFFFFFFF leaves after n bytes. Grown on demand to the longest record seen."""

    def __init__(self):
        self.contributions = _TABLE[None, :].copy()
        self.ones = np.array([0xFFFFFFFF], np.uint32)

    def grow(self, length):
        have = len(self.contributions)
        if length <= have:
            return
        length = max(length, 2 * have)
        rows = [self.contributions]
        row = self.contributions[-1]
        for _ in range(length - have):
            row = _TABLE[row & 0xFF] ^ (row >> 8)
            rows.append(row[None, :])
        self.contributions = np.concatenate(rows)
        ones = list(self.ones)
        state = int(ones[-1])
        for _ in range(length + 1 - len(ones)):
            state = int(_TABLE[state & 0xFF]) ^ (state >> 8)
            ones.append(state)
        self.ones = np.array(ones, np.uint32)


_tables = _Tables()


# Records are checksummed in blocks of _BLOCK bytes, whose table rows (128 KB) stay in cache, unlike rows for
# every distance up to the longest record; _CHUNK blocks at a time keep the gather's buffers in cache too.
_BLOCK = 128
_CHUNK = 1024
_PADDING = [bytes(n) for n in range(_BLOCK)]


def crc32c(records):
    """CRC-32C of each of `records` (bytes objects), as a uint32 array.

    Example:
    >>> hex(int(crc32c([b"123456789"])[0]))  # the standard check value
    '0xe3069283'
    """
    lengths = np.fromiter(map(len, records), np.int64, len(records))
    if not len(records):
        return np.zeros(0, np.uint32)
    _tables.grow(max(int(lengths.max()), _BLOCK))
    table = _tables.contributions.ravel()
    # Zero bytes leave a state of 0 at 0, so left-padding each record to whole blocks changes nothing.
    parts = [None] * (2 * len(records))
    parts[0::2] = [_PADDING[-len(record) % _BLOCK] for record in records]
    parts[1::2] = records
    blocks = np.frombuffer(b"".join(parts), np.uint8).reshape(-1, _BLOCK)
    # The index of table entry (distance, byte) is distance * 256 + byte, and a column's distance from its
    # block's end is fixed: writing just the bytes into each index's lowest byte is cheaper than an add.
    rows = max(1, min(_CHUNK, len(blocks)))
    index = np.empty((rows, _BLOCK), np.intp)
    index[:] = (_BLOCK - 1 - np.arange(_BLOCK)) * 256
    low_bytes = index.view(np.uint8).reshape(rows, _BLOCK, -1)[..., 0 if sys.byteorder == "little" else -1]
    values = np.empty((rows, _BLOCK), np.uint32)
    states = np.empty(len(blocks), np.uint32)
    for start in range(0, len(blocks), rows):
        n = min(rows, len(blocks) - start)
        low_bytes[:n] = blocks[start:start + n]
        np.take(table, index[:n], out=values[:n], mode="wrap")  # all in range: "wrap" only skips the check
        np.bitwise_xor.reduce(values[:n], axis=1, out=states[start:start + n])
    # A block's state, followed by D zero bytes (the later blocks' share), is the checksum of its 4 bytes
    # (little-endian) followed by D - 4 zero bytes: 4 more entries of the same table.
    counts = -(-lengths // _BLOCK)
    ends = np.cumsum(counts)
    after = (np.repeat(ends, counts) - 1 - np.arange(len(blocks))) * _BLOCK  # bytes after each block
    moved = after > 0
    state_bytes = states[moved].astype("<u4").view(np.uint8).reshape(-1, 4)
    states[moved] = np.bitwise_xor.reduce(table[(after[moved, None] - 1 - np.arange(4)) * 256 + state_bytes], axis=1)
    raw = np.zeros(len(records), np.uint32)
    nonempty = counts > 0
    if len(states):
        raw[nonempty] = np.bitwise_xor.reduceat(states, (ends - counts)[nonempty])
    return raw ^ _tables.ones[lengths] ^ np.uint32(0xFFFFFFFF)


def _masked(crc):
    crc = crc.astype(np.uint64)
    return (((crc >> np.uint64(15)) | (crc << np.uint64(17))) + np.uint64(_MASK_DELTA)).astype(np.uint32)


def frame(records):
    """Returns the TFRecord file bytes of `records`, in order.

    Example:
    >>> import os, tempfile
    >>> import tensorflow as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
    >>> _ = open(path, "wb").write(frame([b"first", b"", b"third"]))
    >>> [r.numpy() for r in tf.data.TFRecordDataset(path)]
    [b'first', b'', b'third']
    """
    return b"".join(frame_each(records))


def frame_each(records):
    """The framed form of each of `records` (header, data and footer), as a list of bytes.

    Example:
    >>> frame_each([b"ab", b"c"])[1] == frame([b"c"])
    True
    """
    if not records:
        return []
    lengths = np.fromiter(map(len, records), np.uint64, len(records))
    headers = np.empty((len(records), 12), np.uint8)
    headers[:, :8] = lengths.astype("<u8").view(np.uint8).reshape(-1, 8)
    headers[:, 8:] = _masked(_length_crcs(lengths)).astype("<u4").view(np.uint8).reshape(-1, 4)
    footers = _masked(crc32c(records)).astype("<u4").view(np.uint8).reshape(-1, 4)
    # Slices of one bytes object each: cheaper than a tobytes() call per header and footer.
    header_bytes, footer_bytes = headers.tobytes(), footers.tobytes()
    return [b"".join((header_bytes[12 * i:12 * i + 12], record, footer_bytes[4 * i:4 * i + 4]))
            for i, record in enumerate(records)]


def _length_crcs(lengths):
    """CRC-32C of each length's 8 bytes; records of a run have few distinct lengths, each checksummed once."""
    distinct, inverse = np.unique(lengths, return_inverse=True)
    return crc32c([row.tobytes() for row in distinct.astype("<u8").view(np.uint8).reshape(-1, 8)])[inverse]


def split_framed(data):
    """The framed records (header, data and footer together) of TFRecord bytes `data`, as memoryviews, without
    checking the checksums (the bytes were framed by this process or its workers).

    Example:
    >>> [bytes(r)[12:-4] for r in split_framed(frame([b"ab", b"c"]))]
    [b'ab', b'c']
    """
    view = memoryview(data)
    offsets, position = [], 0
    while position < len(data):
        offsets.append(position)
        position += 16 + int.from_bytes(view[position:position + 8], "little")
    offsets.append(position)
    return [view[start:end] for start, end in zip(offsets, offsets[1:])]
