"""`python -m bench.inference`: its flags refuse what cannot measure anything, and its table's cells (median, ratio
to ours' median, range over the rounds) against hand-computed values."""

import pytest

from bench import inference


@pytest.mark.parametrize("flags, message", [(["--rounds", "0"], "--rounds must be at least 1, got 0"),
                                            (["--seconds", "-1"], "--seconds must be positive, got -1.0")])
def test_flags_that_measure_nothing_are_refused_in_one_line(flags, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        inference.parse_args(flags)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(message)


def test_a_cell_is_the_median_its_ratio_to_ours_and_the_range():
    assert inference.cell([10.0], None) == "10.00"
    assert inference.cell([10.0], [20.0]) == "10.00 (0.50)"
    # medians 30 and 40 (ours): ratio 0.75; range 10-50
    assert inference.cell([50.0, 10.0, 30.0], [40.0, 35.0, 45.0]) == "30.00 (0.75) [10.00-50.00]"
