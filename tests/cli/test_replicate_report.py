"""replicate/report.py on tiny fake results: the table's figures, the verdicts, results.md and claims.txt."""

import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from official_bert.training.monitor import write_scalars
from replicate import report

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = (1, 2, 3)
# Dev accuracy per variant and seed: (a) clearly above (e), (b) and (f); (b) below (c); sizes rising clearly.
ACCURACIES = {
    "mlm_nsp": (0.80, 0.82, 0.81),
    "mlm": (0.79, 0.825, 0.80),
    "ltr": (0.84, 0.855, 0.85),
    "size_2x128": (0.70, 0.71, 0.72),
    "size_4x256": (0.90, 0.91, 0.92),
    "random": (0.60, 0.62, 0.61),
    "features": (0.77, 0.78, 0.79),
}
HELDOUT = {"mlm_nsp": ("masked_lm", 0.25, 4.0), "mlm": ("masked_lm", 0.24, 4.2), "ltr": ("lm", 0.2, 5.0),
           "size_2x128": ("masked_lm", 0.2, 4.5), "size_4x256": ("masked_lm", 0.3, 3.5)}


def fake_results(directory, leave_out=()):
    for variant, values in ACCURACIES.items():
        for seed, accuracy in zip(SEEDS, values):
            if (variant, seed) in leave_out:
                continue
            run = directory / "finetune" / f"{variant}-seed{seed}"
            run.mkdir(parents=True)
            (run / "eval_results.txt").write_text(f"eval_accuracy = {accuracy}\neval_loss = 0.5\nglobal_step = 10\n")
            (directory / f".done-finetune-{variant}-{seed}").write_text("30\n")
    for run, (prefix, accuracy, loss) in HELDOUT.items():
        path = directory / "pretrain" / run
        path.mkdir(parents=True)
        (path / "eval_results.txt").write_text(f"global_step = 100\nloss = {loss}\n{prefix}_accuracy = {accuracy}\n"
                                               f"{prefix}_loss = {loss}\n")
        for step in (50, 100):
            write_scalars(str(path / "train"), {f"{prefix}_loss": loss + 100 / step, f"{prefix}_accuracy": accuracy},
                          step)
        (directory / f".done-pretrain-{run}").write_text("100\n")
    (directory / ".wall-pretrain").write_text("260\n")
    (directory / ".wall-finetune").write_text("330\n")


def summaries(directory):
    return report.summarize(str(directory), report.variants("4x128", ["2x128", "4x256"]), SEEDS)


def test_table_shows_mean_and_std_over_seeds_and_heldout_perplexity(tmp_path):
    fake_results(tmp_path)
    table = report.results_table(summaries(tmp_path), SEEDS)
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in table.splitlines()[2:]}
    assert len(rows) == 8  # (a), (b), (c), three sizes, (e), (f)
    for label, variant in (("(a) MLM + NSP, 4x128", "mlm_nsp"), ("(c) LTR, no NSP, 4x128", "ltr"),
                           ("(d) size 4x256", "size_4x256"), ("(e) random initialization, 4x128", "random")):
        values = 100 * np.array(ACCURACIES[variant])
        assert rows[label][2] == f"{values.mean():.1f} ± {values.std(ddof=1):.1f}"
    assert rows["(a) MLM + NSP, 4x128"][3] == f"MLM acc 25.0 %, ppl {math.exp(4.0):.1f} |"
    assert rows["(c) LTR, no NSP, 4x128"][3] == f"LTR acc 20.0 %, ppl {math.exp(5.0):.1f} |"
    assert rows["(e) random initialization, 4x128"][3] == "— |"
    assert "84.4" in rows["(a) MLM + NSP, 4x128"][1] and "77.5" in rows["(c) LTR, no NSP, 4x128"][1]
    # The sizes in order, the (a) shape in the middle with (a)'s results, beside Table 6's rows by rank.
    sizes = [label for label in rows if label.startswith("(d)")]
    assert sizes == ["(d) size 2x128", "(d) size 4x128 = (a)", "(d) size 4x256"]
    assert rows["(d) size 4x128 = (a)"][2] == rows["(a) MLM + NSP, 4x128"][2]
    assert "3/768/12: MLM ppl 5.84" in rows["(d) size 2x128"][1]


def test_verdicts_follow_the_numbers(tmp_path):
    fake_results(tmp_path)
    verdicts = {claim.split(":")[0]: verdict for claim, verdict, _ in report.claims(summaries(tmp_path))}
    assert verdicts == {
        "Pretraining helps": "holds",                                   # 81 vs 61
        "Removing NSP hurts (Table 5)": "undecided at this scale",      # 81 vs 80.5
        "Bidirectionality matters (Table 5)": "reversed",               # 80.5 vs 84
        "Bigger models help (Table 6)": "holds",                        # 71 < 81 < 91
        "Feature-based (f) comes close to fine-tuning (a) but stays below (Table 7)": "holds",  # 78 vs 81
    }


def test_a_missing_run_is_reported_not_fatal(tmp_path):
    fake_results(tmp_path, leave_out={("random", s) for s in SEEDS} | {("mlm", 3)})
    results = summaries(tmp_path)
    table = report.results_table(results, SEEDS)
    assert "| (e) random initialization, 4x128 | — (no table: the paper's premise) | missing | — |" in table
    mean = 100 * np.mean(ACCURACIES["mlm"][:2])
    assert f"{mean:.1f} ± {100 * np.std(ACCURACIES['mlm'][:2], ddof=1):.1f} (2 of 3 seeds)" in table
    assert report.claims(results)[0][1] == "not run"


