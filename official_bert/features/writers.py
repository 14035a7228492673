"""The output formats of extract_features.py, by name."""

from official_bert.features.errors import FeatureError
from official_bert.features.jsonl import JsonlWriter
from official_bert.features.npz import NpzWriter
from official_bert.features.tfrecord import TfrecordWriter

OUTPUT_FORMATS = ("jsonl", "npz", "tfrecord")
DTYPES = ("float32", "float16")


def open_writer(output_format, path, layers, dtype="float32"):
    """The writer of `output_format` for `path`, to use as a context manager: `with ... as w: w.write(f)`.

    Args:
        output_format: one of `OUTPUT_FORMATS`: "jsonl" is the original's output (values rounded to 6
            decimals, `dtype` does not apply); "npz" and "tfrecord" hold binary arrays of `dtype`.
        path: the output file.
        layers: the layer indexes of the values.
        dtype: one of `DTYPES`.

    Example:
    >>> type(open_writer("npz", "features.npz", [-1], "float16")).__name__
    'NpzWriter'
    """
    if dtype not in DTYPES:
        raise FeatureError(f"--output_dtype={dtype}: expected one of {', '.join(DTYPES)}")
    if output_format == "jsonl":
        return JsonlWriter(path, layers)
    if output_format == "npz":
        return NpzWriter(path, layers, dtype)
    if output_format == "tfrecord":
        return TfrecordWriter(path, layers, dtype)
    raise FeatureError(f"--output_format={output_format}: expected one of {', '.join(OUTPUT_FORMATS)}")
