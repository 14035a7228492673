"""An exported SavedModel run over data files: every row in input order, streamed, resumable.

`predict_files` reads CSV, TSV, JSON Lines or plain-text files (`io.table_files`) as rows, calls the SavedModel's
raw-text signature (`serving_default`) on batches of them, and writes one output row per input row, in input
order: its id, the columns asked to be kept and the model's answer made readable (`ServedModel`): a classifier's
label and a probability per label, SQuAD's answer and score, NER's entities, an embedding's vector.

How it stays fast and bounded:

- rows are taken in windows of `window` rows (numbered from the start of the input, whatever the batch size);
  within a window, rows are sorted by length and cut into batches of `batch_size`, so that a batch's rows are
  padded to similar lengths, then written back in input order;
- a reader thread parses the next window and a writer thread formats the last while the model runs (TensorFlow
  lets go of Python's lock while it computes), with at most two windows waiting at each hand-over, so memory holds
  a few windows whatever the file's size.

Ids: a row's id is its value in the input's `id` column when every input file has one (or in the column
`id_column` names), else its number in its file (`FILE:NUMBER` over several files). Ids are written as they are:
rows with the same id each come out once, in input order.

Columns are checked per file before any row is read: an `id_column` or a kept column (`keep_columns`) that a file
lacks (its header, or a JSON Lines file's first object) is refused naming the file and listing its columns, and a
plain-text file has no columns to keep or take ids from. A kept column named like an output field (id, label, ...)
is written as input_<name>, which the run says; names that still collide (`label` and `input_label` both kept) are
refused: no value is ever dropped and no CSV has a column twice. A bad row (an empty text, a missing cell) stops the
run, or with on_error="skip" goes to the errors file; a run whose every row is bad is an error, not an empty output.

One run per output: a run holds the lock file `.<name>.lock` beside the output (`io.locks.output_file_lock`), and
a second run on the same output refuses in one line naming the first (pid, host). Before that, the output guard
(`io.guard`) refuses an output or errors file that is an input, that the input glob matches, that lies inside the
model, or that is a directory.

Resuming: the output is written to a partial file beside the final one (`.<name>.partial`, or a local directory
for a remote output), and after each window a state file records how many input rows and output bytes are
complete. Rerun with the same inputs, model and settings after a kill or Ctrl-C, it truncates the partial file to
the last complete window and continues from the next row: no row is written twice, and since windows start at the
same rows, the batches and so the bytes are those of an uninterrupted run. The final name appears only when every
row is written (a rename). Inputs and model are recognized by their content, not their paths: a model exported
again to the same directory, or an input rewritten in place, starts over (saying so in one line). The model's
content is its saved_model.pb, its variables' index (which holds a checksum of every weight) and its assets; a
local input's is its bytes, a remote one's its size and modification time (not read twice). The inputs are
fingerprinted again once read: an input rewritten, truncated or appended to during the run is refused, and the
output not written.
"""

import collections
import dataclasses
import hashlib
import json
import os
import queue
import tempfile
import threading
import time

import numpy as np
import tensorflow as tf

from official_bert.errors import Error, Interrupted
from official_bert.export.tflite import saved_model_version
from official_bert.io import guard
from official_bert.io.atomic import atomic_path, write_text
from official_bert.io.files import is_remote
from official_bert.io.locks import output_file_lock
from official_bert.io.paths import files_under, hash_file
from official_bert.io.table_files import (TableFileError, check_table_file, describe_columns, read_columns, read_rows,
                                          table_format)

OUTPUT_FORMATS = ("jsonl", "csv")
ON_ERROR = ("fail", "skip")
# A pair classifier packs a row whose second text is empty as a single sentence: an empty text_b is no error.
OPTIONAL_INPUTS = ("text_b",)
_NER_OUTPUTS = ("entity_type", "entity_text", "entity_start", "entity_end")
ID_COLUMN = "id"  # the input column that holds the rows' ids, where every input file has it
_DECIMALS = 6


class PredictionError(Error):
    """Input that cannot be predicted: a bad flag, a missing column, a bad row under --on_error=fail."""


@dataclasses.dataclass(frozen=True)
class PredictionSummary:
    """What `predict_files` did.

    Args:
        rows: input rows read (resumed ones included) ...
        written: ... rows written to the output ...
        skipped: ... and rows written to the errors file instead (--on_error=skip).
        resumed_from: the number of rows a previous, killed run had completed (0 for a fresh run).
        seconds: this run's time ...
        load_seconds: ... of which loading the SavedModel and its first call (TensorFlow's one-time set-up of the
            graph) took this much.
        output_file, errors_file: the outputs (errors_file None without skipped rows).
    """

    rows: int
    written: int
    skipped: int
    resumed_from: int
    seconds: float
    load_seconds: float
    output_file: str
    errors_file: str = None


