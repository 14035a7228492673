"""`make replicate`'s report: results.md (the paper's figures beside ours), claims.txt (which claims hold at this
scale) and, with matplotlib installed (requirements-replicate.txt), dev_accuracy.png, pretraining_curves.png and
step_curve.png (dev accuracy over pretraining steps, the paper's Figure 5).

    python replicate/report.py --output_dir=replicate_out --seeds=1,2,3,4,5 --main_shape=2x128 \
        --size_shapes=1x128,4x128 --pretrain_steps=4000 --pretrain_batch=32 --curve_steps=500,1000,2000,4000 \
        --equal_targets_step=625

It reads what replicate/run.sh leaves in --output_dir: pretrain/<run>/eval_results.txt (held-out evaluation) and
pretrain/<run>/train/ (TensorBoard scalars of training), finetune/<variant>-seed<seed>/eval_results.txt (dev
accuracy on the era task; <run>_step<N> fine-tuned from that run's checkpoint at step N), targets.txt (tokens and
predicted targets per sequence, replicate/targets.py) and the stage stamps .done-<stage> (seconds each stage
took). Runs that are missing
are listed as such; the report never fails for them.
"""

import dataclasses
import math
import os

from official_bert.tools import cli  # first: it quiets TensorFlow's C++ start-up logging

import numpy as np
import tensorflow as tf
from absl import flags

from official_bert.errors import Error
from official_bert.io import atomic_local_path, write_text
from official_bert.training.monitor import read_scalars

FLAGS = flags.FLAGS

# The paper's figures (dev sets, BERT-Base unless said).
PAPER_TABLE_5 = {
    "mlm_nsp": "BERT-Base: MNLI-m 84.4, QNLI 88.4, MRPC 86.7, SST-2 92.7, SQuAD F1 88.5",
    "mlm": "No NSP: 83.9, 84.9, 86.5, 92.6, 87.9",
    "ltr": "LTR & No NSP: 82.1, 84.3, 77.5, 92.1, 77.8",
}
# Table 6: (L/H/A, held-out MLM perplexity, MNLI-m, MRPC, SST-2).
PAPER_TABLE_6 = (("3/768/12", 5.84, 77.9, 79.8, 88.4), ("6/768/3", 5.24, 80.6, 82.2, 90.7),
                 ("6/768/12", 4.68, 81.9, 84.8, 91.3), ("12/768/12", 3.99, 84.4, 86.7, 92.9),
                 ("12/1024/16", 3.54, 85.7, 86.9, 93.3), ("24/1024/16", 3.23, 86.6, 87.8, 93.7))
# Our three sizes are set beside these rows of Table 6, smallest to largest.
PAPER_SIZE_ROWS = (0, 2, 3)
PAPER_TABLE_7 = "Table 7, CoNLL-2003 dev F1: fine-tuning 96.4, feature-based (concat last four) 96.1"
# "Comes close": the feature-based approach within this many accuracy points of fine-tuning.
CLOSE_POINTS = 5.0


class ReportError(Error):
    """A replicate output directory or flag the report cannot use."""


@dataclasses.dataclass(frozen=True)
class Variant:
    """One fine-tuned row of the table.

    Args:
        name: its fine-tuning runs are finetune/<name>-seed<seed>.
        label: the table's first column.
        pretrain: the pretraining run whose held-out results it shows (pretrain/<pretrain>), or None.
        paper: the paper's corresponding figures.
        objective: its pretraining objective ("mlm_nsp", "mlm" or "ltr"), None without pretraining.
        steps: the pretraining steps of the checkpoint it fine-tunes (None: the run's last).
    """

    name: str
    label: str
    pretrain: str = None
    paper: str = "—"
    objective: str = None
    steps: int = None


def shape_size(shape):
    """The non-embedding parameter count of a "LAYERSxHIDDEN" shape (FFN 4H), to order sizes.

    Example:
    >>> shape_size("2x128") < shape_size("4x128") < shape_size("4x256")
    True
    """
    layers, hidden = (int(part) for part in shape.split("x"))
    return layers * 12 * hidden * hidden


