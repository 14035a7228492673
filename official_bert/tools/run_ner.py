"""Fine-tunes BERT for named-entity recognition as the paper's §5.3 does on CoNLL-2003, with run_classifier's
flags; scores entities exactly as the CoNLL `conlleval` script does and exports a SavedModel that tags raw text.

    python run_ner.py --data_dir=conll2003 --vocab_file=cased_L-12_H-768_A-12/vocab.txt \
        --bert_config_file=cased_L-12_H-768_A-12/bert_config.json \
        --init_checkpoint=cased_L-12_H-768_A-12/bert_model.ckpt --do_lower_case=False --output_dir=ner \
        --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \
        --num_train_epochs=3 [--document_context] [--export_dir=serving/ner]

--data_dir holds CoNLL files: train.txt, valid.txt (or dev.txt), test.txt (CoNLL-2003's names), one word per
line with its tag in the last column, a blank line between sentences, -DOCSTART- lines between documents. Tags
may be IOB1 (CoNLL-2003's), IOB2, IOBES or BILOU; the model predicts IOB2 over the entity types of
--label_list or, without it, of train.txt. Each word's first WordPiece carries its label and the loss; sentences
longer than a window are cut into windows --doc_stride pieces apart, each word predicted where it has the most
context; --document_context fills every window with the sentences around it in its document.

As run_classifier, training runs int(windows / train_batch_size * num_train_epochs) steps and --do_eval,
--do_predict and --export_dir use the final checkpoint (with --keep_best: the best by dev F1 of the per-epoch
evaluations). Outputs in --output_dir: the cached training windows (feature_cache/, or --features_dir),
checkpoints; with --do_eval eval_results.txt/.json (conlleval's precision, recall and F1 over entities, overall and
per type, and token accuracy, in percent to 2 decimals, with the entity counts) and eval_predictions.txt; with
--do_predict test_predictions.txt and, from test.txt's gold tags, test_results.txt/.json. A predictions file is
the input with the predicted tag appended, in the input's scheme: `perl conlleval < ner/test_predictions.txt`
prints the same figures. --export_dir gets a new version
<export_dir>/<n>/ whose serving_default takes `text` strings and returns the entities (entity_type, entity_text,
entity_start, entity_end: character offsets into the text) and each word's tag, and whose serve_tensors and
serve_examples return every position's logits and label.

Rerunning the same command after a crash or kill resumes from the newest checkpoint in --output_dir. Exit status 1
with a one-line message (naming the file and line for bad data) on bad flags or data; nothing is written then.
"""

import functools

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import keras
from absl import flags, logging

from official_bert import distribution, ner, tokenization
from official_bert.batch_padding import padding_bucket_width
from official_bert.classification import write_eval_results
from official_bert.export.ner import export_ner, ner_tokenizer_layer
from official_bert.finetuning import (BestCheckpoint, FineTuningRun, Predictor, fine_tuning_schedule,
                                      load_trained_weights, sweep)
from official_bert.training import prepare_output_dir
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                          define_sweep_flags, finetuning_options_from_flags,
                                          mixed_precision_from_flags, model_config_from_flags, strategy_from_flags)

FLAGS = flags.FLAGS

# run_classifier's flags.
flags.DEFINE_string("data_dir", None, "The input data dir: train.txt, valid.txt (or dev.txt) and test.txt in CoNLL "
                    "format.")
define_model_flags(init_checkpoint_help="Initial checkpoint (usually from a pre-trained BERT model): Google's TF1, "
                   "Hugging Face or ours; a fine-tuning --output_dir means its final (or --keep_best) checkpoint. "
                   "Ignored when --output_dir holds a checkpoint.")
define_finetuning_flags(do_eval_help="Whether to score the dev set (valid.txt) with conlleval.",
                        do_predict_help="Whether to tag the test set (test.txt) and score it with conlleval.")
