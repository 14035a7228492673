"""The API reference a Keras user can work from: each Keras model's page shows the methods it inherits (compile, fit,
evaluate, predict, save) with its own, each parameter with its type and its default as a value; a parameter reads
"required" only where it has no default; the pages name no internal helper; and each example's copy button copies
code that runs by itself (no prompts, no outputs, every name it uses imported or defined in it)."""

import ast
import builtins
import glob
import html
import os
import re
import sys

import griffe
import pytest

from tests.docs.pages import DOCS, REPO

# Each Keras model's page and the methods a Keras user needs on it (the Keras ones included).
KERAS_PAGES = {
    "TextClassifier": ["from_checkpoint", "compile", "fit", "evaluate", "predict", "classify", "probabilities",
                       "save", "export", "save_checkpoint"],
    "TextEmbedder": ["from_checkpoint", "compile", "fit", "evaluate", "predict", "save", "export",
                     "save_sentence_transformers"],
    "MaskedLM": ["from_checkpoint", "fill_mask", "compile", "fit", "evaluate", "predict", "save"],
    "TextPreprocessor": ["from_spec", "pack_masked"],
}
# Names in the pages' prose that are also internal helpers' names: a SavedModel signature's input (`text`) and files
# a user has (run_classifier.py; tokenization.py, the original's). A page's parameter names are allowed too.
NOT_INTERNAL = {"text", "run_classifier.py", "tokenization.py"}


def api_pages(site):
    return {os.path.relpath(os.path.dirname(path), site.path): open(path, encoding="utf-8").read()
            for path in glob.glob(os.path.join(site.path, "api", "**", "index.html"), recursive=True)}


def _section(page, anchor):
    """The HTML of one object's entry: from its heading to the next heading."""
    start = page.index(">", page.index(f'id="{anchor}"'))
    end = page.find('class="doc doc-heading"', start)
    return page[start:end if end > 0 else len(page)]


def parameter_rows(entry):
    """The (name, type, default) rows of an entry's Parameters table."""
    title = entry.find(">Parameters:<")
    if title < 0:
        return []
    table = entry[title:entry.index("</table>", title)]
    rows = []
    for row in re.findall(r'<tr class="doc-section-item">(.*?)</tr>', table, re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in re.findall(r"<td>(.*?)</td>", row,
                                                                                            re.S)]
        rows.append((cells[0], cells[1], cells[3]))
    return rows


@pytest.fixture(scope="module")
def package():
    """official_bert as griffe reads it for the pages (statically, with the docs' extensions)."""
    sys.path.insert(0, DOCS)
    try:
        import griffe_api
    finally:
        sys.path.pop(0)
    loader = griffe.GriffeLoader(allow_inspection=False, search_paths=[REPO],
                                 extensions=griffe.load_extensions(griffe_api.ConstantDefaults()))
    loaded = loader.load("official_bert")
    loader.resolve_aliases(implicit=False, external=False)
    return loaded


def _signature(package, anchor, page_object):
    """The parameters of the function (or class constructor) an anchor names, as griffe reads them."""
    obj = package[anchor.split(".", 1)[1]] if anchor.count(".") else package
    if obj.is_alias:
        obj = obj.final_target
    if obj.is_class:
        obj = obj.all_members["__init__"]
        obj = obj.final_target if obj.is_alias else obj
    return {p.name: p for p in obj.parameters if p.name not in ("self", "cls")}


@pytest.mark.parametrize("name", sorted(KERAS_PAGES))
def test_each_keras_page_shows_its_methods_with_typed_parameters(site, name):
    page = site.page(f"api/keras_models/{name}")
    anchor = f"official_bert.keras_models.{name}"
    assert parameter_rows(_section(page, anchor)), f"{name}: the constructor's parameters are not shown"
    for method in KERAS_PAGES[name]:
        entry = _section(page, f"{anchor}.{method}")
        rows = parameter_rows(entry)
        assert rows, f"{name}.{method}: no parameters table"
        untyped = [row[0] for row in rows if not row[1] and not row[0].startswith("*")]
        assert not untyped, f"{name}.{method}: no type for {untyped}"
    # Nothing beside what a user calls: not the hooks Keras calls, nor the helpers the methods share.
    shown = set(re.findall(rf'id="{re.escape(anchor)}\.(\w+)"', page))
    assert shown <= set(KERAS_PAGES[name]) | {"labels", "spec", "tokenizer"}, shown - set(KERAS_PAGES[name])


def test_a_parameter_reads_required_only_where_it_has_no_default(site, package):
    checked = 0
    for page_name, page in api_pages(site).items():
        for anchor in re.findall(r'id="(official_bert\.[\w.]+)"', page):
            rows = parameter_rows(_section(page, anchor))
            if not rows:
                continue
            signature = _signature(package, anchor, page)
            for name, _, default in rows:
                bare = name.lstrip("*")
                assert bare in signature, f"{page_name}: {anchor} documents {name!r}, not one of its parameters"
                has_default = signature[bare].default is not None or name.startswith("*")
                assert (default == "required") == (not has_default), f"{page_name}: {anchor}({name}): {default}"
                checked += 1
    assert checked > 100


