"""The one exception type of pretraining-data generation."""

from official_bert.errors import Error


class PretrainingDataError(Error):
    """Input that cannot make pretraining data; the message names the flag, file or line and what was expected."""
