"""What a reader brings to a guide before its first command — a released checkpoint, GLUE's files, their own CSV,
`make demo`'s outputs — made tiny, under the paths the guides name (tests/docs/test_guides.py). Only inputs: every
file a guide's own commands make, they make.

The released checkpoints are a four-layer, 32-wide BERT whose vocabulary holds every word of the tiny data (and
600 `[unused]` entries, as Google's vocabularies have them), in Google's or Hugging Face's format; the data files
have a few rows in each layout the guides read; data/ holds the first lines of the shipped files."""

import csv
import json
import os
import shutil

from official_bert.text.tokenization import BasicTokenizer
from tests.docs.pages import REPO

# The first lines of the shipped data the guides read: enough for a vocabulary, a few batches and a dev set.
DATA_LINES = {"data/corpus/sotu.txt": 300, "data/corpus/sotu_heldout.txt": 60, "data/classification/train.tsv": 49,
              "data/classification/dev.tsv": 17, "data/fill_in_the_blank.txt": 6, "data/README.md": 1000}
ERAS = ["1790-1860", "1861-1945", "1946-2021"]
# data/retrieval's: training pairs kept, and judgements of each split (with the queries and passages they name).
RETRIEVAL_PAIRS, RETRIEVAL_JUDGEMENTS = 64, 8

TICKETS = [("T-1", "charged twice", "my card was charged twice this month", "billing"),
           ("T-2", "app crashes", "the app crashes when I open settings", "bug"),
           ("T-3", "cannot sign in", "my password is refused at login", "login"),
           ("T-4", "refund please", "please refund the second payment", "billing"),
           ("T-5", "screen freezes", "the screen freezes after the update", "bug"),
           ("T-6", "locked out", "I am locked out of my account", "login")]
REVIEWS = [("a long and lovely film , the plot is good and the actors are great " * 6, "pos"),
           ("a long and dull film , the plot is bad and the actors are poor " * 6, "neg"),
           ("good film", "pos"), ("bad film", "neg")]
QUESTIONS = ("Café Zoë’s bakery opened in Montréal in 1895. Its founder was Zoë Dupont, a baker from Lyon.",
             [("Who founded the bakery?", "Zoë Dupont"), ("Where did the bakery open?", "Montréal"),
              ("When did the bakery open?", "1895"), ("Where was the founder from?", "Lyon"),
              ("What was the founder?", "a baker"), ("What opened in Montréal?", "Café Zoë’s bakery")])
CONLL = os.path.join(REPO, "tests", "fixtures", "ner")
# The domain's words a released vocabulary splits into pieces (the fixture's vocabulary has their pieces only).
DOMAIN_WORDS = ("interleukin", "cytokine", "estoppel", "appropriation")
# Two documents of one sentence a line, a blank line between them.
DOMAIN = ("The interleukin response was measured in the patients .\nThe cytokine storm followed the interleukin "
          "release .\n\nEstoppel bars the claim .\nThe appropriation was made by the committee .\n")
# Texts the tools are asked about on the pages (query_saved_model.py's, fill-in-the-blank sentences, ...).
ASKED = ["Fellow-citizens of the Senate", "The Union is strong and our people are prosperous.",
         "Zoë Dupont-Lefèvre left Acme & Sons.", "A man is eating food.", "I was charged twice this month"]


def _write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def _write_jsonl(path, rows):
    _write(path, "".join(json.dumps(row) + "\n" for row in rows))


