"""The tools' modules define their absl flags on import, and several define the same names (--data_dir, ...): one
pytest process cannot import them all, so their doctests are not collected (the tests run each tool in a process of
its own). cli.py, flags.py and sweep.py define no flags and keep theirs."""

import glob
import os

_TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "official_bert", "tools")
collect_ignore = [path for path in glob.glob(os.path.join(_TOOLS, "*.py"))
                  if os.path.basename(path) not in ("__init__.py", "cli.py", "flags.py", "sweep.py")]
