"""`run_task`: the one lifecycle every fine-tuning task shares, from settings to result files and a SavedModel.

    strategy → output lock → config, precision, tokenizer spec → the task's data → sweep → encoder + the task's
    head → train (keep-best) → load the checkpoint to use → evaluate / predict → export

Each step is here once, so a fix reaches run_classifier, run_squad and run_ner alike; what differs between tasks is
behind `FineTuningTask`, which is handed what this module builds (the tokenizer spec, the encoder, the training
stream, the export) rather than the flags that make them.
"""

import dataclasses

import keras
from absl import logging

from official_bert import distribution
from official_bert.batch_padding import padding_bucket_width
from official_bert.checkpoints import causal, kinds
from official_bert.configs import BertConfig
from official_bert.export.precision import INFERENCE_POLICIES, resolve_export_precision
from official_bert.export.saved_model import export_saved_model
from official_bert.export.tflite import export_tflite
from official_bert.finetuning.best import BestCheckpoint, load_trained_weights
from official_bert.finetuning.predict import Predictor
from official_bert.finetuning.run import FineTuningRun
from official_bert.finetuning.schedule import fine_tuning_schedule
from official_bert.finetuning.sweep import chosen_run_note
from official_bert.io import output_lock, write_eval_results
from official_bert.networks.bert_encoder import BertEncoder
from official_bert.training.options import MIXED_PRECISION_POLICIES, TrainingOptions
from official_bert.training.outputs import prepare_output_dir
from official_bert.training.precision import resolve_mixed_precision

_PRECISION_NAMES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
KEEP_BEST_NOTE = ("best of the per-epoch evaluations by {metric} on this dev set (an optimistic figure: chosen on "
                  "the set it is reported on)")


def run_task(task, settings, watch=None):
    """Fine-tunes, evaluates, predicts and exports `task` as `settings` say; returns the result tables written.

    Args:
        task: a `FineTuningTask`.
        settings: the `FineTuningSettings`.
        watch: called with the `FineTuningRun` once it exists (the tools' interrupt report), or None.

    Raises:
        official_bert.errors.Error: bad settings or data (nothing is written then), or a failed sweep run.
    """
    settings.check()
    tokenizer = settings.tokenizer_spec()
    # The casing the tokenizer resolved (a family's own when --do_lower_case was not given), for every later use.
    settings = dataclasses.replace(settings, do_lower_case=tokenizer.do_lower_case)
    task.check(settings)
    strategy = settings.strategy() if settings.strategy else distribution.get_strategy("one_device")
    with output_lock(settings.output_dir, strategy=strategy):
        return _run(task, settings, tokenizer, strategy, watch)


def _run(task, settings, tokenizer, strategy, watch):
    is_chief = distribution.is_chief(strategy)
    config = _model_config(settings)
    mixed_precision = resolve_mixed_precision(settings.mixed_precision, strategy)
    options = _training_options(settings, strategy, mixed_precision)
    bucket_width = padding_bucket_width(settings.length_bucket_width, strategy, settings.jit_compile)

    # Input: every split needed, read and checked before anything is written; the training features are cached.
    task.load(settings, tokenizer)

    # The paper's procedure (--sweep, --num_restarts, ...): each run is the tool again in its own directory,
    # reading the features just cached; the best on dev is what evaluation, prediction and export then use.
    init_checkpoint, do_train, note = settings.init_checkpoint, settings.do_train, None
    if settings.sweep is not None:
        init_checkpoint = settings.sweep.run(settings.output_dir, task.metric)
        do_train, note = False, chosen_run_note(init_checkpoint, task.metric)

    # Model: the task's head on the encoder of the config, in the run's precision.
    keras.utils.set_random_seed(settings.seed)
    with strategy.scope():
        model = task.build_model(build_encoder(config, mixed_precision, settings.remat))
    predictor = Predictor(model, strategy, None if task.per_token_outputs else bucket_width)

    # Training; with --keep_best the dev set is evaluated after every epoch and the best checkpoint kept.
    keep_best = settings.keep_best and do_train and settings.do_eval
    if do_train:
        if is_chief:
            prepare_output_dir(settings.output_dir, config, settings.vocab_file, init_checkpoint, tokenizer)
            kinds.record(settings.output_dir, model)
        schedule = fine_tuning_schedule(task.num_train_examples(), settings.train_batch_size,
                                        settings.num_train_epochs, settings.warmup_proportion)
        with strategy.scope():
            trained = task.training_model(model)
        run = FineTuningRun(trained, task.loss(), options, schedule, strategy, task.metrics(),
                            do_lower_case=settings.do_lower_case, loss_weights=task.loss_weights,
                            optimizer_options=task.optimizer_options)
        if watch:
            watch(run)
        best = BestCheckpoint(settings.output_dir, task.metric, vocab_file=settings.vocab_file) if keep_best else None
        run.train(task.train_records().dataset_fn(settings.train_batch_size, settings.seed, bucket_width,
                                                  settings.bucket_by_length),
                  (lambda: task.evaluate(predictor, settings)) if keep_best else None, best)
        if keep_best:
            note = KEEP_BEST_NOTE.format(metric=best.metric)
    global_step = load_trained_weights(model, settings.output_dir, init_checkpoint, settings.do_lower_case,
                                       best=keep_best)

    # What the run reports is what its export serves: evaluation, predictions and the export all compute in
    # --export_precision (float32 by default, whatever the training's precision), as the same weights loaded in
    # Keras or served from the SavedModel do.
    precision = resolve_export_precision(settings.export_precision)
    if precision == "bf16" or mixed_precision:
        with strategy.scope():
            model = _in_precision(task, model, config, precision)
        predictor = Predictor(model, strategy, None if task.per_token_outputs else bucket_width)

    # Every worker evaluates and predicts (the replicas' outputs are gathered); only the chief's files are kept.
    tables = {}
    with distribution.WorkerDirectory(settings.output_dir, strategy) as directory:
        for basename, results in task.write_outputs(predictor, settings, directory).items():
            if global_step is not None:
                results["global_step"] = global_step
            if note and basename == "eval_results":
                results["checkpoint"] = note
            for key in sorted(results):
                logging.info("%s %s = %s", basename.removesuffix("_results"), key, results[key])
            for path in write_eval_results(directory, results, basename):
                logging.info("wrote %s", path)
            tables[basename] = results

    if settings.export_dir and is_chief:
        _export(task, model, precision, tokenizer, settings)
    done = [part for part, asked in (("the evaluation", settings.do_eval), ("the predictions", settings.do_predict),
                                     ("the export", settings.export_dir)) if asked]
    if done:
        logging.info("%s computed in %s (--export_precision=%s)%s",
                     " and ".join([", ".join(done[:-1]), done[-1]] if len(done) > 1 else done),
                     _PRECISION_NAMES[precision], settings.export_precision,
                     f"; trained in {_PRECISION_NAMES[mixed_precision or 'fp32']}" if do_train else "")
    return tables


