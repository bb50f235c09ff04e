"""compare rules that a one-token change broke unseen (mutation review, round 9):
paired time ratios without instances timed 0, the closed noise band and its
faster side, instance sets (none for a score CSV, a family of one set or a
disjoint method; a method new in B shown), the families of a score CSV
named by run, a run without instance names compared whole, a gap against a
farther reference left out, the notes said once and in the singular, and
set headings named in full.
"""
import numpy as np
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.compare import COLUMNS, TIME_NOISE, compare, compare_runs
from epochbench.suite import format_leaderboard, leaderboard
from test_compare import _scores_kind as scores, _timed, _two_sets


# ---- compare._paired_ratios : the time ratio B/A is the
# median over the instances both runs measured *with a time above 0*
# (docstring of _paired_ratios).  An instance timed 0 in A (a clock too
# coarse for a fast heuristic) has no ratio: it must not become an infinite
# ratio that makes the method read 'slower' and fail a time guard.


def test_an_instance_timed_zero_in_a_has_no_ratio(tmp_path):
    a = _timed(tmp_path / "a", [0.0, 0.0, 0.01])      # two instances below the clock's resolution in A
    b = _timed(tmp_path / "b", [0.01, 0.01, 0.01])
    row = compare_runs(a, b).set_index("method").loc["ff"]
    assert row["time_ratio"] == pytest.approx(1.0)     # the one instance both timed above 0
    assert "slower" not in row["flag"]


def test_an_instance_timed_zero_in_b_has_no_ratio(tmp_path):
    a = _timed(tmp_path / "a", [0.01, 0.01, 0.01])
    b = _timed(tmp_path / "b", [0.0, 0.0, 0.01])
    row = compare_runs(a, b).set_index("method").loc["ff"]
    assert row["time_ratio"] == pytest.approx(1.0)
    assert "faster" not in row["flag"]


# ---- compare._flags .  Documented rule (module
# docstring): "a change in time [is flagged] when the ratio leaves
# [1 / TIME_NOISE, TIME_NOISE]": the band is closed, so a ratio of exactly
# TIME_NOISE (4 ms -> 5 ms: 1.25 exactly in floats)
# or exactly 1 / TIME_NOISE is noise, not ``slower`` / ``faster``.


def _one_row(ms):
    return pd.DataFrame([("packing", "ff", 10, 10, 0.01, 0.02, ms)], columns=COLUMNS)


def test_a_ratio_on_the_edge_of_the_noise_band_is_not_flagged():
    assert 5.0 / 4.0 == TIME_NOISE and 4.0 / 5.0 == 1 / TIME_NOISE
    assert compare(_one_row(4.0), _one_row(5.0)).loc[0, "flag"] == ""
    assert compare(_one_row(5.0), _one_row(4.0)).loc[0, "flag"] == ""
    assert compare(_one_row(4.0), _one_row(5.0001)).loc[0, "flag"] == "slower"


# ---- compare._flags .  Documented rule (compare's
# docstring): ``slower`` is a ratio above ``slower`` (TIME_NOISE, or a
# tighter time guard's limit), ``faster`` a ratio below 1 / TIME_NOISE:
# a tight time guard narrows the slower side only.


def test_a_tight_time_guard_does_not_narrow_the_faster_band():
    ratio = 0.85                                    # inside [1 / 1.25, 1.25]; below 1 / 1.1
    assert 1 / TIME_NOISE < ratio < 1 / 1.1
    table = compare(_one_row(10.0), _one_row(10.0 * ratio), slower=1.1)     # --fail-on time:10%
    assert table.loc[0, "flag"] == ""
    table = compare(_one_row(10.0), _one_row(10.0 * 0.7), slower=1.1)
    assert table.loc[0, "flag"] == "faster"


# ---- compare._instance_sets .  Documented rule
# (docstring of _instance_sets and COLUMNS): a solve's ``set`` is the
# leaderboards' block, and it is ``""`` for every method of a family of one
# set and for a run without configurations (a score CSV); a family of one
# set is one block, named nowhere, as on the boards.


def test_a_family_of_one_set_has_the_set_named_nowhere(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": m, "kind": "heuristic",
                       "gap": 0.01, "gap_kind": "optimum", "seconds": 1e-4} for i in range(3) for m in ("ff", "bfd")]
                     ).to_csv(tmp_path / name / "bench-solves.csv", index=False)
    table = compare_runs(tmp_path / "a", tmp_path / "b")
    assert table["set"].tolist() == ["", ""]