class ServedModel:
    """A SavedModel's raw-text signature, called on batches of strings, its outputs turned into readable rows.

    Args:
        saved_model_dir: a SavedModel, or an export directory (its newest version).
        signature: the signature to call: every input a string [batch].

    Example:
    >>> import tempfile
    >>> module = tf.Module()
    >>> @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    ... def embed(text):
    ...     return {"embedding": tf.stack([tf.cast(tf.strings.length(text), tf.float32), tf.fill(tf.shape(text), 0.5)],
    ...                                   axis=1)}
    >>> module.f = embed
    >>> path = tempfile.mkdtemp()
    >>> tf.saved_model.save(module, path, signatures={"serving_default": embed.get_concrete_function()})
    >>> model = ServedModel(path)
    >>> model.inputs, model.kind
    (('text',), 'embedding')
    >>> model.predict({"text": ["abc", "hello"]})
    [{'embedding': [3.0, 0.5]}, {'embedding': [5.0, 0.5]}]
    """

    def __init__(self, saved_model_dir, signature="serving_default"):
        self.path = saved_model_version(saved_model_dir)
        self._loaded = _load(self.path)
        if signature not in self._loaded.signatures:
            raise PredictionError(f"--signature={signature}: {self.path} has no such signature; it has "
                                  + (", ".join(sorted(self._loaded.signatures)) or "none"))
        self._function = self._loaded.signatures[signature]
        specs = self._function.structured_input_signature[1]
        for name, spec in sorted(specs.items()):
            if spec.dtype != tf.string or spec.shape.rank != 1:
                raise PredictionError(f"--signature={signature}: its input {name} is {spec.dtype.name} "
                                      f"{spec.shape.as_list()}; bert-predict feeds text, one string per row")
        self.inputs = tuple(sorted(specs))
        self._warm_up()
        outputs = self._function.structured_outputs
        self.kind = ("classifier" if {"label", "probabilities"} <= set(outputs) else
                     "squad" if {"answer", "score"} <= set(outputs) else
                     "ner" if set(_NER_OUTPUTS) <= set(outputs) else
                     "embedding" if set(outputs) == {"embedding"} else
                     "regression" if set(outputs) == {"score"} else "outputs")
        self.output_names = tuple(sorted(outputs))
        self.answer_fields = {"classifier": ("label", "probabilities"), "squad": ("answer", "score", "null_odds"),
                              "ner": ("entities",), "embedding": ("embedding",),
                              "regression": ("score",)}.get(self.kind, self.output_names)
        width = outputs["probabilities"].shape[-1] if self.kind == "classifier" else None
        self._label_candidates = _string_constants(self.path, width) if width else []
        self.labels = None

    def _warm_up(self):
        """Calls the signature once on a one-word row: TensorFlow instantiates and optimizes a function's graph at
        its first call (about a second for any BERT export on 2 cores, most of a BERT-tiny's 600-row run), so that
        becomes part of loading, as TF Serving's warm-up requests make it, and the rows' rate is the model's. An
        error here is left to the rows, which report it in their context."""
        try:
            self._function(**{name: tf.constant(["a"]) for name in self.inputs})
        except tf.errors.OpError:
            pass

    def predict(self, texts):
        """{input: [str] * B} → B readable dicts (see the module's docstring), in row order."""
        outputs = {name: value.numpy() for name, value in self._function(
            **{name: tf.constant(texts[name], tf.string) for name in self.inputs}).items()}
        return getattr(self, f"_{self.kind}")(outputs)

    def _classifier(self, out):
        if self.labels is None:
            self.labels = self._label_names(out)
        if self.labels is None:
            return [{"label": _text(label), "probabilities": _floats(p)}
                    for label, p in zip(out["label"], out["probabilities"])]
        return [{"label": _text(label), "probabilities": dict(zip(self.labels, _floats(p)))}
                for label, p in zip(out["label"], out["probabilities"])]

    def _label_names(self, out):
        """The label strings in id order: the export's constant of that many strings that names every
        row's argmax as its label (or None: probabilities are then a list in id order)."""
        best = np.argmax(out["probabilities"], axis=-1)
        for candidate in self._label_candidates:
            if all(candidate[i] == _text(label) for i, label in zip(best, out["label"])):
                return candidate
        self._label_candidates = []
        return None

    @staticmethod
    def _regression(out):
        return [{"score": _float(s)} for s in out["score"]]

    @staticmethod
    def _squad(out):
        extra = [name for name in ("null_odds",) if name in out]
        return [{"answer": _text(out["answer"][i]), "score": _float(out["score"][i]),
                 **{name: _float(out[name][i]) for name in extra}} for i in range(len(out["answer"]))]

    @staticmethod
    def _ner(out):
        rows = []
        for types, texts, starts, ends in zip(*(out[name] for name in _NER_OUTPUTS)):
            rows.append({"entities": [{"type": _text(t), "text": _text(x), "start": int(s), "end": int(e)}
                                      for t, x, s, e in zip(types, texts, starts, ends) if t]})
        return rows

    @staticmethod
    def _embedding(out):
        return [{"embedding": _floats(v)} for v in out["embedding"]]

    def _outputs(self, out):
        size = max(len(v) for v in out.values() if v.ndim)
        return [{name: _readable(out[name][i] if out[name].ndim and len(out[name]) == size else out[name])
                 for name in self.output_names} for i in range(size)]


