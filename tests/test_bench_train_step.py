"""`python -m bench.train_step --compare keras_hub --rounds N`: flags that measure nothing refused in one line; the
children get the benchmark's own flags; the last two lines give the medians, their ratio and ranges, and the ratio of
the CPU time per step, hand-computed."""

import sys
import types

import pytest

from bench import train_step


@pytest.mark.parametrize("flags, message", [
    (["--compare", "keras_hub", "--rounds", "0"], "--rounds=0: expected at least 1"),
    (["--rounds", "3"], "--rounds needs --compare keras_hub (the rounds take turns with it)"),
    (["--steps", "0"], "--steps=0 --warmup_steps=3: expected at least 1 timed step and no negative warm-up"),
    (["--warmup_steps", "-1"], "--steps=20 --warmup_steps=-1: expected at least 1 timed step and no negative warm-up")])
def test_flags_that_measure_nothing_are_refused_in_one_line(flags, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        train_step.parse_args(flags)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(message)


def test_each_round_times_keras_hub_then_ours_in_children_and_reports_medians(monkeypatch, capsys):
    argv = ["bench/train_step.py", "--preset", "mini", "--compare", "keras_hub", "--rounds=3", "--steps", "5"]
    monkeypatch.setattr(sys, "argv", argv)
    figures = iter([30.0, 45.0, 20.0, 40.0, 35.0, 50.0])  # keras_hub, ours, keras_hub, ours, ...
    cpu_ms = iter([900, 700, 1800, 650, 950, 690])
    commands = []

    def run(command, **kwargs):
        commands.append(command)
        framework = command[command.index("--framework") + 1]
        return types.SimpleNamespace(stdout=f"log\n{framework}: {next(figures):.2f} seq/s, 1.0 GFLOP/s = 1% of the "
                                            f"matmul peak (800 ms/step wall, {next(cpu_ms)} ms/step CPU, ...)\n")

    monkeypatch.setattr(train_step.subprocess, "run", run)
    train_step.compare(train_step.parse_args(argv[1:]))
    assert [c[-1] for c in commands] == ["keras_hub", "official_bert"] * 3
    assert all(c[1:-2] == ["-m", "bench.train_step", "--preset", "mini", "--steps", "5"] for c in commands)
    # ours 45, 40, 50 -> median 45; KerasHub 30, 20, 35 -> 30; 45 / 30 = 1.5
    # CPU ms per step: ours 700, 650, 690 -> 690; KerasHub 900, 1800, 950 -> 950; 950 / 690 = 1.377
    assert capsys.readouterr().out.strip().splitlines()[-2:] == [
        "official_bert 45.00 keras_hub 30.00 ratio 1.50 (medians of 3 rounds; official_bert 40.00-50.00, "
        "keras_hub 20.00-35.00)",
        "CPU time per step: official_bert 690 ms keras_hub 950 ms ratio 1.38"]


@pytest.mark.parametrize("warmup_steps, ends_of_calls, steps_before", [
    (3, [0, 1, 2, 3, 4], 3),  # one step a call: the clock starts after the third
    (3, [1, 3, 5], 4),        # two steps a call (--steps_per_execution 2): after the call that ends the warm-up
    (0, [0, 1], 0)])          # no warm-up: from the start
def test_the_clock_starts_when_the_warm_up_steps_are_done(warmup_steps, ends_of_calls, steps_before):
    clock = train_step._StepClock(warmup_steps)
    clock.on_train_begin()
    started_at = None
    for batch in ends_of_calls:
        clock.on_train_batch_end(batch)
        if started_at is None and clock.wall is not None:
            started_at = batch
    assert clock.steps_before == steps_before
    assert started_at == (ends_of_calls[0] if warmup_steps == 0 else steps_before - 1)
