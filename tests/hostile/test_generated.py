"""Hostile cases generated from every tool's own flags (tests/hostile/driver.py), held to the rules every tool keeps:

- every flag a tool defines has a kind (a new flag without one fails here, so it is covered when it is defined);
- a number outside its flag's range, NaN or infinite, is refused in one line naming the flag, before any work;
  every numeric flag has both bounds, so that a huge value is refused too;
- an output that is an input, lies inside one, or matches an input glob is refused in one line naming both flags,
  and nothing is written; so is a directory where a file goes, and a file where a directory goes;
- a run directory that holds a run refuses a rerun with any flag that changes the result, or with an input whose
  content changed at the same path, naming that flag, and writes nothing; a flag that changes nothing (an output,
  evaluation, logging, devices) reruns.

The tools are the console scripts pyproject.toml declares. One child process per tool runs all its cases.
"""

import collections
import json
import os
import subprocess
import sys
import tomllib

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(REPO, "pyproject.toml"), "rb") as _f:
    TOOLS = sorted(target.split(":")[0].rsplit(".", 1)[-1]
                   for target in tomllib.load(_f)["project"]["scripts"].values())


TRAINING_TOOLS = ("run_classifier", "run_distillation", "run_embeddings", "run_ner", "run_pretraining", "run_squad")


def run_driver(tool):
    env = {**os.environ, "PYTHONPATH": REPO, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    child = subprocess.run([sys.executable, "-m", "tests.hostile.driver", tool], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=900)
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


def refused_in_one_line(case, *names):
    """Exit 1, the tool's one error line naming `names`, main never reached, nothing written."""
    lines = case["lines"]
    return (case["status"] == 1 and not case["reached"] and not case["wrote"] and len(lines) == 1
            and lines[0].startswith(f"{case['tool']}: error: ") and all(f"--{n}" in lines[0] for n in names))


def broken(report):
    """The cases that break a rule, each with why."""
    found = []
    for case in report["cases"]:
        case["tool"] = report["tool"]
        kind = case["class"]
        if kind == "number":
            ok = case["reached"] if case["in_range"] else refused_in_one_line(case, case["flag"])
        elif kind == "alias":
            # A directory output given an input file is refused as a file where a directory goes.
            names = [case["output"]] + ([case["input"]] if not case["lines"] or "expected a directory" not in
                                        case["lines"][-1] else [])
            ok = refused_in_one_line(case, *names)
        elif kind == "shape":
            ok = refused_in_one_line(case, case["flag"])
        elif kind == "identity-first":
            ok = case["reached"]
        else:
            ok = refused_in_one_line(case, case["flag"]) if case["affects"] else case["reached"]
        if not ok:
            found.append(f"{kind} {json.dumps({k: v for k, v in case.items() if k not in ('tool',)})[:600]}")
    return found


@pytest.mark.parametrize("tool", TOOLS)
def test_every_flag_of_every_tool_keeps_the_rules(tool):
    report = run_driver(tool)
    assert report["unclassified"] == [], f"{tool}: flags without a kind (tools/flag_kinds.py)"
    unbounded = [name for name, d in report["flags"].items()
                 if d and d["kind"] in ("number", "numbers") and (d["lower"] is None or d["upper"] is None
                                                                  or d["upper"] > 1e12)]
    assert unbounded == [], f"{tool}: numeric flags without a finite range"
    counts = collections.Counter(case["class"] for case in report["cases"])
    if tool in TRAINING_TOOLS:  # each resumes from its --output_dir, so checks a rerun against the run there
        assert report["flags"]["output_dir"]["kind"] == "run directory" and counts["identity"] > 10, counts
    problems = broken(report)
    assert not problems, f"{tool}: {len(problems)} of {len(report['cases'])} cases break a rule:\n" + "\n".join(
        problems[:20])