def _load(path):
    try:
        return tf.saved_model.load(path)
    except RuntimeError as e:
        if "Op type not registered" not in str(e):
            raise PredictionError(f"{path}: cannot load the SavedModel ({str(e).splitlines()[0]})") from None
    from official_bert.text.tf_text_import import import_tf_text

    import_tf_text(f"{path} (a SavedModel with tensorflow-text ops)")
    return tf.saved_model.load(path)


def _string_constants(path, width):
    """The rank-1 string constants of `width` strings that a SavedModel's graph captures (a classifier's labels
    among them), read from saved_model.pb."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved_model = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(os.path.join(path, "saved_model.pb"), "rb") as f:
        saved_model.ParseFromString(f.read())
    found = []
    for node in saved_model.meta_graphs[0].graph_def.node:
        if node.op == "Const" and node.attr["dtype"].type == tf.string.as_datatype_enum:
            shape = [d.size for d in node.attr["value"].tensor.tensor_shape.dim]
            if shape == [width]:
                found.append([_text(v) for v in tf.make_ndarray(node.attr["value"].tensor)])
    return found


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _float(value):
    return round(float(value), _DECIMALS)


def _floats(values):
    return [round(v, _DECIMALS) for v in np.asarray(values, np.float64).tolist()]


def _readable(value):
    if isinstance(value, np.ndarray):
        return [_readable(v) for v in value]
    if isinstance(value, bytes):
        return _text(value)
    if isinstance(value, np.floating):
        return _float(value)
    return value.item() if isinstance(value, np.generic) else value


# One input row as the pipeline carries it: its place in the input (counted over every file from 0), id, the
# kept columns, the texts per signature input, or why it cannot be predicted.
_Row = collections.namedtuple("_Row", ["index", "file", "number", "id", "kept", "texts", "error", "raw"])


def input_files(pattern):
    """The files a glob (or a comma-separated list of globs) matches, sorted, each pattern matching at least one.

    Example:
    >>> import tempfile
    >>> work = tempfile.mkdtemp()
    >>> for name in ("b.csv", "a.csv"):
    ...     _ = open(os.path.join(work, name), "w").write("text\\nhi\\n")
    >>> [os.path.basename(p) for p in input_files(os.path.join(work, "*.csv"))]
    ['a.csv', 'b.csv']
    """
    files = []
    for part in (p.strip() for p in os.fspath(pattern).split(",")):
        found = sorted(tf.io.gfile.glob(part)) if part else []
        matched = [p for p in found if not tf.io.gfile.isdir(p)]
        if not matched and part and (found or tf.io.gfile.isdir(part)):
            directory = (found or [part])[0].rstrip("/")
            what = "is a directory" if len(found) <= 1 else f"matches directories only ({', '.join(found[:3])}...)"
            raise PredictionError(f"--input_file={pattern}: {part} {what}; expected files: give a glob of the files "
                                  f"in it, e.g. {os.path.join(directory, '*.csv')}")
        if not matched:
            raise PredictionError(f"--input_file={pattern}: {part or '(empty)'} matches no file")
        files += [p for p in matched if p not in files]
    return files


def _column_map(model, files, input_format, columns):
    """input → column: --columns's NAME=COLUMN pairs, else the column of the input's name, else (one input,
    a file with a 'text' column) 'text'."""
    mapping = dict(columns or {})
    unknown = sorted(set(mapping) - set(model.inputs))
    if unknown:
        raise PredictionError(f"--columns: the signature has no input {unknown[0]!r}; its inputs: "
                              f"{', '.join(model.inputs)}")
    header = read_columns(files[0], input_format)
    for name in model.inputs:
        if name not in mapping:
            mapping[name] = name if name in header or len(model.inputs) > 1 or "text" not in header else "text"
    for path in files:
        if table_format(path, input_format) in ("csv", "tsv"):
            header = read_columns(path, input_format)
            for name, column in sorted(mapping.items()):
                if column not in header and name not in OPTIONAL_INPUTS:
                    raise PredictionError(f"{path}: no column {column!r} for the input {name} "
                                          f"({describe_columns(header, column)}); name it with --columns={name}=COLUMN")
    return mapping


def kept_names(keep, model, output_format):
    """The output names of the kept input columns `keep`: a column named like one of the output's own (the id, an
    answer field, a CSV output column, a classifier's probability_<label>) as input_<name>, others as they are.

    Raises:
        PredictionError: a column kept twice, or two names that would still be one (label and input_label), which
            would drop a value (JSON Lines) or write a column twice (CSV).

    Example:
    >>> from types import SimpleNamespace
    >>> classifier = SimpleNamespace(kind="classifier", answer_fields=("label", "probabilities"))
    >>> kept_names(["date", "label"], classifier, "csv")
    ('date', 'input_label')
    >>> kept_names(["label", "input_label"], classifier, "jsonl")
    Traceback (most recent call last):
    ...
    official_bert.export.file_prediction.PredictionError: --keep_columns=label,input_label: the columns 'label' \
