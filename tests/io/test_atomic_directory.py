"""io.atomic.atomic_directory, the writer of every directory output a tool replaces whole (LiteRT files, TF Hub
SavedModels, an extended checkpoint): it replaces its own earlier output and never deletes what it did not write."""

import os

import pytest
import tensorflow as tf

from official_bert.io import OutputError, atomic_directory
from official_bert.io.atomic import WRITTEN_NAME


def write(directory, files):
    for name, text in files.items():
        tf.io.gfile.makedirs(os.path.dirname(os.path.join(directory, name)))
        with tf.io.gfile.GFile(os.path.join(directory, name), "w") as f:
            f.write(text)


def read(directory):
    found = {}
    for parent, _, names in tf.io.gfile.walk(directory):
        for name in names:
            path = os.path.join(parent, name)
            with tf.io.gfile.GFile(path) as f:
                found[path[len(directory):].strip("/")] = f.read()
    return found


@pytest.mark.parametrize("root", ["local", "ram://atomic_directory_test"])
def test_its_own_output_is_replaced_and_a_users_files_are_refused_and_kept(root, tmp_path):
    root = str(tmp_path) if root == "local" else root
    target = os.path.join(root, "encoder")
    with atomic_directory(target) as tmp:
        write(tmp, {"saved_model.pb": "1", "variables/variables.index": "1"})
    with atomic_directory(target) as tmp:  # its own output, subdirectories included: replaced whole
        write(tmp, {"saved_model.pb": "2"})
    assert read(target) == {"saved_model.pb": "2", WRITTEN_NAME: '["saved_model.pb"]'}
    write(target, {"assets/notes.txt": "the user's"})
    with pytest.raises(OutputError, match=rf"^{target} holds files this tool did not write \(assets/notes\.txt\): "
                                          "they are left as they are; move them, or choose a new directory$"):
        with atomic_directory(target) as tmp:
            raise AssertionError("refused before the work")
    assert read(target)["assets/notes.txt"] == "the user's"
    if root.startswith("ram://"):
        tf.io.gfile.rmtree(root)


def test_a_file_put_there_during_the_work_is_the_users_too(tmp_path):
    target = tmp_path / "lite"
    with atomic_directory(str(target)) as tmp:
        write(tmp, {"model.tflite": "old"})
    with pytest.raises(OutputError, match=r"lite holds files this tool did not write \(labels\.txt\)"):
        with atomic_directory(str(target)) as tmp:
            write(tmp, {"model.tflite": "new"})
            (target / "labels.txt").write_text("the user's")  # while the conversion ran
    assert read(str(target)) == {"model.tflite": "old", "labels.txt": "the user's", WRITTEN_NAME: '["model.tflite"]'}
    assert sorted(os.listdir(tmp_path)) == ["lite"]  # the new tree, written under a temporary name, is gone


def test_a_directory_without_the_list_is_not_replaced_but_an_empty_one_is(tmp_path):
    (tmp_path / "hub" / "encoder").mkdir(parents=True)
    with atomic_directory(str(tmp_path / "hub" / "encoder")) as tmp:
        write(tmp, {"saved_model.pb": "x"})
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "saved_model.pb").write_text("a SavedModel written by something else")
    with pytest.raises(OutputError, match=r"mine holds files this tool did not write \(saved_model\.pb\)"):
        with atomic_directory(str(tmp_path / "mine")):
            pass
    assert (tmp_path / "mine" / "saved_model.pb").read_text() == "a SavedModel written by something else"
