"""A griffe extension for the API pages. The library's docstrings end with their doctests under `Example:`, not
indented; griffe's Google parser reads that as Markdown text (`>>> x` a quote, an output `[True]` a link). Headed
`Examples:` and indented, they are its examples section, rendered as code."""

import re

import griffe

# The heading, at the docstring's own indentation, and everything after it.
_EXAMPLE = re.compile(r"^Example:[ \t]*\n(.*)\Z", re.M | re.S)


class DoctestExamples(griffe.Extension):
    """Turns each docstring's trailing `Example:` block into the `Examples:` section griffe parses as doctests."""

    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(
                lambda match: "Examples:\n" + re.sub(r"^(?=.)", "    ", match.group(1), flags=re.M),
                obj.docstring.value)