(written as 'input_label': the output has its own 'label') and 'input_label' would both be written as 'input_label': \
keep one of them, or rename one in the input
    """
    flag = f"--keep_columns={','.join(keep)}"
    repeated = [column for i, column in enumerate(keep) if column in keep[:i]]
    if repeated:
        raise PredictionError(f"{flag}: names the column {repeated[0]!r} twice")
    taken = {"id", *model.answer_fields}
    if output_format == "csv":
        taken |= set(_Formatter.static_columns(model))
    probabilities = output_format == "csv" and model.kind == "classifier"  # its probability_<label> columns
    names = [f"input_{column}" if column in taken or probabilities and column.startswith("probability_") else column
             for column in keep]

    def shown(column, name):
        return repr(column) if column == name else f"{column!r} (written as {name!r}: the output has its own " \
                                                   f"{column!r})"

    for i, (column, name) in enumerate(zip(keep, names)):
        if name in names[:i]:
            first = names.index(name)
            raise PredictionError(f"{flag}: the columns {shown(keep[first], name)} and {shown(column, name)} would "
                                  f"both be written as {name!r}: keep one of them, or rename one in the input")
        if name in taken:
            raise PredictionError(f"{flag}: the column {shown(column, name)} would be written as {name!r}, a name "
                                  "the output has too: rename it in the input")
    return tuple(names)


def _check_columns(files, input_format, keep, id_column):
    """Refuses, before any row is read, an id or kept column that an input file lacks, and a plain-text input
    given either (it has no columns)."""
    wanted = [(column, "to keep (--keep_columns)") for column in keep]
    if id_column:
        wanted.append((id_column, "for the ids (--id_column)"))
    for path in files if wanted else ():
        if table_format(path, input_format) == "text":
            flags = sorted({flag for _, flag in wanted})
            raise PredictionError(f"{path}: plain text has no columns (one text per line), so none "
                                  f"{' or '.join(flags)}; give a CSV, TSV or JSON Lines file for those")
        columns = read_columns(path, input_format)
        for column, purpose in wanted:
            if column not in columns:
                raise PredictionError(f"{path}: no column {column!r} {purpose} ({describe_columns(columns, column)})")


def _rows(files, input_format, mapping, id_column, keep, start):
    """Yields every input row as a `_Row`, numbered over all files from 0; the first `start` as None (a resumed
    run skips them, reading them only to find where it was)."""
    index = 0
    several = len(files) > 1
    for path in files:
        for number, row in read_rows(path, input_format):
            if index < start:
                yield None
                index += 1
                continue
            error = None
            texts = {}
            for name, column in mapping.items():
                value = row.get(column)
                if value is None and name in OPTIONAL_INPUTS:
                    value = ""
                if value is None:
                    error = f"no column {column!r} (for the input {name})"
                elif not isinstance(value, str):
                    error = f"the column {column!r} holds {type(value).__name__} {json.dumps(value)[:40]}, not text"
                elif not value.strip() and name not in OPTIONAL_INPUTS:
                    error = f"the column {column!r} is empty"
                if error:
                    break
                texts[name] = value
            if id_column and not error and row.get(id_column) in (None, ""):
                error = f"no id in the column {id_column!r}"
            row_id = (row.get(id_column) if id_column else
                      f"{os.path.basename(path)}:{number}" if several else number)
            kept = {}
            for column in keep:
                if column not in row and not error:
                    error = f"no column {column!r} (--keep_columns)"
                kept[column] = row.get(column)
            yield _Row(index, path, number, row_id, kept, texts, error, row if error else None)
            index += 1


def _windows(rows, size):
    window = []
    for row in rows:
        window.append(row)
        if len(window) == size:
            yield window
            window = []
    if window:
        yield window


class _Output:
    """The partial output files of a run and its state; `finish` renames them to the final names.

    `identity` ({"model", "inputs", "settings"}: hashes) says what the rows are of: a state of other ones is not
    continued, and `restarted` then says what changed."""

    def __init__(self, output_file, errors_file, identity):
        self.output_file, self.errors_file = output_file, errors_file
        if is_remote(output_file):
            key = hashlib.sha1(output_file.encode()).hexdigest()[:16]
            directory = os.path.join(tempfile.gettempdir(), "official_bert_predict", key)
        else:
            directory = os.path.dirname(os.path.abspath(output_file))
        os.makedirs(directory, exist_ok=True)
        name = os.path.basename(output_file)
        self.partial = os.path.join(directory, f".{name}.partial")
        self.errors_partial = os.path.join(directory, f".{name}.errors.partial")
        self.state_file = os.path.join(directory, f".{name}.partial.json")
        self.identity = identity
        self.restarted = None
        state = self._state()
        self.rows = state["rows"] if state else 0
        self.written = state["written"] if state else 0
        self.skipped = state["skipped"] if state else 0
        self._out = open(self.partial, "r+b" if state else "wb")
        self._errors = open(self.errors_partial, "r+b" if state else "wb")
        if state:
            self._out.truncate(state["bytes"])
            self._errors.truncate(state["error_bytes"])
        self._out.seek(0, os.SEEK_END)
        self._errors.seek(0, os.SEEK_END)

    def saved(self):
        """The state file's record (rows, written, ...: what a rerun continues after), or None."""
        try:
            with open(self.state_file, encoding="utf-8") as f:
                state = json.load(f)
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) else None

    def _state(self):
        """The state a previous run of the same work left, if its files are there to continue."""
        state = self.saved()
        if state is None:
            return None
        complete = all(os.path.exists(path) and os.path.getsize(path) >= state.get(size, float("inf"))
                       for path, size in ((self.partial, "bytes"), (self.errors_partial, "error_bytes")))
        changed = [what for what in ("model", "inputs", "settings")
                   if state.get("identity", {}).get(what) != self.identity[what]]
        if complete and not changed:
            return state
        done = f"the {state.get('rows', 0):,} rows an interrupted run did are not continued"
        self.restarted = (f"{done}: its partial output is incomplete" if not changed else
                          f"{done}: the model is another one (the same path, new content)" if changed[0] == "model" else
                          f"{done}: the input files changed" if changed[0] == "inputs" else
                          f"{done}: its flags were others")
        return None

    def write(self, data, errors, rows, written, skipped):
        """Appends a window's bytes, then records the rows complete (the state after the data: a kill between
        the two leaves bytes beyond the state, which the next run truncates)."""
        self._out.write(data)
        self._errors.write(errors)
        self._out.flush()
        self._errors.flush()
        os.fsync(self._out.fileno())
        os.fsync(self._errors.fileno())
        self.rows, self.written, self.skipped = rows, written, skipped
        write_text(self.state_file, json.dumps({
            "identity": self.identity, "rows": rows, "written": written, "skipped": skipped,
            "bytes": self._out.tell(), "error_bytes": self._errors.tell()}))

    def finish(self):
        """Moves the complete output (and the errors file, if any row was skipped) to their final names."""
        self._out.close()
        self._errors.close()
        _move(self.partial, self.output_file)
        if self.skipped:
            _move(self.errors_partial, self.errors_file)
        else:
            os.remove(self.errors_partial)
        os.remove(self.state_file)

    def close(self):
        self._out.close()
        self._errors.close()

    def discard(self):
        self.close()
        for path in (self.partial, self.errors_partial, self.state_file):
            if os.path.exists(path):
                os.remove(path)


