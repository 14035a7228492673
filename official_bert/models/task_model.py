"""What every task model shares: the encoder's inputs, initializer and (de)serialization."""

import keras

from official_bert.layers.initializers import truncated_normal

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def encoder_inputs(shape=(None,)):
    """Fresh int32 `keras.Input`s under the TF Hub names."""
    return {name: keras.Input(shape=shape, dtype="int32", name=name) for name in ENCODER_INPUTS}


# The original's run_classifier.py and run_squad.py draw their output layers with stddev 0.02 whatever the
# config's initializer_range (which the encoder, the pooler and the pretraining heads use).
FINE_TUNING_HEAD_STDDEV = 0.02


def initializer(config):
    """A new initializer for a pretraining head's kernel: the config's initializer_range (see
    `layers.initializers.truncated_normal`)."""
    return truncated_normal(config.initializer_range)


def masked_lm_activation(config):
    """The masked-LM transform's activation: the one the config's family fixes (RoBERTa's and ELECTRA's heads compute
    exact GELU), else `hidden_act`.

    Example:
    >>> from official_bert import BertConfig
    >>> config = BertConfig.from_preset("tiny", vocab_size=10, family="electra", embedding_size=64)
    >>> masked_lm_activation(config), masked_lm_activation(BertConfig.from_preset("tiny", vocab_size=10))
    ('gelu_erf', 'gelu')
    """
    return config.family_traits.masked_lm_activation or config.hidden_act


def head_initializer():
    """A new initializer for a fine-tuning head's kernel: stddev 0.02, as the original's run scripts."""
    return truncated_normal(FINE_TUNING_HEAD_STDDEV)


class TaskModel(keras.Model):
    """Base of the task models: a functional model rebuilt from `(encoder, **options)` when loaded.

    Subclasses build their graph in `__init__(encoder, ...)` and return those arguments from
    `get_config`, with the encoder serialized.
    """

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)
