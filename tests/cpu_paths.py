"""TensorFlow's two CPU paths, for tests whose expectation depends on which one runs.

TensorFlow computes CPU ops with oneDNN (its default on CPUs with AVX512_VNNI, AVX512_BF16 or AMX) or with Eigen's
kernels (its default elsewhere: AVX2-only CPUs), decided once per process from the CPU and TF_ENABLE_ONEDNN_OPTS,
before TensorFlow is imported. Code that chooses an op pattern by path asks `onednn_enabled()`; a test that counts
ops or pins kernels asserts the pattern of the path it runs on, taken from that same function, and asserts the other
path's pattern in a child process started with TF_ENABLE_ONEDNN_OPTS set, so that both are held on every machine.
"""

import json
import os
import subprocess
import sys

from official_bert.layers.activations import onednn_enabled

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = ("onednn", "eigen")


def current_path():
    """"onednn" or "eigen": the path this process's TensorFlow runs."""
    return "onednn" if onednn_enabled() else "eigen"


def environment(path):
    """os.environ with TF_ENABLE_ONEDNN_OPTS set for `path`."""
    return {**os.environ, "TF_ENABLE_ONEDNN_OPTS": "1" if path == "onednn" else "0", "TF_CPP_MIN_LOG_LEVEL": "2",
            "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))}


def on_path(path, function, *args):
    """`function(*args)` computed on `path`: here if this process runs it, else in a child process started on it
    (`function` a module-level function of an importable module, its arguments and result JSON values)."""
    if path == current_path():
        return function(*args)
    code = (f"import json, sys\nfrom {function.__module__} import {function.__name__}\n"
            f"from official_bert.layers.activations import onednn_enabled\n"
            f"assert onednn_enabled() == {path == 'onednn'}, 'TF_ENABLE_ONEDNN_OPTS did not choose the path'\n"
            f"print(json.dumps({function.__name__}(*json.loads(sys.argv[1]))))")
    child = subprocess.run([sys.executable, "-c", code, json.dumps(args)], env=environment(path), cwd=REPO,
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


def other_path_environment():
    """The environment variables that make this machine run as the other kind of CPU does: TensorFlow's other CPU
    path, and the precision `auto` picks there (bf16 where oneDNN is TensorFlow's default — CPUs with AVX512_BF16
    or AMX —, float32 on AVX2-only CPUs, Eigen's path)."""
    other = "eigen" if current_path() == "onednn" else "onednn"
    return {"TF_ENABLE_ONEDNN_OPTS": "0" if other == "eigen" else "1",
            "OFFICIAL_BERT_AUTO_PRECISION": "fp32" if other == "eigen" else "bf16"}


if __name__ == "__main__":
    # `make test-other-cpu-path`: the assignments for `env`, e.g. TF_ENABLE_ONEDNN_OPTS=0 OFFICIAL_BERT_AUTO_PRECISION=fp32
    print(" ".join(f"{name}={value}" for name, value in other_path_environment().items()))