def _move(local, target):
    if is_remote(target):
        with atomic_path(target) as tmp:
            tf.io.gfile.copy(local, tmp, overwrite=True)
        os.remove(local)
    else:
        os.replace(local, target)


class _Formatter:
    """Output rows as bytes: JSON Lines, or CSV with a header of the id, the kept columns and the outputs."""

    def __init__(self, output_format, keep, model):
        self.output_format, self.keep, self.model = output_format, tuple(keep), model
        self.kept_names = kept_names(self.keep, model, output_format)

    def header(self):
        if self.output_format != "csv":
            return b""
        return _csv_line(["id", *self.kept_names, *self._output_columns()])

    def _output_columns(self):
        model = self.model
        if model.kind == "classifier":
            return ["label"] + ([f"probability_{label}" for label in model.labels] if model.labels else
                                ["probabilities"])
        return self.static_columns(model)

    @staticmethod
    def static_columns(model):
        """The CSV output's columns known before the first batch (a classifier's probability_<label> columns are
        named once its labels are found)."""
        if model.kind == "classifier":
            return ["label", "probabilities"]
        return {"squad": ["answer", "score"], "ner": ["entities"], "embedding": ["embedding"],
                "regression": ["score"]}.get(model.kind, list(model.output_names))

    def row(self, row, answer):
        if self.output_format == "jsonl":
            kept = {name: row.kept[column] for name, column in zip(self.kept_names, self.keep)}
            return (json.dumps({"id": row.id, **kept, **answer}, ensure_ascii=False) + "\n").encode("utf-8")
        values = [row.id, *(row.kept[c] for c in self.keep)]
        if self.model.kind == "classifier" and self.model.labels:
            values += [answer["label"], *(answer["probabilities"][label] for label in self.model.labels)]
        else:
            values += [answer.get(c) for c in self._output_columns()]
        return _csv_line(values)


