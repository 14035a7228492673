"""The output guard against an independent statement of its rule, on paths Hypothesis generates: an output is refused
exactly when it is an input, lies inside a directory that is read, is matched by an input glob, or is a checkpoint
prefix's directory or one of the model's files beside it — however the
paths are spelled (relative, with `..`, through a symbolic link) — and a file output that is an existing directory,
or a directory output that is an existing file, is refused too."""

import fnmatch
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from official_bert.io.guard import DIRECTORY, FILE, FILES, MODEL, OutputConflictError, Read, Write, check_outputs

NAMES = st.sampled_from(["a", "b", "c", "run", "ckpt-1.index", "x.csv"])
PARTS = st.lists(NAMES, min_size=1, max_size=3)
MODEL_FILE_NAMES = {"ckpt-1.index"}  # of NAMES, the one a model's directory holds as part of the model


def expected_conflict(output, read_path, read_kind):
    """The rule, from the real paths: equal, inside a read directory, or matched by the glob."""
    out = os.path.realpath(output)
    if read_kind == FILES:
        pattern = os.path.join(os.path.realpath(os.path.dirname(read_path)), os.path.basename(read_path))
        return fnmatch.fnmatchcase(out, pattern)
    target = os.path.realpath(read_path)
    if read_kind == FILE:
        return out == target
    if read_kind == DIRECTORY or os.path.isdir(target):
        return out == target or out.startswith(target + os.sep)
    # A checkpoint prefix or model file: it, its prefix's files, its directory, or a model file beside it.
    directory = os.path.dirname(target)
    return (out in (target, directory) or out.startswith(target + ".")
            or os.path.dirname(out) == directory and os.path.basename(out) in MODEL_FILE_NAMES)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(read_parts=PARTS, out_parts=PARTS, read_kind=st.sampled_from([FILE, FILES, DIRECTORY, MODEL]),
       spelled=st.sampled_from(["plain", "relative", "dotdot", "link"]), out_is_dir=st.booleans())
def test_an_output_is_refused_exactly_when_it_overlaps_what_is_read(tmp_path, read_parts, out_parts, read_kind,
                                                                   spelled, out_is_dir):
    root = tmp_path / "w"
    os.makedirs(root, exist_ok=True)
    read_path = os.path.join(root, *read_parts)
    if read_kind == FILES:
        read_path = os.path.join(os.path.dirname(read_path), "*.csv")
    output = os.path.join(root, *out_parts)
    if os.path.exists(output) and os.path.isdir(output) != out_is_dir or any(
            os.path.isfile(os.path.join(root, *out_parts[:i])) for i in range(1, len(out_parts))):
        return  # the kind rule, tested below
    shown = {"plain": output, "relative": os.path.relpath(output), "dotdot": os.path.join(root, "a", "..", *out_parts)}
    if spelled == "link":
        link = tmp_path / "link"
        if not link.exists():
            link.symlink_to(root)
        shown["link"] = os.path.join(link, *out_parts)
    conflict = expected_conflict(output, read_path, read_kind)
    call = lambda: check_outputs([Write("--out", shown[spelled], DIRECTORY if out_is_dir else FILE)],  # noqa: E731
                                 [Read("--in", read_path, read_kind)])
    if conflict:
        with pytest.raises(OutputConflictError, match="--out=.* --in"):
            call()
    else:
        call()


def test_a_directory_where_a_file_goes_and_a_file_where_a_directory_goes_are_refused(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputConflictError, match="folder is a directory; expected a file path"):
        check_outputs([Write("--output_file", str(tmp_path / "folder"))])
    with pytest.raises(OutputConflictError, match="notes.txt is a file; expected a directory"):
        check_outputs([Write("--output_dir", str(tmp_path / "notes.txt"), DIRECTORY)])
    with pytest.raises(OutputConflictError, match="notes.txt is a file; expected a directory"):
        check_outputs([Write("--output_file", str(tmp_path / "notes.txt" / "out.jsonl"))])
    check_outputs([Write("--output_file", str(tmp_path / "new" / "out.jsonl"))])  # missing parents are made later
    assert sorted(os.listdir(tmp_path)) == ["folder", "notes.txt"]


def test_two_outputs_at_one_path_are_refused(tmp_path):
    with pytest.raises(OutputConflictError, match="--errors_file=.*out.jsonl is also the --output_file"):
        check_outputs([Write("--errors_file", str(tmp_path / "out.jsonl")),
                       Write("--output_file", os.path.relpath(tmp_path / "out.jsonl"))])


def test_paths_of_other_filesystems_are_compared_as_written(tmp_path):
    with pytest.raises(OutputConflictError, match="is inside --teacher=ram://bucket/runs/era"):
        check_outputs([Write("--output_dir", "ram://bucket/runs/era//student/", DIRECTORY)],
                      [Read("--teacher", "ram://bucket/runs/era", DIRECTORY)])
    check_outputs([Write("--output_dir", "ram://bucket/runs/era-student", DIRECTORY)],
                  [Read("--teacher", "ram://bucket/runs/era", DIRECTORY)])
