"""What a reader cannot see around a name: whitespace and Unicode's format characters (category Cf: the zero-width
space U+200B, the joiners U+200C/U+200D, the word joiner U+2060, the byte-order mark U+FEFF, the soft hyphen, the
bidirectional marks). A label or a column name with them at an end prints like one without them, so the readers strip
them from labels ("pos\\u200b" is the class "pos", as "pos " is), compare labels without them, and show a name that
has them quoted, escapes visible (`shown`).
"""

import unicodedata


def _invisible(character):
    return character.isspace() or unicodedata.category(character) == "Cf"


def strip_invisible(text):
    """`text` without the whitespace and format characters at its ends.

    Example:
    >>> strip_invisible("\\ufeff pos\\u200b\\u00a0"), strip_invisible("a\\u200bb")
    ('pos', 'a\\u200bb')
    """
    start, end = 0, len(text)
    while start < end and _invisible(text[start]):
        start += 1
    while end > start and _invisible(text[end - 1]):
        end -= 1
    return text[start:end]


def without_format_characters(text):
    """`text` without any format character (where two spellings of a label are compared).

    Example:
    >>> without_format_characters("po\\u200bs\\u2060")
    'pos'
    """
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def shown(name):
    """`name` for a message: as it is, or quoted with its escapes (repr) when it has invisible characters at an end,
    holds a format character or is empty, so that 'label ' and 'label\\u200b' never print as label.

    Example:
    >>> print(shown("label"), shown("label "), shown("label\\u200b"), shown(""))
    label 'label ' 'label\\u200b' ''
    """
    if name and name == strip_invisible(name) and name == without_format_characters(name):
        return name
    return repr(name)


def invisible_difference(name):
    """What surrounds or hides in `name` that a reader cannot see, in words (for a message), or "".

    Example:
    >>> invisible_difference("label "), invisible_difference(" id"), invisible_difference("pos\\u200b")
    ('a space at its end', 'a space at its start', 'U+200B ZERO WIDTH SPACE at its end')
    """
    stripped = strip_invisible(name)
    if stripped == name:
        hidden = [c for c in name if unicodedata.category(c) == "Cf"]
        return f"{_named(hidden[0])} inside it" if hidden else ""
    where = name.find(stripped) if stripped else 0
    parts = []
    if where:
        parts.append(f"{_named(name[0])} at its start")
    if where + len(stripped) < len(name):
        parts.append(f"{_named(name[-1])} at its end")
    return " and ".join(parts)


def _named(character):
    if character == " ":
        return "a space"
    if character == "\t":
        return "a tab"
    return f"U+{ord(character):04X} {unicodedata.name(character, 'a control character')}"
