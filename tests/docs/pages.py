"""The documentation's pages, as the docs tests read them: README.md and every Markdown file under docs/."""

import glob
import os
import re
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(REPO, "docs")
README = os.path.join(REPO, "README.md")
# A code block preceded by this comment is not run by tests/docs/test_guides.py; the comment says why
# (`<!-- norun: needs Google's BERT-Base download -->`).
NORUN = re.compile(r"<!--\s*norun:\s*(\S[^>]*?)\s*-->\s*$")
# The fences of the blocks a reader runs: shell commands and Python. Others (text, json) are outputs and data.
SHELL, PYTHON = ("bash", "sh", "shell"), ("python",)


def docs_pages():
    """docs/'s Markdown files, sorted."""
    return sorted(glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True))


def all_pages():
    """README.md, then docs/'s pages."""
    return [README] + docs_pages()


def page_id(path):
    """A page's path from the repository root (a test id)."""
    return os.path.relpath(path, REPO)


def code_blocks(path):
    """A page's fenced code blocks a reader runs, in order: [(kind, code, reason not to run it or None, the text
    after the block up to the next one)], kind "shell" or "python"."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = []
    # A block may be indented, inside a list item: its fence's indentation is taken off every line.
    matches = list(re.finditer(r"^( *)```(\w*)\n(.*?)^\1```", text, re.S | re.M))
    for i, match in enumerate(matches):
        language = match.group(2)
        if language not in SHELL + PYTHON:
            continue
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        norun = NORUN.search(before)
        code = textwrap.dedent(match.group(3)) if match.group(1) else match.group(3)
        after = text[match.end():matches[i + 1].start() if i + 1 < len(matches) else len(text)]
        blocks.append(("shell" if language in SHELL else "python", code, norun.group(1) if norun else None, after))
    return blocks


def python_blocks(path):
    """A page's ```python blocks in order: [(code, reason not to run it or None)]."""
    return [(code, reason) for kind, code, reason, _ in code_blocks(path) if kind == "python"]
