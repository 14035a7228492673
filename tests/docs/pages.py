"""The documentation's pages, as the docs tests read them: README.md and every Markdown file under docs/."""

import glob
import os
import re
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(REPO, "docs")
README = os.path.join(REPO, "README.md")
# A Python block preceded by this comment is not run by tests/docs/test_examples.py; the comment says why
# (`<!-- norun: needs Google's BERT-Base download -->`).
NORUN = re.compile(r"<!--\s*norun:\s*(\S[^>]*?)\s*-->\s*$")


def docs_pages():
    """docs/'s Markdown files, sorted."""
    return sorted(glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True))


def all_pages():
    """README.md, then docs/'s pages."""
    return [README] + docs_pages()


def page_id(path):
    """A page's path from the repository root (a test id)."""
    return os.path.relpath(path, REPO)


def python_blocks(path):
    """A page's ```python blocks in order: [(code, reason not to run it or None)]."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = []
    # A block may be indented, inside a list item: its fence's indentation is taken off every line.
    for match in re.finditer(r"^( *)```python\n(.*?)^\1```", text, re.S | re.M):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        norun = NORUN.search(before)
        code = textwrap.dedent(match.group(2)) if match.group(1) else match.group(2)
        blocks.append((code, norun.group(1) if norun else None))
    return blocks
