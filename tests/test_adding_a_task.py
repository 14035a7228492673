"""The "Adding a task" guide (docs/guides/adding-a-task.md): its two files, as printed, make a working tool —
trained, resumed, evaluated and exported by `run_task` with nothing else added."""

import os
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import tensorflow as tf

from tests.finetuning.test_run_classifier import SEQ_LENGTH, write_model_files

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = [("the good film", "a good film", 4.5), ("the bad plot", "a fine film", 0.5), ("a dull film", "the dull film", 4.0),
         ("who ran", "a good plot", 0.0)]


def readme_files():
    """The "Adding a task" guide's code blocks (docs/guides/adding-a-task.md): {the path in its first line: the code}."""
    with open(os.path.join(REPO, "docs", "guides", "adding-a-task.md"), encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"```python\n# (\S+)\n(.*?)```", text, re.S)
    return dict(blocks)


def test_the_section_shows_one_task_module_and_one_tool():
    assert sorted(readme_files()) == ["official_bert/tasks/pair_regression.py",
                                      "official_bert/tools/run_pair_regression.py"]


@pytest.mark.slow
def test_the_toy_task_trains_evaluates_and_exports(tmp_path):
    # The two files beside each other, the tool importing the task from there instead of the package.
    files = readme_files()
    (tmp_path / "pair_regression.py").write_text(files["official_bert/tasks/pair_regression.py"])
    (tmp_path / "run_pair_regression.py").write_text(files["official_bert/tools/run_pair_regression.py"].replace(
        "from official_bert.tasks.pair_regression import", "from pair_regression import"))
    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "dev"):
        (data / f"{split}.tsv").write_text("".join(f"{a}\t{b}\t{score}\n" for a, b, score in PAIRS * 4))
    vocab, config = write_model_files(str(tmp_path / "model"))
    argv = [sys.executable, str(tmp_path / "run_pair_regression.py"), f"--data_dir={data}", f"--vocab_file={vocab}",
            f"--bert_config_file={config}", f"--output_dir={tmp_path / 'out'}", f"--max_seq_length={SEQ_LENGTH}",
            "--train_batch_size=4", "--eval_batch_size=4", "--learning_rate=1e-3", "--num_train_epochs=2",
            "--do_train", "--do_eval", f"--export_dir={tmp_path / 'export'}", "--mixed_precision=bf16",
            "--export_precision=bf16", "--length_bucket_width=4", "--bucket_by_length", "--nodo_lower_case"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=f"{tmp_path}:{REPO}", CUDA_VISIBLE_DEVICES=""))
    assert done.returncode == 0, done.stderr[-3000:]

    results = dict(line.strip().split(" = ") for line in open(tmp_path / "out" / "eval_results.txt"))
    assert sorted(results) == ["global_step", "neg_mse"] and results["global_step"] == "8"  # 16 pairs / 4 × 2
    assert float(results["neg_mse"]) <= 0
    served = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    scores = served(text_a=tf.constant(["the good film"]), text_b=tf.constant(["a good film"]))["score"]
    assert scores.shape == (1,) and np.isfinite(scores.numpy()).all()
    # The run-level flags were in effect: the model computed in bf16 (with bfloat16 weights), and the served
    # tokenizer is cased.
    with zipfile.ZipFile(tmp_path / "export" / "1" / "model.keras") as saved:
        assert '"name": "bfloat16"' in saved.read("config.json").decode()
    cased = served(text_a=tf.constant(["The GOOD film"]), text_b=tf.constant(["a good film"]))["score"]
    assert cased.numpy()[0] != scores.numpy()[0]
