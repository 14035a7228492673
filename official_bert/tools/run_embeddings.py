"""Trains a sentence-embedding model for search — sentence-transformers' recipes in TensorFlow — from any checkpoint
this library loads, evaluates it by retrieval or STS, and writes it as a sentence-transformers directory and an
embedding SavedModel.

    python run_embeddings.py --init_checkpoint=all-MiniLM-L6-v2 --train_file=data/retrieval/train.jsonl \
        --eval_dir=data/retrieval --output_dir=runs/sotu-search --do_train --do_eval --do_predict --keep_best \
        --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=1 [--export_dir=serving/sotu-search]

The model: --init_checkpoint (Google TF1, Hugging Face or sentence-transformers directory, ours); its config.json /
bert_config.json and vocab.txt (or tokenizer.json) are found beside it unless --bert_config_file / --vocab_file say;
a sentence-transformers directory gives its pooling, normalisation, longest input and casing (--pooling,
--normalize, --max_seq_length, --do_lower_case override them; a plain BERT gets mean pooling, normalised, 128
tokens).

The data: --train_file, CSV or TSV with a header row or JSON Lines. For the ranking losses, pairs or triplets:
--anchor_column (anchor), --positive_column (positive) and any number of hard negatives (--negative_columns; by
default every column named negative or negative_<n>); for cosent and cosine_similarity, scored pairs: --text_a_column,
--text_b_column, --score_column. Every text must hold more than spaces, every score be a finite number.

The losses, as sentence-transformers defines them (--loss): multiple_negatives_ranking (in-batch negatives: each
anchor's softmax over every positive and hard negative of the batch, cosine × --scale=20; --symmetric adds each
positive's over the anchors), cached_multiple_negatives_ranking (the same loss and gradients, the batch embedded
--mini_batch_size texts at a time: a large batch in the memory of a small one), cosent and cosine_similarity (scored
pairs); --matryoshka_dims=384,256,128,64 trains the embedding's prefixes too (MatryoshkaLoss). A text that is a row's
anchor or positive is never another row's negative in the same batch.

Evaluation: --eval_dir, a directory in BEIR's layout (corpus.jsonl, queries.jsonl, qrels/<split>.tsv): --do_eval
searches every --eval_split query against the whole corpus (exact top-k in TensorFlow, the corpus embedded and
searched --corpus_chunk_size passages at a time) and reports sentence-transformers' InformationRetrievalEvaluator's
figures: mrr@10, ndcg@10, map@100, recall@1, recall@10, recall@100 (and each at the Matryoshka widths). --dev_file
(scored pairs) adds the STS figures: spearman_cosine and pearson_cosine. --do_predict does the same for --test_split
and writes each query's best 100 passages to test_rankings.jsonl. With --keep_best the dev set is evaluated after
every epoch and the best checkpoint by --best_metric (ndcg@10 or spearman_cosine) is kept and used.

Outputs in --output_dir: checkpoints, eval_results / test_results (.txt, .json), and the model (the final one, or
the best) as a sentence-transformers directory: SentenceTransformer(output_dir) and
TextEmbedder.from_checkpoint(output_dir) load it. --export_dir gets the raw-text embedding SavedModel (text →
embedding), --export_dimensions=N its first N dimensions only (renormalised).

Rerunning the same command after a crash or kill resumes from the newest checkpoint in --output_dir; a rerun with
another flag that changes the training, or with an input whose content changed, is refused naming it (run.json).
Exit status 1 with a one-line message on bad flags or data.
"""

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

from absl import flags

from official_bert.checkpoints import detect
from official_bert.checkpoints.sentence_transformers import sentence_transformers_settings, vocab_from_tokenizer_json
from official_bert.configs import BertConfig
from official_bert.features.pooling import POOLINGS
from official_bert.finetuning import run_task
from official_bert.io.table_files import FORMATS
from official_bert.retrieval import losses
from official_bert.retrieval.errors import RetrievalDataError
from official_bert.retrieval.search import DEFAULT_CHUNK_SIZE
from official_bert.retrieval.training_files import RowColumns
from official_bert.tasks.embeddings import LOSSES, MAX_SCALE, EmbeddingTask
from official_bert.tools.flag_kinds import (INPUT_DIRECTORY, INPUT_FILE, MAX_BATCH_SIZE, define_integer,
                                            define_numbers, define_path, define_real, define_text, define_text_list,
                                            neutral)
