"""Keras layers that BERT is built from."""

from official_bert.layers.attention import MultiHeadSelfAttention
from official_bert.layers.dropout import Dropout
from official_bert.layers.embeddings import BertEmbeddings
from official_bert.layers.masked_lm_head import MaskedLMHead
from official_bert.layers.transformer_block import TransformerBlock
