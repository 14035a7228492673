"""CRC-32C of the TFRecord framing equals a bit-at-a-time reference, on lengths around the block boundaries."""

import random

from official_bert.pretraining_data import tfrecord


def bitwise_crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def test_crc32c_equals_the_bitwise_reference():
    rng = random.Random(0)
    block = tfrecord._BLOCK
    lengths = [0, 1, 7, 8, 9, block - 1, block, block + 1, 3 * block + 5, 0] + [rng.randrange(600) for _ in range(20)]
    records = [bytes(rng.randrange(256) for _ in range(n)) for n in lengths] + [b"123456789", bytes(block + 3)]
    assert [int(c) for c in tfrecord.crc32c(records)] == [bitwise_crc32c(r) for r in records]
    assert int(tfrecord.crc32c([b"123456789"])[0]) == 0xE3069283
    assert list(tfrecord.crc32c([b"", b""])) == [0, 0] and len(tfrecord.crc32c([])) == 0


def test_crc32c_grows_its_tables_for_longer_records():
    rng = random.Random(1)
    records = [bytes(rng.randrange(256) for _ in range(n)) for n in (5, len(tfrecord._tables.contributions) + 3)]
    assert [int(c) for c in tfrecord.crc32c(records)] == [bitwise_crc32c(r) for r in records]