from official_bert.tools.flags import (define_export_flags, define_finetuning_flags, define_model_flags,
                                       finetuning_settings_from_flags)

FLAGS = flags.FLAGS
# Bounds of the embedding's widths and the Matryoshka weights: far beyond any recipe (the widest released
# embeddings have 4,096 dimensions), so that only a slip is refused.
MAX_WIDTH = 1 << 16
MAX_WEIGHT = 1000

define_model_flags(init_checkpoint_help="The model to train: Google's TF1, Hugging Face or sentence-transformers "
                   "directory, or ours (a run_embeddings.py --output_dir too). Ignored when --output_dir holds a "
                   "checkpoint (the run resumes).")
define_finetuning_flags(do_eval_help="Evaluate on the dev set: --eval_dir's --eval_split (retrieval) and/or "
                        "--dev_file (STS).", do_predict_help="Evaluate on --eval_dir's --test_split and write each "
                        "query's best passages to test_rankings.jsonl.")
define_export_flags()
flags.DEFINE_enum("tokenizer_ops", "core", ["core", "tf_text"], "The ops of the exported WordPiece tokenizer: core "
                  "(TensorFlow's own) or tf_text (tensorflow-text's op).")
flags.DEFINE_bool("keep_best", False, "With --do_train and --do_eval: evaluate after every epoch and keep and use the "
                  "best checkpoint by --best_metric (an optimistic dev figure: chosen on the set it is reported on).")
# The data.
define_path("train_file", None, "The training rows (--do_train): .csv or .tsv with a header row, or .jsonl.",
            INPUT_FILE)
flags.DEFINE_enum("input_format", None, [f for f in FORMATS if f != "text"], "The files' format; default: from each "
                  "extension.")
define_text("anchor_column", "anchor", "The anchor's (query's) column of pairs and triplets.")
define_text("positive_column", "positive", "The positive's (relevant passage's) column.")
define_text_list("negative_columns", None, "The hard negatives' columns, each required; default: every column "
                 "named negative or negative_<n>.")
define_text("text_a_column", "text_a", "A scored pair's first text (cosent, cosine_similarity, --dev_file).")
define_text("text_b_column", "text_b", "A scored pair's second text.")
define_text("score_column", "score", "A scored pair's score (any finite numbers; higher: more similar).")
# The model and loss.
flags.DEFINE_enum("loss", "multiple_negatives_ranking", list(LOSSES), "sentence-transformers' loss of that name.")
define_real("scale", losses.SCALE, "The cosine similarities' multiplier (1 / temperature) of the ranking losses and "
            "cosent: above 0, at most 1000.", 0, MAX_SCALE, open_lower=True)
flags.DEFINE_bool("symmetric", False, "Ranking losses: add the backward term (each positive's softmax over the "
                  "batch's anchors), the two averaged (sentence-transformers' MultipleNegativesSymmetricRankingLoss).")
define_integer("mini_batch_size", 32, "cached_multiple_negatives_ranking: texts embedded at once (GradCache).", 1,
               MAX_BATCH_SIZE)
define_numbers("matryoshka_dims", None, "Train (and evaluate) the embedding's first N dimensions too, for each N "
               "(MatryoshkaLoss), e.g. 384,256,128,64.", 1, MAX_WIDTH, integers=True)
define_numbers("matryoshka_weights", None, "One loss weight for each of --matryoshka_dims (default 1 each).", 0,
               MAX_WEIGHT)
flags.DEFINE_enum("pooling", None, list(POOLINGS), "Token vectors to one vector: default the sentence-transformers "
                  "checkpoint's, else mean.")
flags.DEFINE_bool("normalize", None, "L2-normalise the embeddings: default the sentence-transformers checkpoint's, "
                  "else true.")
# Evaluation.
define_path("eval_dir", None, "A retrieval set in BEIR's layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.",
            INPUT_DIRECTORY, affects_result=False)
