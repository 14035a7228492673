"""The tools with checkpoints of BERT's family, given on the command line: bad input refused in one line with
nothing written; fill_mask and extract_features on a directory without tokenizer flags."""

import json
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # each case starts a tool in its own process (TensorFlow's import): ~10 s

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "families")
DEV = os.path.join(REPO, "data", "classification", "dev.tsv")


def run(tool, *flags, cwd):
    env = {**os.environ, "PYTHONPATH": REPO, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run([sys.executable, os.path.join(REPO, tool), *flags], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def copy_of(tmp_path, family):
    directory = tmp_path / family
    shutil.copytree(os.path.join(FIXTURES, family), directory)
    return directory


def classify(tmp_path, directory, *extra):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    with open(DEV, encoding="utf-8") as f:
        (data / "train.tsv").write_text("".join(f.readlines()[:9]), encoding="utf-8")
    return run("run_classifier.py", "--task_name=single", "--label_list=1790-1860,1861-1945,1946-2021",
               f"--data_dir={data}", f"--bert_config_file={directory}/config.json", f"--init_checkpoint={directory}",
               f"--output_dir={tmp_path / 'out'}", "--do_train", "--max_seq_length=16", *extra, cwd=str(tmp_path))


@pytest.mark.parametrize("case", ["missing merges", "lower case", "unlisted family", "vocabulary size"])
def test_run_classifier_refuses_in_one_line_and_writes_nothing(tmp_path, case):
    directory = copy_of(tmp_path, "roberta")
    extra = []
    if case == "missing merges":
        os.remove(directory / "merges.txt")
        expected = (f"{directory}/merges.txt: no such file: a roberta checkpoint's directory holds its tokenizer as "
                    "vocab.json and merges.txt; it holds config.json, model.safetensors, vocab.json")
    elif case == "lower case":
        extra = ["--do_lower_case=true"]
        expected = (f"--do_lower_case: {directory}/vocab.json is a byte-level BPE vocabulary (RoBERTa's), which "
                    "tokenizes text as written, cased: pass --do_lower_case=false")
    else:
        config = json.load(open(directory / "config.json"))
        if case == "unlisted family":
            config["model_type"] = "albert"
            expected = (f"{directory}/config.json: model_type 'albert' is not supported; expected one of bert, "
                        "roberta, xlm-roberta, distilbert, electra")
        else:
            config["vocab_size"] = 400
            expected = (f"{directory}/vocab.json: 350 tokens, but the config's vocab_size is 400: the tokenizer and "
                        "the model are not of one checkpoint")
        (directory / "config.json").write_text(json.dumps(config))
    result = classify(tmp_path, directory, *extra)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.rstrip().splitlines()[-1] == "run_classifier: error: " + expected
    assert not (tmp_path / "out").exists()


def test_fill_mask_and_extract_features_read_the_tokenizer_beside_the_checkpoint(tmp_path):
    """RoBERTa's <mask> filled (the space before it taken, as transformers' <mask> takes it), and XLM-R's features,
    with no --vocab_file or --spm_model_file."""
    roberta, xlmr = os.path.join(FIXTURES, "roberta"), os.path.join(FIXTURES, "xlm-roberta")
    filled = run("fill_mask.py", f"--bert_config_file={roberta}/config.json", f"--init_checkpoint={roberta}",
                 "--text=The <mask> of the Union is strong.", "--top_k=2", "--do_lower_case=false", cwd=str(tmp_path))
    assert filled.returncode == 0, filled.stderr[-2000:]
    lines = filled.stdout.splitlines()
    assert lines[0] == "The <mask> of the Union is strong." and lines[1].startswith("  [MASK] 1: ")
    assert len(lines[1].split(" | ")) == 2
    (tmp_path / "input.txt").write_text("The Union is strong.\nFellow citizens ||| of the Senate\n")
    extracted = run("extract_features.py", f"--bert_config_file={xlmr}/config.json", f"--init_checkpoint={xlmr}",
                    f"--input_file={tmp_path / 'input.txt'}", f"--output_file={tmp_path / 'features.jsonl'}",
                    "--layers=-1", "--max_seq_length=32", "--do_lower_case=false", cwd=str(tmp_path))
    assert extracted.returncode == 0, extracted.stderr[-2000:]
    rows = [json.loads(line) for line in open(tmp_path / "features.jsonl")]
    tokens = [[feature["token"] for feature in row["features"]] for row in rows]
    assert tokens[0][0] == "<s>" and tokens[0][-1] == "</s>"
    # A pair in XLM-R's layout: <s> A </s></s> B </s>.
    assert [i for i, token in enumerate(tokens[1]) if token == "</s>"] == [
        tokens[1].index("</s>"), tokens[1].index("</s>") + 1, len(tokens[1]) - 1]
