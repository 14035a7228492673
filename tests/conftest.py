"""Shared fixtures. Tests use tiny configs and run on the CPU."""

import os
import sys

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

# Before anything imports TensorFlow: the suite then runs the CPU path the tools run (official_bert's default, oneDNN,
# unless TF_ENABLE_ONEDNN_OPTS says otherwise), whichever test file a worker collects first.
import official_bert  # noqa: E402,F401


@pytest.fixture(autouse=True)
def op_determinism_ends_with_its_test():
    """A test that enables TensorFlow's op determinism (as --deterministic does) must not change how later tests in
    the same worker build their graphs: under it, tf.nn.sparse_softmax_cross_entropy_with_logits becomes a
    log-softmax and a gather, for one."""
    yield
    if "tensorflow" in sys.modules:  # not imported: nothing to undo
        # TensorFlow exports enable_op_determinism only; its inverse lives beside it.
        from tensorflow.python.framework import config

        config.disable_op_determinism()
