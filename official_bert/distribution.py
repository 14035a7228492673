"""The tf.distribute strategy named by --distribution_strategy, and what depends on it.

One code path for every strategy: training builds its model under `strategy.scope()` and feeds it
`strategy.distribute_datasets_from_function`, so one device, several local devices, several worker
processes (TF_CONFIG) and a TPU differ only in the strategy object made here.

"one_device" is TensorFlow's default strategy, which places each op on the first GPU if there is one, else on
the CPU, and hands datasets through unchanged. `tf.distribute.OneDeviceStrategy` would place them the same way,
but its distributed input iterator made a CPU step about 1.6 times slower: measured on 2 cores, a MiniLM
fine-tuning step took 2.40 s against 1.54 s at 64 tokens (5.5 s against 3.3 s at 128), and a BERT-Tiny
pretraining process used one core of the two.

Only the chief writes checkpoints and summaries. Under multi_worker_mirrored every worker must still
take part in a checkpoint save, so the others write theirs to a temporary directory that is removed.
"""

import json
import os
import shutil
import tempfile

import tensorflow as tf
from absl import logging

from official_bert.errors import Error

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")


class DistributionError(Error):
    """A strategy, cluster or batch size that cannot work; the message names the flag or variable."""


def strategy_name(distribution_strategy=None, use_tpu=False):
    """The strategy to use: --distribution_strategy, where --use_tpu implies (and requires) "tpu".

    Args:
        distribution_strategy: one of `STRATEGIES`, or None for the default.
        use_tpu: --use_tpu.

    Example:
    >>> strategy_name(), strategy_name(use_tpu=True), strategy_name("mirrored")
    ('one_device', 'tpu', 'mirrored')
    """
    if distribution_strategy is None:
        return "tpu" if use_tpu else "one_device"
    if distribution_strategy not in STRATEGIES:
        raise DistributionError(f"--distribution_strategy={distribution_strategy}: expected one of "
                                f"{', '.join(STRATEGIES)}")
    if use_tpu and distribution_strategy != "tpu":
        raise DistributionError(f"--use_tpu contradicts --distribution_strategy={distribution_strategy}; "
                                "drop one of them")
    return distribution_strategy


def get_strategy(name, tpu=None, tpu_zone=None, gcp_project=None):
    """Creates the strategy. Call it before any other TensorFlow op: a multi-worker strategy must configure
    the runtime's collective ops before the runtime starts.

    Args:
        name: one of `STRATEGIES`. "one_device" is the default strategy (see the module's docstring); "mirrored"
            uses every local GPU or, without GPUs, every logical CPU device; "multi_worker_mirrored" reads the
            cluster from the TF_CONFIG environment variable.
        tpu: the TPU's name or grpc:// address (--tpu_name, else --master); for "tpu" only.
        tpu_zone: the GCE zone of the TPU; for "tpu" only.
        gcp_project: the GCP project of the TPU; for "tpu" only.

    Example:
    >>> get_strategy("one_device").num_replicas_in_sync
    1
    """
    if name == "one_device":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        devices = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([d.name for d in devices])
    if name == "multi_worker_mirrored":
        _check_tf_config()
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "tpu":
        return _tpu_strategy(tpu, tpu_zone, gcp_project)
    raise DistributionError(f"--distribution_strategy={name}: expected one of {', '.join(STRATEGIES)}")


def _check_tf_config():
    raw = os.environ.get("TF_CONFIG")
    if raw is None:
        logging.warning("multi_worker_mirrored without TF_CONFIG: training on this machine alone")
        return
    try:
        config = json.loads(raw)
        task, cluster = config["task"], config["cluster"]
        if task["index"] >= len(cluster[task["type"]]):
            raise IndexError
    except (ValueError, KeyError, TypeError, IndexError):
        raise DistributionError('TF_CONFIG: expected {"cluster": {"worker": ["host:port", ...]}, "task": '
                                f'{{"type": "worker", "index": i}}}} with i naming one of the workers, got {raw}'
                                ) from None


def _tpu_strategy(tpu, zone, project):
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu, zone=zone, project=project)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, tf.errors.OpError) as e:
        raise DistributionError(f"--tpu_name={tpu}: cannot reach the TPU ({str(e).splitlines()[0]})") from None
    return tf.distribute.TPUStrategy(resolver)


def is_chief(strategy):
    """Whether this process writes the outputs: always, except on the non-chief workers of a cluster.

    Args:
        strategy: a `tf.distribute.Strategy`.

    Example:
    >>> is_chief(get_strategy("one_device"))
    True
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or resolver.task_type is None or isinstance(
            resolver, tf.distribute.cluster_resolver.TPUClusterResolver):
        return True
    if resolver.task_type == "chief":
        return True
    return resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in resolver.cluster_spec().jobs


def chief_by_tf_config():
    """Whether TF_CONFIG, if set, names this process the cluster's chief (as `is_chief` decides once a strategy
    exists); True without TF_CONFIG or with one that does not parse (the strategy then says what is wrong).

    Example:
    >>> os.environ.pop("TF_CONFIG", None) is None and chief_by_tf_config()
    True
    """
    try:
        config = json.loads(os.environ["TF_CONFIG"])
        task, cluster = config["task"], config["cluster"]
        return task["type"] == "chief" or (task["type"] == "worker" and task["index"] == 0 and "chief" not in cluster)
    except (KeyError, ValueError, TypeError):
        return True


def per_replica_batch_size(global_batch_size, num_replicas, flag="--train_batch_size", gradient_accumulation_steps=1):
    """The batch one replica computes in one step, from the global batch of one optimizer update.

    Args:
        global_batch_size: sequences per optimizer update, over all replicas.
        num_replicas: the strategy's `num_replicas_in_sync`.
        flag: the flag that set `global_batch_size`, for the message.
        gradient_accumulation_steps: micro-batches per update.

    Raises:
        DistributionError: the batch does not split evenly.

    Example:
    >>> per_replica_batch_size(32, num_replicas=2, gradient_accumulation_steps=4)
    4
    >>> per_replica_batch_size(6, num_replicas=4)
    Traceback (most recent call last):
    ...
    official_bert.distribution.DistributionError: --train_batch_size=6 must be a multiple of the 4 replicas
    """
    if global_batch_size < 1:
        raise DistributionError(f"{flag}={global_batch_size}: expected a positive batch size")
    parts = num_replicas * gradient_accumulation_steps
    if global_batch_size % parts:
        factors = [f"the {num_replicas} replicas"] * (num_replicas > 1)
        factors += [f"--gradient_accumulation_steps={gradient_accumulation_steps}"] * (gradient_accumulation_steps > 1)
        total = f" (= {parts})" if len(factors) > 1 else ""
        raise DistributionError(f"{flag}={global_batch_size} must be a multiple of {' × '.join(factors)}{total}")
    return global_batch_size // parts


class WorkerDirectory:
    """Where this process writes: `directory` on the chief; a fresh temporary directory elsewhere.

    Args:
        directory: the run's output directory.
        strategy: the strategy, to tell the chief.

    Example:
    >>> with WorkerDirectory("/tmp/run", get_strategy("one_device")) as path:
    ...     path
    '/tmp/run'
    """

    def __init__(self, directory, strategy):
        self._directory = directory
        self._chief = is_chief(strategy)
        self._temporary = None

    def __enter__(self):
        if self._chief:
            return self._directory
        self._temporary = tempfile.mkdtemp(prefix="official_bert_worker_")
        return self._temporary

    def __exit__(self, *exc_info):
        if self._temporary:
            shutil.rmtree(self._temporary, ignore_errors=True)