def variants(main_shape, size_shapes, equal_targets_step=None):
    """The table's rows, in order: Table 5's three, (c') = (c)'s checkpoint at `equal_targets_step` (where it has
    predicted as many tokens as (b) in all), the sizes (Table 6), random init, feature-based (Table 7)."""
    rows = [Variant("mlm_nsp", f"(a) MLM + NSP, {main_shape}", "mlm_nsp", PAPER_TABLE_5["mlm_nsp"], "mlm_nsp"),
            Variant("mlm", f"(b) MLM only (No NSP), {main_shape}", "mlm", PAPER_TABLE_5["mlm"], "mlm"),
            Variant("ltr", f"(c) LTR, no NSP, {main_shape}", "ltr", PAPER_TABLE_5["ltr"], "ltr")]
    if equal_targets_step:
        rows.append(Variant(f"ltr_step{equal_targets_step}", f"(c') (c) at step {equal_targets_step}: (b)'s "
                            "predicted targets", None, "— (the paper compares equal steps)", "ltr",
                            equal_targets_step))
    for rank, shape in enumerate(sorted(set(size_shapes) | {main_shape}, key=shape_size)):
        name, ppl, mnli, mrpc, sst = PAPER_TABLE_6[PAPER_SIZE_ROWS[min(rank, len(PAPER_SIZE_ROWS) - 1)]]
        run = "mlm_nsp" if shape == main_shape else f"size_{shape}"
        label = f"(d) size {shape}" + (" = (a)" if shape == main_shape else "")
        rows.append(Variant(run, label, run, f"Table 6, {name}: MLM ppl {ppl}; MNLI-m {mnli}, MRPC {mrpc}, "
                                             f"SST-2 {sst}", "mlm_nsp"))
    rows.append(Variant("random", f"(e) random initialization, {main_shape}", None,
                        "— (no table: the paper's premise)"))
    layers = min(4, int(main_shape.split("x")[0]))
    rows.append(Variant("features", f"(f) feature-based: frozen (a), concat last {layers}", "mlm_nsp", PAPER_TABLE_7,
                        "mlm_nsp"))
    return rows


def curve_variants(curve_steps):
    """{objective: [Variant at each step]} of the step curve: (b) and (c) fine-tuned from their checkpoints,
    <run>_step<N>, the last step being the run itself.

    Example:
    >>> [v.name for v in curve_variants([500, 1000])["ltr"]]
    ['ltr_step500', 'ltr']
    """
    last = max(curve_steps)
    return {objective: [Variant(objective if step == last else f"{objective}_step{step}", f"{label}, step {step}",
                                objective=objective, steps=step) for step in sorted(curve_steps)]
            for objective, label in (("mlm", "(b) MLM"), ("ltr", "(c) LTR"))}


def read_key_values(path):
    """The "key = value" lines of an eval_results.txt as {key: float}; {} if the file does not exist."""
    if not tf.io.gfile.exists(path):
        return {}
    values = {}
    with tf.io.gfile.GFile(path) as f:
        for line in f:
            key, sep, value = line.partition(" = ")
            if sep:
                try:
                    values[key.strip()] = float(value)
                except ValueError:
                    pass  # a text value, such as the checkpoint a --keep_best run used
    return values


def dev_accuracies(output_dir, name, seeds):
    """{seed: dev accuracy} of a variant's fine-tuning runs that finished."""
    found = {}
    for seed in seeds:
        results = read_key_values(os.path.join(output_dir, "finetune", f"{name}-seed{seed}", "eval_results.txt"))
        accuracy = results.get("eval_accuracy", results.get("accuracy"))
        if accuracy is not None:
            found[seed] = accuracy
    return found


def heldout(output_dir, run):
    """A pretraining run's held-out figures: ("MLM" or "LTR", accuracy, perplexity), or None."""
    results = read_key_values(os.path.join(output_dir, "pretrain", run, "eval_results.txt"))
    for kind, prefix in (("MLM", "masked_lm"), ("LTR", "lm")):
        if f"{prefix}_accuracy" in results:
            return kind, results[f"{prefix}_accuracy"], math.exp(results[f"{prefix}_loss"])
    return None


@dataclasses.dataclass
class Summary:
    """A variant's results: dev accuracies by seed and its pretraining run's held-out figures."""

    variant: Variant
    accuracies: dict
    heldout: tuple = None

    @property
    def mean(self):
        return float(np.mean(list(self.accuracies.values()))) if self.accuracies else float("nan")

    @property
    def std(self):
        """Sample standard deviation over seeds (n − 1); 0 for a single seed."""
        values = list(self.accuracies.values())
        return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0

    @property
    def half_interval(self):
        """Half the 95 % t-interval of the mean over seeds; 0 below two seeds."""
        n = len(self.accuracies)
        return t_975(n - 1) * self.std / math.sqrt(n) if n > 1 else 0.0