def write_data(root):
    """The inputs' data files under root; returns every text they hold (for the vocabulary)."""
    texts = list(ASKED)
    for name, count in DATA_LINES.items():
        with open(os.path.join(REPO, name), encoding="utf-8") as f:
            lines = [line for _, line in zip(range(count), f)]
        _write(os.path.join(root, name), "".join(lines))
        texts += lines
    # GLUE: MRPC's and RTE's layouts.
    pairs = [("the cat sat on the mat", "a cat sat on a mat", "1"), ("the dog ran home", "the market fell", "0")] * 8
    mrpc = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    _write(os.path.join(root, "glue/MRPC/train.tsv"), mrpc + "".join(f"{l}\t{i}\t{i + 9}\t{a}\t{b}\n"
                                                                     for i, (a, b, l) in enumerate(pairs)))
    _write(os.path.join(root, "glue/MRPC/dev.tsv"), mrpc + "".join(f"{l}\t{i}\t{i + 9}\t{a}\t{b}\n"
                                                                   for i, (a, b, l) in enumerate(pairs[:2])))
    _write(os.path.join(root, "glue/MRPC/test.tsv"), "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n" + "".join(
        f"{i}\t{i}\t{i + 9}\t{a}\t{b}\n" for i, (a, b, _) in enumerate(pairs[:2])))
    rte = [(a, b, "entailment" if label == "1" else "not_entailment") for a, b, label in pairs]
    for split, rows in (("train", rte), ("dev", rte[:2])):
        _write(os.path.join(root, f"glue/RTE/{split}.tsv"), "index\tsentence1\tsentence2\tlabel\n" + "".join(
            f"{i}\t{a}\t{b}\t{label}\n" for i, (a, b, label) in enumerate(rows)))
    _write(os.path.join(root, "glue/RTE/test.tsv"), "index\tsentence1\tsentence2\n" + "".join(
        f"{i}\t{a}\t{b}\n" for i, (a, b, _) in enumerate(rte[:2])))
    texts += [a + " " + b for a, b, _ in pairs]
    # Your own data: tickets (CSV, single-label pairs), tags (JSON Lines, multi-label), ratings (regression),
    # alerts (imbalanced), reviews (long documents, SST-2's layout).
    _write_csv(os.path.join(root, "tickets_train.csv"), ["id", "subject", "body", "tag"], TICKETS * 3)
    _write_csv(os.path.join(root, "tickets_dev.csv"), ["id", "subject", "body", "tag"], TICKETS)
    _write_csv(os.path.join(root, "tickets_new.csv"), ["id", "subject", "body"], [row[:3] for row in TICKETS])
    tags = [{"id": i, "text": body, "labels": [tag] + (["ui"] if "screen" in body or "app" in body else [])}
            for i, (_, _, body, tag) in enumerate(TICKETS)]
    _write_jsonl(os.path.join(root, "train.jsonl"), tags * 3)
    _write_jsonl(os.path.join(root, "dev.jsonl"), tags)
    _write_jsonl(os.path.join(root, "new.jsonl"), [{"id": row["id"], "text": row["text"]} for row in tags])
    ratings = [(body, str(1 + i % 5)) for i, (_, _, body, _) in enumerate(TICKETS)]
    _write_csv(os.path.join(root, "ratings_train.csv"), ["text", "stars"], ratings * 3)
    _write_csv(os.path.join(root, "ratings_dev.csv"), ["text", "stars"], ratings)
    alerts = [{"text": body, "label": "alert" if tag == "bug" else "ok"} for _, _, body, tag in TICKETS]
    _write_jsonl(os.path.join(root, "alerts_train.jsonl"), alerts * 3)
    _write_jsonl(os.path.join(root, "alerts_dev.jsonl"), alerts)
    for split, rows in (("train", REVIEWS * 4), ("dev", REVIEWS)):
        _write(os.path.join(root, f"reviews/{split}.tsv"), "sentence\tlabel\n" + "".join(f"{text}\t{label}\n"
                                                                                          for text, label in rows))
    texts += [" ".join(row) for row in TICKETS] + [text for text, _ in REVIEWS]
    # SQuAD 1.1.
    context, questions = QUESTIONS
    squad = {"version": "1.1", "data": [{"title": "bakery", "paragraphs": [{"context": context, "qas": [
        {"id": f"q{i}", "question": q, "answers": [{"text": a, "answer_start": context.index(a)}]}
        for i, (q, a) in enumerate(questions)]}]}]}
    for name in ("train-v1.1.json", "dev-v1.1.json"):
        _write(os.path.join(root, name), json.dumps(squad))
    texts += [context] + [q for q, _ in questions]
    # CoNLL-2003's layout, features' input, a domain corpus and task.
    for name in ("train.txt", "valid.txt", "test.txt"):
        shutil.copyfile(os.path.join(CONLL, name), os.path.join(_mkdir(root, "conll2003"), name))
        with open(os.path.join(CONLL, name), encoding="utf-8") as f:
            texts.append(" ".join(line.split()[0] for line in f if line.strip()))
    _write(os.path.join(root, "input.txt"), "The Union is strong.\nWho founded the bakery? ||| Zoë Dupont did.\n")
    _write(os.path.join(root, "sentences.txt"), "The Union is strong.\nFellow-citizens of the Senate\n")
    _write(os.path.join(root, "domain.txt"), DOMAIN)
    for split in ("train", "dev"):
        _write(os.path.join(root, f"domain_task/{split}.tsv"), "sentence\tlabel\n" + "".join(
            f"{line}\t{'yes' if 'interleukin' in line else 'no'}\n" for line in DOMAIN.splitlines() * 4 if line))
    texts += ["The Union is strong.", "Who founded the bakery? Zoë Dupont did.", DOMAIN]
    return texts + write_retrieval(root)


