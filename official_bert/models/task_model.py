"""What every task model shares: the encoder's inputs, initializer and (de)serialization."""

import keras

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def encoder_inputs(shape=(None,)):
    """Fresh int32 `keras.Input`s under the TF Hub names."""
    return {name: keras.Input(shape=shape, dtype="int32", name=name) for name in ENCODER_INPUTS}


def initializer(config):
    return keras.initializers.TruncatedNormal(stddev=config.initializer_range)


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