define_text("eval_split", "dev", "The qrels of --do_eval (qrels/<eval_split>.tsv).", affects_result=False)
define_text("test_split", "test", "The qrels of --do_predict.", affects_result=False)
define_path("dev_file", None, "Scored pairs (--text_a_column, --text_b_column, --score_column) for an STS "
            "evaluation with --do_eval.", INPUT_FILE, affects_result=False)
define_text("best_metric", None, "The dev figure --keep_best chooses by: ndcg@10 (retrieval) or spearman_cosine "
            "(STS) by default; any of eval_results' figures.", affects_result=False)
define_integer("corpus_chunk_size", DEFAULT_CHUNK_SIZE, "Passages embedded and searched at once.", 1,
               MAX_BATCH_SIZE, affects_result=False)
define_integer("export_dimensions", None, "--export_dir serves each embedding's first N dimensions (renormalised): "
               "a Matryoshka model's smaller embedding.", 1, MAX_WIDTH, affects_result=False)
neutral("tokenizer_ops")

flags.FLAGS.set_default("eval_batch_size", 64)
flags.FLAGS.set_default("predict_batch_size", 64)


def task_from_flags(checkpoint_settings):
    """The `EmbeddingTask` of the flags; `checkpoint_settings`: what a sentence-transformers --init_checkpoint
    says of its pooling and normalisation."""
    columns = RowColumns(FLAGS.anchor_column, FLAGS.positive_column,
                         tuple(FLAGS.negative_columns) if FLAGS.negative_columns is not None else None,
                         FLAGS.text_a_column, FLAGS.text_b_column, FLAGS.score_column)
    return EmbeddingTask(
        FLAGS.train_file, columns, FLAGS.input_format, FLAGS.loss, FLAGS.scale, FLAGS.symmetric, FLAGS.mini_batch_size,
        _numbers(FLAGS.matryoshka_dims, int), _numbers(FLAGS.matryoshka_weights, float),
        FLAGS.pooling or checkpoint_settings.get("pooling", "mean"),
        checkpoint_settings.get("normalize", True) if FLAGS.normalize is None else FLAGS.normalize,
        FLAGS.eval_dir, FLAGS.eval_split, FLAGS.test_split, FLAGS.dev_file, FLAGS.best_metric,
        FLAGS.corpus_chunk_size, FLAGS.export_dimensions)


def settings_from_flags(checkpoint_settings):
    """The `FineTuningSettings` of the flags, the config, vocabulary and longest input found beside
    --init_checkpoint where the flags do not give them (the casing: `FineTuningSettings.tokenizer_spec`'s)."""
    settings = finetuning_settings_from_flags()
    located = detect.locate(FLAGS.init_checkpoint) if FLAGS.init_checkpoint else None
    if not settings.bert_config_file:
        if located is None or located.config_file is None:
            raise RetrievalDataError("--bert_config_file is needed: no --init_checkpoint with a config.json or "
                                     "bert_config.json beside it")
        settings.bert_config_file = located.config_file
    # BERT's family (a RoBERTa, an XLM-R) has its own tokenizer files, which run_task finds beside the checkpoint.
    family = BertConfig.from_json_file(settings.bert_config_file).family
    if not (settings.vocab_file or settings.spm_model_file or family) and located:
        settings.vocab_file = located.vocab_file or vocab_from_tokenizer_json(located.directory)
    if not FLAGS["max_seq_length"].present:
        settings.max_seq_length = checkpoint_settings.get("sequence_length", settings.max_seq_length)
    return settings


def _numbers(value, kind):
    """A `define_numbers` flag's numbers (checked when the flags were parsed), or None."""
    return None if value is None else [kind(part) for part in value.split(",")]


def main():
    checkpoint_settings = sentence_transformers_settings(FLAGS.init_checkpoint) if FLAGS.init_checkpoint else {}
    task = task_from_flags(checkpoint_settings)
    run_task(task, settings_from_flags(checkpoint_settings), watch=cli.watch)


def run():
    """The tool as a command (`python run_embeddings.py`, or the console script `bert-run-embeddings`)."""
    cli.run(main, required_flags=["output_dir"])


if __name__ == "__main__":
    run()
