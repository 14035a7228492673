"""replicate/report.py on tiny fake results: the table's figures, the verdicts, the step curve, results.md and
claims.txt; replicate/run.sh's plans (both scales) against the tools' flags."""

import doctest
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from official_bert.training.monitor import write_scalars
from replicate import report, targets

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
    # The step curve (steps 25, 50 and 100 = the runs themselves): LTR ahead at 25, MLM from 50 on; (c') at 15.
    "mlm_step25": (0.50, 0.52, 0.51),
    "ltr_step25": (0.60, 0.61, 0.62),
    "mlm_step50": (0.70, 0.72, 0.71),
    "ltr_step50": (0.60, 0.61, 0.60),
    "ltr_step15": (0.55, 0.56, 0.56),
}
CURVE_STEPS = (25, 50, 100)
EQUAL_STEP = 15
# Per sequence: 60 real tokens, 9 masked; LTR predicts 59.
COUNTS = {"tokens_per_sequence": 60.0, "mlm_targets_per_sequence": 9.0, "ltr_targets_per_sequence": 59.0}
BUDGET = report.Budget(100, 32, COUNTS)
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
    (directory / "targets.txt").write_text("".join(f"{k} = {v}\n" for k, v in COUNTS.items()) + "sequences = 9\n")


def summaries(directory):
    return report.summarize(str(directory), report.variants("4x128", ["2x128", "4x256"], EQUAL_STEP), SEEDS)


def test_table_shows_mean_and_std_over_seeds_and_heldout_perplexity(tmp_path):
    fake_results(tmp_path)
    table = report.results_table(summaries(tmp_path), SEEDS, BUDGET)
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in table.splitlines()[2:]}
    assert len(rows) == 9  # (a), (b), (c), (c'), three sizes, (e), (f)
    for label, variant in (("(a) MLM + NSP, 4x128", "mlm_nsp"), ("(c) LTR, no NSP, 4x128", "ltr"),
                           ("(d) size 4x256", "size_4x256"), ("(e) random initialization, 4x128", "random")):
        values = 100 * np.array(ACCURACIES[variant])
        assert rows[label][2] == f"{values.mean():.1f} ± {values.std(ddof=1):.1f}"
    assert rows["(a) MLM + NSP, 4x128"][3] == f"MLM acc 25.0 %, ppl {math.exp(4.0):.1f}"
    assert rows["(c) LTR, no NSP, 4x128"][3] == f"LTR acc 20.0 %, ppl {math.exp(5.0):.1f}"
    assert rows["(e) random initialization, 4x128"][3:] == ["—", "none |"]
    # Each row's compute, by hand: 32 sequences of 60 tokens a step; the MLM predicts 32 * 9 = 288 of them (and 32
    # NSP labels with NSP), the LTR 32 * 59 = 1,888; (c') at step 15 has predicted 28,320 against (b)'s 28,800.
    assert rows["(a) MLM + NSP, 4x128"][4] == "100 steps × (1,920 tokens, 288 predicted + 32 NSP) = 0.03M predicted |"
    assert rows["(b) MLM only (No NSP), 4x128"][4] == "100 steps × (1,920 tokens, 288 predicted) = 0.03M predicted |"
    assert rows["(c) LTR, no NSP, 4x128"][4] == "100 steps × (1,920 tokens, 1,888 predicted) = 0.19M predicted |"
    assert rows["(c') (c) at step 15: (b)'s predicted targets"][2] == "55.7 ± 0.6"
    assert rows["(c') (c) at step 15: (b)'s predicted targets"][4] == ("15 steps × (1,920 tokens, 1,888 predicted) = "
                                                                      "0.03M predicted |")
    assert "84.4" in rows["(a) MLM + NSP, 4x128"][1] and "77.5" in rows["(c) LTR, no NSP, 4x128"][1]
    # The sizes in order, the (a) shape in the middle with (a)'s results, beside Table 6's rows by rank.
    sizes = [label for label in rows if label.startswith("(d)")]
    assert sizes == ["(d) size 2x128", "(d) size 4x128 = (a)", "(d) size 4x256"]
    assert rows["(d) size 4x128 = (a)"][2] == rows["(a) MLM + NSP, 4x128"][2]
    assert "3/768/12: MLM ppl 5.84" in rows["(d) size 2x128"][1]


