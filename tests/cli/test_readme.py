"""The README's (and the demo script's) commands use flags their tools define, and its REST request body is what
the exported serving_default takes."""

import json
import os
import re
import shlex

import numpy as np
import pytest
import tensorflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(REPO, "README.md")
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
    names = set(re.findall(r'DEFINE_\w+\(\s*"(\w+)"', source))
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


@pytest.mark.parametrize("path", [README, DEMO], ids=["README.md", "demo/run.sh"])
def test_every_command_uses_flags_its_tool_defines(path):
    commands = _commands(path)
    assert len(commands) >= 8
    tools = set()
    for tool, arguments in commands:
        assert os.path.isfile(os.path.join(REPO, tool)), f"{path}: no such tool {tool}"
        tools.add(tool)
        unknown = set(_flags_used(arguments)) - _defined_flags(tool)
        assert not unknown, f"{path}: {tool} has no flag(s) {sorted(unknown)}"
    if path == README:  # one section per command-line tool
        assert {"run_pretraining.py", "run_classifier.py", "run_squad.py", "fill_mask.py", "convert_checkpoint.py",
                "query_saved_model.py", "data_prep/build_vocab.py", "data_prep/create_pretraining_data.py",
                "official_bert/squad_evaluate.py"} <= tools


@pytest.mark.slow
def test_the_rest_request_body_is_what_serving_default_takes(tmp_path):
    from official_bert import BertClassifier, BertConfig, BertEncoder
    from official_bert.export import export_classifier
    from official_bert.text.tokenizer_spec import TokenizerSpec

    with open(README, encoding="utf-8") as f:
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
