"""`python -m bench.profile`: TensorFlow's profiler's op table for a tiny encoder's forward pass and pretraining
step — its columns, the op types the graph is known to run (one fused matmul per projection, one softmax and one
16-bit dropout draw per layer, the XLA executables of training's GELUs, layer norms and optimizer) and shares that
sum to the busy time; how many ops ran at once, one under --sequential."""

import os
import re
import subprocess
import sys

import pytest

from bench import profile as bench_profile
from official_bert import BertConfig

LAYERS = 2


def tiny_profile(mode, *flags):
    args = bench_profile.parse_args(["--preset", "tiny", "--batch_size", "2", "--seq_length", "16", "--steps", "1",
                                     "--precision", "fp32", *flags])
    config = BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=LAYERS)
    return bench_profile.profile(mode, config, args)


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse(text):
    """{op type: (total ms, share %, count, per step, us per call)} and the busy row's (total ms, share %, count)."""
    heading, header, *rows, busy = text.splitlines()
    assert header.split() == ["op", "type", "total", "ms", "share", "count", "per", "step", "us/call"]
    table = {}
    for row in rows:
        name, total, share, count, per_step, per_call = row.rsplit(None, 5)
        table[name] = (float(total), float(share.rstrip("%")), int(count), float(per_step), float(per_call))
    name, total, share, count = busy.rsplit(None, 3)
    assert name.startswith("busy time") and share == "100.0%"
    return heading, table, (float(total), int(count))


def check_totals(table, busy):
    # Each share is rounded to 0.1 %, each time to 0.1 ms.
    assert sum(share for _, share, *_ in table.values()) == pytest.approx(100, abs=0.05 * len(table) + 0.01)
    assert sum(total for total, *_ in table.values()) == pytest.approx(busy[0], abs=0.05 * len(table) + 0.01)
    assert sum(count for _, _, count, *_ in table.values()) == busy[1]
    for total, _, count, per_step, per_call in table.values():
        assert total >= 0 and count >= 1
        assert per_step == count  # one step
        assert abs(per_call * count / 1000 - total) <= 0.05 + 0.0001 * count


def count_of(table, suffix):
    return sum(count for name, (_, _, count, *_) in table.items() if name.endswith(suffix))


def test_inference_table_shows_the_encoders_ops():
    heading, table, busy = parse(tiny_profile("inference", "--top", "1000"))
    assert heading.startswith("inference, fp32: forward pass (encoder), batch 2, seq 16, 1 profiled steps")
    check_totals(table, busy)
    # QKV, attention output, intermediate and output projections (the pooler is not asked for), fused with their
    # bias (`_FusedMatMul`, or oneDNN's `_MklNativeFusedMatMul`); one softmax per layer; no dropout.
    assert count_of(table, "FusedMatMul") == 4 * LAYERS
    assert count_of(table, "Softmax") == LAYERS
    assert not [name for name in table if name.startswith("StatelessRandom")]


def test_train_table_shows_the_16_bit_dropout_draws_and_folds_the_rest():
    heading, table, busy = parse(tiny_profile("train", "--top", "1000"))
    assert heading.startswith("train, fp32: pretraining step (MLM + NSP, AdamWeightDecay), batch 2, seq 16")
    check_totals(table, busy)
    # XLA's executables are counted: forward and backward of each GELU (one a layer, the MLM head's), layer norm
    # (two a layer, the embeddings', the MLM head's) and of the masked LM's cross-entropy, one optimizer update per
    # variable.
    variables = len(bench_profile.train_step.official_bert_model(
        BertConfig.from_preset("tiny", vocab_size=100, num_hidden_layers=LAYERS), remat=False).trainable_variables)
    dropouts = table["XLA executable"][2] - (2 * (LAYERS + 1) + 2 * (2 * LAYERS + 2) + 2 + variables)
    # And the dropouts' masks: the embeddings' and three a layer forward; backward the same and each attention's
    # recomputed dropped probabilities.
    assert dropouts == (1 + 3 * LAYERS) + (1 + 4 * LAYERS), dropouts
    # The embeddings' dropout, and per layer the attention probabilities', attention output's and feed-forward's.
    assert table["StatelessRandomUniformFullIntV2"][2] == 1 + 3 * LAYERS
    assert "StatelessRandomUniformV2" not in table
    assert count_of(table, "Softmax") >= LAYERS and count_of(table, "MatMul") > 4 * LAYERS
    # --top 5: five rows and one for the rest, the same busy time.
    top = parse("heading\n" + bench_profile.format_table(
        [bench_profile.OpStat(name, total * 1000, count) for name, (total, _, count, *_) in table.items()], 1, 5))
    assert list(top[1])[:5] == list(table)[:5] and list(top[1])[5] == f"({len(table) - 5} other op types)"
    check_totals(top[1], top[2])


def test_ops_at_once_is_the_busy_time_over_the_union_of_the_ops_intervals():
    # [0, 15) and [20, 25): 20 of the 26 units spanned; [21, 22) lies inside [20, 25), [5, 15) overlaps [0, 10).
    assert bench_profile._union_ps([(20, 25), (0, 10), (21, 22), (5, 15)]) == 20
    assert bench_profile._union_ps([(0, 3), (3, 4)]) == 4 and bench_profile._union_ps([]) == 0


@pytest.mark.slow
def test_sequential_runs_one_op_at_a_time():
    """The inter-op setting must precede TensorFlow's start, hence a new process."""
    out = subprocess.run([sys.executable, "-m", "bench.profile", "--preset", "tiny", "--batch_size", "2",
                          "--seq_length", "16", "--steps", "1", "--warmup_steps", "1", "--precision", "fp32",
                          "--sequential", "--top", "1000"], cwd=REPO, capture_output=True, text=True, check=True,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}).stdout
    tables = out.split("\n\n")[1:]
    assert [t.split(",")[0] for t in tables] == ["inference", "train"]
    for table in tables:
        heading, rows, busy = parse(table.strip())
        at_once = float(re.search(r"([0-9.]+) ops at once on average \(--sequential\)", heading).group(1))
        assert at_once == pytest.approx(1.0, abs=0.005)
        check_totals(rows, busy)
