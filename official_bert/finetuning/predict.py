"""Runs a model over a labelled dataset under a tf.distribute strategy and returns every output, in order."""

import numpy as np
import tensorflow as tf

from official_bert.batch_padding import trim_batches
from official_bert.prefetching import prefetched


class Predictor:
    """Calls `model` (training=False) on every batch of a dataset and returns the outputs as NumPy arrays.

    A model with several outputs (a dict, as `BertSpanLabeler`'s) gives the same structure of arrays.

    Each global batch is split across the replicas and gathered back in replica order, so the rows stay in the
    dataset's order. Batches must divide evenly over the replicas (pad the features to a multiple of the batch,
    or let `predict_arrays` do it). The compiled step is kept, so evaluating again (every epoch) does not trace it
    again.

    Args:
        model: a Keras model.
        strategy: the strategy its variables were made under.
        bucket_width: pad each batch only to its longest sequence, rounded up to a multiple of this
            (`batch_padding`); None: as the dataset has it. For models with one output per example: the outputs
            are the same, to float rounding.

    Example:
    >>> import keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="ones")])
    >>> data = tf.data.Dataset.from_tensor_slices((np.eye(2, dtype="float32"), [3, 4], [1.0, 0.0])).batch(1)
    >>> outputs, labels, real = Predictor(model, tf.distribute.get_strategy())(data)
    >>> outputs.tolist(), labels.tolist(), real.tolist()
    ([[1.0], [1.0]], [3, 4], [1.0, 0.0])
    >>> Predictor(model, tf.distribute.get_strategy()).predict_arrays(np.eye(2, dtype="float32")[:1], 4).tolist()
    [[1.0]]
    """

    def __init__(self, model, strategy, bucket_width=None):
        self.strategy = strategy
        self.bucket_width = bucket_width

        def replica_step(inputs, labels, weights):
            return model(inputs, training=False), labels, weights

        @tf.function
        def step(batch):
            return tf.nest.map_structure(lambda t: strategy.gather(t, axis=0), strategy.run(replica_step, args=batch))

        self._step = step

    def __call__(self, dataset):
        """Returns (outputs, labels, is_real_example) over all of `dataset`.

        Args:
            dataset: batches of (inputs, labels, is_real_example), as `feature_dataset(...,
                with_sample_weights=True)` gives.
        """
        dataset = prefetched(trim_batches(dataset, self.bucket_width))
        batches = [self._step(batch) for batch in self.strategy.experimental_distribute_dataset(dataset)]
        return tuple(tf.nest.map_structure(lambda *ts: np.concatenate([t.numpy() for t in ts]), *batches))

    def predict_arrays(self, inputs, batch_size):
        """The outputs for `inputs` (arrays, or a dict of them, one row per example), in order: the rows are
        padded to whole batches of `batch_size` for the replicas, and the padding's outputs dropped."""
        count = len(tf.nest.flatten(inputs)[0])
        padding = -count % batch_size
        padded = tf.nest.map_structure(lambda a: np.concatenate([a, np.zeros((padding, *a.shape[1:]), a.dtype)]),
                                       inputs)
        real = np.array([1.0] * count + [0.0] * padding, np.float32)
        index = np.arange(count + padding, dtype=np.int64)
        outputs, _, real = self(tf.data.Dataset.from_tensor_slices((padded, index, real)).batch(batch_size))
        return tf.nest.map_structure(lambda a: a[real > 0], outputs)