def test_verdicts_follow_the_numbers(tmp_path):
    fake_results(tmp_path)
    curve = report.summarize_curve(str(tmp_path), CURVE_STEPS, SEEDS)
    verdicts = {claim.split(":")[0]: verdict for claim, verdict, _ in report.claims(summaries(tmp_path), curve)}
    assert verdicts == {
        "Pretraining helps": "holds",                                   # 81 vs 61
        "Removing NSP hurts (Table 5)": "undecided at this scale",      # 81 vs 80.5
        "Bidirectionality matters (Table 5), at equal steps": "reversed",              # 80.5 vs 84
        "Bidirectionality matters, at equal predicted targets": "holds",               # 80.5 vs 55.7
        "MLM outperforms LTR almost immediately (Figure 5)": "undecided at this scale",  # -, +, - by step
        "Bigger models help (Table 6)": "holds",                        # 71 < 81 < 91
        "Feature-based (f) comes close to fine-tuning (a) but stays below (Table 7)": "holds",  # 78 vs 81
    }


def test_the_step_curve_pairs_checkpoints_and_names_where_mlm_overtakes(tmp_path):
    fake_results(tmp_path)
    curve = report.summarize_curve(str(tmp_path), CURVE_STEPS, SEEDS)
    # The last step is the runs themselves: (b) = mlm, (c) = ltr.
    assert [s.variant.name for s in curve["mlm"]] == ["mlm_step25", "mlm_step50", "mlm"]
    assert [s.variant.name for s in curve["ltr"]] == ["ltr_step25", "ltr_step50", "ltr"]
    table = report.curve_table(curve, BUDGET).splitlines()
    # Step 50: (b) has predicted 50 * 288 = 14,400 targets, (c) 50 * 1,888 = 94,400; the paired difference of
    # (0.70, 0.72, 0.71) - (0.60, 0.61, 0.60) is (10, 11, 11) points: mean 10.7, sd 0.577, t(2) = 4.303.
    half = 4.303 * np.std([10, 11, 11], ddof=1) / np.sqrt(3)
    assert table[3] == (f"| 50 | 0.01M | 71.0 ± {4.303 * 1.0 / np.sqrt(3):.1f} | 0.09M | 60.3 ± "
                        f"{4.303 * np.std([60, 61, 60], ddof=1) / np.sqrt(3):.1f} | +10.7 "
                        f"[{32 / 3 - half:+.1f}, {32 / 3 + half:+.1f}] |")
    # LTR ahead at 25, MLM from 50 to 100: "holds from step 50" once the last step agrees.
    for name in ("mlm", "ltr"):
        for seed in SEEDS:
            (tmp_path / "finetune" / f"{name}-seed{seed}" / "eval_results.txt").write_text(
                f"eval_accuracy = {0.9 if name == 'mlm' else 0.5 + seed / 100}\n")
    curve = report.summarize_curve(str(tmp_path), CURVE_STEPS, SEEDS)
    claim, verdict, detail = report.curve_claim(curve)
    assert verdict == "holds from step 50"
    assert detail.startswith("step 25: reversed (51.0 vs 61.0: -10.0 points") and "step 100: holds" in detail


def test_a_missing_run_is_reported_not_fatal(tmp_path):
    fake_results(tmp_path, leave_out={("random", s) for s in SEEDS} | {("mlm", 3)})
    results = summaries(tmp_path)
    table = report.results_table(results, SEEDS, report.Budget(100, 32, {}))
    assert "| (e) random initialization, 4x128 | — (no table: the paper's premise) | missing | — | none |" in table
    assert "| (b) MLM only (No NSP), 4x128 | No NSP: 83.9, 84.9, 86.5, 92.6, 87.9 | " in table
    assert table.splitlines()[3].endswith("| 100 steps of 32 |")  # without targets.txt: steps only
    mean = 100 * np.mean(ACCURACIES["mlm"][:2])
    assert f"{mean:.1f} ± {100 * np.std(ACCURACIES['mlm'][:2], ddof=1):.1f} (2 of 3 seeds)" in table
    assert report.claims(results)[0][1] == "not run"


