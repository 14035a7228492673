"""Writes tests/fixtures/sentence_transformers_losses.npz: sentence-transformers' own losses and their gradients
with respect to the embeddings, on seeded random embeddings — the independent reference of
`official_bert.retrieval.losses`.

Run in an environment with torch and sentence-transformers (the project's tests never import them), from the
repository root:

    PYTHONPATH=. /work/benchvenv/bin/python tools/make_sentence_transformers_losses.py

It records, for embeddings [B, C, D] of B rows of C texts (anchor, positive, hard negatives) and of scored pairs:
MultipleNegativesRankingLoss (default directions; and ("query_to_doc", "doc_to_query") with
partition_mode="per_direction", the symmetric loss), CoSENTLoss, CosineSimilarityLoss and MatryoshkaLoss's sum
over truncated widths (its `shrink` on each width, the wrapped loss on the result), each the loss and its gradient.
Every text of a row is distinct, as sentence-transformers' NoDuplicatesBatchSampler makes a batch.
"""

import os

import numpy as np
import sentence_transformers
import torch
from sentence_transformers.sentence_transformer.losses import (CoSENTLoss, CosineSimilarityLoss,
                                                               MultipleNegativesRankingLoss)
from sentence_transformers.sentence_transformer.losses.matryoshka import shrink

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "tests", "fixtures", "sentence_transformers_losses.npz")
MATRYOSHKA_DIMS, MATRYOSHKA_WEIGHTS = (8, 4, 2), (1.0, 0.5, 0.25)


def loss_and_gradient(compute, arrays):
    """compute(list of torch columns) → loss; returns (loss, d loss / d arrays)."""
    tensors = torch.tensor(arrays, dtype=torch.float64, requires_grad=True)
    loss = compute([tensors[:, c] for c in range(tensors.shape[1])])
    loss.backward()
    return loss.item(), tensors.grad.numpy()


def main():
    rng = np.random.default_rng(59)
    rows = rng.normal(size=(6, 3, 8))  # anchor, positive, one hard negative
    pairs = rng.normal(size=(7, 2, 8))
    scores = np.array([0.0, 1.0, 0.5, 1.0, 0.25, 0.0, 0.75])  # ties included
    mnrl = MultipleNegativesRankingLoss(None)
    symmetric = MultipleNegativesRankingLoss(None, directions=("query_to_doc", "doc_to_query"),
                                             partition_mode="per_direction")
    cosent, cosine = CoSENTLoss(None), CosineSimilarityLoss(None)
    labels = torch.tensor(scores, dtype=torch.float64)
    out = {"rows": rows, "pairs": pairs, "scores": scores, "matryoshka_dims": np.array(MATRYOSHKA_DIMS),
           "matryoshka_weights": np.array(MATRYOSHKA_WEIGHTS)}
    for name, compute, arrays in [
            ("mnrl", lambda e: mnrl.compute_loss_from_embeddings(e, None), rows),
            ("mnrl_pairs", lambda e: mnrl.compute_loss_from_embeddings(e, None), rows[:, :2]),
            ("symmetric", lambda e: symmetric.compute_loss_from_embeddings(e, None), rows[:, :2]),
            ("cosent", lambda e: cosent.compute_loss_from_embeddings(e, labels), pairs),
            ("cosine", lambda e: cosine.compute_loss_from_embeddings(e, labels), pairs),
            ("matryoshka", lambda e: sum(w * mnrl.compute_loss_from_embeddings([shrink(c, d) for c in e], None)
                                         for d, w in zip(MATRYOSHKA_DIMS, MATRYOSHKA_WEIGHTS)), rows)]:
        out[f"{name}_loss"], out[f"{name}_gradient"] = loss_and_gradient(compute, arrays)
    np.savez(OUTPUT, sentence_transformers=sentence_transformers.__version__, torch=torch.__version__, **out)
    print(f"wrote {OUTPUT}: " + ", ".join(f"{k} {float(v):.6f}" for k, v in out.items() if k.endswith("_loss")))


if __name__ == "__main__":
    main()
