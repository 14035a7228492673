"""The documentation site builds with no warning, from the source alone (no TensorFlow imported), and its
benchmark plots are the plots script's output from the figures file, each figure with its machine, date, command and
peer."""

import json
import os
import re
import subprocess
import sys

import pytest

from tests.docs.pages import DOCS, README, REPO, all_pages, docs_pages, page_id

FIGURES = os.path.join(DOCS, "benchmarks", "figures.json")


def test_the_site_builds_strictly_with_no_warning_and_without_tensorflow(site):
    assert site.returncode == 0, site.output
    assert "WARNING" not in site.output, site.output
    assert not site.imported_tensorflow, ("building the API pages imported TensorFlow: griffe must read the source "
                                          "statically")
    # Every page became HTML, the API pages with their objects' docstrings, signatures and doctests rendered as code.
    for page in docs_pages():
        name = os.path.relpath(page, DOCS)[:-3]
        html = os.path.join(site.path, "index.html" if name == "index" else
                            (name[:-len("index")] if name.endswith("index") else name + "/") + "index.html")
        assert os.path.isfile(html), f"{page_id(page)} was not built"
    api = site.page("api/keras_models/TextClassifier")
    assert "from_checkpoint" in api and "label_list" in api
    assert 'class="doc doc-heading"' in api
    assert "&gt;&gt;&gt;" in api and "<blockquote>" not in api  # the Example: doctests as a code block
    assert os.path.isfile(os.path.join(site.path, "benchmarks", "train_step.png"))


def test_a_broken_link_fails_the_build(tmp_path):
    # The same configuration over a copy of docs/ with one link to a page that does not exist.
    import shutil

    shutil.copytree(DOCS, tmp_path / "docs")
    with open(tmp_path / "docs" / "guides" / "glue.md", "a", encoding="utf-8") as f:
        f.write("\nSee [the missing page](no-such-page.md).\n")
    with open(os.path.join(REPO, "mkdocs.yml"), encoding="utf-8") as f:
        config = f.read()
    # The paths of the docs' own code, relative to the checkout, made absolute.
    config = config.replace("paths: [.]", f"paths: [{REPO!r}]").replace("docs/griffe_api.py", os.path.join(
        DOCS, "griffe_api.py")).replace("- docs/hooks.py", f"- {os.path.join(DOCS, 'hooks.py')}").replace(
        "custom_dir: docs/overrides", f"custom_dir: {os.path.join(DOCS, 'overrides')}")
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=tmp_path, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def test_every_page_is_in_the_navigation():
    with open(os.path.join(REPO, "mkdocs.yml"), encoding="utf-8") as f:
        listed = set(re.findall(r"(\S+\.md)\s*$", f.read(), re.M))
    assert {os.path.relpath(p, DOCS) for p in docs_pages()} == listed


def test_the_plots_are_the_scripts_output_from_the_figures(tmp_path):
    sys.path.insert(0, os.path.join(DOCS, "benchmarks"))
    try:
        import plots
    finally:
        sys.path.pop(0)
    written = plots.make_plots(FIGURES, str(tmp_path))
    with open(FIGURES, encoding="utf-8") as f:
        ids = [figure["id"] for figure in json.load(f)["figures"]]
    assert sorted(os.path.basename(p) for p in written) == sorted(f"{i}.png" for i in ids)
    committed = sorted(n for n in os.listdir(os.path.join(DOCS, "benchmarks")) if n.endswith(".png"))
    assert committed == sorted(os.path.basename(p) for p in written)
    for path in written:
        with open(path, "rb") as new, open(os.path.join(DOCS, "benchmarks", os.path.basename(path)), "rb") as old:
            assert new.read() == old.read(), f"{os.path.basename(path)} is not plots.py's output: run make docs"


def _shown(value, text):
    """Whether a figure's value is written on its page, in any of the forms the tables use (1486 as 1,486, 24100 ms
    as 24.1 s, 1.00 as 1.00M)."""
    if isinstance(value, str) or value is None:
        return True
    forms = {f"{value:,}", f"{value:g}", f"{value:,.1f}", f"{value:.2f}", f"{value / 1000:g}"}
    return any(re.search(r"(?<![\d.])" + re.escape(form) + r"(?![\d])", text) for form in forms)