def write_retrieval(root):
    """data/retrieval cut small: its first training pairs, and a BEIR set whose first dev and test judgements keep
    the queries and passages they name (beside a few more passages); returns its texts."""
    source, target = os.path.join(REPO, "data", "retrieval"), os.path.join(root, "data", "retrieval")

    def read_jsonl(name):
        with open(os.path.join(source, name), encoding="utf-8") as f:
            return [json.loads(line) for line in f]

    pairs = read_jsonl("train.jsonl")[:RETRIEVAL_PAIRS]
    _write_jsonl(os.path.join(target, "train.jsonl"), pairs)
    judged = []
    for split in ("dev", "test"):
        with open(os.path.join(source, "qrels", f"{split}.tsv"), encoding="utf-8") as f:
            lines = f.read().splitlines()[:1 + RETRIEVAL_JUDGEMENTS]
        _write(os.path.join(target, "qrels", f"{split}.tsv"), "\n".join(lines) + "\n")
        judged += [line.split("\t")[:2] for line in lines[1:]]
    queries = {query for query, _ in judged}
    corpus = read_jsonl("corpus.jsonl")
    passages = {passage for _, passage in judged} | {row["_id"] for row in corpus[:RETRIEVAL_JUDGEMENTS]}
    kept = [row for row in corpus if row["_id"] in passages] + [
        row for row in read_jsonl("queries.jsonl") if row["_id"] in queries]
    _write_jsonl(os.path.join(target, "corpus.jsonl"), kept[:len(passages)])
    _write_jsonl(os.path.join(target, "queries.jsonl"), kept[len(passages):])
    return [row["text"] for row in kept] + [text for row in pairs for text in row.values()]


def _mkdir(*parts):
    path = os.path.join(*parts)
    os.makedirs(path, exist_ok=True)
    return path


def vocabulary(texts, do_lower_case):
    """[PAD] [UNK] [CLS] [SEP] [MASK], 600 [unused] entries (BERT-Base has 994), and every word of `texts` as the
    model's basic tokenizer splits them, but the domain's words, which it has in pieces of three letters."""
    tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
    words = {word for text in texts for word in tokenizer.tokenize(text)} - set(DOMAIN_WORDS)
    for word in DOMAIN_WORDS:
        words |= {word[:3]} | {"##" + word[i:i + 3] for i in range(3, len(word), 3)}
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"[unused{i}]" for i in range(600)] + sorted(words)


