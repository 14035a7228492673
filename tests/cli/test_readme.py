"""The commands of README, of every page of docs/ and of the demo script use flags their tools define; together the
pages show every command-line tool; the serving guide's REST request body is what the exported serving_default takes;
README stays short and its links lead to pages that exist."""

import json
import os
import re
import shlex

import numpy as np
import pytest
import tensorflow as tf

from tests.docs.pages import README, REPO, all_pages, docs_pages, page_id

SERVING_GUIDE = os.path.join(REPO, "docs", "guides", "serving.md")
DEMO = os.path.join(REPO, "demo", "run.sh")
SHARED_FLAGS = os.path.join(REPO, "official_bert", "tools", "flags.py")
# absl's own flags, which every absl tool accepts.
ABSL_FLAGS = {"helpfull", "helpshort", "help", "flagfile", "logtostderr", "verbosity", "v"}


def _commands(path):
    """Each `python TOOL ...` command of a file, with its continuation lines joined: (tool, [arguments])."""
    with open(path, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    commands = []
    for line in text.splitlines():
        match = re.match(r'\s*(?:(?:\.venv/bin/)?python|"\$PY")\s+(-m\s+)?(\S+)(.*)', line)
        if not match or not (match.group(2).endswith(".py") or match.group(1)):
            continue
        tool = match.group(2)
        if match.group(1):
            tool = tool.replace(".", "/") + ".py"
        commands.append((tool, match.group(3)))
    return commands


def _tool_source(tool):
    """A tool's source: the module in official_bert/tools/ that a checkout's shim (run_classifier.py, ...) runs."""
    with open(os.path.join(REPO, tool), encoding="utf-8") as f:
        source = f.read()
    shim = re.search(r"^from official_bert\.tools\.(\w+) import", source, re.M)
    if shim:
        with open(os.path.join(REPO, "official_bert", "tools", shim.group(1) + ".py"), encoding="utf-8") as f:
            source = f.read()
    return source


def _defined_flags(tool):
    """The flags a tool defines: absl DEFINE_*s (and those of the shared flag groups it calls) or argparse options."""
    source = _tool_source(tool)
    # A tool that takes another tool's flags by importing it (run_distillation: run_classifier's task flags).
    for other in re.findall(r"^from official_bert\.tools import (run_\w+)", source, re.M):
        source += _tool_source(other + ".py")
    groups = re.findall(r"\b(define_\w+_flags)\(", source)
    if groups:
        with open(SHARED_FLAGS, encoding="utf-8") as f:
            shared = f.read()
        # Each group's own DEFINE_*s, and those of the groups it calls (define_finetuning_flags: the shared ones).
        bodies = dict(re.findall(r"^def (define_\w+_flags)\(.*?\n(.*?)(?=^def |\Z)", shared, re.S | re.M))
        seen = set()
        while groups:
            group = groups.pop()
            if group in bodies and group not in seen:
                seen.add(group)
                source += bodies[group]
                groups += re.findall(r"\b(define_\w+_flags)\(", bodies[group])
    # absl's DEFINE_*s, and tools/flag_kinds.py's define_path, define_integer, ...
    names = set(re.findall(r'(?:DEFINE_\w+|\bdefine_(?:path|text_list|text|integer|real|numbers))\(\s*"(\w+)"', source))
    names |= {f"no{name}" for name in names}  # absl's negated booleans
    names |= set(re.findall(r'add_argument\((?:"[^"]*",\s*)*"--([\w-]+)"', source))
    return names | ABSL_FLAGS


def _flags_used(arguments):
    # Placeholders such as `--flag …` or shell variables are not flags' values that matter here.
    try:
        words = shlex.split(arguments.replace("…", ""), comments=True)
    except ValueError:
        words = arguments.split()
    return [re.match(r"--([\w-]+)", w).group(1) for w in words if re.match(r"--[\w-]+", w)]


@pytest.mark.parametrize("path", all_pages() + [DEMO], ids=page_id)
def test_every_command_uses_flags_its_tool_defines(path):
    commands = _commands(path)
    if path in (README, DEMO):
        assert len(commands) >= (8 if path == DEMO else 1)
    for tool, arguments in commands:
        assert os.path.isfile(os.path.join(REPO, tool)), f"{path}: no such tool {tool}"
        unknown = set(_flags_used(arguments)) - _defined_flags(tool)
        assert not unknown, f"{path}: {tool} has no flag(s) {sorted(unknown)}"


def test_the_docs_show_every_command_line_tool():
    tools = {tool for page in docs_pages() for tool, _ in _commands(page)}
    assert {"run_pretraining.py", "run_classifier.py", "run_squad.py", "run_ner.py", "extract_features.py",
            "fill_mask.py", "convert_checkpoint.py", "query_saved_model.py", "predict.py", "export_tflite.py",
            "data_prep/build_vocab.py", "data_prep/create_pretraining_data.py", "data_prep/extend_vocab.py",
            "official_bert/squad_evaluate.py", "bench/train_step.py"} <= tools
    if os.path.isfile(os.path.join(REPO, "run_distillation.py")):
        assert "run_distillation.py" in tools


def test_the_flag_check_reads_commands_in_fenced_and_indented_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\npython run_classifier.py --task_name=mrpc \\\n    --no_such_flag=1\n```\n\n"
                    "    python -m bench.train_step --preset mini\n", encoding="utf-8")
    commands = _commands(str(page))
    assert [tool for tool, _ in commands] == ["run_classifier.py", "bench/train_step.py"]
    assert set(_flags_used(commands[0][1])) - _defined_flags("run_classifier.py") == {"no_such_flag"}
    assert not set(_flags_used(commands[1][1])) - _defined_flags("bench/train_step.py")


def test_readme_is_short_and_its_links_lead_to_pages_that_exist():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\((?!https?://|#)([^)#\s]+)(?:#[^)]*)?\)", text)
    docs_links = [link for link in links if link.startswith("docs/")]
    assert len(docs_links) >= 10, "README links into the docs: a guide per job, the API, the benchmarks"
    for link in links:
        assert os.path.exists(os.path.join(REPO, link)), f"README links to {link}, which does not exist"


@pytest.mark.slow
def test_the_rest_request_body_is_what_serving_default_takes(tmp_path):
    from official_bert import BertClassifier, BertConfig, BertEncoder
    from official_bert.export import export_classifier
    from official_bert.text.tokenizer_spec import TokenizerSpec

    with open(SERVING_GUIDE, encoding="utf-8") as f:
        body = json.loads(re.search(r"```json\n(.*?)```", f.read(), re.S).group(1))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "union", "is", "strong", "."]) + "\n")
    model = BertClassifier(BertEncoder(BertConfig(vocab_size=9, hidden_size=16, num_hidden_layers=1,
                                                  num_attention_heads=2, intermediate_size=32)), 3)
    path = export_classifier(str(tmp_path / "export"), model, TokenizerSpec(str(vocab)), 16, ["a", "b", "c"])

    # TF Serving's row format: a list of instances, each a map from input name to one row's value.
    signature = tf.saved_model.load(path).signatures[body["signature_name"]]
    inputs = {name: tf.constant([instance[name] for instance in body["instances"]]) for name in body["instances"][0]}
    outputs = signature(**inputs)
    assert set(outputs) == {"label", "probabilities", "logits"}
    np.testing.assert_allclose(outputs["probabilities"].numpy().sum(axis=-1), 1.0, rtol=1e-6)