def row(summaries, key):
    """The summary whose label starts with `key` ("(c')", "(e)": the table's first column), or None."""
    return next((s for s in summaries if s.variant.label.split()[0] == key), None)


def summarize(output_dir, rows, seeds):
    return [Summary(v, dev_accuracies(output_dir, v.name, seeds), v.pretrain and heldout(output_dir, v.pretrain))
            for v in rows]


@dataclasses.dataclass(frozen=True)
class Budget:
    """What the pretraining runs computed: `steps` of `batch` sequences, and targets.txt's per-sequence counts
    (replicate/targets.py: tokens_per_sequence, mlm_targets_per_sequence, ltr_targets_per_sequence; {} if
    missing)."""

    steps: int
    batch: int
    counts: dict

    def per_step(self, objective):
        """(tokens read, tokens predicted) per step of `objective`; None without counts."""
        if not self.counts:
            return None
        kind = "ltr" if objective == "ltr" else "mlm"
        return (self.batch * self.counts["tokens_per_sequence"],
                self.batch * self.counts[f"{kind}_targets_per_sequence"])

    def describe(self, variant):
        """A row's pretraining compute: steps, then per step the tokens read and predicted, and in all.

        Example:
        >>> budget = Budget(4000, 32, {"tokens_per_sequence": 63.0, "mlm_targets_per_sequence": 9.5,
        ...                            "ltr_targets_per_sequence": 62.0})
        >>> budget.describe(Variant("mlm_nsp", "(a)", objective="mlm_nsp"))
        '4,000 steps × (2,016 tokens, 304 predicted + 32 NSP) = 1.22M predicted'
        >>> budget.describe(Variant("ltr_step625", "(c')", objective="ltr", steps=625))
        '625 steps × (2,016 tokens, 1,984 predicted) = 1.24M predicted'
        >>> budget.describe(Variant("random", "(e)"))
        'none'
        """
        if variant.objective is None:
            return "none"
        steps = variant.steps or self.steps
        per_step = self.per_step(variant.objective)
        if per_step is None:
            return f"{steps:,} steps of {self.batch}"
        tokens, predicted = per_step
        nsp = f" + {self.batch} NSP" if variant.objective == "mlm_nsp" else ""
        return (f"{steps:,} steps × ({tokens:,.0f} tokens, {predicted:,.0f} predicted{nsp}) = "
                f"{steps * predicted / 1e6:.2f}M predicted")


def _accuracy_text(summary, seeds):
    if not summary.accuracies:
        return "missing"
    text = f"{100 * summary.mean:.1f} ± {100 * summary.std:.1f}"
    if len(summary.accuracies) < len(seeds):
        text += f" ({len(summary.accuracies)} of {len(seeds)} seeds)"
    return text


def _heldout_text(summary):
    if summary.variant.pretrain is None:
        return "—"
    if summary.heldout is None:
        return "missing"
    kind, accuracy, perplexity = summary.heldout
    return f"{kind} acc {100 * accuracy:.1f} %, ppl {perplexity:.1f}"


def results_table(summaries, seeds, budget):
    """The markdown table: each variant, the paper's figures, our dev accuracy (mean ± std, %), held-out
    pretraining figures and the pretraining compute (`Budget.describe`)."""
    lines = ["| Variant | Paper (dev; BERT-Base unless said) | Era dev accuracy, % (mean ± std over "
             f"{len(seeds)} seeds) | Held-out pretraining: accuracy, perplexity | Pretraining compute |",
             "|---|---|---|---|---|"]
    for s in summaries:
        lines.append(f"| {s.variant.label} | {s.variant.paper} | {_accuracy_text(s, seeds)} | {_heldout_text(s)} "
                     f"| {budget.describe(s.variant)} |")
    return "\n".join(lines) + "\n"