def write_checkpoint(directory, vocab, format_, pretraining=True):
    """A four-layer, 32-wide BERT (with its pretraining heads) and its vocab.txt, in `format_`."""
    from official_bert import BertConfig, BertEncoder, BertPretrainer, save_checkpoint

    os.makedirs(directory, exist_ok=True)
    _write(os.path.join(directory, "vocab.txt"), "".join(token + "\n" for token in vocab))
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=4, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    encoder = BertEncoder(config)
    save_checkpoint(BertPretrainer(encoder) if pretraining else encoder, directory, format_,
                    vocab_file=os.path.join(directory, "vocab.txt"))


# The family checkpoints the family guide names, from tests/fixtures/families (tokenizers trained on the shipped
# corpus), with position tables of the released models' length so that the tools' default lengths fit.
FAMILIES = {"roberta-base": "roberta", "xlm-roberta-base": "xlm-roberta", "distilbert-base-cased": "distilbert",
            "electra-small-discriminator": "electra", "electra-small-generator": "electra-generator"}


def write_family_checkpoint(directory, fixture):
    """A random four-layer model of the fixture's family and width, 512 positions long, saved as transformers saves
    it, with the fixture's tokenizer files."""
    import dataclasses

    from official_bert import BertConfig, BertEncoder, BertPretrainer, ElectraDiscriminator, save_checkpoint

    source = os.path.join(REPO, "tests", "fixtures", "families", fixture)
    config = BertConfig.from_json_file(os.path.join(source, "config.json"))
    # RoBERTa's and XLM-R's positions start after the padding id: 2 more rows for 512 tokens.
    # Four layers, as the guides' other checkpoints: extract_features.py's default --layers reads the last four.
    config = dataclasses.replace(config, max_position_embeddings=514 if config.pad_token_id is not None else 512,
                                 num_hidden_layers=4)
    encoder = BertEncoder(config)
    model = ElectraDiscriminator(encoder) if fixture == "electra" else BertPretrainer(encoder, use_nsp=False)
    save_checkpoint(model, directory, "huggingface")
    for name in os.listdir(source):
        if name not in ("config.json", "model.safetensors"):
            shutil.copyfile(os.path.join(source, name), os.path.join(directory, name))


def write_demo_export(directory, vocab_file):
    """`make demo`'s SavedModel: an era classifier (random weights) exported as directory/1."""
    from official_bert import BertConfig, BertEncoder, TextClassifier, TextPreprocessor

    with open(vocab_file, encoding="utf-8") as f:
        vocab = f.read().splitlines()
    encoder = BertEncoder(BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=512))
    model = TextClassifier(encoder, TextPreprocessor(vocab, sequence_length=64), 3, label_list=ERAS)
    model.export(directory)


def make_inputs(root):
    """Every input of every guide, under root (done once; each page's directory links to them)."""
    texts = write_data(root)
    uncased, cased = vocabulary(texts, True), vocabulary(texts, False)
    write_checkpoint(os.path.join(root, "uncased_L-12_H-768_A-12"), uncased, "google")
    write_checkpoint(os.path.join(root, "cased_L-12_H-768_A-12"), cased, "google")
    # all-MiniLM-L6-v2 stands for the Hugging Face directories the guides name (by both names they use).
    for name in ("minilm", "all-MiniLM-L6-v2"):
        write_checkpoint(os.path.join(root, name), uncased, "huggingface", pretraining=False)
    # `make demo`'s outputs the guides continue from: its pretrained BERT and its exported era classifier.
    write_checkpoint(os.path.join(root, "demo_out", "pretrained"), uncased, "official_bert")
    write_demo_export(os.path.join(root, "demo_out", "export"), os.path.join(root, "demo_out", "pretrained",
                                                                            "vocab.txt"))
    for name, fixture in FAMILIES.items():
        write_family_checkpoint(os.path.join(root, name), fixture)
    return root
