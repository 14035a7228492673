"""The one exception type of the SQuAD library."""

from official_bert.errors import Error


class SquadError(Error):
    """Input that SQuAD processing cannot use; the message names the file or flag and what was expected."""
