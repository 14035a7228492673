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


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM, with what the interrupted work left (e.g. which sweep run stopped, and at which step):
    a tool prints `interrupted <message>` and exits with status 130, as for Ctrl-C.

    Example:
    >>> from official_bert.errors import Interrupted
    >>> str(Interrupted("in sweep run 2 of 4; its checkpoint of step 54 is saved"))
    'in sweep run 2 of 4; its checkpoint of step 54 is saved'
    """
