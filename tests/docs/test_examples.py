"""The docs' Python examples run: each page's ```python blocks, in order and in one namespace (as a notebook runs
its cells), in an empty working directory. A block that needs a download or a long run is marked
`<!-- norun: why -->` on the line above it; those stay few."""

import os

import pytest

from tests.docs.pages import all_pages, page_id, python_blocks

# Pages whose examples take 9 s or more on 2 cores (a fit, a save and reload, an export).
SLOW = {"docs/guides/keras.md", "docs/guides/family.md"}


def _pages_with_examples():
    pages = [p for p in all_pages() if any(reason is None for _, reason in python_blocks(p))]
    return [pytest.param(p, id=page_id(p), marks=[pytest.mark.slow] if page_id(p) in SLOW else []) for p in pages]


def test_most_examples_run_and_each_one_not_run_says_why():
    blocks = [block for page in all_pages() for block in python_blocks(page)]
    not_run = [reason for _, reason in blocks if reason is not None]
    assert len(blocks) - len(not_run) >= 3
    assert len(not_run) <= 8, not_run
    assert all(len(reason.split()) >= 3 for reason in not_run), not_run


def run_examples(path):
    """Runs a page's Python blocks but those marked norun, in order, in one namespace, in the current directory."""
    namespace = {"__name__": "__docs_example__"}
    for number, (code, reason) in enumerate(python_blocks(path)):
        if reason is None:
            exec(compile(code, f"{page_id(path)}, python block {number + 1}", "exec"), namespace)


@pytest.mark.parametrize("path", _pages_with_examples())
def test_the_pages_python_examples_run(path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run_examples(path)
    assert capsys.readouterr().out  # each page's examples print what the page says they print


def test_a_failing_example_fails_and_a_norun_one_is_not_run(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- norun: needs a download first -->\n```python\nraise SystemExit\n```\n\n"
                    "```python\nprint(undefined_name)\n```\n", encoding="utf-8")
    assert [reason for _, reason in python_blocks(str(page))] == ["needs a download first", None]
    with pytest.raises(NameError, match="undefined_name"):
        run_examples(str(page))
