"""`TrainingOptions`: the settings of a pretraining run, under the original run_pretraining.py flag names."""

import dataclasses

from official_bert.errors import Error

MIXED_PRECISION_POLICIES = {"bf16": "mixed_bfloat16", "fp16": "mixed_float16"}
OPTIMIZERS = ("adamw", "lamb")


class TrainingError(Error):
    """Settings or an output directory that cannot make a run; the message names the flag or file."""


@dataclasses.dataclass
class TrainingOptions:
    """How to pretrain; each field is the run_pretraining.py flag of the same name.

    Step counts (num_train_steps, num_warmup_steps, save_checkpoints_steps, iterations_per_loop, log_steps)
    count optimizer updates. train_batch_size is the global batch of one update: it is split across the
    replicas and, with gradient accumulation, into gradient_accumulation_steps micro-batches.

    Args:
        output_dir: checkpoints, summaries, eval_results.txt and the files fine-tuning needs.
        train_batch_size: sequences per optimizer update.
        eval_batch_size: sequences per evaluation step.
        learning_rate: peak learning rate, reached after the warmup.
        num_train_steps: updates in the whole run; the learning rate decays linearly to 0 there.
        num_warmup_steps: updates of linear warmup from 0.
        save_checkpoints_steps: save model + optimizer + step every this many updates.
        iterations_per_loop: the most updates per call into the compiled training loop (Keras
            steps_per_execution); calls also end on the steps of progress reports and checkpoints.
        max_eval_steps: evaluation batches.
        optimizer: "adamw" (the original AdamWeightDecay) or "lamb".
        weight_decay_rate: decoupled weight decay, not applied to LayerNorm and bias variables.
        gradient_accumulation_steps: micro-batches whose mean gradient makes one update.
        mixed_precision: None (float32), "bf16" or "fp16" (with dynamic loss scaling).
        jit_compile: compile the training step with XLA (7–13 % slower in float32 and about 2× in bf16 on CPUs).
        remat: recompute each transformer block's activations in the backward pass (`BertEncoder`'s `remat`):
            less memory for large models and long sequences, the same losses and gradients, about 3/4 of one
            more forward pass.
        use_nsp: train next-sentence prediction too (False: the paper's "No NSP" ablation).
        keep_checkpoint_max: checkpoints kept; 0 keeps all.
        log_steps: updates between progress lines and TensorBoard summaries.
        seed: seeds initialization, dropout and the input order.
        init_checkpoint: warm start from this checkpoint's weights (any format `load_checkpoint` reads),
            unless output_dir already holds a checkpoint to resume.

    Example:
    >>> TrainingOptions("/tmp/run", num_train_steps=10, num_warmup_steps=20).validate()
    Traceback (most recent call last):
    ...
    official_bert.training.options.TrainingError: --num_warmup_steps=20 exceeds --num_train_steps=10
    """

    output_dir: str
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    max_eval_steps: int = 100
    optimizer: str = "adamw"
    weight_decay_rate: float = 0.01
    gradient_accumulation_steps: int = 1
    mixed_precision: str = None
    jit_compile: bool = False
    remat: bool = False
    use_nsp: bool = True
    keep_checkpoint_max: int = 5
    log_steps: int = 100
    seed: int = 12345
    init_checkpoint: str = None

    def validate(self):
        """Raises TrainingError naming the first flag with an impossible value."""
        if not self.output_dir:
            raise TrainingError("--output_dir: expected a directory")
        for name in ("train_batch_size", "eval_batch_size", "num_train_steps", "save_checkpoints_steps",
                     "iterations_per_loop", "max_eval_steps", "gradient_accumulation_steps", "log_steps"):
            if getattr(self, name) < 1:
                raise TrainingError(f"--{name}={getattr(self, name)}: expected a positive integer")
        for name in ("num_warmup_steps", "keep_checkpoint_max"):
            if getattr(self, name) < 0:
                raise TrainingError(f"--{name}={getattr(self, name)}: expected an integer >= 0")
        if self.num_warmup_steps > self.num_train_steps:
            raise TrainingError(f"--num_warmup_steps={self.num_warmup_steps} exceeds "
                                f"--num_train_steps={self.num_train_steps}")
        if not self.learning_rate > 0:
            raise TrainingError(f"--learning_rate={self.learning_rate}: expected a positive number")
        if not 0 <= self.weight_decay_rate < 1:
            raise TrainingError(f"--weight_decay_rate={self.weight_decay_rate}: expected a number in [0, 1)")
        if self.optimizer not in OPTIMIZERS:
            raise TrainingError(f"--optimizer={self.optimizer}: expected one of {', '.join(OPTIMIZERS)}")
        if self.mixed_precision is not None and self.mixed_precision not in MIXED_PRECISION_POLICIES:
            raise TrainingError(f"--mixed_precision={self.mixed_precision}: expected one of "
                                f"{', '.join(MIXED_PRECISION_POLICIES)}")
        return self
