"""official_bert: BERT for TensorFlow 2 / Keras 3."""

from official_bert.configs import BertConfig, ConfigError
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.models import (BertClassifier, BertMultipleChoice, BertPretrainer, BertSpanLabeler,
                                  BertTokenClassifier)
from official_bert.checkpoints import load_checkpoint, save_checkpoint
from official_bert.optimization import create_optimizer
