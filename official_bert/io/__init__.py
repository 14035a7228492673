"""Files on every tf.io.gfile filesystem (local, gs://, ram://): paths (`paths.py`), atomic writes
(`atomic.py`) and one run per output directory (`locks.py`).

Example:
>>> import os, tempfile
>>> from official_bert.io import output_lock, write_text
>>> run = os.path.join(tempfile.mkdtemp(), "run")
>>> with output_lock(run):
...     _ = write_text(os.path.join(run, "eval_results.txt"), "loss = 1.5\\n")
>>> os.listdir(run)
['eval_results.txt']
"""

from official_bert.io.atomic import (OutputError, atomic_bundle, atomic_directory, atomic_local_path, atomic_path,
                                     copy_atomically, move_tree, remove_tree, write_text)
from official_bert.io.locks import LockError, output_lock
from official_bert.io.paths import is_file, is_remote, local_copy

__all__ = ["LockError", "OutputError", "atomic_bundle", "atomic_directory", "atomic_local_path", "atomic_path",
           "copy_atomically", "is_file", "is_remote", "local_copy", "move_tree", "output_lock", "remove_tree",
           "write_text"]
