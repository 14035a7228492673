"""A versioned export killed with SIGKILL leaves its hidden temporary directory; the next export removes it (#39)."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from official_bert.export import versions, write_new_version

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow  # the child's TensorFlow import: about 10 s on 2 cores
def test_an_export_killed_midway_leaves_nothing_after_the_next_one(tmp_path):
    export_dir = str(tmp_path / "export")
    # The child writes part of a version, says so, and waits to be killed: no cleanup of its own can run.
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, sys, time
        from official_bert.export.versions import write_new_version
        def write(directory):
            with open(os.path.join(directory, "variables.data"), "wb") as f:
                f.write(b"x" * 100_000)
            print("writing", flush=True)
            time.sleep(600)
        write_new_version({export_dir!r}, write)
        """)], stdout=subprocess.PIPE, text=True, cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO))
    try:
        assert child.stdout.readline().strip() == "writing"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    left = os.listdir(export_dir)
    assert len(left) == 1 and left[0].startswith(".version-") and left[0].endswith(f".incomplete-{child.pid}")
    # A running export's temporary is not touched by another export.
    running = os.path.join(export_dir, f".version-0000.incomplete-{os.getpid()}")
    os.mkdir(running)

    written = write_new_version(export_dir, lambda directory: open(os.path.join(directory, "saved_model.pb"),
                                                                   "w").close())
    assert sorted(os.listdir(export_dir)) == sorted(["1", os.path.basename(running)])
    assert versions(export_dir) == [1] and os.listdir(written) == ["saved_model.pb"]


def test_a_remote_version_that_fails_to_move_is_an_error_and_leaves_no_partial_version(monkeypatch):
    # A remote filesystem renames file by file: one rename failing must end the export (it once retried the next
    # version number forever), with nothing left under a version number.
    import tensorflow as tf

    export_dir = "ram://failing_move/export"

    def write(directory):
        for name in ("saved_model.pb", "variables/variables.index", "assets/vocab.txt"):
            tf.io.gfile.makedirs(os.path.dirname(os.path.join(directory, name)))
            with tf.io.gfile.GFile(os.path.join(directory, name), "w") as f:
                f.write("x")

    rename = tf.io.gfile.rename
    renamed = []

    def failing(old, new, overwrite=False):
        if renamed:
            raise tf.errors.UnavailableError(None, None, "the store went away")
        renamed.append(new)
        rename(old, new, overwrite)

    monkeypatch.setattr(tf.io.gfile, "rename", failing)
    with pytest.raises(tf.errors.UnavailableError):
        write_new_version(export_dir, write)
    assert len(renamed) == 1  # one file moved, then the failure: not retried
    assert versions(export_dir) == []
    assert not [name for name in tf.io.gfile.listdir(export_dir) if name.rstrip("/").isdigit()]
