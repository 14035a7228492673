"""How the docs tests run a page as a newcomer runs it (tests/docs/test_guides.py,
tests/docs/test_guides_deploying.py): its shell blocks (```bash) and Python blocks (```python), in page order, in an
empty directory that holds only what the reader brings (tests/docs/guide_inputs.py: a released checkpoint, their
CSV, `make demo`'s outputs — tiny), so a step a page leaves out fails here. Each Python block runs alone, in a fresh
namespace, as a notebook cell pasted by itself: it imports what it uses. A block that needs what no test has (Docker,
a GPU, a download, an hour) is marked `<!-- norun: why -->` on the line above it.

The commands run as written but for sizes: a flag of SIZES gets a tiny value (its flag stays), so that pretraining's
2,000 steps are 4. A Python block followed by "prints `X`" must print each backticked X."""

import os
import re
import shutil
import subprocess
import sys

from tests.docs.pages import REPO, all_pages, code_blocks, page_id

# What each page's reader brings (paths under guide_inputs.make_inputs's root), beside the repository's tools.
INPUTS = {
    "README.md": ["uncased_L-12_H-768_A-12", "tickets_train.csv", "tickets_dev.csv", "all-MiniLM-L6-v2"],
    "docs/guides/pretraining.md": ["data"],
    "docs/guides/glue.md": ["uncased_L-12_H-768_A-12", "glue", "data", "demo_out/pretrained", "reviews"],
    "docs/guides/own-data.md": ["uncased_L-12_H-768_A-12", "tickets_train.csv", "tickets_dev.csv", "tickets_new.csv",
                                "train.jsonl", "dev.jsonl", "new.jsonl", "ratings_train.csv", "ratings_dev.csv",
                                "alerts_train.jsonl", "alerts_dev.jsonl"],
    "docs/guides/squad.md": ["uncased_L-12_H-768_A-12", "train-v1.1.json", "dev-v1.1.json"],
    "docs/guides/ner.md": ["cased_L-12_H-768_A-12", "conll2003"],
    "docs/guides/features.md": ["uncased_L-12_H-768_A-12", "input.txt", "minilm"],
    "docs/guides/keras.md": ["all-MiniLM-L6-v2", "data"],
    "docs/guides/embeddings.md": ["all-MiniLM-L6-v2", "data"],
    "docs/guides/checkpoints.md": ["uncased_L-12_H-768_A-12"],
    "docs/guides/domain-vocabulary.md": ["uncased_L-12_H-768_A-12", "domain.txt", "domain_task"],
    "docs/guides/serving.md": ["demo_out/export"],
    "docs/guides/deploying.md": ["demo_out/export", "data"],
    "docs/guides/distillation.md": ["uncased_L-12_H-768_A-12", "data"],
    "docs/guides/family.md": ["data", "roberta-base", "xlm-roberta-base", "distilbert-base-cased",
                              "electra-small-discriminator", "electra-small-generator", "train-v1.1.json",
                              "dev-v1.1.json", "conll2003", "sentences.txt"],
}
# Sizes, not flags: the value a flag of the pages gets here, the flag itself kept.
SIZES = {"num_train_steps": "4", "num_warmup_steps": "1", "save_checkpoints_steps": "2", "log_steps": "2",
         "num_new_words": "20", "dupe_factor": "2"}
# The repository's tools, as a checkout has them beside the reader's files.
TOOLS = ["official_bert", "data_prep", "bench", "run_pretraining.py", "run_classifier.py", "run_distillation.py",
         "run_squad.py", "run_ner.py", "extract_features.py", "fill_mask.py", "convert_checkpoint.py",
         "query_saved_model.py", "predict.py", "export_tflite.py", "run_embeddings.py", "mine_hard_negatives.py"]


# The pages each test file runs: two files, so that pytest-xdist's workers (--dist loadfile) share them.
DEPLOYING = {"docs/guides/distillation.md", "docs/guides/features.md", "docs/guides/keras.md",
             "docs/guides/checkpoints.md", "docs/guides/domain-vocabulary.md", "docs/guides/serving.md",
             "docs/guides/deploying.md", "docs/guides/family.md"}


def runnable_pages():
    """The pages with a block to run."""
    return [page for page in all_pages() if any(reason is None for _, _, reason, _ in code_blocks(page))]


def with_sizes(command):
    """A shell command with each SIZES flag's value replaced by the tiny one."""
    for flag, value in SIZES.items():
        command = re.sub(rf"(--{flag}=)[^\s\\]+", rf"\g<1>{value}", command)
    return command


def printed(after):
    """What the text after a block says the block prints (`prints \\`X\\``...): the backticked parts of that
    sentence, or []."""
    match = re.match(r"\s*prints ([^.]*(?:\.[^\s.][^.]*)*)", after)
    return re.findall(r"`([^`]+)`", match.group(1)) if match else []


def reader_directory(root, page, inputs):
    """An empty directory with the tools of a checkout and what the page's reader brings."""
    os.makedirs(root, exist_ok=True)
    for tool in TOOLS:
        os.symlink(os.path.join(REPO, tool), os.path.join(root, tool))
    for name in INPUTS[page_id(page)]:
        source, target = os.path.join(inputs, name), os.path.join(root, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        (shutil.copytree if os.path.isdir(source) else shutil.copyfile)(source, target)
    # `python` and `.venv/bin/python` are the suite's interpreter (a script: a link would lose its virtualenv).
    bin_dir = os.path.join(root, ".venv", "bin")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "python"), "w", encoding="utf-8") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    os.chmod(os.path.join(bin_dir, "python"), 0o755)
    return bin_dir


def run_page(page, directory, inputs, monkeypatch):
    """Runs a page's blocks but those marked norun, in order, in `directory`; returns how many of each kind ran."""
    bin_dir = reader_directory(directory, page, inputs)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"], PYTHONPATH=REPO, CUDA_VISIBLE_DEVICES="",
               TF_CPP_MIN_LOG_LEVEL="2")
    monkeypatch.chdir(directory)
    ran = {"shell": 0, "python": 0}
    for number, (kind, code, reason, after) in enumerate(code_blocks(page), 1):
        if reason is not None:
            continue
        where = f"{page_id(page)}, block {number} ({kind})"
        if kind == "shell":
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", with_sizes(code)], cwd=directory, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, f"{where} failed:\n{code}\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
        else:
            done = subprocess.run([sys.executable, "-c", code], cwd=directory, env=env, capture_output=True,
                                  text=True, timeout=900)
            assert done.returncode == 0, f"{where} failed:\n{code}\n{done.stderr[-6000:]}"
            for shown in printed(after):
                assert shown in done.stdout, f"{where}: the page says it prints {shown!r}; it printed:\n{done.stdout}"
        ran[kind] += 1
    return ran
