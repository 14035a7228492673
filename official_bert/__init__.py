"""official_bert: BERT for TensorFlow 2 / Keras 3."""

from official_bert.configs import BertConfig, ConfigError
