"""`FineTuningSettings`: what every fine-tuning run is given, whatever its task, under the original's flag names.

The command-line tools fill it from their flags (`official_bert.tools.flags.finetuning_settings_from_flags`); code
that fine-tunes without a command line builds it directly. A task's own settings (SQuAD's --doc_stride, ...) are
its `FineTuningTask`'s constructor arguments instead.
"""

import dataclasses
from typing import Callable, Optional

from official_bert.checkpoints import case
from official_bert.text import tokenizer_spec as tokenizer_specs
from official_bert.text.tokenizer_spec import TokenizerSpec
from official_bert.training.options import TrainingError


@dataclasses.dataclass
class FineTuningSettings:
    """The settings `run_task` drives a task with; each field is the flag of the same name.

    Args:
        output_dir: checkpoints, cached features and the result files.
        bert_config_file: the model's bert_config.json (Google's or Hugging Face's).
        vocab_file: its WordPiece vocabulary (or None with spm_model_file; for a config of BERT's family, RoBERTa,
            XLM-R, DistilBERT or ELECTRA, None reads the tokenizer files beside the config or init_checkpoint).
        spm_model_file: a SentencePiece model instead of vocab_file.
        init_checkpoint: the pretrained (or fine-tuned) weights; ignored when output_dir holds a checkpoint.
        do_lower_case: lowercase the text (uncased models); None: as the checkpoint is (a WordPiece
            init_checkpoint's own casing, `checkpoints.case.own_casing`; the original's True without one; a family's
            tokenizer's own casing).
        preserve_unused_tokens: keep [unused*] tokens whole (bert-tensorflow 1.0.4).
        normalize_unicode: None, or "nfc": compose decomposed text before tokenizing (cased models).
        max_seq_length: WordPiece tokens per sequence.
        do_train: train.
        do_eval: evaluate on the dev set and write eval_results.txt/.json.
        do_predict: predict the test set.
        train_batch_size: examples per update.
        eval_batch_size: examples per evaluation batch.
        predict_batch_size: examples per prediction batch.
        learning_rate: peak learning rate of AdamWeightDecay.
        num_train_epochs: passes over the training set.
        warmup_proportion: the share of the updates that warm the learning rate up.
        save_checkpoints_steps: updates between checkpoints (and each epoch's end).
        iterations_per_loop: updates per call into the compiled loop.
        length_bucket_width: pad each batch to its longest sequence rounded up to this (0: to max_seq_length).
        bucket_by_length: batch training examples of similar lengths together.
        mixed_precision: "auto", "bf16", "fp16" or "fp32".
        jit_compile: compile the training step with XLA.
        remat: recompute each transformer block's activations in the backward pass (less memory, more time).
        seed: initialization, dropout and input order.
        log_steps: updates between progress lines.
        causal_attention: the left-only constraint of a left-to-right model; None follows the config's
            "causal_attention" (bidirectional without it), and a value that contradicts it is refused.
        keep_best: evaluate after every epoch and use the best checkpoint by the task's metric.
        features_dir: where converted features are cached (None: output_dir).
        export_dir: export a SavedModel version there.
        export_precision: what the evaluation, the predictions and the export compute in (one model, one answer):
            "fp32" (the default: the same answers on any machine, as the weights loaded in Keras give), "bf16"
            (faster where the serving hardware computes it natively) or "auto" (bf16 if this machine does).
        export_tflite_dir: also convert that export to LiteRT there (model.tflite, text_model.tflite).
        tflite_quantization: the LiteRT weights: "none", "dynamic_int8" or "float16".
        tokenizer_ops: the exported WordPiece's ops: "core" or "tf_text".
        strategy: () → the tf.distribute strategy (called once, before any other TensorFlow op).
        sweep: a `finetuning.sweep.Sweep` to run first (the best run on dev is then evaluated, predicted and
            exported), or None.

    Example:
    >>> settings = FineTuningSettings("out", "bert_config.json", "vocab.txt", do_train=True)
    >>> settings.cache_dir, settings.check().do_train, settings.tokenizer_spec().file
    ('out', True, 'vocab.txt')
    """

    output_dir: str
    bert_config_file: str
    vocab_file: Optional[str] = None
    spm_model_file: Optional[str] = None
    init_checkpoint: Optional[str] = None
    do_lower_case: Optional[bool] = True
    preserve_unused_tokens: bool = False
    normalize_unicode: Optional[str] = None
    max_seq_length: int = 128
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    length_bucket_width: int = 8
    bucket_by_length: bool = False
    mixed_precision: str = "auto"
    jit_compile: bool = False
    remat: bool = False
    seed: int = 12345
    log_steps: int = 100
    causal_attention: Optional[bool] = None
    keep_best: bool = False
    features_dir: Optional[str] = None
    export_dir: Optional[str] = None
    export_precision: str = "fp32"
    export_tflite_dir: Optional[str] = None
    tflite_quantization: str = "none"
    tokenizer_ops: str = "core"
    strategy: Optional[Callable] = None
    sweep: Optional[object] = None

    @property
    def cache_dir(self):
        """Where features are cached: features_dir, else output_dir (a sweep's runs share their sweep's)."""
        return self.features_dir or self.output_dir

    def tokenizer_spec(self):
        """The run's `TokenizerSpec`, checked: what its features and its export are both tokenized with; its
        do_lower_case is always True or False."""
        if not (self.vocab_file or self.spm_model_file):
            spec = tokenizer_specs.for_run(self.bert_config_file, self.init_checkpoint, self.do_lower_case,
                                           self.tokenizer_ops)
            if spec is not None:
                return spec
        do_lower_case = self.do_lower_case
        if do_lower_case is None:  # not given: the checkpoint's own casing, as from_checkpoint takes it
            do_lower_case = case.own_casing(self.init_checkpoint) if self.init_checkpoint else True
        return TokenizerSpec(self.vocab_file, self.spm_model_file, do_lower_case, self.preserve_unused_tokens,
                             self.tokenizer_ops, self.normalize_unicode).check()

    def _family_config(self):
        """Whether --bert_config_file is of BERT's family (its tokenizer files are then read beside it)."""
        from official_bert.configs import BertConfig

        return bool(self.bert_config_file and BertConfig.from_json_file(self.bert_config_file).family)

    def check(self):
        """Raises TrainingError for settings that make no run, CheckpointError for a --do_lower_case that
        --init_checkpoint's own record contradicts (`checkpoints.case.check_case`); returns self."""
        if not (self.do_train or self.do_eval or self.do_predict or self.export_dir):
            raise TrainingError("at least one of --do_train, --do_eval, --do_predict or --export_dir must be given")
        if not (self.vocab_file or self.spm_model_file or self._family_config()):
            raise TrainingError("--vocab_file (or --spm_model_file) is needed: the text is tokenized with it")
        if self.export_tflite_dir and not self.export_dir:
            raise TrainingError("--export_tflite_dir converts the SavedModel that --export_dir writes: give both")
        if self.sweep is not None and not (self.do_train and self.do_eval):
            raise TrainingError("a sweep (--sweep, --num_restarts, --seeds or a list of settings) needs --do_train "
                                "and --do_eval: it chooses on the dev set")
        if self.init_checkpoint:  # before any work: a casing the checkpoint contradicts is refused, not warned of
            case.check_case(self.do_lower_case, self.init_checkpoint, f"--init_checkpoint={self.init_checkpoint}")
        return self
