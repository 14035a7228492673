"""Writes the command-line reference, docs/cli/: one page per tool with every flag its absl definitions give it —
type, default, range or choices, help — grouped by the module that defines it, as `--helpfull` groups them, and the
navigation's list of those pages in mkdocs.yml.

    python docs/flag_reference.py            # what `make docs` runs before building the site
    python docs/flag_reference.py --check    # exit 1, naming the pages that differ, where the files are stale

A tool is a module of official_bert/tools/ that defines flags of official_bert's when imported; the tools are
imported one after the other in a child process, each after the flags of the one before are removed (the tools define
some flags of the same names), and absl's FlagValues read after each. tests/docs/test_flag_reference.py holds the committed pages to this script's output."""

import argparse
import ast
import json
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(REPO, "official_bert", "tools")
CLI = os.path.join(REPO, "docs", "cli")
MKDOCS = os.path.join(REPO, "mkdocs.yml")
# The navigation's tool pages, between these lines of mkdocs.yml.
NAV_START = "      # The tools' pages: written by docs/flag_reference.py."
NAV_END = "      # (end of the tools' pages)"
OWN = "official_bert."

# Run in a child process: imports each tool named in argv in turn and prints {tool: its flags, grouped by
# defining module} as JSON. Before each, the flags official_bert defined for the one before are removed and the
# tools' modules forgotten, so that each tool defines its flags afresh (several define the same names), as in a
# process of its own; TensorFlow is imported once.
_READ_FLAGS = r"""
import importlib, json, sys
from absl import flags

FLAGS = flags.FLAGS
read, unloaded = {}, []


def _declared(declared):
    # What tools/flag_kinds.py says of a flag: a path's kind, a number's range.
    if declared is None or declared.kind in ("switch", "choice", "text"):
        return {}
    if declared.kind in ("number", "numbers"):
        return {"range": declared.range_text(), "list": declared.kind == "numbers"}
    return {"path": declared.kind}


for tool in sys.argv[1:]:
    for module, defined in list(FLAGS.flags_by_module_dict().items()):
        if module.startswith("official_bert."):
            for flag in list(defined):
                if flag.name in FLAGS:
                    delattr(FLAGS, flag.name)
    for module in [m for m in sys.modules if m.startswith("official_bert.tools.")]:
        # Kept alive: absl disclaims flag_kinds by id(module), and a freed module's id reused by the next tool's
        # module would file that tool's flags under importlib.
        unloaded.append(sys.modules.pop(module))
        # `from official_bert.tools import run_classifier` would find the package's attribute and import nothing.
        vars(sys.modules["official_bert.tools"]).pop(module.rsplit(".", 1)[1], None)
    importlib.import_module("official_bert.tools." + tool)
    from official_bert.tools import flag_kinds
    groups = []
    for module, defined in FLAGS.flags_by_module_dict().items():
        rows = []
        for flag in defined:
            parser = flag.parser
            rows.append({
                "name": flag.name, "type": flag.flag_type(), "boolean": flag.boolean, "default": flag.default,
                "help": flag.help or "", "choices": list(getattr(parser, "enum_values", None) or []),
                "lower": getattr(parser, "lower_bound", None), "upper": getattr(parser, "upper_bound", None),
                "short": flag.short_name, **_declared(flag_kinds.declared(flag.name))})
        if rows:
            groups.append({"module": module, "flags": rows})
    read[tool] = groups
json.dump(read, sys.stdout, default=str)
"""


