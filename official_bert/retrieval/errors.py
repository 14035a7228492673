"""The one exception type of the retrieval and sentence-embedding data pipeline."""

from official_bert.errors import Error


class RetrievalDataError(Error):
    """Training pairs, a retrieval set or a setting that cannot be used; the message names the file and row, or the
    flag, and what was expected."""
