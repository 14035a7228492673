"""The sentence-transformers peer of `bench.embeddings`, in a process of its own (run with an environment that has
torch and sentence-transformers: loading PyTorch and TensorFlow in one process crashes on some CPUs). Prints one JSON
line.

    python -m bench.sentence_transformers_peer train --model DIR --train_file F --beir_dir D --seed 1 ...
    python -m bench.sentence_transformers_peer evaluate --model DIR [DIR ...] --beir_dir D

train: sentence-transformers' own training of in-batch negatives, its Trainer's step written out (the environment
lacks its [train] extra, `datasets` and `accelerate`): the model in training mode, its NoDuplicatesBatchSampler
(seeded), each column tokenized by the model's own `preprocess`, its MultipleNegativesRankingLoss, torch's AdamW with
the Trainer's parameter groups (no weight decay on biases and LayerNorm weights), a linear schedule with warmup,
gradients clipped to norm 1 — the defaults of SentenceTransformerTrainingArguments, with the learning rate, warmup,
weight decay and Adam epsilon given (official_bert's: the BERT paper's optimizer). Reports the epoch's wall time
and the InformationRetrievalEvaluator's figures on the dev and test qrels.
evaluate: the figures of each model directory (ours, written by run_embeddings.py, included).
"""

import argparse
import json
import os
import random
import time

import numpy as np

FIGURES = ("mrr@10", "ndcg@10", "map@100", "recall@1", "recall@10", "recall@100")


def beir(directory, split):
    """(queries, corpus, relevant) as InformationRetrievalEvaluator takes them."""
    read = lambda name: [json.loads(line) for line in open(os.path.join(directory, name), encoding="utf-8")]  # noqa
    corpus = {str(row["_id"]): (row.get("title", "") + " " + row["text"]).strip() for row in read("corpus.jsonl")}
    queries = {str(row["_id"]): row["text"] for row in read("queries.jsonl")}
    relevant = {}
    with open(os.path.join(directory, "qrels", f"{split}.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            query, document, score = line.rstrip("\n").split("\t")
            if float(score) > 0:
                relevant.setdefault(query, set()).add(document)
    return queries, corpus, relevant


def evaluate(model, directory, batch_size):
    """{split: {figure: value}} of sentence-transformers' InformationRetrievalEvaluator."""
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

    model.eval()
    out = {}
    for split in ("dev", "test"):
        evaluator = InformationRetrievalEvaluator(*beir(directory, split), mrr_at_k=[10], ndcg_at_k=[10],
                                                  map_at_k=[100], accuracy_at_k=[1],
                                                  precision_recall_at_k=[1, 10, 100], batch_size=batch_size,
                                                  name=split, write_csv=False)
        results = evaluator(model)
        out[split] = {figure: float(results[f"{split}_cosine_{figure}"]) for figure in FIGURES}
    return out


def train(args):
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.sampler import NoDuplicatesBatchSampler
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    model = SentenceTransformer(args.model[0], device="cpu")
    model.max_seq_length = args.max_seq_length
    loss = MultipleNegativesRankingLoss(model)
    rows = [json.loads(line) for line in open(args.train_file, encoding="utf-8")]

    class Rows:  # what the sampler reads of a datasets.Dataset
        column_names = ["anchor", "positive"]

        def __len__(self):
            return len(rows)

        def __getitem__(self, index):
            return {name: rows[index][name] for name in self.column_names}

    sampler = NoDuplicatesBatchSampler(Rows(), args.batch_size, drop_last=False, generator=torch.Generator(),
                                       seed=args.seed)
    steps = len(sampler) * args.epochs
    decay = [p for n, p in model.named_parameters() if not ("bias" in n or "LayerNorm" in n)]
    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=args.learning_rate,
                                  eps=args.adam_epsilon)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, int(steps * args.warmup_proportion), steps)
    model.train()
    epoch_seconds, losses = [], []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        for indices in sampler:
            features = [model.preprocess([rows[i][name] for i in indices]) for name in ("anchor", "positive")]
            value = loss(features, None)
            value.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            losses.append(value.item())
        epoch_seconds.append(time.perf_counter() - start)
    return {"seed": args.seed, "steps": steps, "epoch_seconds": epoch_seconds,
            "final_loss": float(np.mean(losses[-10:])), **evaluate(model, args.beir_dir, args.eval_batch_size)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("train", "evaluate"))
    parser.add_argument("--model", nargs="+", required=True)
    parser.add_argument("--beir_dir", required=True)
    parser.add_argument("--train_file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--warmup_proportion", type=float, default=0.1)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--adam_epsilon", type=float, default=1e-6)
    parser.add_argument("--max_seq_length", type=int, default=256)
    args = parser.parse_args()

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(os.cpu_count())
    if args.mode == "train":
        result = train(args)
    else:
        result = {path: evaluate(SentenceTransformer(path, device="cpu"), args.beir_dir, args.eval_batch_size)
                  for path in args.model}
    result["versions"] = {"sentence_transformers": sentence_transformers.__version__, "torch": torch.__version__}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
