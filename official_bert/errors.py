"""`Error`: the one base of every exception official_bert raises for input it cannot use.

Each part of the library has its own subclass (`ConfigError`, `CheckpointError`, `VocabError`, …) so a caller can
tell them apart, and each message names the flag, file or line and what was expected. A command-line tool catches
`Error` alone and prints its message in one line (`official_bert.tools.cli`). It derives from ValueError, as the
subclasses did before it, so code that caught ValueError keeps working.

Example:
>>> from official_bert.configs import ConfigError
>>> issubclass(ConfigError, Error)
True
"""


class Error(ValueError):
    """Input that official_bert cannot use; the message names the flag, file or line and what was expected."""