def test_a_folder_against_a_score_csv_is_not_cut_into_sets(tmp_path):
    """B is a score CSV (no config column) of the same solves: no set."""
    folder = _two_sets(tmp_path / "run", 0.1, 0.1)
    rows = pd.read_csv(folder / "bench-solves.csv").drop(columns=["config"])
    rows.assign(value=1.0).to_csv(tmp_path / "scores.csv", index=False)
    table = compare_runs(folder, tmp_path / "scores.csv")
    assert table["set"].eq("").all(), table[["set", "method"]]
    assert sorted(table["method"]) == ["cpsat", "ff"]


# ---- compare._instance_sets .  Documented rule
# (docstring): "A method the runs measured on nothing in common ... ha[s]
# the set ''": it is one row flagged ``disjoint``, not one row per
# instance set of A (each of which would read ``gone``).


def _two_sets_renamed(folder, ff_prefix=""):
    """mapping's shape: ff alone on config big, ff and cpsat on config small;
    ``ff_prefix`` renames ff's instances (a run of other ff instances)."""
    folder.mkdir()
    rows = []
    for i in range(4):
        rows.append({"family": "mapping", "config": "big", "instance": f"{ff_prefix}b{i}", "method": "ff",
                     "kind": "heuristic", "gap": 0.1, "gap_kind": "best known", "seconds": 1e-3})
        rows.append({"family": "mapping", "config": "small", "instance": f"{ff_prefix}s{i}", "method": "ff",
                     "kind": "heuristic", "gap": 0.1, "gap_kind": "optimum", "seconds": 1e-3})
        rows.append({"family": "mapping", "config": "small", "instance": f"s{i}", "method": "cpsat",
                     "kind": "exact", "gap": 0.0, "gap_kind": "optimum", "seconds": 1e-3})
    pd.DataFrame(rows).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_a_method_measured_on_nothing_in_common_is_one_disjoint_row(tmp_path, capsys):
    a = _two_sets_renamed(tmp_path / "a")
    b = _two_sets_renamed(tmp_path / "b", ff_prefix="x")
    table = compare_runs(a, b)
    ff = table[table["method"] == "ff"]
    assert ff["set"].tolist() == [""] and ff["flag"].tolist() == ["disjoint"]
    assert not table["gone"].any()
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0%"]) == 0    # cpsat compared, unchanged
    assert "gone" not in capsys.readouterr().out


# ---- compare_runs .  Documented rule (compare_runs'
# docstring, README): a method the two runs measured on no common instance
# is flagged ``disjoint`` and "its figures are not compared" - including
# its share of solves with a gap: B's other instances losing a gap is no
# ``gaps-lost`` and fails no gap guard.


def _ff_run(folder, ff_instances, ff_gaps):
    folder.mkdir()
    rows = [{"family": "packing", "config": "c", "instance": i, "method": "ff", "kind": "heuristic",
             "gap": g, "gap_kind": "optimum", "seconds": 1e-4} for i, g in zip(ff_instances, ff_gaps)]
    rows += [{"family": "packing", "config": "c", "instance": f"i{k}", "method": "cpsat", "kind": "exact",
              "gap": 0.0, "gap_kind": "optimum", "seconds": 1e-2} for k in range(4)]
    pd.DataFrame(rows).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_a_disjoint_method_is_not_failed_for_lost_gaps(tmp_path, capsys):
    a = _ff_run(tmp_path / "a", ["i0", "i1"], [0.01, 0.01])
    b = _ff_run(tmp_path / "b", ["i2", "i3"], [0.01, np.nan])          # other instances, one without a gap
    row = compare_runs(a, b).set_index("method").loc["ff"]
    assert row["flag"] == "disjoint" and not row["lost_gaps"]
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 0
    assert "FAIL" not in capsys.readouterr().out


# ---- compare._instance_sets / compare .  Documented rule
# (compare's docstring: "Per (family, set, method) in either run ... new /
# gone"): a method measured in B alone is a row flagged ``new`` in the
# table of two results folders, never dropped.


def _methods_run(folder, methods):
    folder.mkdir()
    pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": m, "kind": "heuristic",
                   "gap": 0.01, "gap_kind": "optimum", "seconds": 1e-4} for i in range(3) for m in methods]
                 ).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_a_method_new_in_b_is_a_row_flagged_new(tmp_path, capsys):
    a = _methods_run(tmp_path / "a", ["ff"])
    b = _methods_run(tmp_path / "b", ["ff", "bfd"])
    flags = compare_runs(a, b).set_index("method")["flag"]
    assert flags.to_dict() == {"ff": "", "bfd": "new"}
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "bfd" in out and "new" in out


# ---- compare._common_families .  Documented rule
# (docstring: "a line naming the others"): a results folder against a score
# CSV is cut to the families both hold, and the line says which run (A or
# B, by its path) alone holds the rest.


