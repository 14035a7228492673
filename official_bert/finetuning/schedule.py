"""How many updates fine-tuning makes: the original's count over examples, a warmup proportion of them."""

import dataclasses

from official_bert.training.options import TrainingError


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The steps of a fine-tuning run; steps count optimizer updates.

    Training reads one stream of whole batches across passes over the training set (`finetuning/stream.py`);
    an "epoch" is only a count of steps, the points at which a run with per-epoch evaluation evaluates.

    Args:
        steps_per_epoch: updates between evaluations: the whole batches in one pass over the training set.
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
        return -(-self.num_train_steps // self.steps_per_epoch)

    def epoch_end(self, step):
        """The step at which the epoch that `step` is in ends (an epoch ending at `step` counts as ended)."""
        return min((step // self.steps_per_epoch + 1) * self.steps_per_epoch, self.num_train_steps)

    def is_epoch_end(self, step):
        return step == self.num_train_steps or (step > 0 and step % self.steps_per_epoch == 0)


def fine_tuning_schedule(num_examples, train_batch_size, num_train_epochs, warmup_proportion):
    """The original's schedule: int(num_examples / train_batch_size × num_train_epochs) updates, the first
    int(updates × warmup_proportion) of them warming up.

    The count is of examples (for SQuAD: questions, not their windows), over batches that run across pass
    boundaries, as the original's repeated dataset; an epoch, for evaluation, is num_examples // batch whole
    batches (at least one).

    Args:
        num_examples: training examples.
        train_batch_size: examples per update.
        num_train_epochs: --num_train_epochs (> 0; fractions allowed).
        warmup_proportion: --warmup_proportion, in [0, 1].

    Example:
    >>> fine_tuning_schedule(100, 32, 3.0, 0.1)
    Schedule(steps_per_epoch=3, num_train_steps=9, num_warmup_steps=0)
    >>> fine_tuning_schedule(10, 32, 3.0, 0.1)
    Traceback (most recent call last):
    ...
    official_bert.training.options.TrainingError: --num_train_epochs=3.0 of 10 examples in batches of 32: not one step
    """
    if train_batch_size < 1:
        raise TrainingError(f"--train_batch_size={train_batch_size}: expected a positive integer")
    if not num_train_epochs > 0:
        raise TrainingError(f"--num_train_epochs={num_train_epochs}: expected a positive number")
    if not 0 <= warmup_proportion <= 1:
        raise TrainingError(f"--warmup_proportion={warmup_proportion}: expected a number in [0, 1]")
    # The original's expressions, float arithmetic included.
    num_train_steps = int(num_examples / train_batch_size * num_train_epochs)
    if num_train_steps < 1:
        raise TrainingError(f"--num_train_epochs={num_train_epochs} of {num_examples} examples in batches of "
                            f"{train_batch_size}: not one step")
    return Schedule(max(1, num_examples // train_batch_size), num_train_steps,
                    int(num_train_steps * warmup_proportion))
