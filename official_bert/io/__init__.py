"""Files on every tf.io.gfile filesystem (local, gs://, ram://): paths (`paths.py`; `files.py`, the data tools'
TensorFlow-free half), atomic writes of files and directories (`atomic.py`), one run per output directory
(`locks.py`), the eval results files (`results.py`), lines decoded as the original does (`utf8.py`), users' tables
(`table_files.py`) and what a reader cannot see around a name in them (`invisible.py`).

Example:
>>> import os, tempfile
>>> from official_bert.io import output_lock, write_text
>>> run = os.path.join(tempfile.mkdtemp(), "run")
>>> with output_lock(run):
...     _ = write_text(os.path.join(run, "eval_results.txt"), "loss = 1.5\\n")
>>> os.listdir(run)
['eval_results.txt']
"""

import importlib

# Where each name lives. The package imports them on first use (PEP 562), so that create_pretraining_data and
# build_vocab, which use `io.files` and `io.utf8` alone, start without TensorFlow.
_HOMES = {
    "atomic": ["OutputError", "atomic_bundle", "atomic_directory", "atomic_local_path", "atomic_path",
               "copy_atomically", "move_tree", "remove_tree", "write_text"],
    "files": ["is_remote"],
    "locks": ["LockError", "output_lock"],
    "paths": ["is_file", "local_copy"],
    "results": ["write_eval_results"],
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
