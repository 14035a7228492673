"""How every input pipeline of the library ends: prefetched, without tf.data's autotuning model thread.

With autotuning on (tf.data's default), an iterator runs a thread that re-tunes the pipeline at intervals doubling
from 10 ms to 60 s, and destroying the iterator waits for that thread; in TensorFlow 2.21 the wait sometimes lasts
until the thread's next wake-up. Keras destroys an iterator whenever a `fit`, `evaluate` or `predict` ends, and
fine-tuning calls `fit` once an epoch. On 2 AMD EPYC cores, 2 of 25 iterators of a parallel map, read for 0.2-8 s,
took 3.4 and 4.1 s to destroy (none of 25 with autotuning off); KerasHub's BERT-mini in `bench.train_step`, a `fit`
of 23 steps (20 s), sat idle for 15-19 s at its end in 10 of 19 runs (its pipeline has no AUTOTUNE of its own:
tf.data runs the thread anyway), in none of 4 once prefetched here. Without the thread,
`num_parallel_calls=tf.data.AUTOTUNE` runs as many calls at once as there are cores (16 at most).
"""

import tensorflow as tf

_WITHOUT_AUTOTUNING = tf.data.Options()
_WITHOUT_AUTOTUNING.autotune.enabled = False


def prefetched(dataset):
    """`dataset.prefetch(tf.data.AUTOTUNE)`, its whole pipeline without the autotuning model thread.

    Example:
    >>> dataset = prefetched(tf.data.Dataset.range(4).map(lambda x: 2 * x, num_parallel_calls=tf.data.AUTOTUNE))
    >>> [int(x) for x in dataset], dataset.options().autotune.enabled
    ([0, 2, 4, 6], False)
    """
    return dataset.prefetch(tf.data.AUTOTUNE).with_options(_WITHOUT_AUTOTUNING)