def _csv_line(values):
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(
        [v if isinstance(v, str) else "" if v is None else json.dumps(v, ensure_ascii=False) for v in values])
    return buffer.getvalue().encode("utf-8")


def _error_line(row):
    return (json.dumps({"file": row.file, "row": row.number, "error": row.error, "input": row.raw},
                       ensure_ascii=False) + "\n").encode("utf-8")


def _model_identity(path):
    """A hash of what the SavedModel at `path` computes: its saved_model.pb, its variables' index (which holds
    each weight's CRC32C), its assets (the vocabulary) in full, and its variables' data files by size."""
    digest = hashlib.sha256()
    for file in files_under(path):
        if file.startswith("variables/variables.data"):
            digest.update(f"{file} {tf.io.gfile.stat(os.path.join(path, file)).length}\n".encode())
        elif file in ("saved_model.pb", "variables/variables.index") or file.startswith("assets/"):
            digest.update(f"{file} {hash_file(os.path.join(path, file))[0].hexdigest()}\n".encode())
    return digest.hexdigest()


def _inputs_identity(files):
    """(a hash of the input files, about how many rows they hold: their lines, for the ETA). A local file counts
    by its bytes, read once; a remote one by its size and modification time (the line count is then None: a
    remote file is not read twice)."""
    parts, total = [], 0
    for path in files:
        if is_remote(path):
            stat = tf.io.gfile.stat(path)
            parts.append([path, stat.length, stat.mtime_nsec])
            total = None
        else:
            digest, lines = hash_file(path)
            parts.append([path, digest.hexdigest()])
            total = None if total is None else total + lines
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest(), total


class _Progress:
    """Progress lines every `every` seconds: rows, rows/s over this run, and the ETA."""

    def __init__(self, report, total, start_rows, every=10.0):
        self.report, self.total, self.start_rows, self.every = report, total, start_rows, every
        self.started = self.last = time.monotonic()

    def update(self, rows):
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        done = rows - self.start_rows
        rate = done / max(now - self.started, 1e-9)
        line = f"{rows:,} rows, {rate:,.0f} rows/s"
        if self.total:
            left = max(self.total - rows, 0)
            line = f"{rows:,} of ~{self.total:,} rows ({min(rows / self.total, 1):.0%}), {rate:,.0f} rows/s, " + (
                f"ETA {_duration(left / rate)}" if rate else "ETA ?")
        self.report(line)


