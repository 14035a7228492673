"""Fine-tunes BERT for named-entity recognition as the paper's §5.3 does on CoNLL-2003, with run_classifier's
flags; scores entities exactly as the CoNLL `conlleval` script does and exports a SavedModel that tags raw text.

    python run_ner.py --data_dir=conll2003 --vocab_file=cased_L-12_H-768_A-12/vocab.txt \
        --bert_config_file=cased_L-12_H-768_A-12/bert_config.json \
        --init_checkpoint=cased_L-12_H-768_A-12/bert_model.ckpt --do_lower_case=False --output_dir=ner \
        --do_train --do_eval --do_predict --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \
        --num_train_epochs=3 [--document_context] [--export_dir=serving/ner]

--data_dir holds CoNLL files: train.txt, valid.txt (or dev.txt), test.txt (CoNLL-2003's names), one word per
line with its tag in the last column, a blank line between sentences, -DOCSTART- lines between documents; or JSON
Lines files train.jsonl, validation.jsonl (or dev.jsonl), test.jsonl with a list of tokens and a list of string tags
per line (--tokens_column=tokens --tags_column=ner_tags, the layout of most published NER data). Tags
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

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags

from official_bert.finetuning import run_task
from official_bert.tasks import NerTask
from official_bert.tools.flag_kinds import INPUT_DIRECTORY, MAX_SEQ_LENGTH, define_integer, define_path, define_text
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                       define_sweep_flags, finetuning_settings_from_flags)
from official_bert.tools.sweep import sweep_from_flags

FLAGS = flags.FLAGS

# run_classifier's flags.
define_path("data_dir", None, "The input data dir: train.txt, valid.txt (or dev.txt) and test.txt in CoNLL "
            "format, or train.jsonl, validation.jsonl (or dev.jsonl) and test.jsonl: JSON Lines, a list of "
            "tokens and a list of string tags per line (--tokens_column, --tags_column).", INPUT_DIRECTORY)
define_model_flags(init_checkpoint_help="Initial checkpoint (usually from a pre-trained BERT model): Google's TF1, "
                   "Hugging Face or ours; a fine-tuning --output_dir means its final (or --keep_best) checkpoint. "
                   "Ignored when --output_dir holds a checkpoint.")
define_finetuning_flags(do_eval_help="Whether to score the dev set (valid.txt) with conlleval.",
                        do_predict_help="Whether to tag the test set (test.txt) and score it with conlleval.")
define_export_flags()
define_text("label_list", None, "The tags the files may hold, comma-separated, in any scheme (e.g. "
            "O,B-PER,I-PER,B-LOC,I-LOC); their types in this order make the model's labels. Default: the "
            "types of train.txt, sorted.")
flags.DEFINE_bool("keep_best", False, "With --do_train and --do_eval: evaluate on dev after every epoch and use the "
                  "best checkpoint by entity F1 for --do_eval, --do_predict and --export_dir, instead of the final "
                  "one. The dev figure is then optimistic: it is chosen on the set it is reported on.")
define_sweep_flags()
# Added for NER.
define_integer("doc_stride", None, "When a sentence (or a served text) has more WordPieces than a window "
               "(--max_seq_length - 2), how many pieces apart its windows start. Default: 64, or half a window "
               "where a window has no more than 64 pieces.", 1, MAX_SEQ_LENGTH)
flags.DEFINE_bool("document_context", False, "Fill each sentence's window with the sentences around it in its "
                  "document (the paper's \"maximal document context\"); only the sentence's words are labelled.")
define_text("tokens_column", "tokens", "JSON Lines files: the key of each line's list of tokens.")
define_text("tags_column", "ner_tags", "JSON Lines files: the key of each line's list of tags (strings such as "
            "B-PER, one per token; not class ids).")


def main():
    task = NerTask(FLAGS.data_dir, label_list=FLAGS.label_list, doc_stride=FLAGS.doc_stride,
                   document_context=FLAGS.document_context, tokens_column=FLAGS.tokens_column,
                   tags_column=FLAGS.tags_column)
    run_task(task, finetuning_settings_from_flags(sweep_from_flags()), watch=cli.watch)


def run():
    """The tool as a command (`python run_ner.py`, or the console script `bert-run-ner`)."""
    cli.run(main, required_flags=["data_dir", "bert_config_file", "output_dir"])


if __name__ == "__main__":
    run()