@pytest.mark.slow
def test_report_command_writes_results_and_claims(tmp_path):
    fake_results(tmp_path)
    result = subprocess.run([sys.executable, os.path.join(REPO, "replicate", "report.py"), f"--output_dir={tmp_path}",
                             "--seeds=1,2,3", "--main_shape=4x128", "--size_shapes=2x128,4x256",
                             "--pretrain_steps=100", "--pretrain_batch=32", "--curve_steps=25,50,100",
                             f"--equal_targets_step={EQUAL_STEP}"], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-2000:]
    markdown = (tmp_path / "results.md").read_text()
    assert "Pretraining: 100 steps of 32 sequences" in markdown
    assert report.results_table(summaries(tmp_path), SEEDS, BUDGET) in markdown
    assert report.curve_table(report.summarize_curve(str(tmp_path), CURVE_STEPS, SEEDS), BUDGET) in markdown
    assert "LTR learns from 6.6 times as many targets" in markdown  # 59 / 9
    # Stage times from the stamps: 5 pretraining runs of 100 s, 36 fine-tuning runs of 30 s.
    assert ("Time: 590 s in all (wall: vocabulary and data 0 s, pretraining 260 s one run at a time, fine-tuning "
            "330 s 2 runs at a time); the runs' own times add up to 500 s of pretraining and 1080 s of fine-tuning."
            ) in markdown
    assert "Machine: " in markdown and " cores" in markdown
    claims = (tmp_path / "claims.txt").read_text().splitlines()
    assert len(claims) == 7 and claims[2].startswith("REVERSED") and claims[3].startswith("HOLDS")
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
                                            "run_pretraining.py", "run_classifier.py", "replicate/report.py",
                                            "replicate/targets.py"}
    for tool, arguments in commands:
        unknown = set(_flags_used(arguments)) - _defined_flags(tool)
        assert not unknown, f"{tool} has no flag(s) {sorted(unknown)}"
    # The flags of the fine-tuning plan (echoed lines) and of the pretraining plan go to those two tools.
    with open(script, encoding="utf-8") as f:
        text = f.read()
    plan = text[text.index("finetune_plan() {"):text.index("in_parallel() {")]
    used = set(_flags_used(" ".join(re.findall(r'echo "(.*)"', plan))))
    assert {"init_checkpoint", "freeze_encoder"} <= used
    assert not used - _defined_flags("run_classifier.py")
    stages = set(re.findall(r"pretrain \S+ \S+ \S+ --(\w+)", text))
    assert stages == {"objective"} and stages <= _defined_flags("run_pretraining.py")
    # Both scales' precision flags go to both tools.
    precision = set(_flags_used(" ".join(re.findall(r"PRECISION=\((.*)\)", text))))
    assert precision == {"mixed_precision", "jit_compile"}
    assert precision <= _defined_flags("run_pretraining.py") & _defined_flags("run_classifier.py")


TARGETS = "mlm_targets_per_sequence = 9.86\nltr_targets_per_sequence = 62.24\n"


