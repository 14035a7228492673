"""The one exception type of pretraining-data generation."""


class PretrainingDataError(ValueError):
    """Input that cannot make pretraining data; the message names the flag, file or line and what was expected."""
