"""Queries a SavedModel from raw inputs, as a client would: TensorFlow only, no model code.

    python query_saved_model.py --saved_model_dir=serving/era --input text_a='Fellow citizens ...'
    python query_saved_model.py --saved_model_dir=serving/squad/3 \\
        --input question='Who ...?' --input context='...' [--signature=serving_default]

--saved_model_dir is a SavedModel or an export directory of numbered versions (run_classifier's --export_dir),
whose newest version is used. Each --input is NAME=VALUE, one per input of the signature; several values for the
same name form a batch. A VALUE is the raw string for a string input of one value per row, else JSON (a number,
or a list for an input with more dimensions per row: a multiple-choice model's endings, serve_tensors' ids).
Prints one block per batch row, the outputs by name: strings decoded, floats rounded to 4 decimals, long arrays cut.
tensorflow-text is imported only for a SavedModel that uses its ops (SentencePiece, or an export made with
--tokenizer_ops=tf_text).

Exit status 1 with a one-line message on bad flags or input.
"""

import json
import os
import sys

# Only cli (first: it quiets TensorFlow's C++ start-up logging): importing the library's model code would hide a
# SavedModel that is not self-contained.
from official_bert.tools import cli

import numpy as np
import tensorflow as tf
from absl import flags

from official_bert.io.utf8 import not_utf8
from official_bert.tools.flag_kinds import MODEL, define_path, define_text, define_text_list

FLAGS = flags.FLAGS
_SHOWN = 10  # items of an array printed, e.g. of per-token logits

define_path("saved_model_dir", None, "A SavedModel directory, or an export directory of numbered versions "
            "(the newest is used).", MODEL)
define_text("signature", "serving_default", "The signature to call.")
define_text_list("input", [], "NAME=VALUE: a value of the signature's input NAME (repeat a name for a "
                 "batch).", multi=True)


def main():
    path = _saved_model_path(FLAGS.saved_model_dir)
    try:
        loaded = _load(path)
    except (OSError, ValueError, RuntimeError, tf.errors.OpError) as e:
        cli.fail(f"{path}: cannot load the SavedModel ({_first_line(e)})")
    if FLAGS.signature not in loaded.signatures:
        cli.fail(f"--signature={FLAGS.signature}: {path} has no such signature; it has "
                 + (", ".join(sorted(loaded.signatures)) or "none"))
    function = loaded.signatures[FLAGS.signature]
    specs = function.structured_input_signature[1]
    inputs = _parse_inputs(FLAGS.input, specs, FLAGS.signature)
    try:
        outputs = function(**inputs)
    except (ValueError, TypeError, tf.errors.OpError) as e:
        cli.fail(f"--signature={FLAGS.signature} failed on these inputs: {_first_line(e)}")
    batch = max((len(rows) for rows in inputs.values()), default=1)
    ner = set(_NER_OUTPUTS) <= set(outputs)
    for row in range(batch):
        print(f"[{row + 1}/{batch}]")
        if ner:
            _print_entities(outputs, row)
        for name in sorted(outputs):
            if ner and name in _NER_OUTPUTS:
                continue
            value = outputs[name].numpy()
            # An output without a batch dimension is the same for every row.
            print(f"  {name}: {_readable(value[row] if value.ndim and len(value) == batch else value)}")


# run_ner's serving_default: entities and words padded per row ("" and -1), printed without the padding.
_NER_OUTPUTS = ("entity_type", "entity_text", "entity_start", "entity_end", "word", "tag", "word_start", "word_end")


def _print_entities(outputs, row):
    """An NER model's answer for one row: each entity as `TYPE start-end text`, then every word/tag."""
    value = {name: outputs[name].numpy()[row] for name in _NER_OUTPUTS}
    entities = [(t.decode(), int(s), int(e), x.decode()) for t, s, e, x in zip(
        value["entity_type"], value["entity_start"], value["entity_end"], value["entity_text"]) if t]
    print(f"  entities: {len(entities)}")
    for entity_type, start, end, text in entities:
        print(f"    {entity_type} {start}-{end} {text}")
    print("  tags: " + " ".join(f"{w.decode()}/{t.decode()}" for w, t in zip(value["word"], value["tag"]) if w))


def _load(path):
    """Loads a SavedModel, registering tensorflow-text's ops first only where it uses them."""
    try:
        return tf.saved_model.load(path)
    except RuntimeError as e:
        if "Op type not registered" not in str(e):
            raise
        op = str(e).split("'")[1] if "'" in str(e) else "?"
    try:
        import tensorflow_text  # noqa: F401  (registers its ops)
    except ImportError:
        cli.fail(f"{path}: the SavedModel uses the op {op}, which is not TensorFlow's: it needs tensorflow-text, "
                 "which cannot be imported here (pip install tensorflow-text)")
    return tf.saved_model.load(path)


