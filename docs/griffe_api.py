"""Griffe extensions for the API pages, which griffe reads from the source without importing it.

- `DoctestExamples`: the library's docstrings end with their doctests under `Example:`, not indented; griffe's Google
  parser reads that as Markdown text (`>>> x` a quote, an output `[True]` a link). Headed `Examples:` and indented,
  they are its examples section, rendered as code (docs/hooks.py gives each a copy button that copies the code
  alone).
- `ConstantDefaults`: a parameter whose default is a module constant (`learning_rate=LEARNING_RATE`) is shown with
  the constant's value (`5e-05`), as `help()` shows it: the constant's name is internal.
"""

import ast
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


class ConstantDefaults(griffe.Extension):
    """Replaces a default that names a constant of the package (`LEARNING_RATE`, `text_model.BATCH_SIZE`) by the
    constant's literal value, once the whole package is loaded (so that imported names resolve too)."""

    def on_package(self, *, pkg, **kwargs):
        for function in _functions(pkg):
            for parameter in function.parameters:
                if isinstance(parameter.default, (griffe.ExprName, griffe.ExprAttribute)):
                    value = _literal(function.module, str(parameter.default))
                    if value is not None:
                        parameter.default = value


def _functions(obj):
    """Every function and method defined in `obj` and below it (aliases, i.e. imports, skipped)."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_function:
            yield member
        elif member.is_class or member.is_module:
            yield from _functions(member)


def _literal(module, name):
    """The source of the literal value that `name` (as written in `module`) is bound to, or None."""
    try:
        target = module[name]
        target = target.final_target if target.is_alias else target
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    if not target.is_attribute or target.value is None:
        return None
    source = str(target.value)
    try:
        ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return None
    return source