# Two-sided 95 % quantiles of Student's t by degrees of freedom (1 ... 30); beyond, the normal's 1.96.
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def paired_interval(better, worse):
    """The mean of the paired differences `better[seed] - worse[seed]` over the seeds both have, and its 95 %
    interval (paired t); (mean, low, high, n), the interval (nan, nan) below two pairs.

    Example:
    >>> mean, low, high, n = paired_interval({1: 0.80, 2: 0.82, 3: 0.81}, {1: 0.70, 2: 0.71, 3: 0.72})
    >>> round(mean, 3), round(low, 3), round(high, 3), n
    (0.1, 0.075, 0.125, 3)
    """
    seeds = sorted(set(better) & set(worse))
    differences = np.array([better[s] - worse[s] for s in seeds], float)
    n = len(differences)
    if n == 0:
        return float("nan"), float("nan"), float("nan"), 0
    mean = float(differences.mean())
    if n < 2:
        return mean, float("nan"), float("nan"), n
    half = t_975(n - 1) * float(differences.std(ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half, n


def t_975(degrees):
    """Student's t two-sided 95 % quantile for `degrees` of freedom (≥ 1)."""
    return T_975[degrees - 1] if degrees <= len(T_975) else 1.96


def decide(low, high):
    """The verdict of a claim from the 95 % interval of its difference: "holds" above 0, "reversed" below,
    "undecided at this scale" across it (or with no interval).

    Example:
    >>> decide(0.01, 0.05), decide(-0.05, -0.01), decide(-0.01, 0.02), decide(float("nan"), float("nan"))
    ('holds', 'reversed', 'undecided at this scale', 'undecided at this scale')
    """
    if low > 0:
        return "holds"
    if high < 0:
        return "reversed"
    return "undecided at this scale"


def compare(better, worse):
    """(verdict, detail) for the claim that `better` beats `worse` on dev accuracy, from the paired differences
    over the seeds both ran (the same seeds fine-tune every variant): `decide` on their 95 % interval.

    Example:
    >>> a = Summary(Variant("a", "a"), {1: 0.80, 2: 0.82, 3: 0.81})
    >>> b = Summary(Variant("b", "b"), {1: 0.70, 2: 0.71, 3: 0.72})
    >>> compare(a, b)[0], compare(b, a)[0], compare(a, a)[0]
    ('holds', 'reversed', 'undecided at this scale')
    >>> compare(a, b)[1]
    '81.0 vs 71.0: +10.0 points, 95 % interval [+7.5, +12.5] over 3 paired seeds'
    """
    mean, low, high, n = paired_interval(better.accuracies, worse.accuracies)
    if n == 0:
        return "not run", "missing runs"
    detail = f"{100 * better.mean:.1f} vs {100 * worse.mean:.1f}: {100 * mean:+.1f} points"
    if n > 1:
        detail += f", 95 % interval [{100 * low:+.1f}, {100 * high:+.1f}] over {n} paired seeds"
    else:
        detail += ", one paired seed: no interval"
    return decide(low, high), detail


def claims(summaries, curve=None):
    """[(claim, verdict, detail)] for the paper's claims, from the summaries (and the step curve's, see
    `curve_claim`)."""
    by_name = {s.variant.name: s for s in summaries}
    results = [
        ("Pretraining helps: (a) beats random initialization (e)", *compare(by_name["mlm_nsp"], by_name["random"])),
        ("Removing NSP hurts (Table 5): (a) beats (b)", *compare(by_name["mlm_nsp"], by_name["mlm"])),
        ("Bidirectionality matters (Table 5), at equal steps: No NSP (b) beats LTR & No NSP (c)",
         *compare(by_name["mlm"], by_name["ltr"])),
    ]
    equal = row(summaries, "(c')")
    if equal is not None:
        results.append(("Bidirectionality matters, at equal predicted targets: (b) beats (c')",
                        *compare(by_name["mlm"], equal)))
    if curve:
        results.append(curve_claim(curve))
    sizes = [s for s in summaries if s.variant.label.startswith("(d) ")]
    steps = [compare(larger, smaller) for smaller, larger in zip(sizes, sizes[1:])]
    verdicts = {verdict for verdict, _ in steps}
    size_verdict = next((v for v in ("not run", "reversed", "undecided at this scale") if v in verdicts), "holds")
    perplexities = [f"{s.heldout[2]:.1f}" if s.heldout else "?" for s in sizes]
    results.append(("Bigger models help (Table 6): dev accuracy rises with size", size_verdict,
                    "; ".join(d for _, d in steps) + f"; held-out MLM ppl {' -> '.join(perplexities)}"))
    features, tuned = by_name["features"], by_name["mlm_nsp"]
    below, detail = compare(tuned, features)
    gap = 100 * (tuned.mean - features.mean)
    if below == "not run":
        verdict = below
    elif below == "reversed":
        verdict = "reversed (above fine-tuning)"
    elif gap > CLOSE_POINTS:
        verdict = f"does not hold (below, but not within {CLOSE_POINTS:.0f} points)"
    else:
        verdict = below
    results.append(("Feature-based (f) comes close to fine-tuning (a) but stays below (Table 7)", verdict, detail))
    return results


def summarize_curve(output_dir, curve_steps, seeds):
    """{objective: [Summary at each of `curve_steps`]} for the step curve (`curve_variants`)."""
    return {objective: summarize(output_dir, rows, seeds) for objective, rows in curve_variants(curve_steps).items()}


def curve_claim(curve):
    """(claim, verdict, detail) for Figure 5's "the MLM model begins to outperform the LTR model almost
    immediately": (b) against (c) at every step of the curve. The verdict is "holds" or "reversed" where every
    step says so, "holds from step N" where MLM's lead holds from step N on (N the first such), else
    "undecided at this scale".

    Example:
    >>> def at(step, accuracy):
    ...     return Summary(Variant(f"v{step}", "v", steps=step), {1: accuracy, 2: accuracy + 0.01, 3: accuracy})
    >>> curve = {"mlm": [at(1, 0.4), at(2, 0.7)], "ltr": [at(1, 0.6), at(2, 0.6)]}
    >>> curve_claim(curve)[1]
    'holds from step 2'
    """
    steps = [(mlm.variant.steps, *compare(mlm, ltr)) for mlm, ltr in zip(curve["mlm"], curve["ltr"])]
    verdicts = [verdict for _, verdict, _ in steps]
    holding = len(verdicts)  # the first of the checkpoints from which on every verdict is "holds"
    while holding and verdicts[holding - 1] == "holds":
        holding -= 1
    if len(set(verdicts)) == 1:
        verdict = verdicts[0]
    elif holding < len(verdicts):
        verdict = f"holds from step {steps[holding][0]}"
    else:
        verdict = "undecided at this scale"
    detail = "; ".join(f"step {step}: {verdict} ({detail})" for step, verdict, detail in steps)
    return "MLM outperforms LTR almost immediately (Figure 5): (b) beats (c) at each checkpoint", verdict, detail


def curve_table(curve, budget):
    """The step curve as a markdown table: per checkpoint, each objective's predicted targets so far and dev
    accuracy (mean and 95 % interval over seeds), and the paired difference."""
    lines = ["| Pretraining step | (b) MLM: targets predicted so far | (b) dev accuracy, % | (c) LTR: targets "
             "predicted so far | (c) dev accuracy, % | (b) − (c), points [95 % interval] |",
             "|---|---|---|---|---|---|"]
    for mlm, ltr in zip(curve["mlm"], curve["ltr"]):
        cells = [f"{mlm.variant.steps:,}"]
        for s in (mlm, ltr):
            per_step = budget.per_step(s.variant.objective)
            cells.append(f"{s.variant.steps * per_step[1] / 1e6:.2f}M" if per_step else "?")
            cells.append(f"{100 * s.mean:.1f} ± {100 * s.half_interval:.1f}" if s.accuracies else "missing")
        mean, low, high, n = paired_interval(mlm.accuracies, ltr.accuracies)
        cells.append(f"{100 * mean:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]" if n > 1 else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def claims_text(results):
    return "".join(f"{verdict.upper():<36} {claim}: {detail}\n" for claim, verdict, detail in results)


def stage_seconds(output_dir, prefix=".done-"):
    """{stage: seconds} from the `prefix`<stage> stamps: .done-<stage> (a stage's own time) or .wall-<phase>
    (the wall time of a phase's runs, two at a time)."""
    seconds = {}
    for name in sorted(tf.io.gfile.listdir(output_dir)):
        if name.startswith(prefix):
            with tf.io.gfile.GFile(os.path.join(output_dir, name)) as f:
                seconds[name[len(prefix):]] = int(f.read().strip() or 0)
    return seconds


FIGURE_5 = ("The paper's Figure 5 (BERT-Base, MNLI dev accuracy fine-tuned from checkpoints at 200k to 1M steps): "
            "the MLM \"converges marginally slower\" than the LTR model, but \"begins to outperform the LTR model "
            "almost immediately\".")


def results_markdown(summaries, curve, seeds, main_shape, budget, machine, seconds, wall, jobs):
    """results.md: the scale, the table, the step curve, the verdicts, the machine and the time it took
    (`seconds`: each stage's own, `wall`: each phase's, see `stage_seconds`)."""
    table6 = "; ".join(f"{name}: {ppl} / {mnli} / {mrpc} / {sst}" for name, ppl, mnli, mrpc, sst in PAPER_TABLE_6)
    mlm, ltr = budget.per_step("mlm") or (0, 0), budget.per_step("ltr") or (0, 0)
    return (
        "# The paper's claims at small scale (`make replicate`)\n\n"
        f"Pretraining: {budget.steps:,} steps of {budget.batch} sequences on the State of the Union corpus "
        "(data/corpus), the same steps, batch, data and learning rate (scaled by 128 / hidden size) for every run; "
        f"main shape {main_shape} (layers x hidden size). A step reads {mlm[0]:,.0f} tokens whatever the "
        f"objective; the masked LM predicts {mlm[1]:,.0f} of them (the masked ~15 %), the left-to-right LM "
        f"{ltr[1]:,.0f} (every next token), so at equal steps LTR learns from "
        f"{ltr[1] / mlm[1] if mlm[1] else float('nan'):.1f} times as many targets: row (c') is (c)'s checkpoint "
        "with about as many predicted targets as (b) after all its steps. Fine-tuning: the "
        f"era task (data/classification: 3 classes, chance 33.3 %), seeds {', '.join(map(str, seeds))} for every "
        "variant, dev accuracy of the final checkpoint. Held-out: the pretraining objective on held-out addresses "
        "(perplexity = exp of the mean cross-entropy; MLM and LTR perplexities measure different tasks). "
        "The paper's figures are BERT-Base's on GLUE/SQuAD/CoNLL: compare directions, not values.\n\n"
        + results_table(summaries, seeds, budget)
        + f"\nTable 6 in full (L/H/A: held-out MLM ppl; MNLI-m / MRPC / SST-2): {table6}. Our sizes sit beside "
        "its rows by rank, smallest to smallest.\n\n"
        + ("## Over pretraining steps (step_curve.png)\n\n(b) and (c) fine-tuned from their checkpoints (mean ± "
           "half the 95 % t-interval over seeds; the difference paired seed by seed). " + FIGURE_5 + "\n\n"
           + curve_table(curve, budget) + "\n" if curve else "")
        + "## Claims\n\n```\n" + claims_text(claims(summaries, curve)) + "```\n\n"
        "The rule: every variant is fine-tuned with the same seeds, so each claim is judged on the paired "
        "differences (seed by seed) of dev accuracy: their mean and 95 % interval (paired t). The claim HOLDS "
        "where the whole interval is above 0, is REVERSED where it is below 0, and is UNDECIDED AT THIS SCALE "
        f"where it spans 0; the feature-based approach is close within {CLOSE_POINTS:.0f} points.\n\n"
        + f"Machine: {machine}.\n\n" + time_line(seconds, wall, jobs) + "\n")


def machine_text():
    """The machine the report runs on (that of the runs, as replicate/run.sh calls it): CPU model, the cores
    this process may use, a oneDNN ISA cap, and any GPU TensorFlow sees."""
    model = "unknown CPU"
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    text = f"{model}, {cores} cores"
    if os.environ.get("ONEDNN_MAX_CPU_ISA"):
        text += f" (oneDNN held to {os.environ['ONEDNN_MAX_CPU_ISA']})"
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        names = [tf.config.experimental.get_device_details(g).get("device_name", g.name) for g in gpus]
        text += ", GPU: " + ", ".join(names)
    return text


def time_line(seconds, wall, jobs=(1, 2)):
    """The run's wall time, by phase (`jobs`: runs at a time in pretraining, in fine-tuning), and what its runs
    took each.

    >>> print(time_line({"vocab": 30, "data": 5, "targets": 4, "pretrain-a": 400, "pretrain-b": 300,
    ...                  "finetune-a-1": 60}, {"pretrain": 700, "finetune": 60}))
    Time: 799 s in all (wall: vocabulary and data 39 s, pretraining 700 s one run at a time, fine-tuning 60 s \
2 runs at a time); the runs' own times add up to 700 s of pretraining and 60 s of fine-tuning.
    """
    pretrain = sum(v for k, v in seconds.items() if k.startswith("pretrain-"))
    finetune = sum(v for k, v in seconds.items() if k.startswith("finetune-"))
    setup = sum(seconds.get(stage, 0) for stage in ("vocab", "data", "targets"))
    phases = wall.get("pretrain", 0), wall.get("finetune", 0)
    at_once = ["one run at a time" if n == 1 else f"{n} runs at a time" for n in jobs]
    return (f"Time: {setup + sum(phases)} s in all (wall: vocabulary and data {setup} s, pretraining {phases[0]} s "
            f"{at_once[0]}, fine-tuning {phases[1]} s {at_once[1]}); the runs' own times add up to {pretrain} s of "
            f"pretraining and {finetune} s of fine-tuning.")


def write_plots(output_dir, summaries, scalars, curve=None, budget=None):
    """dev_accuracy.png (bars with std error bars), pretraining_curves.png and, given the step curve,
    step_curve.png; returns the paths written, or [] when matplotlib is not installed (pip install -r
    requirements-replicate.txt).

    Args:
        output_dir: where the PNGs go.
        summaries: the `Summary`s of the table.
        scalars: {label: {metric: {step: value}}}, the pretraining runs' TensorBoard scalars.
        curve: `summarize_curve`'s {objective: [Summary]}.
        budget: the `Budget`, for the predicted-targets axis.
    """
    try:
        import matplotlib
    except ImportError:
        return []
    matplotlib.use("Agg")
    from matplotlib import pyplot

    written = []
    done = [s for s in summaries if s.accuracies]
    figure, axes = pyplot.subplots(figsize=(10, 4.5))
    axes.bar(range(len(done)), [100 * s.mean for s in done], yerr=[100 * s.std for s in done], capsize=4,
             color="tab:blue")
    axes.axhline(100 / 3, color="gray", linestyle="--", label="chance")
    axes.set_xticks(range(len(done)), [s.variant.label for s in done], rotation=30, ha="right", fontsize=8)
    axes.set(ylabel="dev accuracy, %", title="Era task: dev accuracy, mean ± std over seeds")
    axes.legend()
    figure.tight_layout()
    written.append(_save(figure, os.path.join(output_dir, "dev_accuracy.png")))

    figure, (loss_axes, accuracy_axes) = pyplot.subplots(1, 2, figsize=(11, 4))
    for label, runs in scalars.items():
        prefix = "lm" if "lm_loss" in runs else "masked_lm"
        for axes, metric in ((loss_axes, f"{prefix}_loss"), (accuracy_axes, f"{prefix}_accuracy")):
            points = sorted(runs.get(metric, {}).items())
            if points:
                axes.plot(*zip(*points), marker=".", label=label)
    loss_axes.set(xlabel="step", ylabel="training cross-entropy", title="Masked tokens; next token for LTR")
    accuracy_axes.set(xlabel="step", ylabel="training accuracy", title="Masked tokens; next token for LTR")
    accuracy_axes.legend()
    figure.tight_layout()
    written.append(_save(figure, os.path.join(output_dir, "pretraining_curves.png")))
    if curve and budget and budget.counts:
        written.append(_step_curve(pyplot, output_dir, curve, budget, row(summaries, "(e)"),
                                   row(summaries, "(c')")))
    return written


def _step_curve(pyplot, output_dir, curve, budget, random, equal):
    """step_curve.png: the paper's Figure 5 at this scale, dev accuracy against pretraining steps (and tokens
    read) and against tokens predicted, (b) MLM and (c) LTR on both, with (c') and (e) where they ran."""
    figure, (steps_axes, targets_axes) = pyplot.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for objective, label, color in (("mlm", "(b) masked LM", "tab:blue"), ("ltr", "(c) left-to-right LM",
                                                                           "tab:orange")):
        points = [s for s in curve[objective] if s.accuracies]
        if not points:
            continue
        means = [100 * s.mean for s in points]
        errors = [100 * s.half_interval for s in points]
        steps = [s.variant.steps for s in points]
        predicted = [step * budget.per_step(objective)[1] / 1e6 for step in steps]
        for axes, x in ((steps_axes, steps), (targets_axes, predicted)):
            axes.errorbar(x, means, yerr=errors, marker="o", capsize=3, color=color, label=label)
    if equal is not None and equal.accuracies:
        x = equal.variant.steps, equal.variant.steps * budget.per_step("ltr")[1] / 1e6
        for axes, at in zip((steps_axes, targets_axes), x):
            axes.errorbar([at], [100 * equal.mean], yerr=[100 * equal.half_interval], marker="D", capsize=3,
                          color="tab:orange", markerfacecolor="white", linestyle="none",
                          label="(c') LTR at (b)'s final predicted targets")
    for axes in (steps_axes, targets_axes):
        if random is not None and random.accuracies:
            axes.axhline(100 * random.mean, color="gray", linestyle=":", label="(e) random init")
        axes.axhline(100 / 3, color="gray", linestyle="--", label="chance")
        axes.grid(alpha=0.3)
    tokens = budget.per_step("mlm")[0]
    steps_axes.set(xlabel="pretraining steps", ylabel="era dev accuracy, % (mean, 95 % interval)",
                   title="Against steps: equal compute")
    top = steps_axes.secondary_xaxis("top", functions=(lambda x: x * tokens / 1e6, lambda x: x * 1e6 / tokens))
    top.set_xlabel("tokens read, millions")
    targets_axes.set(xlabel="tokens predicted, millions (log scale)", xscale="log",
                     title="Against predicted targets")
    from matplotlib import ticker

    targets_axes.xaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
    targets_axes.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    targets_axes.xaxis.set_minor_formatter(ticker.NullFormatter())
    targets_axes.legend(fontsize=8)
    figure.suptitle("Fine-tuned from each pretraining checkpoint (the paper's Figure 5)")
    figure.tight_layout()
    return _save(figure, os.path.join(output_dir, "step_curve.png"))


def _save(figure, path):
    from matplotlib import pyplot

    with atomic_local_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=120)
    pyplot.close(figure)
    return path


def main():
    if not tf.io.gfile.isdir(FLAGS.output_dir):
        raise ReportError(f"--output_dir={FLAGS.output_dir}: no such directory (run replicate/run.sh first)")
    seeds = [int(s) for s in FLAGS.seeds]
    curve_steps = [int(s) for s in FLAGS.curve_steps]
    if curve_steps and max(curve_steps) != FLAGS.pretrain_steps:
        raise ReportError(f"--curve_steps={','.join(FLAGS.curve_steps)}: the last must be --pretrain_steps="
                          f"{FLAGS.pretrain_steps} (the runs themselves)")
    summaries = summarize(FLAGS.output_dir, variants(FLAGS.main_shape, FLAGS.size_shapes, FLAGS.equal_targets_step),
                          seeds)
    curve = summarize_curve(FLAGS.output_dir, curve_steps, seeds) if curve_steps else None
    budget = Budget(FLAGS.pretrain_steps, FLAGS.pretrain_batch,
                    read_key_values(os.path.join(FLAGS.output_dir, "targets.txt")))
    results = claims(summaries, curve)
    markdown = results_markdown(summaries, curve, seeds, FLAGS.main_shape, budget, machine_text(),
                                stage_seconds(FLAGS.output_dir), stage_seconds(FLAGS.output_dir, ".wall-"),
                                [int(n) for n in FLAGS.jobs])
    write_text(os.path.join(FLAGS.output_dir, "results.md"), markdown)
    write_text(os.path.join(FLAGS.output_dir, "claims.txt"), claims_text(results))
    scalars = {label: read_scalars(os.path.join(FLAGS.output_dir, "pretrain", run, "train"))
               for label, run in (("(a) MLM + NSP", "mlm_nsp"), ("(b) MLM only", "mlm"), ("(c) LTR", "ltr"))}
    plots = write_plots(FLAGS.output_dir, summaries, scalars, curve, budget)
    print(results_table(summaries, seeds, budget))
    if curve:
        print(curve_table(curve, budget))
    print(f"wrote {os.path.join(FLAGS.output_dir, 'results.md')}"
          + (f", {', '.join(plots)}" if plots else " (no plots: pip install -r requirements-replicate.txt)"))


def run():
    """The report as a command. Its flags are defined here, not on import: the tests import this module's
    functions beside tools that define --output_dir too."""
    flags.DEFINE_string("output_dir", None, "The directory replicate/run.sh wrote (replicate_out).")
    flags.DEFINE_list("seeds", ["1", "2", "3", "4", "5"], "The fine-tuning seeds.")
    flags.DEFINE_string("main_shape", "2x128", "The shape (LAYERSxHIDDEN) of (a), (b), (c), (e), (f).")
    flags.DEFINE_list("size_shapes", ["1x128", "4x128"], "The other shapes of (d).")
    flags.DEFINE_integer("pretrain_steps", 4000, "Steps of each pretraining run.")
    flags.DEFINE_integer("pretrain_batch", 32, "Sequences per pretraining step.")
    flags.DEFINE_list("curve_steps", [], "The checkpoints of (b) and (c) fine-tuned for the step curve (the last "
                      "= --pretrain_steps); none: no curve.")
    flags.DEFINE_integer("equal_targets_step", None, "The step of (c)'s checkpoint with (b)'s predicted targets "
                         "(row (c')); none: no such row.")
    flags.DEFINE_list("jobs", ["1", "2"], "Runs at a time in pretraining, in fine-tuning (for the time line).")
    cli.run(main, required_flags=["output_dir"])


if __name__ == "__main__":
    run()
