"""Serializes a TrainingInstance as a tf.train.Example, writing the protobuf wire format directly.

Building a tf.train.Example message costs more than creating the instance did; the bytes written here
parse to the same message (tests compare them), and workers need no TensorFlow.
"""

V1_NAMES = ("input_ids", "input_mask", "segment_ids")
V2_NAMES = ("input_word_ids", "input_mask", "input_type_ids")  # Model Garden's names
_FLOAT_ONE = b"\x00\x00\x80\x3f"  # 1.0 as a little-endian float32


def _varint(value):
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag, payload):
    """A length-delimited field: tag byte, length, payload."""
    return bytes((tag,)) + _varint(len(payload)) + payload


class _FeatureHeader:
    """The bytes of a Features map entry that come before a packed list of `length` bytes.

    Entry = key field + value field (a Feature holding an Int64List or FloatList whose packed values
    are the payload); every length prefix depends only on the payload's length, so headers are cached.
    """

    def __init__(self, name, list_tag):
        self._key = _field(0x0A, name.encode())
        self._list_tag = list_tag  # Feature.float_list is field 2, Feature.int64_list field 3
        self._cache = {}

    def __call__(self, length):
        header = self._cache.get(length)
        if header is None:
            packed = b"\x0A" + _varint(length)
            typed = bytes((self._list_tag,)) + _varint(len(packed) + length)
            value = b"\x12" + _varint(len(typed) + len(packed) + length)
            body = len(self._key) + len(value) + len(typed) + len(packed) + length
            header = self._cache[length] = b"\x0A" + _varint(body) + self._key + value + typed + packed
        return header


class ExampleEncoder:
    """Encodes instances with the original's features: ids, mask and segments int64[T]; masked_lm_positions
    and masked_lm_ids int64[P]; masked_lm_weights float[P] (1.0 real, 0.0 padding); next_sentence_labels int64[1].

    Args:
        max_seq_length: T; shorter sequences are padded with 0.
        max_predictions_per_seq: P; fewer predictions are padded with 0 (weight 0.0).
        vocab_size: ids are below this.
        use_v2_feature_names: name ids and segments input_word_ids and input_type_ids (Model Garden).

    Example:
    >>> from official_bert.pretraining_data.instances import TrainingInstance
    >>> encoder = ExampleEncoder(max_seq_length=6, max_predictions_per_seq=2, vocab_size=10)
    >>> data = encoder.encode(TrainingInstance([2, 4, 3, 7, 3], 3, [1], [5], True))
    >>> import tensorflow as tf
    >>> features = tf.train.Example.FromString(data).features.feature
    >>> list(features["input_ids"].int64_list.value), list(features["segment_ids"].int64_list.value)
    ([2, 4, 3, 7, 3, 0], [0, 0, 0, 1, 1, 0])
    >>> list(features["masked_lm_weights"].float_list.value)
    [1.0, 0.0]
    >>> list(features["next_sentence_labels"].int64_list.value)
    [1]
    """

    def __init__(self, max_seq_length, max_predictions_per_seq, vocab_size, use_v2_feature_names=False):
        self._length = max_seq_length
        self._predictions = max_predictions_per_seq
        # A list: map() calls list.__getitem__ several times faster than tuple.__getitem__ (a slot wrapper).
        self._varints = [_varint(i) for i in range(max(vocab_size, max_seq_length))]
        ids_name, mask_name, segment_name = V2_NAMES if use_v2_feature_names else V1_NAMES
        self._ids = _FeatureHeader(ids_name, 0x1A)
        self._positions = _FeatureHeader("masked_lm_positions", 0x1A)
        self._labels = _FeatureHeader("masked_lm_ids", 0x1A)
        self._mask = _FeatureHeader(mask_name, 0x1A)(max_seq_length)
        self._segments = _FeatureHeader(segment_name, 0x1A)(max_seq_length)
        self._weights = _FeatureHeader("masked_lm_weights", 0x12)(4 * max_predictions_per_seq)
        nsp = _FeatureHeader("next_sentence_labels", 0x1A)(1)
        self._nsp = (nsp + b"\x00", nsp + b"\x01")

    def encode(self, instance):
        """Returns the serialized tf.train.Example of a `TrainingInstance`."""
        varint = self._varints.__getitem__
        n, a = len(instance.input_ids), instance.segment_a_length
        k = len(instance.masked_lm_positions)
        zeros, zero_predictions = b"\x00" * (self._length - n), b"\x00" * (self._predictions - k)
        ids = b"".join(map(varint, instance.input_ids)) + zeros
        positions = b"".join(map(varint, instance.masked_lm_positions)) + zero_predictions
        labels = b"".join(map(varint, instance.masked_lm_ids)) + zero_predictions
        features = b"".join((
            self._ids(len(ids)), ids,
            self._mask, b"\x01" * n, zeros,
            self._segments, b"\x00" * a, b"\x01" * (n - a), zeros,
            self._positions(len(positions)), positions,
            self._labels(len(labels)), labels,
            self._weights, _FLOAT_ONE * k, zero_predictions * 4,
            self._nsp[instance.is_random_next]))
        return b"\x0A" + _varint(len(features)) + features