def test_defaults_are_values_not_the_names_of_constants(site):
    for page_name, page in api_pages(site).items():
        for signature in re.findall(r'class="doc-signature[^"]*".*?</code>', page, re.S):
            text = html.unescape(re.sub(r"<[^>]+>", "", signature))
            assert not re.search(r"=\s*(?:\w+\.)*[A-Z][A-Z0-9_]{2,}\b", text), f"{page_name}: {text}"


def _internal_names(package):
    """The functions and classes official_bert defines that no API page documents, and its modules' names."""
    names, modules = {}, set()

    def walk(module):
        for name, member in module.members.items():
            if member.is_alias:
                continue
            if member.is_module:
                modules.add(name)
                walk(member)
            elif (member.is_function or member.is_class) and not name.startswith("_"):
                names[name] = member.path

    walk(package)
    return names, modules


def test_the_pages_name_no_internal_helper(site, package):
    pages = api_pages(site)
    documented = {anchor.rsplit(".", 1)[-1] for page in pages.values()
                  for anchor in re.findall(r'id="(official_bert[\w.]*)"', page)}
    defined, modules = _internal_names(package)
    found = []
    for page_name, page in pages.items():
        prose = re.sub(r'<div class="highlight".*?</div>', "", page[page.find("<article"):page.find("</article>")],
                       flags=re.S)
        parameters = {row[0].lstrip("*") for anchor in re.findall(r'id="(official_bert[\w.]*)"', page)
                      for row in parameter_rows(_section(page, anchor))}
        for code in set(re.findall(r"<code>([^<]*)</code>", prose)):
            code = html.unescape(code)
            parts = code.split(".")
            if code in NOT_INTERNAL or code in parameters:
                continue
            if re.fullmatch(r"\w+", code) and code in defined and code not in documented:
                found.append((page_name, code))
            elif re.fullmatch(r"\w+(\.\w+)+", code) and parts[0] in modules and parts[-1] not in documented:
                found.append((page_name, code))
            elif re.fullmatch(r"\w+\.py", code) and parts[0] in modules:
                found.append((page_name, code))
    assert not found, "\n".join(map(str, sorted(set(found))))


def undefined_names(source):
    """The names `source` reads that it neither defines nor imports, and that are not builtins."""
    tree = ast.parse(source)
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
                  - bound)


def test_undefined_names_finds_what_a_block_uses_without_importing():
    assert undefined_names("import numpy as np\nx = np.ones(2)\nprint(x, y, [z for z in x])\n") == ["y"]
    assert undefined_names("from official_bert import TextClassifier\nTextClassifier\nBertEncoder\n") == [
        "BertEncoder"]


def test_each_example_copies_as_code_that_runs_by_itself(site):
    blocks, wrong = 0, []
    for page_name, page in api_pages(site).items():
        for block in re.findall(r'<div class="highlight"[^>]*>', page):
            attribute = re.search(r'data-copy="([^"]*)"', block)
            if attribute is None:
                continue
            code = html.unescape(attribute.group(1))
            assert ">>>" not in code and "Traceback" not in code, f"{page_name}:\n{code}"
            if undefined_names(code):
                wrong.append(f"{page_name}: {undefined_names(code)} used, not imported:\n{code}")
            blocks += 1
        # A doctest block without the copyable code would copy its prompts.
        doctests = page.count('<span class="gp">&gt;&gt;&gt; </span>')
        assert not doctests or 'data-copy="' in page, page_name
    assert not wrong, "\n".join(wrong)
    assert blocks > 40


def test_doctest_source_keeps_the_statements_without_prompts_or_outputs():
    sys.path.insert(0, DOCS)
    try:
        from hooks import copyable, doctest_source
    finally:
        sys.path.pop(0)
    session = (">>> import numpy as np\n>>> def f(x):\n...     return x + 1\n>>>\n>>> f(np.ones(2))  # doctest: +SKIP\n"
               "array([2., 2.])\n>>> print('done')\ndone\n")
    assert doctest_source(session) == "import numpy as np\ndef f(x):\n    return x + 1\n\nf(np.ones(2))\nprint('done')\n"
    marked = copyable('<div class="highlight"><pre><code><span class="gp">&gt;&gt;&gt; </span>x = "a"\n'
                      "<span class=\"go\">a</span></code></pre></div>"
                      '<div class="highlight"><pre><code>plain = 1</code></pre></div>')
    assert 'data-copy="x = &quot;a&quot;\n"' in marked
    assert marked.count("data-copy") == 1  # a block without prompts copies as it is
