"""mkdocs hooks (mkdocs.yml's `hooks:`), run by `make docs` and every site build:

- the version, read from pyproject.toml, in every page's footer with a link to the page's Markdown source, which
  the build copies beside the HTML (`_sources/<page>.md.txt`);
- a copy button that copies runnable code: a doctest block (`>>> ` prompts and outputs, as the API pages show the
  docstrings' examples) copies its statements alone, without prompts or outputs.
"""

import html
import os
import re
import shutil
import tomllib

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = "_sources"

# A highlighted code block: the element the copy button reads (`data-copy` on it replaces the text it copies).
_BLOCK = re.compile(r'<div class="highlight">(<pre>.*?</pre>)', re.S)
_PROMPT = '<span class="gp">'
# A doctest directive at the end of a statement (`# doctest: +ELLIPSIS`): for the doctest runner, not the reader.
_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")


def version():
    """The package's version, as pyproject.toml states it."""
    with open(os.path.join(_ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]["version"]


def doctest_source(text):
    """The statements of a doctest session (`>>> ` and `... ` lines) without their prompts; outputs dropped."""
    lines = []
    for line in text.splitlines():
        if line.startswith((">>> ", "... ")) or line in (">>>", "..."):
            lines.append(_DIRECTIVE.sub("", line[4:]))
    return "\n".join(lines).strip("\n") + "\n"


def copyable(page_html):
    """`page_html` with a `data-copy` attribute, the runnable code, on each doctest block."""

    def mark(match):
        block = match.group(1)
        if _PROMPT not in block:
            return match.group(0)
        code = html.unescape(re.sub(r"<[^>]+>", "", block))
        return f'<div class="highlight" data-copy="{html.escape(doctest_source(code), quote=True)}">{block}'

    return _BLOCK.sub(mark, page_html)


def on_config(config, **kwargs):
    config.extra["version"] = version()
    # The header and each tab's title name the version too.
    config.site_name = f"{config.site_name} {config.extra['version']}"
    return config


def on_page_content(html_text, page, **kwargs):
    return copyable(html_text)


def on_post_build(config, **kwargs):
    """Copies each page's Markdown to _sources/, where the footer's "page source" link points."""
    for root, _, names in os.walk(config.docs_dir):
        for name in names:
            if name.endswith(".md") and "overrides" not in os.path.relpath(root, config.docs_dir).split(os.sep):
                source = os.path.join(root, name)
                target = os.path.join(config.site_dir, SOURCES, os.path.relpath(source, config.docs_dir) + ".txt")
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(source, target)
