"""The one exception type of the NER library."""

from official_bert.errors import Error


class NerError(Error):
    """NER data or settings that cannot be used; the message names the file and line, or the flag, and what was
    expected."""
