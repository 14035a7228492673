"""The one exception type of the classification data pipeline."""


class ClassificationDataError(ValueError):
    """Task data that cannot be used; the message names the task, file and line, or flag, and what was expected."""
