"""How many updates fine-tuning makes: the original's count over examples, a warmup proportion of them."""

import dataclasses

from official_bert.training.options import TrainingError


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The steps of a fine-tuning run; steps count optimizer updates.

    Training reads one stream of whole batches across passes over the training set (`finetuning/stream.py`), as
    the original's repeated dataset; epoch k ends where the k-th pass does, at update int(k × steps_per_epoch)
    (the last at num_train_steps), the points at which a run with per-epoch evaluation evaluates.

    Args:
        steps_per_epoch: updates in one pass over the training set: examples / batch size, a fraction where a
            pass ends inside a batch.
        num_train_steps: updates in the whole run (the learning rate reaches 0 there).
        num_warmup_steps: updates of linear warmup.

    Example:
    >>> schedule = Schedule(steps_per_epoch=10, num_train_steps=25, num_warmup_steps=2)
    >>> schedule.num_epochs, schedule.epoch_end(12), schedule.epoch_end(20), schedule.epoch_end(21)
    (3, 20, 25, 25)
    >>> Schedule(110 / 32, 10, 1).epoch_ends  # 3 epochs of 110 examples in batches of 32
    (3, 6, 10)
    """

    steps_per_epoch: float
    num_train_steps: int
    num_warmup_steps: int

    @property
    def epoch_ends(self):
        """The step at which each epoch ends, in order (the last one possibly partial)."""
        ends = [self.epoch_end(0)]
        while ends[-1] < self.num_train_steps:
            ends.append(self.epoch_end(ends[-1]))
        return tuple(ends)

    @property
    def num_epochs(self):
        """Epochs begun, the last one possibly partial."""
        return len(self.epoch_ends)

    def epoch_end(self, step):
        """The step at which the epoch that `step` is in ends (an epoch ending at `step` counts as ended)."""
        k = max(1, int(step / self.steps_per_epoch))
        while int(k * self.steps_per_epoch) <= step:
            k += 1
        return min(int(k * self.steps_per_epoch), self.num_train_steps)

    def is_epoch_end(self, step):
        return step == self.num_train_steps or (step > 0 and self.epoch_end(step - 1) == step)

    def epoch(self, step):
        """The number of the epoch that ends at (or contains) `step`, from 1."""
        return sum(end < step for end in self.epoch_ends) + 1


def fine_tuning_schedule(num_examples, train_batch_size, num_train_epochs, warmup_proportion):
    """The original's schedule: int(num_examples / train_batch_size × num_train_epochs) updates, the first
    int(updates × warmup_proportion) of them warming up.

    The count is of examples (for SQuAD: questions, not their windows), over batches that run across pass
    boundaries, as the original's repeated dataset; epoch k, for evaluation, ends at update
    int(k × num_examples / train_batch_size).

    Args:
        num_examples: training examples.
        train_batch_size: examples per update.
        num_train_epochs: --num_train_epochs (> 0; fractions allowed).
        warmup_proportion: --warmup_proportion, in [0, 1].

    Example:
    >>> fine_tuning_schedule(100, 32, 3.0, 0.1)
    Schedule(steps_per_epoch=3.125, num_train_steps=9, num_warmup_steps=0)
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
    return Schedule(num_examples / train_batch_size, num_train_steps, int(num_train_steps * warmup_proportion))
