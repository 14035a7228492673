"""Networks: the BERT encoder."""

from official_bert.networks.bert_encoder import BertEncoder