def _plans(directory, scale, *arguments, targets_text=TARGETS):
    """run.sh's settings and plans at REPLICATE_SCALE=`scale`, without running a stage: the script up to its
    first stage, then the plan functions, in bash, with a fake targets.txt."""
    with open(os.path.join(REPO, "replicate", "run.sh"), encoding="utf-8") as f:
        text = f.read()
    prefix = text[:text.index('mkdir -p "$OUT/logs"')]
    script = (prefix + 'mkdir -p "$OUT"; printf "$TARGETS" >"$OUT/targets.txt"\n'
              'echo "OUT=$OUT SHAPES=$MAIN_SHAPE $SIZE_SHAPES CURVE=$CURVE_STEPS '
              'PRECISION=${PRECISION[*]} JOBS=$PRETRAIN_JOBS,$FINETUNE_JOBS"\npretrain_plan\nfinetune_plan\n')
    result = subprocess.run(["bash", "-c", script, os.path.join(REPO, "replicate", "run.sh"), *arguments],
                            capture_output=True, text=True, cwd=REPO, timeout=60,
                            env=dict(os.environ, REPLICATE_SCALE=scale, TARGETS=targets_text, OUT=str(directory)))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_cpu_plan_pretrains_4000_steps_and_fine_tunes_the_curve_with_paired_seeds(tmp_path):
    settings, *plan = _plans(tmp_path, "cpu")
    assert "SHAPES=2x128 1x128 4x128 CURVE=500 1000 2000 4000 PRECISION=--mixed_precision=fp32 JOBS=1,2" in settings
    pretrain = [line for line in plan if line.startswith("pretrain-")]
    assert len(pretrain) == 5 and all("4000 steps of 32 sequences" in line for line in pretrain)
    commands = {line.split("|")[0]: line.split("|")[2] for line in plan}
    # (c) keeps a checkpoint every 125 steps, (b) every 500: the curve's and (c')'s checkpoints exist.
    assert commands["pretrain-ltr"] == "pretrain ltr 2x128 125 --objective=ltr"
    assert commands["pretrain-mlm"] == "pretrain mlm 2x128 500 --objective=mlm"
    finetune = [line for line in plan if line.startswith("finetune-")]
    variants = sorted({name.rsplit("-", 1)[0][len("finetune-"):] for name in commands if name.startswith("finetune-")})
    # (c') at round(4000 * 9.86 / 62.24 / 125) * 125 = 625 steps, the nearest checkpoint to 633.7.
    assert variants == sorted(["mlm_nsp", "mlm", "ltr", "size_1x128", "size_4x128", "random", "features",
                               "mlm_step500", "mlm_step1000", "mlm_step2000", "ltr_step500", "ltr_step1000",
                               "ltr_step2000", "ltr_step625"])
    assert len(finetune) == 14 * 5  # every variant, seeds 1 to 5
    ltr = commands["finetune-ltr_step625-3"]
    assert ltr.startswith("finetune ltr_step625 3 ") and "ltr/bert_config.json" in ltr  # left-only: its config
    assert ltr.endswith(f"--init_checkpoint={tmp_path}/pretrain/ltr/ckpt-625")
    # An equal-targets step that is one of the curve's is not fine-tuned twice.
    _, *plan = _plans(tmp_path, "cpu", targets_text="mlm_targets_per_sequence = 10\nltr_targets_per_sequence = 20\n")
    assert sum(line.startswith("finetune-ltr_step2000-") for line in plan) == 5
    assert not any(line.startswith("finetune-ltr_step625-") for line in plan)


def test_gpu_plan_runs_bert_mini_and_small_for_20000_steps_with_auto_precision(tmp_path):
    settings, *plan = _plans(tmp_path, "gpu")
    assert settings.endswith("SHAPES=4x256 2x128 4x512 CURVE=2500 5000 10000 20000 "
                             "PRECISION=--mixed_precision=auto --jit_compile JOBS=3,3")
    assert f"OUT={tmp_path}/gpu " in settings  # beside the CPU results, not over them
    assert all("20000 steps of 64 sequences" in line for line in plan if line.startswith("pretrain-"))
    quick, *_ = _plans(tmp_path / "quick", "cpu", "--quick")
    assert "CURVE=4 8 16 32" in quick
    bad = subprocess.run(["bash", os.path.join(REPO, "replicate", "run.sh")], capture_output=True, text=True,
                         env=dict(os.environ, REPLICATE_SCALE="tpu"), timeout=60)
    assert bad.returncode == 1 and bad.stderr.strip() == "REPLICATE_SCALE=tpu: expected cpu or gpu"


def test_targets_count_what_each_objective_predicts(tmp_path):
    # Records written by the tool the pipeline uses, counted by hand from its own features.
    import tensorflow as tf
    path = str(tmp_path / "records")
    rows = (([1] * 7 + [0] * 3, [1, 1, 0, 0]), ([1] * 10, [1, 1, 1, 0]), ([1] * 3 + [0] * 7, [1, 0, 0, 0]))
    with tf.io.TFRecordWriter(path) as writer:
        for mask, weights in rows:
            feature = {"input_mask": tf.train.Feature(int64_list=tf.train.Int64List(value=mask)),
                       "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=weights)),
                       "input_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[5] * 10))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    counts = targets.count_targets(path)
    assert counts == {"tokens_per_sequence": 20 / 3, "mlm_targets_per_sequence": 2.0,
                      "ltr_targets_per_sequence": 17 / 3, "sequences": 3}
    with pytest.raises(targets.TargetsError, match="no such file"):
        targets.count_targets(str(tmp_path / "none"))


@pytest.mark.parametrize("module", [report, targets])
def test_replicate_docstring_examples(module):
    failures, tried = doctest.testmod(module)
    assert tried and not failures


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
    assert (mean, n) == (pytest.approx(0.2), 1) and np.isnan(low)
    assert report.decide(low, high) == "undecided at this scale"
