"""tensorflow-text, imported only where it is used: SentencePiece in the graph and the `wordpiece="tf_text"` path.

Everything else in official_bert (WordPiece in the graph included) needs TensorFlow alone, and so do the
SavedModels it exports with WordPiece vocabularies.
"""

from official_bert.errors import Error

INSTALL = "pip install tensorflow-text==2.21.1 (the version requirements.txt pins)"


class TensorflowTextError(Error):
    """tensorflow-text is needed for what was asked, and is not installed."""


def import_tf_text(what):
    """Returns the `tensorflow_text` module, or raises `TensorflowTextError` saying that `what` needs it.

    Args:
        what: what needs it, e.g. "SentencePiece in the graph".

    Example:
    >>> import_tf_text("SentencePiece in the graph").__name__
    'tensorflow_text'
    """
    try:
        import tensorflow_text
    except ImportError as e:
        raise TensorflowTextError(f"{what} needs tensorflow-text, which cannot be imported ({e}): {INSTALL}; "
                                  "WordPiece vocabularies need only TensorFlow") from None
    return tensorflow_text