@pytest.mark.slow
def test_report_command_writes_results_and_claims(tmp_path):
    fake_results(tmp_path)
    result = subprocess.run([sys.executable, os.path.join(REPO, "replicate", "report.py"), f"--output_dir={tmp_path}",
                             "--seeds=1,2,3", "--main_shape=4x128", "--size_shapes=2x128,4x256",
                             "--pretrain_steps=100"], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-2000:]
    markdown = (tmp_path / "results.md").read_text()
    assert "Pretraining: 100 steps" in markdown and report.results_table(summaries(tmp_path), SEEDS) in markdown
    # Stage times from the stamps: 5 pretraining runs of 100 s, 21 fine-tuning runs of 30 s, two at a time.
    assert ("Time: 590 s in all (wall: vocabulary and data 0 s, pretraining 260 s, fine-tuning 330 s, two runs at a "
            "time); the runs' own times add up to 500 s of pretraining and 630 s of fine-tuning.") in markdown
    claims = (tmp_path / "claims.txt").read_text().splitlines()
    assert len(claims) == 5 and claims[2].startswith("REVERSED")
    assert f"wrote {tmp_path / 'results.md'}" in result.stdout
    missing = subprocess.run([sys.executable, os.path.join(REPO, "replicate", "report.py"),
                              f"--output_dir={tmp_path / 'none'}"], capture_output=True, text=True, timeout=300)
    assert missing.returncode == 1 and "no such directory" in missing.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("shapes,expected", [(["4x256", "2x128"], ["2x128", "4x128", "4x256"]),
                                             (["8x128"], ["4x128", "8x128"])])
def test_sizes_are_ordered_by_parameters(shapes, expected):
    rows = [v.label.split()[2] for v in report.variants("4x128", shapes) if v.label.startswith("(d)")]
    assert rows == expected


def test_run_sh_passes_only_flags_its_tools_define():
    from tests.cli.test_readme import _commands, _defined_flags, _flags_used
    script = os.path.join(REPO, "replicate", "run.sh")
    commands = _commands(script)
    assert {tool for tool, _ in commands} == {"data_prep/build_vocab.py", "data_prep/create_pretraining_data.py",
                                            "run_pretraining.py", "run_classifier.py", "replicate/report.py"}
    for tool, arguments in commands:
        unknown = set(_flags_used(arguments)) - _defined_flags(tool)
        assert not unknown, f"{tool} has no flag(s) {sorted(unknown)}"
    # The flags of the fine-tuning plan (echoed lines) and of the pretraining plan go to those two tools.
    with open(script, encoding="utf-8") as f:
        text = f.read()
    plan = text[text.index("finetune_plan() {"):text.index("in_parallel() {")]
    used = set(_flags_used(" ".join(re.findall(r'echo "(.*)"', plan))))
    assert {"init_checkpoint", "freeze_encoder"} <= used
    # The LTR row fine-tunes from the config its pretraining wrote, which records the left-only constraint.
    assert 'echo "ltr $pretrained/ltr/bert_config.json --init_checkpoint=$pretrained/ltr"' in plan
    assert not used - _defined_flags("run_classifier.py")
    stages = set(re.findall(r"pretrain \S+ \S+ --(\w+)", text))
    assert stages == {"objective"} and stages <= _defined_flags("run_pretraining.py")


def test_the_decision_rule_on_synthetic_paired_numbers():
    rng = np.random.default_rng(0)
    base = {seed: float(v) for seed, v in enumerate(rng.uniform(0.5, 0.7, size=8), start=1)}
    draws = rng.normal(0, 0.01, size=8)
    noise = {seed: float(v) for seed, v in enumerate(draws - draws.mean(), start=1)}  # zero mean, exactly
    # A known difference of 5 points with 1-point noise: holds; reversed the other way; zero: undecided.
    shifted = {seed: base[seed] + 0.05 + noise[seed] for seed in base}
    same = {seed: base[seed] + noise[seed] for seed in base}
    verdict = lambda a, b: report.decide(*report.paired_interval(a, b)[1:3])  # noqa: E731
    assert verdict(shifted, base) == "holds"
    assert verdict(base, shifted) == "reversed"
    assert verdict(same, base) == "undecided at this scale"
    # The interval is the paired t one, computed independently: mean ± t(0.975, n-1) · sd / sqrt(n).
    differences = np.array([shifted[s] - base[s] for s in base])
    mean, low, high, n = report.paired_interval(shifted, base)
    half = 2.365 * differences.std(ddof=1) / np.sqrt(8)  # t quantile for 7 degrees of freedom
    assert n == 8 and mean == pytest.approx(differences.mean())
    assert (low, high) == pytest.approx((differences.mean() - half, differences.mean() + half))
    # Pairing matters: a seed-level offset shared by both variants does not widen the interval.
    assert high - low < 0.02
    # Only the seeds both variants ran are paired; one pair gives no interval.
    mean, low, high, n = report.paired_interval({1: 0.7, 2: 0.8}, {2: 0.6, 3: 0.5})
    assert (mean, n) == (pytest.approx(0.2), 1) and np.isnan(low) and report.decide(low, high) == "undecided at this scale"