def test_every_figure_names_its_machine_date_command_and_peer_and_is_on_its_page():
    with open(FIGURES, encoding="utf-8") as f:
        figures = json.load(f)["figures"]
    assert len(figures) >= 5
    for figure in figures:
        for key in ("machine", "command", "peer", "title", "unit"):
            assert figure.get(key), f"{figure['id']}: no {key}"
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", figure["date"]), figure["id"]
        assert re.search(r"\bbench\.\w+|make \w+", figure["command"]), figure["id"]
        with open(os.path.join(DOCS, figure["page"]), encoding="utf-8") as f:
            page = f.read()
        assert f"{figure['id']}.png" in page or figure["page"] != "benchmarks/index.md", figure["id"]
        for row in figure["rows"]:
            for value in row:
                assert _shown(value, page), f"{figure['id']}: {value} is not on {figure['page']}"


# How the software was made is not what it does.
MAKING_OF = ["this round", "lent to this project", "other engineers", "this project's machine",
             "this project's 2-core", "this project's task", "at hand offline", "reachable offline",
             "the bf16 issue", "gdb", "for the record"]
# A commit's name: 7 to 40 hex digits, letters and digits both.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


@pytest.mark.parametrize("path", all_pages(), ids=page_id)
def test_no_page_speaks_of_how_the_software_was_made(path):
    with open(path, encoding="utf-8") as f:
        text = f.read().lower()
    assert not [phrase for phrase in MAKING_OF if phrase in text]
    assert not COMMIT.findall(text), "a page names a commit"


def test_the_benchmarks_page_opens_with_its_summary_and_stays_short():
    with open(os.path.join(DOCS, "benchmarks", "index.md"), encoding="utf-8") as f:
        text = f.read()
    sections = re.findall(r"^## (.+)$", text, re.M)
    assert sections[0] == "Summary"
    summary = text.split("## Summary")[1].split("\n## ")[0]
    header = [cell.strip() for cell in summary.split("\n|")[1].split("|")]
    assert header[:4] == ["workload", "official_bert", "peer, same run", "ratio"], header
    assert header[4].startswith("machine") and header[5] == "date", header
    rows = [line for line in summary.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) >= 8
    for row in rows:
        assert re.search(r"\| \d{4}-\d\d-\d\d \|$", row), row
    assert len(text.splitlines()) <= 300


def _features(path):
    """A page's list of what the package does: the bullets after its first paragraph."""
    with open(path, encoding="utf-8") as f:
        return f.read().split("you can train, save, load and serve:\n\n", 1)[1].split("\n\n", 1)[0]


def test_the_home_page_lists_what_readme_lists():
    assert _features(os.path.join(DOCS, "index.md")) == _features(README)


def test_every_page_names_the_version_and_links_to_its_source(site):
    sys.path.insert(0, DOCS)
    try:
        from hooks import version
    finally:
        sys.path.pop(0)
    for page in docs_pages():
        name = os.path.relpath(page, DOCS)[:-3]
        html = site.page("index" if name == "index" else name[:-len("/index")] if name.endswith("/index") else name)
        assert f"official_bert {version()}" in html, name
        source = re.search(r'href="([^"]*_sources/[^"]*)"', html)
        assert source, name
        target = os.path.normpath(os.path.join(site.path, name if name != "index" else "", source.group(1)))
        if name.endswith("index") and name != "index":
            target = os.path.normpath(os.path.join(site.path, name[:-len("index")], source.group(1)))
        with open(target, encoding="utf-8") as f, open(page, encoding="utf-8") as original:
            assert f.read() == original.read(), name


def test_the_navigation_names_hugging_face_where_it_loads_its_checkpoints():
    with open(os.path.join(REPO, "mkdocs.yml"), encoding="utf-8") as f:
        assert re.search(r"^\s+- [^:]*Hugging Face[^:]*: guides/checkpoints\.md$", f.read(), re.M)