def read_flags(tools):
    """{tool: its flag groups, as absl holds them once official_bert.tools.<tool> is imported}."""
    env = dict(os.environ, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-c", _READ_FLAGS, *tools], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    if done.returncode:
        raise SystemExit(f"importing the tools failed:\n{done.stderr}")
    return json.loads(done.stdout)


def candidates():
    """The modules of official_bert/tools/ that may be tools, by name."""
    return sorted(name[:-3] for name in os.listdir(TOOLS) if name.endswith(".py") and name != "__init__.py")


def _module_docstring(tool):
    with open(os.path.join(TOOLS, tool + ".py"), encoding="utf-8") as f:
        return ast.get_docstring(ast.parse(f.read())) or ""


def _scripts():
    """Console script names by tool module, from pyproject.toml's [project.scripts]."""
    with open(os.path.join(REPO, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    return {module: script for script, module in re.findall(r'^(bert-[\w-]+) = "official_bert\.tools\.(\w+):run"',
                                                           text, re.M)}


def command(tool):
    """How a checkout runs the tool: its shim at the root or in data_prep/, else the module."""
    for shim in (f"{tool}.py", f"data_prep/{tool}.py"):
        if os.path.isfile(os.path.join(REPO, shim)):
            return f"python {shim}"
    return f"python -m official_bert.tools.{tool}"


def _cell(text):
    """Text for a Markdown table cell: one line, no pipe, bracket, star or angle read as markup (inside `code`,
    only the pipe needs its escape)."""
    parts = " ".join(str(text).split()).split("`")
    for i, part in enumerate(parts):
        if i % 2:  # inside backticks
            parts[i] = part.replace("|", "\\|")
            continue
        for char, escaped in (("\\", "\\\\"), ("|", "\\|"), ("[", "\\["), ("]", "\\]"), ("*", "\\*"),
                              ("<", "&lt;"), (">", "&gt;"), ("_", "\\_")):
            part = part.replace(char, escaped)
        parts[i] = part
    return "`".join(parts)


def _help(flag):
    """The flag's help, less the `<a|b|c>: ` absl puts before an enum's (the Type column lists the choices)."""
    text = flag["help"]
    if flag["choices"]:
        text = re.sub(r"^<[^>]*>:\s*", "", text)
    return text


def _type(flag):
    """The flag's type as a reader needs it: its choices, its range."""
    if flag["boolean"]:
        return "bool"
    kind = {"string": "string", "int": "int", "integer": "int", "float": "float", "multi_string": "list, repeatable",
            "multi string": "list, repeatable", "list": "comma-separated list"}.get(flag["type"], flag["type"])
    if flag["choices"]:
        return "one of " + ", ".join(f"`{choice}`" for choice in flag["choices"])
    if flag.get("path"):
        return f"path ({flag['path']})"
    if flag.get("range"):
        each = flag["range"].removeprefix("a ").removeprefix("an ")
        return f"comma-separated, each {each}" if flag.get("list") else f"{kind}: {each}"
    bounds = []
    if flag["lower"] is not None:
        bounds.append(f"≥ {flag['lower']}")
    if flag["upper"] is not None:
        bounds.append(f"≤ {flag['upper']}")
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _default(flag):
    value = flag["default"]
    if value is None or value == []:
        return "—"
    if isinstance(value, list):
        value = ",".join(str(v) for v in value)
    if value == "":
        return '`""`'
    if isinstance(value, str) and value.startswith(REPO + os.sep):
        # A path inside the checkout, as the checkout's root names it: the same page wherever it is cloned.
        value = os.path.relpath(value, REPO)
    return f"`{str(value).lower() if isinstance(value, bool) else value}`"


def _flag_name(flag):
    name = f"--[no]{flag['name']}" if flag["boolean"] else f"--{flag['name']}"
    return f"`{name}`" + (f" (`-{flag['short']}`)" if flag["short"] else "")


def render(tool, groups, script=None):
    """The Markdown page of one tool from its flag groups (official_bert's modules in full; the others named)."""
    first_paragraph = _module_docstring(tool).split("\n\n")[0].replace("\n", " ")
    how = f"`{command(tool)}` from a checkout" + (f", or `{script}` after `pip install .`" if script else "")
    lines = [f"# {command(tool).split()[-1].replace('official_bert.tools.', '')}", "", first_paragraph, "",
             f"Run it as {how}. Every flag it takes is below, grouped by the module that defines it, as `--helpfull` "
             "groups them; a flag is given as `--name=value` (a boolean as `--name` or `--noname`).", ""]
    own = f"official_bert.tools.{tool}"
    # The tool's own module first, then the shared ones it calls, by name.
    ordered = sorted((group for group in groups if group["module"].startswith(OWN)),
                     key=lambda group: (group["module"] != own, group["module"]))
    for group in ordered:
        lines += [f"## {group['module']}", "", "| Flag | Type | Default | What it does |", "|---|---|---|---|"]
        for flag in sorted(group["flags"], key=lambda f: f["name"]):
            lines.append(f"| {_flag_name(flag)} | {_type(flag)} | {_default(flag)} | {_cell(_help(flag))} |")
        lines.append("")
    lines += ["## Other flags", "",
              "absl's own flags (`--flagfile`, `--helpfull`, `--logtostderr`, `--verbosity`, ...) and those the "
              "libraries it imports define are accepted too; `--helpfull` lists them.", ""]
    lines += ["<small>Generated from the tool's flag definitions by `docs/flag_reference.py` (`make docs` runs "
              "it).</small>", ""]
    return "\n".join(lines)


def render_index(tools):
    """The reference's first page: a line per tool."""
    lines = ["# Command-line reference", "",
             "Every command-line tool with every flag it takes: its type, default, range or choices and what it "
             "does, generated from the tools' own flag definitions. The [guides](../index.md#where-next) show them "
             "at work.", "", "| tool | what it does |", "|---|---|"]
    for tool, _ in tools:
        summary = _module_docstring(tool).split("\n\n")[0].replace("\n", " ")
        lines.append(f"| [{command(tool).split()[-1]}]({tool}.md) | {_cell(summary)} |")
    return "\n".join(lines + [""])


def generate():
    """{path: content} of the reference's pages and mkdocs.yml with their navigation."""
    names = candidates()
    read = read_flags(names)
    scripts = _scripts()
    # A tool defines flags of official_bert's own (cli.py, flags.py and sweep.py define none when imported).
    tools = [(name, read[name]) for name in names
             if any(group["module"].startswith(OWN) for group in read[name])]
    pages = {os.path.join(CLI, f"{tool}.md"): render(tool, groups, scripts.get(tool)) for tool, groups in tools}
    pages[os.path.join(CLI, "index.md")] = render_index(tools)
    pages[MKDOCS] = _with_navigation([tool for tool, _ in tools])
    return pages


def _with_navigation(tools):
    with open(MKDOCS, encoding="utf-8") as f:
        config = f.read()
    start, end = config.index(NAV_START), config.index(NAV_END)
    entries = "".join(f"      - {tool}.py: cli/{tool}.md\n" for tool in sorted(tools))
    return config[:start] + NAV_START + "\n" + entries + config[end:]


def stale(pages):
    """The paths whose content on disk differs from `pages` (or that are not there), and reference pages on disk
    that `pages` does not hold."""
    differ = []
    for path, content in pages.items():
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() == content:
                    continue
        except FileNotFoundError:
            pass
        differ.append(path)
    if os.path.isdir(CLI):
        differ += [os.path.join(CLI, name) for name in os.listdir(CLI) if os.path.join(CLI, name) not in pages]
    return sorted(differ)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the files are stale")
    args = parser.parse_args()
    pages = generate()
    differ = stale(pages)
    if args.check:
        if differ:
            print("stale (run `python docs/flag_reference.py`):", *[os.path.relpath(p, REPO) for p in differ])
            sys.exit(1)
        return
    os.makedirs(CLI, exist_ok=True)
    for path in differ:
        if path in pages:
            with open(path, "w", encoding="utf-8") as f:
                f.write(pages[path])
        else:
            os.remove(path)
    print(f"{len(pages) - 2} tools; wrote {len(differ)} file(s)")


if __name__ == "__main__":
    main()
