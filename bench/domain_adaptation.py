"""README's "Adapting to your domain" at small scale: a tiny BERT pretrained on one domain gets another domain's words
(bert-extend-vocab), continues pretraining on that domain, and is scored, on held-out text of that domain, by its
masked-LM accuracy at the positions that hold a new word, before and after the continued pretraining.

    python -m bench.domain_adaptation [--base_steps 4000] [--continued_steps 2000] [--num_new_words 50]
        [--work_dir DIR]

The data is the shipped State of the Union corpus (data/corpus, date-ordered): the "released" model learns its
vocabulary and weights from the first 30 addresses (1790s-1930s), the domain is the last 30 (1930s-2021: "soviet",
"nuclear", "inflation", ...), held out are the later half of data/corpus/sotu_heldout.txt's addresses. Every step is
the checkout's command-line tool, as README gives it; the commands are printed as they run, and those whose output
--work_dir holds already are skipped (pretraining resumes). For reference, the same positions' accuracy is given for
the base model, which sees a new word as its old pieces (all of them masked: right only when every piece is), and
the accuracy at as many other, randomly chosen positions of the same sentences. Data, masking and initialization are
seeded; on a shared machine the steps take longer. The base model must be past predicting "the" everywhere for
the figures to say anything: after 1,000, 2,000 and 4,000 steps it still predicted "the" at 98-99 % of masked
positions (0.0 % at the new words' positions before and after 1,000 continued steps); that is still open.
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
flags.DEFINE_integer("base_steps", 4000, "Pretraining steps of the base model on the first addresses.")
flags.DEFINE_integer("continued_steps", 2000, "Continued pretraining steps on the domain, from the extended model.")
flags.DEFINE_integer("num_new_words", 50, "Words bert-extend-vocab takes from the domain corpus.")
flags.DEFINE_integer("vocab_size", 4000, "The base vocabulary's size (100 [unused] entries among them).")
flags.DEFINE_float("continued_learning_rate", 5e-4, "The continued pretraining's learning rate.")
flags.DEFINE_string("work_dir", None, "Where the models and data go (default: a temporary directory).")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQ_LENGTH, MAX_PREDICTIONS, BATCH = 64, 10, 32
CONFIG = ('{{"vocab_size": {vocab_size}, "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, '
          '"intermediate_size": 512, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, '
          '"attention_probs_dropout_prob": 0.1, "max_position_embeddings": 64, "type_vocab_size": 2, '
          '"initializer_range": 0.05}}')  # BERT-Tiny's shape, demo/run.sh's initializer range


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


def masked_accuracy(checkpoint, vocab_file, sentences, targets, whole_words_of=None, seed=0, batch_size=256):
    """Masked-LM accuracy and mean loss (-log p, nats) of the checkpoint at the positions of `targets` (token ids) in
    `sentences`, all masked at once per sentence; and at as many other random positions of the same sentences.

    whole_words_of: for a model without the new words, {new word: its old pieces}: the pieces of each occurrence are
    all masked, it counts as right when every piece is, and its loss is the sum of its pieces'.
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
        hits, losses = [], []
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
                losses += [-sum(log_probs[row, slot[i], ids[i]] for i in group) for group in groups]
        accuracy[kind] = (float(np.mean(hits)), float(np.mean(losses)), len(hits))
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

    # The "released" model: its vocabulary and weights from the general addresses only.
    base = os.path.join(work, "base")
    os.makedirs(base, exist_ok=True)
    if not os.path.exists(os.path.join(base, "vocab.txt")):
        tool("data_prep/build_vocab.py", input_file=general, output_file=os.path.join(base, "vocab.txt"),
             vocab_size=FLAGS.vocab_size, num_unused_tokens=100)
    with open(os.path.join(base, "vocab.txt"), encoding="utf-8") as f:
        base_vocab_size = sum(1 for _ in f)
    with open(os.path.join(base, "bert_config.json"), "w") as f:
        f.write(CONFIG.format(vocab_size=base_vocab_size))
    data = pretraining_data(work, "general", general, os.path.join(base, "vocab.txt"), dupe_factor=5)
    tool("run_pretraining.py", bert_config_file=os.path.join(base, "bert_config.json"),
         vocab_file=os.path.join(base, "vocab.txt"), input_file=data, output_dir=base, do_train="true",
         train_batch_size=BATCH, max_seq_length=SEQ_LENGTH, max_predictions_per_seq=MAX_PREDICTIONS,
         learning_rate=1e-3, num_train_steps=FLAGS.base_steps, num_warmup_steps=100, mixed_precision="fp32")

    # The recipe: extend, make the domain's pretraining data with the new vocabulary, continue pretraining.
    extended = os.path.join(work, "extended")
    if not os.path.exists(extended):
        print(tool("data_prep/extend_vocab.py", init_checkpoint=base, from_corpus=domain,
                   num_new_words=FLAGS.num_new_words, mode="unused", output_dir=extended), end="")
    data = pretraining_data(work, "domain", domain, os.path.join(extended, "vocab.txt"), dupe_factor=5)
    adapted = os.path.join(work, "adapted")
    tool("run_pretraining.py", bert_config_file=os.path.join(extended, "bert_config.json"),
         vocab_file=os.path.join(extended, "vocab.txt"), init_checkpoint=extended, input_file=data,
         output_dir=adapted, do_train="true", train_batch_size=BATCH, max_seq_length=SEQ_LENGTH,
         max_predictions_per_seq=MAX_PREDICTIONS, learning_rate=FLAGS.continued_learning_rate,
         num_train_steps=FLAGS.continued_steps, num_warmup_steps=FLAGS.continued_steps // 10, mixed_precision="fp32")

    from official_bert.checkpoints.vocab_extension import read_vocab_lines

    old, new = read_vocab_lines(os.path.join(base, "vocab.txt")), read_vocab_lines(os.path.join(extended, "vocab.txt"))
    new_ids = {i for i, (a, b) in enumerate(zip(old, new)) if a != b}
    from official_bert import tokenization

    wordpiece = tokenization.WordpieceTokenizer({t: i for i, t in enumerate(old)})
    pieces = {new[i]: wordpiece.tokenize(new[i]) for i in new_ids}
    rows = [("base model, the new words as their old pieces", base, os.path.join(base, "vocab.txt"), pieces),
            ("extended, before continued pretraining", extended, os.path.join(extended, "vocab.txt"), None),
            (f"extended, after {FLAGS.continued_steps} steps on the domain", adapted,
             os.path.join(extended, "vocab.txt"), None)]
    print(f"\nmasked-LM accuracy on the held-out domain sentences ({len(new_ids)} new words):")
    print(f"{'':<52}{'new-word positions':>26}{'other positions':>26}")
    print(f"{'model':<52}{'accuracy, loss':>26}{'accuracy, loss':>26}")
    for name, checkpoint, vocab_file, whole_words_of in rows:
        scores = masked_accuracy(checkpoint, vocab_file, domain_heldout, new_ids, whole_words_of)
        cells = [f"{100 * acc:.1f} % of {n}, {loss:.2f}" for acc, loss, n in scores.values()]
        print(f"{name:<52}{cells[0]:>26}{cells[1]:>26}", flush=True)
    print(f"total {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    app.run(main)
