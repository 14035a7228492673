"""The command-line reference (docs/cli/, written by docs/flag_reference.py from the tools' absl flags): a page per
tool, every flag the tool defines on it with its type, default and help, grouped by defining module; the site's
search finds each flag; the committed pages are the generator's output."""

import ast
import json
import os
import re
import sys

import pytest

from tests.cli.test_readme import ABSL_FLAGS, _defined_flags
from tests.docs.pages import DOCS, REPO

sys.path.insert(0, DOCS)
try:
    import flag_reference
finally:
    sys.path.pop(0)

CLI = os.path.join(DOCS, "cli")


def _tools():
    """The modules of official_bert/tools/ that define flags (their own DEFINE_s or a shared group's)."""
    tools = []
    for name in flag_reference.candidates():
        with open(os.path.join(flag_reference.TOOLS, name + ".py"), encoding="utf-8") as f:
            source = f.read()
        if re.search(r"^(flags\.DEFINE_\w+\(|define_\w+\()", source, re.M):
            tools.append(name)
    return tools


def _conditional_flags():
    """The shared flags a group defines only when its caller asks (`define_finetuning_flags(eval_batch_size=...)`):
    the static reading below cannot tell which tools have them; the generator's test does."""
    with open(os.path.join(flag_reference.TOOLS, "flags.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    definers = ("define_path", "define_text", "define_text_list", "define_integer", "define_real", "define_numbers")
    return {node.args[0].value for branch in ast.walk(tree) if isinstance(branch, ast.If)
            for node in ast.walk(branch) if isinstance(node, ast.Call) and (
                getattr(node.func, "attr", "").startswith("DEFINE_") or getattr(node.func, "id", "") in definers)
            and node.args and isinstance(node.args[0], ast.Constant)}


def _page_flags(tool):
    with open(os.path.join(CLI, f"{tool}.md"), encoding="utf-8") as f:
        return set(re.findall(r"^\| `--(?:\[no\])?(\w+)`", f.read(), re.M))


def test_every_tool_has_a_page_and_the_reference_no_other():
    assert len(_tools()) >= 16
    assert sorted(name[:-3] for name in os.listdir(CLI) if name != "index.md") == sorted(_tools())


@pytest.mark.parametrize("tool", _tools())
def test_every_flag_a_tool_defines_is_on_its_page(tool):
    shim = flag_reference.command(tool).split()[-1]
    defined = {name for name in _defined_flags(shim) - ABSL_FLAGS if not name.startswith("no")
               or name[2:] not in _defined_flags(shim)}
    missing = defined - _page_flags(tool) - _conditional_flags()
    assert not missing, f"docs/cli/{tool}.md lacks {sorted(missing)}: run `python docs/flag_reference.py`"


FAKE = [
    {"module": "absl.logging", "flags": [{"name": "verbosity", "type": "int", "boolean": False, "default": -1,
                                          "help": "Logging verbosity.", "choices": [], "lower": None,
                                          "upper": None, "short": "v"}]},
    {"module": "official_bert.tools.fake", "flags": [
        {"name": "steps", "type": "int", "boolean": False, "default": 10, "help": "How many <steps> | at *most*.",
         "choices": [], "lower": 1, "upper": 100, "short": None},
        {"name": "mode", "type": "enum", "boolean": False, "default": "a", "help": "<a|b>: The mode, `a_b`.",
         "choices": ["a", "b"], "lower": None, "upper": None, "short": None},
        {"name": "resume", "type": "bool", "boolean": True, "default": False, "help": "Resume.", "choices": [],
         "lower": None, "upper": None, "short": None},
        {"name": "names", "type": "list", "boolean": False, "default": None, "help": "[CLS] names.",
         "choices": [], "lower": None, "upper": None, "short": None},
        {"name": "out", "type": "string", "boolean": False, "default": os.path.join(REPO, "official_bert", "data"),
         "help": "Where.", "choices": [], "lower": None, "upper": None, "short": None}]},
]


def test_a_page_gives_each_flag_its_type_range_choices_and_default_and_leaves_absls_to_helpfull():
    page = flag_reference.render("run_classifier", FAKE, "bert-run-classifier")
    assert page.startswith("# run_classifier.py\n")
    assert "`bert-run-classifier`" in page
    assert "## official_bert.tools.fake" in page
    rows = [line for line in page.splitlines() if line.startswith("| `--")]
    assert rows == [
        "| `--mode` | one of `a`, `b` | `a` | The mode, `a_b`. |",
        "| `--names` | comma-separated list | — | \\[CLS\\] names. |",
        "| `--out` | string | `official_bert/data` | Where. |",  # the checkout's path, as its root names it
        "| `--[no]resume` | bool | `false` | Resume. |",
        "| `--steps` | int (≥ 1, ≤ 100) | `10` | How many &lt;steps&gt; \\| at \\*most\\*. |",
    ]
    assert "## absl.logging" not in page and "| `--verbosity`" not in page and "`--helpfull` lists them" in page


def test_the_sites_search_finds_every_flag(site):
    with open(os.path.join(site.path, "search", "search_index.json"), encoding="utf-8") as f:
        index = json.load(f)
    text = " ".join(doc["text"] + " " + doc["title"] for doc in index["docs"] if doc["location"].startswith("cli/"))
    flags = {name for tool in _tools() for name in _page_flags(tool)}
    assert len(flags) > 150
    assert not {name for name in flags if name not in text}


@pytest.mark.slow
def test_the_committed_pages_are_the_generators_output():
    # Every tool imported, as `make docs` does before building the site.
    assert not flag_reference.stale(flag_reference.generate()), "run `python docs/flag_reference.py`"