define_export_flags()
flags.DEFINE_string("label_list", None, "The tags the files may hold, comma-separated, in any scheme (e.g. "
                    "O,B-PER,I-PER,B-LOC,I-LOC); their types in this order make the model's labels. Default: the "
                    "types of train.txt, sorted.")
flags.DEFINE_bool("keep_best", False, "With --do_train and --do_eval: evaluate on dev after every epoch and use the "
                  "best checkpoint by entity F1 for --do_eval, --do_predict and --export_dir, instead of the final "
                  "one. The dev figure is then optimistic: it is chosen on the set it is reported on.")
define_sweep_flags()
# Added for NER.
flags.DEFINE_integer("doc_stride", 64, "When a sentence (or a served text) has more WordPieces than a window "
                     "(--max_seq_length - 2), how many pieces apart its windows start.")
flags.DEFINE_bool("document_context", False, "Fill each sentence's window with the sentences around it in its "
                  "document (the paper's \"maximal document context\"); only the sentence's words are labelled.")


def main():
    if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir):
        cli.fail("at least one of --do_train, --do_eval, --do_predict or --export_dir must be given")
    runs = sweep.sweep_runs_from_flags()
    strategy = strategy_from_flags()  # first: a multi-worker strategy must precede other TensorFlow ops
    cli.output_lock(FLAGS.output_dir, strategy=strategy)
    is_chief = distribution.is_chief(strategy)
    cli.check_case(FLAGS.do_lower_case, FLAGS.init_checkpoint)
    config = model_config_from_flags()
    ner.check_window(FLAGS.max_seq_length, FLAGS.doc_stride)
    if FLAGS.export_dir and not FLAGS.vocab_file:
        raise ner.NerError("--export_dir needs --vocab_file: the served model splits raw text into words and "
                           "WordPieces with the in-graph WordPiece tokenizer")
    mixed_precision = mixed_precision_from_flags(strategy)
    options = finetuning_options_from_flags(strategy, mixed_precision)
    bucket_width = padding_bucket_width(FLAGS.length_bucket_width, strategy, FLAGS.jit_compile)
    tokenizer = tokenization.create_tokenizer(FLAGS.vocab_file, FLAGS.spm_model_file, FLAGS.do_lower_case,
                                              preserve_unused_tokens=FLAGS.preserve_unused_tokens)

    # Input: every file needed, read and checked before anything is written; the training windows last, converted
    # once and cached in --features_dir (a sweep's runs share their sweep's).
    train_path = ner.split_path(FLAGS.data_dir, "train") if FLAGS.do_train or not FLAGS.label_list else None
    train = ner.read_conll(train_path) if train_path else None
    labels = ner.label_map(FLAGS.label_list, train, train_path)
    splits = {split: ner.split_path(FLAGS.data_dir, split)
              for split, wanted in (("dev", FLAGS.do_eval), ("test", FLAGS.do_predict), ("train", FLAGS.do_train))
              if wanted}
    data = {}
    for split, path in splits.items():
        sentences = train if split == "train" else ner.read_conll(path)
        ner.check_tags(sentences, path, labels, "--label_list" if FLAGS.label_list else train_path)
        convert = (functools.partial(ner.cached_train_windows, cache_dir=FLAGS.features_dir or FLAGS.output_dir)
                   if split == "train" else ner.convert_sentences_to_features)
        features = convert(sentences, tokenizer, labels, FLAGS.max_seq_length, FLAGS.doc_stride,
                           FLAGS.document_context)
        scheme = ner.detect_scheme([sentence.tags for sentence in sentences])
        data[split] = (path, sentences, features, scheme)
        logging.info("%s: %d sentences, %d words in %d windows, %s tags", path, len(sentences),
                     sum(len(sentence.words) for sentence in sentences), len(features), scheme.upper())
    logging.info("labels: %s", ", ".join(labels.labels))

    # The paper's procedure (--sweep, --num_restarts, ...): every run is this tool in its own directory, reading the
    # windows just cached; the best run by dev entity F1 is then what evaluation, prediction and export use.
    sweep.sweep_then_use_the_best(runs, "f1")

    # Model.
    keras.utils.set_random_seed(FLAGS.seed)
    with strategy.scope():
        model = ner.token_classifier_model(config, len(labels), mixed_precision)
    predictor = Predictor(model, strategy)

    def tag(split, batch_size):
        """The split's predicted tags (in its file's scheme) and conlleval's counts of them."""
        _, sentences, features, scheme = data[split]
        logits = ner.predict_logits(predictor, features, batch_size)
        predicted = ner.in_scheme(ner.word_tags(features, logits, sentences, labels), scheme)
        return predicted, ner.score(sentences, predicted)

    # Training; with --keep_best the dev set is evaluated after every epoch and the best checkpoint kept.
    keep_best = FLAGS.keep_best and FLAGS.do_train and FLAGS.do_eval
    if FLAGS.do_train:
        if is_chief:
            prepare_output_dir(FLAGS.output_dir, config, FLAGS.vocab_file, FLAGS.init_checkpoint)
        train_windows = data["train"][2]
        schedule = fine_tuning_schedule(len(train_windows), FLAGS.train_batch_size, FLAGS.num_train_epochs,
                                        FLAGS.warmup_proportion)
        run = cli.watch(FineTuningRun(model, ner.token_loss(), options, schedule, strategy, [ner.TokenAccuracy()],
                                      do_lower_case=FLAGS.do_lower_case))
        best = BestCheckpoint(FLAGS.output_dir, "f1", vocab_file=FLAGS.vocab_file) if keep_best else None
        run.train(ner.train_dataset_fn(train_windows.inputs, train_windows.labels, FLAGS.train_batch_size,
                                       FLAGS.seed, bucket_width, FLAGS.bucket_by_length),
                  (lambda: ner.scores(tag("dev", FLAGS.eval_batch_size)[1])) if keep_best else None, best)
    global_step = load_trained_weights(model, FLAGS.output_dir, FLAGS.init_checkpoint, FLAGS.do_lower_case,
                                       best=keep_best)

    # Every worker evaluates and predicts (the replicas' outputs are gathered); only the chief's files are kept.
    with distribution.WorkerDirectory(FLAGS.output_dir, strategy) as directory:
        for split, prefix, batch_size in (("dev", "eval", FLAGS.eval_batch_size),
                                          ("test", "test", FLAGS.predict_batch_size)):
            if split not in data:
                continue
            predicted, counts = tag(split, batch_size)
            logging.info("conlleval on %s:\n%s", data[split][0], ner.report(counts))
            results = {**ner.scores(counts), "gold_entities": sum(counts.gold.values()),
                       "predicted_entities": sum(counts.guessed.values()),
                       "correct_entities": sum(counts.correct.values())}
            if global_step is not None:
                results["global_step"] = global_step
            if runs and split == "dev":
                results["checkpoint"] = sweep.chosen_run_note(FLAGS.init_checkpoint, "f1")
            for path in (ner.write_predictions(f"{directory}/{prefix}_predictions.txt", data[split][1], predicted),
                         *write_eval_results(directory, results, basename=f"{prefix}_results")):
                logging.info("wrote %s", path)

    if FLAGS.export_dir and is_chief:
        path = export_ner(FLAGS.export_dir, model, ner_tokenizer_layer(FLAGS.vocab_file, FLAGS.do_lower_case),
                          FLAGS.max_seq_length, labels.labels, FLAGS.doc_stride)
        logging.info("exported the model for serving to %s", path)


def run():
    """The tool as a command (`python run_ner.py`, or the console script `bert-run-ner`)."""
    cli.run(main, required_flags=["data_dir", "bert_config_file", "output_dir"])


if __name__ == "__main__":
    run()
