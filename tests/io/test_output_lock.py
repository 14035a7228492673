"""official_bert.io.output_lock: one run per output directory, across processes, after crashes, on gfile paths."""

import json
import os
import signal
import socket
import subprocess
import sys

import pytest
import tensorflow as tf

from official_bert.io import LockError, OutputError, output_lock
from official_bert.io.locks import LOCK_NAME, read_holder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A second process that takes the lock, says so, and holds it until told to go (or is killed).
HOLDER = """
import sys
from official_bert.io import output_lock
with output_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def start_holder(directory):
    process = subprocess.Popen([sys.executable, "-c", HOLDER, directory], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, cwd=REPO,
                               env=dict(os.environ, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="3"))
    assert process.stdout.readline() == "locked\n"
    return process


def dead_pid():
    """The pid of a process of this host that has exited (and been reaped)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_second_process_is_refused_and_a_killed_holders_lock_is_taken_over(tmp_path, caplog):
    run = str(tmp_path / "run")
    holder = start_holder(run)
    try:
        with pytest.raises(LockError) as refused:
            with output_lock(run):
                pass
        message = str(refused.value)
        assert f"--output_dir={run} is in use by another run (pid {holder.pid} on this host, -c since " in message
        assert "\n" not in message
        holder.send_signal(signal.SIGKILL)  # a crash: the lock file stays, the kernel drops the flock
        holder.wait(timeout=30)
    finally:
        holder.kill()
    assert read_holder(run)["pid"] == holder.pid
    with output_lock(run):
        assert read_holder(run)["pid"] == os.getpid()
    assert f"taking over the lock of pid {holder.pid} on this host" in caplog.text
    assert os.listdir(run) == []  # released: the lock file is gone, the directory (not created here) stays


def test_a_lock_released_by_its_holder_is_free_and_leaves_nothing(tmp_path):
    run = str(tmp_path / "new" / "run")
    holder = start_holder(run)
    holder.communicate("go\n", timeout=60)
    assert holder.returncode == 0
    assert not os.path.exists(tmp_path / "new")  # it created both directories and left them empty: removed
    with output_lock(run):
        with open(os.path.join(run, "eval_results.txt"), "w") as f:
            f.write("loss = 1\n")
    assert os.listdir(run) == ["eval_results.txt"]


def test_a_lock_file_of_another_host_is_refused_with_how_to_remove_it(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_NAME).write_text(json.dumps({"host": "other-host", "pid": 1, "program": "run_classifier.py",
                                             "since": "2026-01-01T00:00:00"}))
    with pytest.raises(LockError, match=rf"locked by a run on another host \(pid 1 on host other-host, "
                                        rf"run_classifier.py since 2026-01-01T00:00:00\): if no run is using it, "
                                        rf"remove {run / LOCK_NAME}$"):
        with output_lock(str(run)):
            pass
    assert (run / LOCK_NAME).exists()


def test_outputs_that_cannot_be_written_fail_before_any_work(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"--output_dir=.*/file/run: .*/file is a file; expected a directory"):
        with output_lock(str(tmp_path / "file" / "run")):
            pass
    with pytest.raises(OutputError, match=r"--output_path=/sys/official_bert_run: cannot create the directory"):
        with output_lock("/sys/official_bert_run", flag="--output_path"):  # sysfs: nothing can be created there
            pass


def test_on_a_gfile_filesystem_the_lock_file_is_created_without_overwriting(caplog):
    run = "ram://lock_test/run"
    with output_lock(run):
        assert read_holder(run)["pid"] == os.getpid()
        with pytest.raises(LockError, match=rf"{run} is in use by another run \(pid {os.getpid()} on this host"):
            with output_lock(run):
                pass
    assert not tf.io.gfile.exists(run)
    # A lock left by a process of this host that no longer runs is taken over; one of another host is not.
    tf.io.gfile.makedirs(run)
    for host, pid in ((socket.gethostname(), dead_pid()), ("other-host", 1)):
        with tf.io.gfile.GFile(f"{run}/{LOCK_NAME}", "w") as f:
            f.write(json.dumps({"host": host, "pid": pid}))
        if host == "other-host":
            with pytest.raises(LockError, match=f"other-host.*remove {run}/{LOCK_NAME}"):
                with output_lock(run):
                    pass
        else:
            with output_lock(run):
                assert read_holder(run)["pid"] == os.getpid()
            assert f"taking over the lock of pid {pid} on this host" in caplog.text
    tf.io.gfile.rmtree("ram://lock_test")


def test_an_output_file_is_locked_by_a_lock_file_beside_it_on_every_filesystem(tmp_path):
    from official_bert.io.locks import output_file_lock

    for output in (str(tmp_path / "new" / "out.jsonl"), "ram://file_lock_test/new/out.jsonl"):
        directory = os.path.dirname(output)
        with output_file_lock(output):
            assert tf.io.gfile.listdir(directory) == [".out.jsonl.lock"]
            with pytest.raises(LockError, match=rf"^--output_file={output} is in use by another run \(pid "
                                                rf"{os.getpid()} on this host, .*use another --output_file$"):
                with output_file_lock(output):
                    pass
            with output_file_lock(os.path.join(directory, "other.jsonl")):  # another file of the directory: free
                pass
        assert not tf.io.gfile.exists(directory)  # created for the run, left empty: removed
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"--output_file=.*/file/out\.jsonl: .*/file is a file; expected a directory"):
        with output_file_lock(str(tmp_path / "file" / "out.jsonl")):
            pass
