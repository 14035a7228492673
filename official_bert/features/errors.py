"""The one exception type of feature extraction."""

from official_bert.errors import Error


class FeatureError(Error):
    """Input, flags or outputs of feature extraction that cannot be used; the message names the flag, file or
    line and what was expected."""
