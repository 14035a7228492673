"""Text: the Python tokenizers (the original's WordPiece `tokenization.py`, SentencePiece, vocabulary learning) and
the in-graph ones that match them id for id, with packing.

Python (no TensorFlow): `tokenization.py` (also importable as `official_bert.tokenization`),
`sentencepiece_tokenizer.py`, `vocab_builder.py`, `basic_tokenizer`'s tables in `unicode_tables.py`.

In the graph: WordPiece (`BertTokenizer`, core TensorFlow ops by default) and packing (`BertPackInputs`,
`BertPreprocessor`); only `GraphSentencePieceTokenizer` and `BertTokenizer(wordpiece="tf_text")` need
tensorflow-text, imported when they are built. These names are imported on first use (PEP 562), so the Python
tokenizers load without TensorFlow.
"""

import importlib

_EXPORTS = {
    "BertTokenizer": "official_bert.text.bert_tokenizer",
    "BertPackInputs": "official_bert.text.pack_inputs",
    "BertPreprocessor": "official_bert.text.preprocessing",
    "GraphSentencePieceTokenizer": "official_bert.text.sentencepiece_layer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'official_bert.text' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