def _saved_model_path(directory):
    """The SavedModel at `directory`, or the newest numbered version inside it."""
    if not os.path.isdir(directory):
        cli.fail(f"--saved_model_dir={directory}: no such directory")
    if os.path.exists(os.path.join(directory, "saved_model.pb")):
        return directory
    # As official_bert.export.versions reads them, which cannot be imported without the model code.
    numbered = [int(name) for name in os.listdir(directory)
                if name.isdigit() and os.path.exists(os.path.join(directory, name, "saved_model.pb"))]
    if not numbered:
        cli.fail(f"--saved_model_dir={directory}: no saved_model.pb in it, nor in a numbered version directory")
    return os.path.join(directory, str(max(numbered)))


def _parse_inputs(pairs, specs, signature):
    """--input NAME=VALUE flags → {name: tensor} for the signature's input `specs` (name → tf.TensorSpec)."""
    expected = ", ".join(f"{name} ({_describe(spec)})" for name, spec in sorted(specs.items()))
    values = {}
    for number, pair in enumerate(pairs, 1):
        raw = os.fsencode(pair)  # the command line's bytes: Python keeps those that are not UTF-8 as surrogates
        if problem := not_utf8(raw):
            cli.fail(f"--input number {number} ({raw.decode('utf-8', 'backslashreplace')}): {problem}; inputs must "
                     "be UTF-8 text")
        name, equals, value = pair.partition("=")
        if not equals:
            cli.fail(f"--input={pair}: expected NAME=VALUE; --signature={signature} takes {expected}")
        if name not in specs:
            cli.fail(f"--input={pair}: {signature} has no input {name!r}; it takes {expected}")
        values.setdefault(name, []).append(_parse_value(pair, value, specs[name]))
    missing = sorted(set(specs) - set(values))
    if missing:
        cli.fail(f"no --input for {', '.join(missing)}; --signature={signature} takes {expected}")
    sizes = {name: len(rows) for name, rows in values.items()}
    if len(set(sizes.values())) > 1:
        cli.fail("every input needs the same number of values (one per batch row); got "
                 + ", ".join(f"{count} for {name}" for name, count in sorted(sizes.items())))
    tensors = {}
    for name, rows in values.items():
        try:
            tensors[name] = tf.constant(rows, dtype=specs[name].dtype)
        except (ValueError, TypeError) as e:
            cli.fail(f"--input values of {name} are no {_describe(specs[name])}: {_first_line(e)}")
        if not specs[name].shape.is_compatible_with(tensors[name].shape):
            cli.fail(f"--input values of {name} have shape {tensors[name].shape.as_list()}; {signature} takes "
                     f"{_describe(specs[name])}")
    return tensors


def _parse_value(pair, value, spec):
    if spec.dtype == tf.string and spec.shape.rank == 1:
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as e:
        cli.fail(f"--input={pair}: expected JSON for {_describe(spec)} ({e})")


def _describe(spec):
    """A TensorSpec as "string [None]": its dtype and shape, None being any size (the batch)."""
    return f"{spec.dtype.name} {spec.shape.as_list() if spec.shape.rank is not None else 'of any shape'}"


def _readable(value):
    """A NumPy output value as text: bytes decoded, floats rounded, arrays as lists of at most _SHOWN items."""
    if isinstance(value, np.ndarray):
        more = f", ... ({len(value)} in all)" if len(value) > _SHOWN else ""
        return "[" + ", ".join(_readable(v) for v in value[:_SHOWN]) + more + "]"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.floating):
        return f"{value:.4f}"
    return str(value)


def _first_line(error):
    """The first line of an error's message that says what went wrong: TensorFlow's begin with where."""
    message = error.message if isinstance(error, tf.errors.OpError) else str(error)
    lines = [line for line in message.splitlines()
             if line.strip() and not line[0].isspace() and not line.startswith("<") and not line.endswith(":")]
    return lines[0] if lines else type(error).__name__


def _check_flagfiles(args, seen=()):
    """`fail`s naming file:line when a --flagfile (or one it names) is not UTF-8, which absl's parser would
    report with a traceback."""
    for i, arg in enumerate(args):
        name, equals, path = arg.lstrip("-").partition("=")
        if name != "flagfile" or not arg.startswith("-"):
            continue
        if not equals:
            path = args[i + 1] if i + 1 < len(args) else ""
        if not path or path in seen:
            continue
        try:
            with open(path, "rb") as f:
                lines = f.read().splitlines()
        except OSError:
            continue  # absl's parser says so
        for number, raw in enumerate(lines, 1):
            if problem := not_utf8(raw):
                cli.fail(f"{path}:{number}: {problem}; a --flagfile must be UTF-8 text")
        _check_flagfiles([raw.decode("utf-8").strip() for raw in lines], (*seen, path))


def run():
    """The tool as a command (`python query_saved_model.py`, or the console script `bert-query-saved-model`)."""
    _check_flagfiles(sys.argv[1:])
    cli.run(main, required_flags=["saved_model_dir"])


if __name__ == "__main__":
    run()
