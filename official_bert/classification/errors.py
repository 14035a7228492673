"""The one exception type of the classification data pipeline."""

from official_bert.errors import Error


class ClassificationDataError(Error):
    """Task data that cannot be used; the message names the task, file and line, or flag, and what was expected."""
