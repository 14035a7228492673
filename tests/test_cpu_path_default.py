"""official_bert imported before TensorFlow turns oneDNN on where TensorFlow would leave it off (AVX2-only CPUs,
where it is faster: bench.cpu_paths), never against the user's TF_ENABLE_ONEDNN_OPTS, and never for a TensorFlow
already started."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SHOW = ("import os, sys\n{first}\nfrom official_bert.layers.activations import onednn_enabled\n"
         "print(os.environ.get('TF_ENABLE_ONEDNN_OPTS'), onednn_enabled())")


# (what the process imports first, TF_ENABLE_ONEDNN_OPTS given, then: the variable and whether oneDNN runs; None:
# TensorFlow's own choice for this CPU).
@pytest.mark.parametrize("first, given, expected", [
    ("import official_bert", None, "1 True"),
    ("import official_bert", "0", "0 False"),
    ("import official_bert", "1", "1 True"),
    ("import official_bert.tools.cli", None, "1 True"),  # every tool's first import
    ("import tensorflow; import official_bert", None, "None None"),  # TensorFlow started first: left as it is
])
def test_onednn_is_on_unless_the_user_or_an_earlier_tensorflow_decided(first, given, expected):
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    env.update(PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="3", **({"TF_ENABLE_ONEDNN_OPTS": given} if given else {}))
    shown = subprocess.run([sys.executable, "-c", _SHOW.format(first=first)], env=env, capture_output=True, text=True,
                           timeout=300, cwd=REPO)
    assert shown.returncode == 0, shown.stderr[-2000:]
    variable, onednn = shown.stdout.split()[-2:]
    assert [variable, onednn if expected.split()[1] != "None" else "None"] == expected.split(), shown.stdout
