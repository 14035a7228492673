"""Builds data/retrieval/, the shipped retrieval task, from the shipped State of the Union corpus (public domain):
the inverse cloze task (Lee et al. 2019) — a sentence is the query, the passage it was taken from (without it) the
one relevant document.

    python data_prep/prepare_retrieval.py [--corpus_dir=data/corpus] [--output_dir=data/retrieval]

Each address (a document of data/corpus/*.txt: one sentence a line, a blank line between addresses) is cut into
passages of --passage_sentences consecutive sentences (a shorter last one is dropped). Of each passage one sentence of
--min_words to --max_words words, chosen at random (seeded), becomes the query, and the passage keeps its other
sentences. Written (see data/retrieval/README.md):

    train.jsonl              {"anchor": query, "positive": its passage}: --train_pairs pairs, sampled from sotu.txt's
                             passages (the training addresses);
    corpus.jsonl             {"_id", "text"}: every passage of sotu_heldout.txt's addresses (never in training);
    queries.jsonl            {"_id", "text"}: their queries;
    qrels/dev.tsv, test.tsv  query-id, corpus-id, score 1: the queries of the even-numbered held-out addresses (dev)
                             and of the odd-numbered (test), against the one corpus of all held-out passages.

The output depends only on the corpus files and the flags; each file is written whole under a temporary name, then
renamed. Exit status 1 with a one-line message on a missing or unusable corpus.
"""

import json
import os
import random
import sys

from absl import flags

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from official_bert.tools import cli  # noqa: E402
from official_bert.errors import Error  # noqa: E402
from official_bert.io import write_text  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus_dir", os.path.join(REPO, "data", "corpus"), "The folder of sotu.txt and sotu_heldout.txt.")
flags.DEFINE_string("output_dir", os.path.join(REPO, "data", "retrieval"), "Where the task is written.")
flags.DEFINE_integer("passage_sentences", 4, "Sentences a passage, the query's included.", lower_bound=2)
flags.DEFINE_integer("min_words", 8, "The fewest words of a query sentence.", lower_bound=1)
flags.DEFINE_integer("max_words", 50, "The most words of a query sentence.", lower_bound=1)
flags.DEFINE_integer("train_pairs", 3000, "Training pairs sampled from sotu.txt's passages.", lower_bound=1)
flags.DEFINE_integer("seed", 12345, "Seed of the query sentences and the training sample.")


class CorpusError(Error):
    """A corpus file that cannot make the task."""


def addresses(path):
    """The addresses of a corpus file: lists of sentences."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise CorpusError(f"{path}: {e.strerror}") from None
    found = [[s for s in block.split("\n") if s.strip()] for block in text.strip("\n").split("\n\n")]
    if not any(found):
        raise CorpusError(f"{path}: no sentences")
    return found


def cloze_pairs(sentences, rng, size, min_words, max_words):
    """(query, passage without it) for each passage of `size` consecutive sentences that has a query sentence."""
    pairs = []
    for start in range(0, len(sentences) - size + 1, size):
        passage = sentences[start:start + size]
        eligible = [i for i, s in enumerate(passage) if min_words <= len(s.split()) <= max_words]
        if eligible:
            chosen = rng.choice(eligible)
            pairs.append((passage[chosen], " ".join(s for i, s in enumerate(passage) if i != chosen)))
    return pairs


def prepare(corpus_dir, output_dir, passage_sentences=4, min_words=8, max_words=50, train_pairs=3000, seed=12345):
    """Writes the task; returns {relative path: rows}."""
    rng = random.Random(seed)
    train = [pair for address in addresses(os.path.join(corpus_dir, "sotu.txt"))
             for pair in cloze_pairs(address, rng, passage_sentences, min_words, max_words)]
    if len(train) < train_pairs:
        raise CorpusError(f"--train_pairs={train_pairs}: sotu.txt makes only {len(train)} pairs")
    train = rng.sample(train, train_pairs)
    corpus, queries, qrels = [], [], {"dev": [], "test": []}
    for a, address in enumerate(addresses(os.path.join(corpus_dir, "sotu_heldout.txt"))):
        for p, (query, passage) in enumerate(cloze_pairs(address, rng, passage_sentences, min_words, max_words)):
            corpus.append({"_id": f"a{a:02d}-p{p:03d}", "text": passage})
            queries.append({"_id": f"a{a:02d}-q{p:03d}", "text": query})
            qrels["dev" if a % 2 == 0 else "test"].append((queries[-1]["_id"], corpus[-1]["_id"]))
    outputs = {
        "train.jsonl": [{"anchor": query, "positive": passage} for query, passage in train],
        "corpus.jsonl": corpus, "queries.jsonl": queries,
    }
    counts = {}
    for name, rows in outputs.items():
        write_text(os.path.join(output_dir, name),
                         "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        counts[name] = len(rows)
    for split, rows in qrels.items():
        write_text(os.path.join(output_dir, "qrels", f"{split}.tsv"),
                         "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{c}\t1\n" for q, c in rows))
        counts[f"qrels/{split}.tsv"] = len(rows)
    return counts


def main():
    if FLAGS.min_words > FLAGS.max_words:
        raise CorpusError(f"--min_words={FLAGS.min_words} exceeds --max_words={FLAGS.max_words}")
    counts = prepare(FLAGS.corpus_dir, FLAGS.output_dir, FLAGS.passage_sentences, FLAGS.min_words, FLAGS.max_words,
                     FLAGS.train_pairs, FLAGS.seed)
    for relative, count in counts.items():
        path = os.path.join(FLAGS.output_dir, relative)
        print(f"wrote {path}: {count} rows, {os.path.getsize(path):,} bytes")


if __name__ == "__main__":
    cli.run(main)
