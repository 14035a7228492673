"""The one exception type of the SQuAD library."""


class SquadError(ValueError):
    """Input that SQuAD processing cannot use; the message names the file or flag and what was expected."""
