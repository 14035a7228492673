"""Progress lines and TensorBoard summaries during training, each covering the steps since the last one."""

import datetime
import time

import keras
import tensorflow as tf
from absl import logging
from tensorflow.core.framework import summary_pb2
from tensorflow.core.util import event_pb2

from official_bert.io import files
from official_bert.training.checkpointing import global_step

# What TensorBoard's tf.summary.scalar writes, without needing the tensorboard package installed.
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"), data_class=summary_pb2.DATA_CLASS_SCALAR)


def write_scalars(directory, values, step):
    """Appends TensorBoard scalar summaries `{name: value}` at `step` to an event file in `directory`.

    Args:
        directory: the event file's directory, or a `tf.summary.SummaryWriter`.
        values: {name: float}.
        step: the global step.
    """
    writer = tf.summary.create_file_writer(directory) if isinstance(directory, str) else directory
    with writer.as_default():
        for name, value in values.items():
            tf.summary.write(name, tf.constant(value, tf.float32), step=step, metadata=_SCALAR_METADATA)
    writer.flush()


def read_scalars(directory):
    """The scalar summaries of the event files in `directory`, as {name: {step: value}}.

    Example:
    >>> import tempfile
    >>> directory = tempfile.mkdtemp()
    >>> write_scalars(directory, {"loss": 2.5}, step=10)
    >>> read_scalars(directory)
    {'loss': {10: 2.5}}
    """
    scalars = {}
    for path in files.glob("events.out.tfevents.*", directory):
        for record in tf.data.TFRecordDataset(path):
            event = event_pb2.Event.FromString(record.numpy())
            for value in event.summary.value:
                scalars.setdefault(value.tag, {})[event.step] = float(tf.make_ndarray(value.tensor))
    return scalars


class TrainingMonitor(keras.callbacks.Callback):
    """Every `log_steps` updates (at the end of the training loop that reaches them) and at the end:
    logs a progress line and writes TensorBoard scalars at the global step — the loss and metrics averaged
    over the steps since the previous report, `learning_rate` (the schedule at that step) and
    `sequences_per_second` — then resets the metrics, so each report covers its own interval. (The first
    report's rate includes tracing the training step.)

    Args:
        log_steps: updates between reports.
        num_train_steps: the step training ends at, for the progress fraction and time left.
        sequences_per_step: sequences in one update (the global batch).
        summary_dir: where to write event files; None writes none (non-chief workers).
    """

    def __init__(self, log_steps, num_train_steps, sequences_per_step, summary_dir=None):
        super().__init__()
        self._log_steps = log_steps
        self._num_train_steps = num_train_steps
        self._sequences_per_step = sequences_per_step
        self._writer = tf.summary.create_file_writer(summary_dir) if summary_dir else None
        self._last_step = self._last_time = self._first_step = self._first_time = None

    def on_train_begin(self, logs=None):
        self._first_step = self._last_step = global_step(self.model.optimizer)
        self._first_time = self._last_time = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        step = global_step(self.model.optimizer)
        if step - self._last_step >= self._log_steps or step >= self._num_train_steps:
            self._report(step, logs)

    def _report(self, step, logs):
        now = time.perf_counter()
        values = {name: float(value) for name, value in (logs or {}).items()}
        # The optimizer evaluates its schedule at its own update count, i.e. at `step`.
        values["learning_rate"] = float(self.model.optimizer.learning_rate)
        values["sequences_per_second"] = (step - self._last_step) * self._sequences_per_step / (now - self._last_time)
        if self._writer:
            write_scalars(self._writer, values, step)
        left = (self._num_train_steps - step) * (now - self._first_time) / max(1, step - self._first_step)
        logging.info("step %d/%d (%.0f %%), %s left: %s", step, self._num_train_steps,
                     100 * step / self._num_train_steps, datetime.timedelta(seconds=round(left)),
                     ", ".join(f"{name} {value:.4g}" for name, value in values.items()))
        self._last_step, self._last_time = step, now
        self.model.reset_metrics()
