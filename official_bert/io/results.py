"""`write_eval_results`: the original's eval_results.txt ("key = value" lines, keys sorted) and the same figures as
JSON beside it, for every tool that evaluates (pretraining and every fine-tuning task)."""

import json
import os

import numpy as np

from official_bert.io.atomic import write_text


def write_eval_results(output_dir, results, basename="eval_results"):
    """Writes `results` to output_dir/<basename>.txt as the original does (one "key = value" line per result,
    keys sorted, floats as float32 prints them, as the original's Estimator metrics were) and to
    <basename>.json at full precision; returns both paths.

    Args:
        output_dir: the directory (created if needed; any tf.io.gfile path).
        results: name → number (Python or NumPy scalars) or text (e.g. which checkpoint was evaluated).
        basename: the files' name without extension.

    Example:
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> txt, _ = write_eval_results(out, {"mcc": 1 / 3, "global_step": np.int64(30), "loss": np.float32(2.5)})
    >>> print(open(txt).read(), end="")
    global_step = 30
    loss = 2.5
    mcc = 0.33333334
    >>> json.load(open(os.path.join(out, "eval_results.json")))["mcc"]
    0.3333333333333333
    """
    values = {key: value.item() if isinstance(value, np.generic) else value for key, value in results.items()}
    text = "".join(f"{key} = {_original_format(values[key])}\n" for key in sorted(values))
    return (write_text(os.path.join(output_dir, f"{basename}.txt"), text),
            write_text(os.path.join(output_dir, f"{basename}.json"),
                       json.dumps(values, indent=2, sort_keys=True) + "\n"))


def _original_format(value):
    if isinstance(value, float):
        return str(np.float32(value))
    return str(value)