def _family_rows(family, config_col=True):
    rows = [{"family": family, "config": "c", "instance": f"{family}{i}", "method": "ff", "kind": "heuristic",
             "gap": 0.01, "gap_kind": "optimum", "seconds": 1e-4} for i in range(3)]
    return pd.DataFrame(rows)


def test_the_line_names_the_run_that_alone_holds_a_family(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    pd.concat([_family_rows("packing"), _family_rows("mapping")]).to_csv(folder / "bench-solves.csv", index=False)
    scores = tmp_path / "scores.csv"
    _family_rows("packing").drop(columns=["config"]).assign(value=1.0).to_csv(scores, index=False)
    notes = compare_runs(folder, scores).attrs["notes"]
    assert any(n.startswith(f"A ({folder}) alone holds mapping: not compared") for n in notes), notes
    notes = compare_runs(scores, folder).attrs["notes"]
    assert any(n.startswith(f"B ({folder}) alone holds mapping: not compared") for n in notes), notes


# ---- compare._shared .  Documented rule (compare_runs'
# docstring): ``shared``, ``only_a``, ``only_b`` are "NaN where a run does
# not say which instances it measured": such a method is compared on the
# whole of both runs, never flagged ``disjoint`` - whichever of the two
# runs is the one without instance names.


def _scores_named(path, gap, with_instance=True):
    rows = pd.DataFrame([{"family": "knapsack", "instance": f"k{i}", "method": "greedy", "gap": gap,
                          "seconds": 0.01} for i in range(3)])
    (rows if with_instance else rows.drop(columns=["instance"])).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("a_named, b_named", [(True, False), (False, True)])
def test_a_score_csv_without_instance_names_is_compared_whole(tmp_path, a_named, b_named):
    a = _scores_named(tmp_path / "a.csv", 0.01, a_named)
    b = _scores_named(tmp_path / "b.csv", 0.03, b_named)
    table = compare_runs(a, b)
    row = table.set_index("method").loc["greedy"]
    assert pd.isna(row["shared"]) and row["flag"] == "gap+"
    assert row["d_mean"] == pytest.approx(2.0)
    # said, not silent: a review's B, one instance short and unnamed, read as a gain without a word
    unnamed = b if a_named else a
    assert table.attrs["notes"] == [f"{unnamed} names no instances: its methods are compared on all of each "
                                    "run's solves, not on the instances both measured (a count that differs "
                                    "is no change of gap)"]


# ---- compare._moved_references .  Rule (README, compare:
# "a change the move could explain (a larger gap against a reference farther
# from the solutions ...) is left out of both"; the existing test for the
# other direction: "the three gaps of 0 on both sides: explained, left
# out"): a gap that stays the same while its reference moved from a
# best-known value to the optimum (the optimum is farther from the
# solutions) is explained by the move and left out of both runs, and the
# line under the family counts it.


def _kinds_run(folder, gaps, kinds):
    folder.mkdir()
    pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff", "kind": "heuristic",
                   "gap": g, "gap_kind": k, "seconds": 1e-4} for i, (g, k) in enumerate(zip(gaps, kinds))]
                 ).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_an_equal_gap_against_a_farther_reference_is_left_out_of_both(tmp_path, capsys):
    a = _kinds_run(tmp_path / "a", [0.0, 0.05, 0.0, 0.05, 0.0, 0.05], ["best known"] * 4 + ["optimum"] * 2)
    b = _kinds_run(tmp_path / "b", [0.0, 0.05, 0.0, 0.05, 0.0, 0.15], ["optimum"] * 6)   # i5: a real change
    row = compare_runs(a, b).set_index("method").loc["ff"]
    assert row["moved_refs"] == 4
    assert row["d_mean"] == pytest.approx(5.0)            # over i4, i5: 2.5 % -> 7.5 %
    assert main(["compare", str(a), str(b)]) == 0
    assert "ff: 4 solves' gaps were taken against another reference in B (best known -> optimum): " \
           "left out of both" in capsys.readouterr().out


# ---- compare._cut_notes / format_comparison .  Rule
# (_cut_notes' docstring: lines "saying which methods of a family were
# compared on part of what one run measured"; README: "A line under the
# family says how many"): one line per method and thing said - a method on
# two instance sets is not said twice, and a count of 0 is not said.