def build_encoder(config, mixed_precision=None, remat=False):
    """The `BertEncoder` of `config` (its left-only constraint included) computing in `mixed_precision` (None,
    "bf16" or "fp16"; the weights stay float32), recomputing each block in the backward pass with `remat`.

    Example:
    >>> from official_bert import BertConfig
    >>> encoder = build_encoder(BertConfig.from_preset("tiny", vocab_size=10, causal_attention=True), "bf16")
    >>> encoder.get_layer("pooler").dtype_policy.name, encoder.causal_attention
    ('mixed_bfloat16', True)
    """
    return BertEncoder(config, dtype=MIXED_PRECISION_POLICIES.get(mixed_precision),
                       causal_attention=config.causal_attention, remat=remat)


def _export(task, model, precision, tokenizer, settings):
    """Writes the SavedModel version of `model` (computing in `precision`), and its LiteRT conversion (which a bf16
    SavedModel gets from its float32 twin: `export.tflite`)."""
    spec = task.serving_spec(tokenizer, settings.max_seq_length)
    path = export_saved_model(settings.export_dir, model, spec)
    logging.info("exported the model for serving (computing in %s) to %s", precision, path)
    if not settings.export_tflite_dir:
        return
    written = export_tflite(path, settings.export_tflite_dir, settings.tflite_quantization)
    logging.info("converted it to LiteRT in %s%s", settings.export_tflite_dir,
                 f" (no text_model.tflite: {written.text_problem})" if written.text_problem else "")


def _in_precision(task, model, config, precision):
    """The same task model with the trained `model`'s weights on an encoder for inference in `precision` ("fp32",
    or "bf16": bfloat16 weights and computation, `export.precision.INFERENCE_POLICIES`)."""
    copy = task.build_model(BertEncoder(config, dtype=INFERENCE_POLICIES.get(precision),
                                        causal_attention=config.causal_attention))
    copy.set_weights(model.get_weights())
    return copy


def _model_config(settings):
    """The `BertConfig` of --bert_config_file, checked to hold --max_seq_length positions, with the left-only
    constraint that the config, --causal_attention and the checkpoints the weights come from (--init_checkpoint,
    --output_dir's) record; they must agree."""
    config = BertConfig.from_json_file(settings.bert_config_file)
    config.check_seq_length(settings.max_seq_length, f"--bert_config_file={settings.bert_config_file}")
    return causal.resolve_causal_attention(config, settings.causal_attention, settings.bert_config_file,
                                           (settings.init_checkpoint, settings.output_dir))


def _training_options(settings, strategy, mixed_precision):
    """The `TrainingOptions` of the settings, validated, every batch size checked against the replicas."""
    for name in ("train_batch_size", "eval_batch_size", "predict_batch_size"):
        distribution.per_replica_batch_size(getattr(settings, name), strategy.num_replicas_in_sync, f"--{name}")
    return TrainingOptions(
        settings.output_dir, train_batch_size=settings.train_batch_size, eval_batch_size=settings.eval_batch_size,
        learning_rate=settings.learning_rate, save_checkpoints_steps=settings.save_checkpoints_steps,
        iterations_per_loop=settings.iterations_per_loop, mixed_precision=mixed_precision,
        jit_compile=settings.jit_compile, log_steps=settings.log_steps, seed=settings.seed,
        init_checkpoint=settings.init_checkpoint).validate()

