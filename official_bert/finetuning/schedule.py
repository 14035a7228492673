"""How many updates fine-tuning makes: epochs of the training set, a warmup proportion of them (the original's)."""

import dataclasses
import math

from official_bert.training.options import TrainingError


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The steps of a fine-tuning run; steps count optimizer updates.

    Args:
        steps_per_epoch: updates in one pass over the training set.
        num_train_steps: updates in the whole run (the learning rate reaches 0 there).
        num_warmup_steps: updates of linear warmup.

    Example:
    >>> schedule = Schedule(steps_per_epoch=10, num_train_steps=25, num_warmup_steps=2)
    >>> schedule.num_epochs, schedule.epoch_end(12), schedule.epoch_end(20), schedule.epoch_end(21)
    (3, 20, 25, 25)
    """

    steps_per_epoch: int
    num_train_steps: int
    num_warmup_steps: int

    @property
    def num_epochs(self):
        """Epochs begun, the last one possibly partial."""
        return math.ceil(self.num_train_steps / self.steps_per_epoch)

    def epoch_end(self, step):
        """The step at which the epoch that `step` is in ends (an epoch ending at `step` counts as ended)."""
        return min((step // self.steps_per_epoch + 1) * self.steps_per_epoch, self.num_train_steps)

    def is_epoch_end(self, step):
        return step == self.num_train_steps or (step > 0 and step % self.steps_per_epoch == 0)


def fine_tuning_schedule(num_examples, train_batch_size, num_train_epochs, warmup_proportion, drop_remainder=False):
    """The schedule of `num_train_epochs` passes over `num_examples` in batches of `train_batch_size`.

    An epoch is every batch of the training set, the last one partial unless `drop_remainder` (which fixed-shape
    accelerators need). As the original, fractional epochs are allowed and warmup is int(proportion × steps).

    Args:
        num_examples: training examples.
        train_batch_size: examples per update.
        num_train_epochs: --num_train_epochs (> 0).
        warmup_proportion: --warmup_proportion, in [0, 1].
        drop_remainder: leave out the last partial batch of each epoch.

    Example:
    >>> fine_tuning_schedule(100, 32, 3.0, 0.1)
    Schedule(steps_per_epoch=4, num_train_steps=12, num_warmup_steps=1)
    >>> fine_tuning_schedule(20, 32, 3.0, 0.1, drop_remainder=True)
    Traceback (most recent call last):
    ...
    official_bert.training.options.TrainingError: the training set has 20 examples, fewer than one --train_batch_size=32
    """
    if train_batch_size < 1:
        raise TrainingError(f"--train_batch_size={train_batch_size}: expected a positive integer")
    if not num_train_epochs > 0:
        raise TrainingError(f"--num_train_epochs={num_train_epochs}: expected a positive number")
    if not 0 <= warmup_proportion <= 1:
        raise TrainingError(f"--warmup_proportion={warmup_proportion}: expected a number in [0, 1]")
    steps_per_epoch = num_examples // train_batch_size if drop_remainder else math.ceil(num_examples / train_batch_size)
    if steps_per_epoch < 1:
        raise TrainingError(f"the training set has {num_examples} examples, fewer than one "
                            f"--train_batch_size={train_batch_size}")
    num_train_steps = max(1, math.ceil(steps_per_epoch * num_train_epochs))
    return Schedule(steps_per_epoch, num_train_steps, int(num_train_steps * warmup_proportion))