def test_a_method_on_two_sets_has_its_cut_said_once(tmp_path, capsys):
    def rows(extra):
        out = []
        for i in range(3 + extra):
            out.append({"family": "mapping", "config": "big", "instance": f"b{i}", "method": "minmin",
                        "kind": "heuristic", "gap": 0.1, "gap_kind": "best known", "seconds": 1e-3})
        for i in range(3):
            out += [{"family": "mapping", "config": "small", "instance": f"s{i}", "method": m, "kind": k,
                     "gap": g, "gap_kind": "optimum", "seconds": 1e-3}
                    for m, k, g in (("minmin", "heuristic", 0.1), ("cpsat", "exact", 0.0))]
        return pd.DataFrame(out)
    for name, extra in (("a", 1), ("b", 0)):
        (tmp_path / name).mkdir()
        rows(extra).to_csv(tmp_path / name / "bench-solves.csv", index=False)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "on big:" in out and "on small:" in out
    assert out.count("minmin: compared on the 6 instances both runs measured (1 in A alone)") == 1, out


def test_a_remeasured_method_has_no_line_for_gaps_left_out(tmp_path, capsys):
    """Score CSVs: B's gaps are taken against A's reference (said); none is
    left out of both, and no line says '0 solves' gaps were ... left out'."""
    a = scores(tmp_path / "a.csv", "best known", 95.0, [90.0, 95.0])
    b = scores(tmp_path / "b.csv", "optimum", 100.0, [90.0, 95.0])
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "B's taken against A's reference" in out
    assert "left out of both" not in out, out


# ---- compare._cut_notes .  Rule (as for "the instance
# both runs measured" against "the 1 instances"): one solve whose reference
# moved is said in the singular, "solve's gap was", never "1 solves' gaps
# were"; two are "2 solves' gaps were".


def test_one_moved_solve_is_said_in_the_singular(tmp_path, capsys):
    a = _kinds_run(tmp_path / "a", [0.05, 0.0, 0.0], ["best known", "optimum", "optimum"])
    b = _kinds_run(tmp_path / "b", [0.10, 0.0, 0.0], ["optimum", "optimum", "optimum"])   # i0: farther reference
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "ff: solve's gap was taken against another reference in B (best known -> optimum): " \
           "left out of both" in out, out
    assert "1 solves'" not in out


# ---- format_comparison / format_leaderboard .  Rule
# (README: "compare has one block per set", format_leaderboard: "one block
# per instance set, under its name"): each block's heading names its set in
# full (names are cut only past 90 characters, to keep lines under 100).


BIG_12, SMALL_12 = "n512-k16-uniform", "n32-k4-uniform"


def _heading_rows():
    rows = []
    for i in range(3):
        rows.append({"family": "mapping", "config": BIG_12, "instance": f"b{i}", "method": "minmin",
                     "kind": "heuristic", "gap": 0.1, "gap_kind": "best known", "seconds": 1e-3})
        rows += [{"family": "mapping", "config": SMALL_12, "instance": f"s{i}", "method": m, "kind": k,
                  "gap": g, "gap_kind": "optimum", "seconds": 1e-3}
                 for m, k, g in (("minmin", "heuristic", 0.1), ("cpsat", "exact", 0.0))]
    return pd.DataFrame(rows)


def test_compare_headings_name_each_set_in_full(tmp_path, capsys):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        _heading_rows().to_csv(tmp_path / name / "bench-solves.csv", index=False)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert f"on {BIG_12}:" in out and f"on {SMALL_12}:" in out


def test_leaderboard_headings_name_each_set_in_full():
    text = format_leaderboard(leaderboard(_heading_rows())["mapping"])
    assert f"on {BIG_12}:" in text and f"on {SMALL_12}:" in text


def test_each_board_block_holds_the_rows_of_its_set():
    """board_blocks: ``(set, rows without the set column)`` per set."""
    from epochbench.suite import board_blocks
    blocks = board_blocks(leaderboard(_heading_rows())["mapping"])
    assert [(name, list(t["method"])) for name, t in blocks] == [(BIG_12, ["minmin"]), (SMALL_12, ["cpsat", "minmin"])]
    assert all("set" not in t for _, t in blocks)


def test_a_huge_gap_or_ratio_prints_in_powers_of_ten(tmp_path):
    """A gap of 1e300 in a file printed 300 digits in each of three cells,
    and the table broke (a review)."""
    from epochbench.compare import format_comparison
    table = compare(pd.DataFrame([("packing", "ff", 10, 10, 0.01, 0.02, 1.0)], columns=COLUMNS),
                    pd.DataFrame([("packing", "ff", 10, 10, 1e300, 1e300, 5e7)], columns=COLUMNS))
    text = format_comparison(table)
    assert max(map(len, text.splitlines())) < 100, text
    assert "1e+302" in text and "+1e+302" in text and "5e+07" in text, text
