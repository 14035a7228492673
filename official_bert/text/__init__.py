"""In-graph text preprocessing (tensorflow-text): tokenizers that match the Python ones id for id, packing."""

from official_bert.text.bert_tokenizer import BertTokenizer
from official_bert.text.pack_inputs import BertPackInputs
from official_bert.text.preprocessing import BertPreprocessor
from official_bert.text.sentencepiece_layer import SentencepieceTokenizer

__all__ = ["BertPackInputs", "BertPreprocessor", "BertTokenizer", "SentencepieceTokenizer"]
