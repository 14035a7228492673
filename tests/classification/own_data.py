"""Synthetic own-data sets for the tests and the class-weights bench: texts whose labels are the keywords they hold."""

import json
import os
import random

from official_bert import BertConfig

KEYWORDS = {"billing": ("invoice", "charge"), "bug": ("crash", "error"), "login": ("password", "signin"),
            "refund": ("refund", "money"), "ui": ("button", "screen")}
FILLER = ("the a my it is was not very please help today now again thanks hello team app page".split())
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + FILLER + [w for ws in KEYWORDS.values() for w in ws]


def keyword_rows(count, seed):
    """`count` rows {"id", "text", "labels"}: each text holds 0 to 3 of the labels' keywords among filler words."""
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        labels = sorted(rng.sample(sorted(KEYWORDS), rng.randint(0, 3)))
        words = rng.choices(FILLER, k=rng.randint(1, 4)) + [rng.choice(KEYWORDS[label]) for label in labels]
        rng.shuffle(words)
        rows.append({"id": f"k{seed}-{i}", "text": " ".join(words), "labels": labels})
    return rows


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row) + "\n" for row in rows)
    return path


def write_keyword_set(directory, train_rows=480, dev_rows=120):
    """train.jsonl and dev.jsonl of `keyword_rows` (label column "labels"); returns their paths."""
    os.makedirs(directory, exist_ok=True)
    return (write_jsonl(os.path.join(directory, "train.jsonl"), keyword_rows(train_rows, 1)),
            write_jsonl(os.path.join(directory, "dev.jsonl"), keyword_rows(dev_rows, 2)))


def write_model(directory, **overrides):
    """vocab.txt and bert_config.json of a tiny model (no dropout); returns their paths."""
    os.makedirs(directory, exist_ok=True)
    vocab, config = os.path.join(directory, "vocab.txt"), os.path.join(directory, "bert_config.json")
    with open(vocab, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    values = dict(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=32, type_vocab_size=2, hidden_dropout_prob=0.0,
                  attention_probs_dropout_prob=0.0)
    values.update(overrides)
    BertConfig(**values).to_json_file(config)
    return vocab, config
