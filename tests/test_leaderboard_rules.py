"""Leaderboard rules that a one-token change broke unseen (mutation review, round 9):
at ref % over the solves with a reference, the p90s, at ref % written as a
percentage, and two blocks of one configuration name kept apart.
"""
import numpy as np
import pandas as pd
import pytest

from epochbench.suite import board_blocks, format_leaderboard, instance_sets, leaderboard


# ---- suite._ranked / format_leaderboard .  Rules
# (leaderboard's docstring): "``at ref %`` is over the solves with a
# reference, the unanswered ones included" (a solve with no reference,
# ``gap_kind`` "no bound", is not in it); "mean / p90 / max gap (%)", "median and p90 decision
# time (ms)"; format_leaderboard writes ``at ref %`` as a percentage.


def test_at_ref_is_over_the_solves_with_a_reference():
    rows = pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff",
                          "kind": "heuristic", "gap": g, "gap_kind": k, "seconds": 1e-3}
                         for i, (g, k) in enumerate(((0.0, "optimum"), (0.1, "optimum"),
                                                     (np.nan, "no bound"), (np.nan, "no bound")))])
    ff = leaderboard(rows)["packing"].set_index("method").loc["ff"]
    assert ff["no ans"] == 0 and ff["at ref %"] == pytest.approx(50.0)     # 1 of the 2 with a reference


def test_p90_gap_is_the_90th_percentile_of_the_gaps():
    gaps = [0.01 * i for i in range(10)]
    rows = pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff",
                          "kind": "heuristic", "gap": g, "gap_kind": "optimum", "seconds": 1e-3}
                         for i, g in enumerate(gaps)])
    ff = leaderboard(rows)["packing"].set_index("method").loc["ff"]
    assert ff["p90 %"] == pytest.approx(100 * np.quantile(gaps, 0.9))


def test_p90_ms_is_the_90th_percentile_of_the_decision_times():
    seconds = [0.001 * (i + 1) ** 2 for i in range(10)]
    rows = pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff",
                          "kind": "heuristic", "gap": 0.0, "gap_kind": "optimum", "seconds": s}
                         for i, s in enumerate(seconds)])
    ff = leaderboard(rows)["packing"].set_index("method").loc["ff"]
    assert ff["p90 ms"] == pytest.approx(1000 * np.quantile(seconds, 0.9))
    assert ff["median ms"] == pytest.approx(1000 * np.median(seconds))


def test_at_ref_is_written_as_a_percentage():
    rows = pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff",
                          "kind": "heuristic", "gap": 0.1 * (i % 2), "gap_kind": "optimum", "seconds": 1e-3}
                         for i in range(4)])                               # at ref: 2 of 4
    lines = format_leaderboard(leaderboard(rows)["packing"]).splitlines()
    end = lines[0].index("at ref %") + len("at ref %")                    # columns are right-aligned
    assert lines[1][:end].split()[-1] == "50"


# ---- suite.instance_sets .  Rule (leaderboard's
# docstring): "the board has one block of rows per set, each ranked on its
# own" - two blocks of one configuration name (methods that solved
# different instances of it) keep distinct names, so that neither the
# board nor format_leaderboard merges them into one block.


def _same_config_rows():
    return pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": m, "kind": "heuristic",
                          "gap": 0.1, "gap_kind": "optimum", "seconds": 1e-3}
                         for m, insts in (("ff", (0, 1)), ("bfd", (2, 3))) for i in insts])


def test_two_blocks_of_one_configuration_keep_distinct_names():
    names = [name for name, _ in instance_sets(_same_config_rows())]
    assert len(names) == 2 and len(set(names)) == 2 and names[0] == "c"
    board = leaderboard(_same_config_rows())["packing"]
    assert [len(t) for _, t in board_blocks(board)] == [1, 1]
    assert format_leaderboard(board).count("on c") == 2
