"""The one exception type of distillation."""

from official_bert.errors import Error


class DistillationError(Error):
    """A teacher, student or data that cannot be distilled together; the message names the flag or file and what
    was expected."""