def _duration(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _threaded(items, size=2):
    """Yields `items`, computed by a thread at most `size` ahead; its exception is raised here."""
    slots = queue.Queue(size)
    done = object()
    stop = threading.Event()

    def produce():
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        slots.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            slots.put(done)
        except BaseException as e:  # handed to the consumer, which raises it
            slots.put(e)

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    try:
        while True:
            item = slots.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


def predict_files(saved_model_dir, input_file, output_file, *, input_format=None, output_format=None,
                  columns=None, id_column=None, keep_columns=(), batch_size=32, window=None, length_batching=True,
                  on_error="fail", errors_file=None, signature="serving_default", report=print):
    """Runs a SavedModel's raw-text signature over every row of the input files; see the module's docstring.

    Args:
        saved_model_dir: a SavedModel, or an export directory (its newest version).
        input_file: a glob, or comma-separated globs, of CSV / TSV / JSON Lines / text files (`io.table_files`).
        output_file: the output, JSON Lines or CSV (local or gs://).
        input_format: one of `io.table_files.FORMATS`, or None to go by each file's extension.
        output_format: "jsonl" or "csv", or None to go by output_file's extension (.csv, else JSON Lines).
        columns: {signature input: column}; an input not named reads the column of its own name (or "text",
            a plain-text file's, for a signature of one input).
        id_column: the column whose value is a row's id; None: the column "id" where every input file has one,
            else the row's number in its file (`io.table_files`), "FILE:NUMBER" when several files are read; "":
            the row's number even so.
        keep_columns: input columns copied to the output; one named like an output field (id, label, ...)
            is written as input_<name> (`report` says so); names that would still collide are refused.
        batch_size: rows per call of the model.
        window: rows sorted by length together (None: 32 batches); the resume granularity too.
        length_batching: sort a window's rows by length (False: batches in input order).
        on_error: "fail" stops at the first bad row (a missing column, an empty text) naming it; "skip" writes
            it to errors_file and goes on.
        errors_file: where skipped rows go (None: output_file + ".errors.jsonl").
        signature: the signature to call.
        report: called with each progress line.

    Returns a `PredictionSummary`. Raises `PredictionError` on bad input (nothing partial is left; a run whose every
    row is bad is one too), `LockError` when another run writes output_file, `errors.Interrupted` on Ctrl-C /
    SIGTERM (saying how many rows are kept for the same call to continue after).

    Example:
    >>> import tempfile
    >>> module = tf.Module()
    >>> @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    ... def length(text):
    ...     return {"score": tf.cast(tf.strings.length(text), tf.float32)}
    >>> module.f = length
    >>> work = tempfile.mkdtemp()
    >>> tf.saved_model.save(module, work + "/model", signatures={"serving_default": length.get_concrete_function()})
    >>> _ = open(work + "/in.txt", "w").write("one\\nthree\\n\\nfifteen\\n")
    >>> summary = predict_files(work + "/model", work + "/in.txt", work + "/out.jsonl", batch_size=2, report=None)
    >>> print(open(work + "/out.jsonl").read(), end="")
    {"id": 1, "score": 3.0}
    {"id": 2, "score": 5.0}
    {"id": 4, "score": 7.0}
    """
    if on_error not in ON_ERROR:
        raise PredictionError(f"--on_error={on_error}: expected one of {', '.join(ON_ERROR)}")
    output_format = output_format or ("csv" if os.fspath(output_file).lower().endswith(".csv") else "jsonl")
    if output_format not in OUTPUT_FORMATS:
        raise PredictionError(f"--output_format={output_format}: expected one of {', '.join(OUTPUT_FORMATS)}")
    if batch_size < 1 or (window is not None and window < 1):
        raise PredictionError(f"--batch_size={batch_size}, --length_window={window}: expected positive numbers")
    window = window or 32 * batch_size
    errors_file = errors_file or os.fspath(output_file) + ".errors.jsonl"
    guard.check_outputs([guard.Write("--output_file", output_file), guard.Write("--errors_file", errors_file)],
                        [guard.Read("--input_file", input_file, guard.FILES),
                         guard.Read("--saved_model_dir", saved_model_dir, guard.MODEL)])
    started = time.monotonic()
    files = input_files(input_file)
    with output_file_lock(output_file, "--output_file"):
        return _predict(saved_model_dir, input_file, files, os.fspath(output_file), errors_file, started,
                        input_format=input_format, output_format=output_format, columns=columns, id_column=id_column,
                        keep_columns=keep_columns, batch_size=batch_size, window=window,
                        length_batching=length_batching, on_error=on_error, signature=signature, report=report)


def _predict(saved_model_dir, input_file, files, output_file, errors_file, started, *, input_format, output_format,
             columns, id_column, keep_columns, batch_size, window, length_batching, on_error, signature, report):
    """`predict_files` once its arguments are checked and its output locked."""
    try:
        for path in files:
            check_table_file(path, "--input_file", input_format)
        model = ServedModel(saved_model_dir, signature)
        load_seconds = time.monotonic() - started
        mapping = _column_map(model, files, input_format, columns)
        keep = tuple(keep_columns)
        _check_columns(files, input_format, keep, id_column)
        if id_column is None:
            has_ids = all(ID_COLUMN in (read_columns(path, input_format) or ()) for path in files)
            id_column = ID_COLUMN if has_ids else ""
    except TableFileError as e:
        raise PredictionError(str(e)) from None
    renamed = [(column, name) for column, name in zip(keep, kept_names(keep, model, output_format)) if column != name]
    if renamed and report:
        report("--keep_columns: " + ", ".join(f"{column!r} is written as {name!r}" for column, name in renamed)
               + " (the output has its own)")
    settings = dict(input_format=input_format, output_format=output_format, columns=sorted(mapping.items()),
                    id_column=id_column, keep=keep, batch_size=batch_size, window=window,
                    length_batching=length_batching, on_error=on_error, signature=signature)
    inputs, total_lines = _inputs_identity(files)
    identity = {"model": _model_identity(model.path), "inputs": inputs,
                "settings": hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()}
    output = _Output(output_file, errors_file, identity)
    resumed_from = output.rows
    formatter = _Formatter(output_format, keep, model)
    progress = _Progress(report, total_lines, resumed_from) if report else None
    if output.restarted and report:
        report(f"starting over: {output.restarted}")
    if resumed_from and report:
        report(f"resuming after row {resumed_from:,} (a previous run's {output.written:,} rows are kept)")

    def predicted():
        """(window, answers) for each window, the model run on its rows by batches of similar length."""
        rows = (row for row in _rows(files, input_format, mapping, id_column, keep, resumed_from) if row)
        for rows_of_window in _threaded(_windows(rows, window)):
            good = [i for i, row in enumerate(rows_of_window) if not row.error]
            if on_error == "fail" and len(good) < len(rows_of_window):
                bad = rows_of_window[next(i for i, row in enumerate(rows_of_window) if row.error)]
                raise PredictionError(f"{bad.file}, row {bad.number}: {bad.error} (--on_error=skip writes such "
                                      "rows to a side file and goes on)")
            if length_batching:
                good.sort(key=lambda i: sum(len(t) for t in rows_of_window[i].texts.values()))
            answers = [None] * len(rows_of_window)
            for begin in range(0, len(good), batch_size):
                batch = good[begin:begin + batch_size]
                texts = {name: [rows_of_window[i].texts[name] for i in batch] for name in model.inputs}
                for i, answer in zip(batch, model.predict(texts)):
                    answers[i] = answer
            yield rows_of_window, answers

    first_bad = []  # the first skipped row of this run, for the message when no row is good

    def formatted():
        """(output bytes, errors bytes, rows, written, skipped) of each window, in input order."""
        rows, written, skipped = output.rows, output.written, output.skipped
        first = rows == 0
        for rows_of_window, answers in _threaded(predicted()):
            data, errors = [], []
            if first:
                data.append(formatter.header())
                first = False
            for row, answer in zip(rows_of_window, answers):
                if row.error:
                    errors.append(_error_line(row))
                    skipped += 1
                    first_bad[:] = first_bad or [row]
                else:
                    data.append(formatter.row(row, answer))
                    written += 1
            rows += len(rows_of_window)
            yield b"".join(data), b"".join(errors), rows, written, skipped

    try:
        for data, errors, rows, written, skipped in formatted():
            output.write(data, errors, rows, written, skipped)
            if progress:
                progress.update(rows)
        if output.rows == 0:
            raise PredictionError(f"--input_file={input_file}: no rows to predict")
        if _inputs_identity(files)[0] != inputs:
            raise PredictionError(f"--input_file={input_file}: the input changed while it was read (rewritten, "
                                  "truncated or appended to): its rows would mix two versions; nothing was written, "
                                  "rerun once it is final")
        if output.written == 0:
            bad = first_bad[0] if first_bad else None
            first = f"; the first, {bad.file}, row {bad.number}: {bad.error}" if bad else ""
            raise PredictionError(f"--input_file={input_file}: every row is bad ({output.skipped:,} of "
                                  f"{output.rows:,}){first}; nothing written")
    except Error:
        output.discard()  # bad input: a rerun needs another input, so nothing here can be continued
        raise
    except KeyboardInterrupt:
        output.close()  # Ctrl-C, SIGTERM: the same command continues from the partial files
        kept = output.saved()  # what the state file holds, whenever the signal came
        if not kept or not kept.get("rows"):
            raise Interrupted("before the first window of rows was done: nothing kept") from None
        raise Interrupted(f"after row {kept['rows']:,}: the {kept['written']:,} rows written are kept in "
                          f"{output.partial}; rerun the same command to continue from row {kept['rows'] + 1:,}"
                          ) from None
    except BaseException:
        output.close()
        raise
    output.finish()
    return PredictionSummary(output.rows, output.written, output.skipped, resumed_from, time.monotonic() - started,
                             load_seconds, output_file, errors_file if output.skipped else None)
