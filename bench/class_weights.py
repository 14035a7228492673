"""Class weights on an imbalanced set: the minority class's recall with --class_weights=balanced against none, at
the same steps and seeds (a quality figure for docs/guides/own-data.md, not a speed one).

    python -m bench.class_weights [--seeds 1,2,3] [--epochs 3]

The set is 95:5 binary, synthetic: 600 training rows (570 "ok", 30 "urgent") and 400 dev rows (380, 20); an urgent
row names one of four alarm words among filler words, and 3 % of the ok rows name one too. A 1-layer, 32-wide model
trains from random weights, batch 16, learning rate 1e-3, through the run_classifier library (`OwnFilesTask`,
`run_task`). One JSON line per run (seed, weights, steps, the urgent class's recall and precision, macro-F1,
accuracy), then `minority recall: none <mean> balanced <mean>`.
"""

import argparse
import json
import os
import random
import tempfile

import numpy as np

from official_bert.finetuning import FineTuningSettings, run_task
from official_bert.tasks.own_files import OwnFilesTask
from tests.classification.own_data import FILLER, write_jsonl, write_model

ALARMS = ("crash", "error", "refund", "password")


def rows(n_ok, n_urgent, seed):
    """Shuffled rows {"text", "label"}: urgent ones name an alarm word, 3 % of the ok ones too."""
    rng = random.Random(seed)
    out = []
    for label, count in (("ok", n_ok), ("urgent", n_urgent)):
        for _ in range(count):
            words = rng.choices(FILLER, k=rng.randint(2, 6))
            if label == "urgent" or rng.random() < 0.03:
                words.append(rng.choice(ALARMS))
            rng.shuffle(words)
            out.append({"text": " ".join(words), "label": label})
    rng.shuffle(out)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--epochs", type=float, default=3)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench_class_weights_")
    train = write_jsonl(os.path.join(work, "train.jsonl"), rows(570, 30, 1))
    dev = write_jsonl(os.path.join(work, "dev.jsonl"), rows(380, 20, 2))
    vocab, config = write_model(work)
    recalls = {None: [], "balanced": []}
    for seed in map(int, args.seeds.split(",")):
        for weights in recalls:
            results = run_task(OwnFilesTask({"train": train, "dev": dev}, class_weights=weights), FineTuningSettings(
                os.path.join(work, f"run-{weights}-{seed}"), config, vocab, do_train=True, do_eval=True,
                max_seq_length=16, train_batch_size=16, eval_batch_size=64, learning_rate=1e-3,
                num_train_epochs=args.epochs, iterations_per_loop=25, log_steps=1000, seed=seed))["eval_results"]
            recalls[weights].append(results["eval_recall_urgent"])
            print(json.dumps({"seed": seed, "class_weights": weights, "steps": results["global_step"],
                              **{name: round(results[f"eval_{name}"], 3) for name in (
                                  "recall_urgent", "precision_urgent", "macro_f1", "accuracy")}}), flush=True)
    print(f"minority recall: none {np.mean(recalls[None]):.3f} balanced {np.mean(recalls['balanced']):.3f}")


if __name__ == "__main__":
    main()
