"""``epochbench compare A B``: the change of every method's gap and time
between two saved runs, and ``--fail-on`` for a CI guard."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.compare import Threshold, compare, load


def solves(folder, ff_gap: float, ff_seconds: float = 1e-5):
    folder.mkdir()
    rows = []
    for i in range(6):
        rows += [{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff", "kind": "heuristic",
                  "gap": ff_gap * (i % 2), "gap_kind": "optimum", "seconds": ff_seconds},
                 {"family": "packing", "config": "c", "instance": f"i{i}", "method": "cpsat", "kind": "exact",
                  "gap": 0.0, "gap_kind": "optimum", "seconds": 0.01}]
    pd.DataFrame(rows).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_a_heuristic_made_worse_is_reported_and_fails_the_guard(tmp_path, capsys):
    a = solves(tmp_path / "a", ff_gap=0.05)
    b = solves(tmp_path / "b", ff_gap=0.12)                          # ff made worse on purpose
    table = compare(load(a), load(b)).set_index("method")
    assert table.loc["ff", "d_mean"] == pytest.approx(100 * (0.06 - 0.025))
    assert table.loc["ff", "d_max"] == pytest.approx(7.0) and table.loc["ff", "flag"] == "gap+"
    assert table.loc["cpsat", "flag"] == ""
    assert main(["compare", str(a), str(b)]) == 0                    # reported, no guard
    out = capsys.readouterr().out
    assert "packing:" in out and "+3.50" in out and "gap+" in out
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 1
    assert "FAIL packing ff: mean gap +3.50 pp (limit gap:0.5%)" in capsys.readouterr().out
    assert main(["compare", str(b), str(a), "--fail-on", "gap:0.5%"]) == 0    # better is not a failure


def test_names_that_read_as_missing_values_are_names(tmp_path):
    """An instance (or a method from before the registry refused it) named
    NA, null or nan: compare read the name as a missing value and refused
    the file ("line 2 has no method"); a blank name is still refused."""
    for name in ("a", "b"):
        rows = [{"family": "packing", "config": "c", "instance": inst, "method": method, "kind": "heuristic",
                 "gap": 0.1 if name == "a" else 0.2, "gap_kind": "optimum", "seconds": 1e-5}
                for inst in ("NA", "null", "nan") for method in ("NA", "ff")]
        (tmp_path / name).mkdir()
        pd.DataFrame(rows).to_csv(tmp_path / name / "bench-solves.csv", index=False)
    table = compare(load(tmp_path / "a"), load(tmp_path / "b")).set_index("method")
    assert set(table.index) == {"NA", "ff"} and table.loc["NA", "d_mean"] == pytest.approx(10.0)
    text = (tmp_path / "a" / "bench-solves.csv").read_text().replace("packing,c,NA,ff", "packing,c,NA,", 1)
    (tmp_path / "a" / "bench-solves.csv").write_text(text)
    with pytest.raises(ValueError, match="line 3 has no method"):
        load(tmp_path / "a")


def test_time_guard_and_noise(tmp_path, capsys):
    a = solves(tmp_path / "a", 0.05, ff_seconds=1e-5)
    b = solves(tmp_path / "b", 0.05, ff_seconds=1.1e-5)              # within the noise
    c = solves(tmp_path / "c", 0.05, ff_seconds=3e-5)
    assert compare(load(a), load(b)).set_index("method").loc["ff", "flag"] == ""
    assert compare(load(a), load(c)).set_index("method").loc["ff", "flag"] == "slower"
    assert main(["compare", str(a), str(c), "--fail-on", "time:50%"]) == 1
    assert main(["compare", str(a), str(b), "--fail-on", "time:50%"]) == 0


def test_bad_arguments_are_one_line(tmp_path, capsys):
    a = solves(tmp_path / "a", 0.05)
    assert main(["compare", str(a), str(tmp_path / "nowhere")]) == 2
    assert main(["compare", str(a), str(a), "--fail-on", "speed:3"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "nowhere" in err[0] and "--fail-on 'speed:3'" in err[1]
    with pytest.raises(ValueError):
        Threshold.parse("gap:")


def test_two_real_runs_of_pytest_benchmark_json_compare_cleanly(tmp_path):
    """The same selection run twice: every method present in both, no gap change."""
    files = []
    for run in ("one", "two"):
        out = tmp_path / f"{run}.json"
        proc = subprocess.run([sys.executable, "-m", "epochbench", "bench", "--quick", "-k",
                               "leinberger-k2-distuniform-n32 and (cpsat or -ff] or -bb]) and not mkp-bb",
                               "--benchmark-json", str(out)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600, env=dict(os.environ))
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        files.append(out)
    table = compare(load(files[0]), load(files[1]))
    assert set(table["method"]) == {"cpsat", "ff", "bb"} and set(table["family"]) == {"packing"}
    assert (table["d_mean"].abs() < 1e-9).all() and not table["flag"].str.contains("gap").any()
    assert main(["compare", str(files[0]), str(files[1]), "--fail-on", "gap:0%"]) == 0
    assert json.loads(files[0].read_text())["benchmarks"]


def test_gaps_that_disappear_are_flagged_and_fail_the_gap_guard(tmp_path, capsys):
    """A solve that loses its gap in B (no solution, no reference) is not
    averaged away: the method is flagged ``gaps-lost`` and fails the guard."""
    a = solves(tmp_path / "a", ff_gap=0.05)
    b = solves(tmp_path / "b", ff_gap=0.05)
    df = pd.read_csv(b / "bench-solves.csv")
    df.loc[(df["method"] == "ff") & (df["instance"] == "i1"), "gap"] = float("nan")    # gap 0.05 lost
    df.to_csv(b / "bench-solves.csv", index=False)
    table = compare(load(a), load(b)).set_index("method")
    assert table.loc["ff", "flag"].startswith("gaps-lost") and table.loc["cpsat", "flag"] == ""
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 1
    assert "FAIL packing ff: gaps on 5 of 6 solves (A: 6 of 6)" in capsys.readouterr().out


@pytest.mark.parametrize("doc, needle", [({"benchmarks": [1]}, "benchmark 0 is not an object"),
                                         ({"benchmarks": [{"extra_info": [1]}]}, "'extra_info' is not an object"),
                                         ({"benchmarks": [{"extra_info": {"method": "ff"}, "stats": {"median": "x"}}]},
                                          "stats.median"),
                                         ({"benchmarks": [{"name": "t[ff]", "extra_info": {"method": "ff"},
                                                           "stats": {"median": 0.1}}] * 2},
                                          "benchmark 't[ff]' appears twice")])
def test_malformed_benchmark_json_is_one_line_naming_the_file(tmp_path, capsys, doc, needle):
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    assert main(["compare", str(path), str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and needle in err and err.count("\n") == 1


def _two_configs(folder, configs, ff_gap=0.05):
    folder.mkdir()
    rows = [{"family": "packing", "config": c, "instance": f"i{i}", "method": m, "kind": "heuristic",
             "gap": (ff_gap if c == "c1" else 0.2) * (i % 2) if m == "ff" else 0.0, "gap_kind": "optimum",
             "seconds": 1e-5 if c == "c1" else 1e-3}
            for c in configs for i in range(4) for m in ("ff", "cpsat")]
    pd.DataFrame(rows).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_runs_of_different_selections_are_compared_on_what_both_measured(tmp_path, capsys):
    """A measured configs c1 and c2, B only c1 with the same gaps: no change,
    no failure, and the note says which part was compared."""
    a = _two_configs(tmp_path / "a", ["c1", "c2"])
    b = _two_configs(tmp_path / "b", ["c1"])
    assert compare(load(a), load(b)).set_index("method").loc["ff", "flag"] != ""   # the whole runs differ
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0%", "--fail-on", "time:10%"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "ff: compared on the 4 instances both runs measured (4 in A alone)" in out
    c = _two_configs(tmp_path / "c", ["c2"])
    assert main(["compare", str(b), str(c), "--fail-on", "gap:0%"]) == 1       # a guard that compared nothing
    out = capsys.readouterr().out                                                # passed before
    assert "disjoint" in out and "ff: no instance measured in both runs (4 in A, 4 in B): not compared" in out
    assert "FAIL nothing compared" in out
    assert main(["compare", str(b), str(c)]) == 0                                # no guard asked: a table
    assert "FAIL" not in capsys.readouterr().out
    d = _two_configs(tmp_path / "d", ["c1"])
    (d / "bench-solves.csv").write_text("\n".join((d / "bench-solves.csv").read_text().splitlines()[:2]) + "\n")
    main(["compare", str(a), str(d)])
    assert "compared on the instance both runs measured" in capsys.readouterr().out   # "the 1 instances"


@pytest.mark.parametrize("edit, needle", [
    (lambda df: df.iloc[:0], "no solves"),
    (lambda df: df.assign(seconds=-5.0), "column 'seconds' has -5.0, not a finite number >= 0"),
    (lambda df: df.assign(gap=float("inf")), "column 'gap' has inf"),
    (lambda df: df.assign(gap=-0.1), "column 'gap' has -0.1"),
])
def test_impossible_figures_in_a_run_are_one_line(tmp_path, capsys, edit, needle):
    a = solves(tmp_path / "a", 0.05)
    b = solves(tmp_path / "b", 0.05)
    edit(pd.read_csv(b / "bench-solves.csv")).to_csv(b / "bench-solves.csv", index=False)
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize("doc, needle", [
    ({"benchmarks": []}, "no benchmark of a method"),
    ({"benchmarks": [{"extra_info": {"method": "ff"}, "stats": {"median": -1}}]}, "stats.median -1"),
    ({"benchmarks": [{"extra_info": {"method": "ff", "instances": -3}, "stats": {"median": 1}}]},
     "extra_info.instances -3"),
    ({"benchmarks": [{"extra_info": {"method": "ff", "mean_gap": float("nan")}, "stats": {"median": 1}}]},
     "extra_info.mean_gap nan"),
])
def test_impossible_figures_in_benchmark_json_are_one_line(tmp_path, capsys, doc, needle):
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    assert main(["compare", str(path), str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_a_run_compared_with_itself_says_so(tmp_path, capsys):
    a = solves(tmp_path / "a", 0.05)
    assert main(["compare", str(a), str(a)]) == 0
    assert capsys.readouterr().out.startswith("note: A and B are the same run")


def test_one_run_named_two_ways_or_copied_says_so(tmp_path, capsys, monkeypatch):
    import shutil
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    a = solves(tmp_path / "results" / "run1", 0.05)
    for other in ("run1", str(a / "bench-solves.csv")):              # its name; its file: "by path" said nothing
        assert main(["compare", str(a), other]) == 0
        assert capsys.readouterr().out.startswith("note: A and B are the same run")
    shutil.copytree(a, tmp_path / "copy")
    assert main(["compare", str(a), str(tmp_path / "copy")]) == 0
    assert capsys.readouterr().out.startswith("note: A and B hold the same measurements (a copy of one run)")
    b = solves(tmp_path / "b", 0.06)
    main(["compare", str(a), str(b)])                              # a change of gap: its status is not the point
    assert "note: A and B" not in capsys.readouterr().out


def test_a_guard_is_not_passed_by_a_new_method_beside_a_disjoint_one(tmp_path, capsys):
    """A: ff on i1, i2; B: ff on i3, i4 and a new method: 'ff disjoint, bfd new'
    compared nothing and exited 0."""
    for name, insts, methods in (("a", ("i1", "i2"), ("ff",)), ("b", ("i3", "i4"), ("ff", "bfd"))):
        (tmp_path / name).mkdir()
        pd.DataFrame([{"family": "packing", "config": "c", "instance": i, "method": m, "kind": "heuristic",
                       "gap": 0.01, "gap_kind": "optimum", "seconds": 1e-4} for i in insts for m in methods]
                     ).to_csv(tmp_path / name / "bench-solves.csv", index=False)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-on", "gap:0%"]) == 1
    assert "FAIL nothing compared" in capsys.readouterr().out


def test_two_score_csvs_are_compared_on_the_instances_both_scored(tmp_path, capsys):
    """A score CSV has no config column: its instances were not matched,
    so a subset of the same rows read as a change of gap ('gap-')."""
    rows = [{"family": "knapsack", "instance": f"k{i}", "method": m, "gap": g, "seconds": 0.01}
            for i in range(4) for m, g in (("greedy-mkp", 0.01 * i), ("cpsat", 0.0))]
    pd.DataFrame(rows).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame(rows[:4]).to_csv(tmp_path / "b.csv", index=False)          # the first 2 instances, same rows
    assert main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--fail-on", "gap:0%"]) == 0
    out = capsys.readouterr().out
    assert "gap-" not in out and "greedy-mkp: compared on the 2 instances both runs measured (2 in A alone)" in out
    folder = tmp_path / "run"                                                 # a results folder of the same solves
    folder.mkdir()
    pd.DataFrame([{**r, "config": "mknapcb1"} for r in rows]).to_csv(folder / "bench-solves.csv", index=False)
    assert main(["compare", str(folder), str(tmp_path / "b.csv"), "--fail-on", "gap:0%"]) == 0   # "disjoint"
    assert "compared on the 2 instances both runs measured" in capsys.readouterr().out           # before


def test_a_results_folder_against_a_score_csv_compares_gaps_not_times(tmp_path, capsys):
    """A folder's time is a heuristic's median over a benchmark's rounds, a
    score CSV's (and a run's own bench-scores.csv's) the one checked call,
    cold caches: a run compared with its own bench-scores.csv read ff 2 to
    4 times slower and failed a time guard."""
    folder = solves(tmp_path / "run", ff_gap=0.05, ff_seconds=1e-5)
    rows = pd.read_csv(folder / "bench-solves.csv")
    scored = rows.assign(value=1.0, seconds=rows["seconds"] * 40)       # the same solves, cold single calls
    scored.to_csv(folder / "bench-scores.csv", index=False)
    assert main(["compare", str(folder), str(folder / "bench-scores.csv")]) == 0
    out, err = capsys.readouterr()
    assert "slower" not in out and "gaps compared, times not: A's times" in err and err.count("\n") == 1
    assert main(["compare", str(folder), str(folder / "bench-scores.csv"), "--fail-on", "time:20%"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("epochbench compare: error: --fail-on time: A and B measure time differently") \
        and err.count("\n") == 1
    assert main(["compare", str(folder / "bench-scores.csv"), str(folder), "--fail-on", "gap:0%"]) == 0
    assert main(["compare", str(folder), str(folder), "--fail-on", "time:20%"]) == 0   # one kind: timed
    capsys.readouterr()
    (tmp_path / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\n\xb8\xff")
    (tmp_path / "S.CSV").write_bytes((folder / "bench-scores.csv").read_bytes())
    assert main(["compare", str(folder), str(tmp_path / "fig.png")]) == 2
    assert "fig.png: not a text file" in capsys.readouterr().err
    assert main(["compare", str(folder / "bench-scores.csv"), str(tmp_path / "S.CSV")]) == 0


def test_a_fail_line_shows_the_change_past_its_limit(tmp_path, capsys):
    """+0.1705 pp against a limit of 0.17 % read '+0.17 pp (limit gap:0.17%)'."""
    a, b = solves(tmp_path / "a", 0.0), solves(tmp_path / "b", 0.00341)        # mean gap + 0.1705 pp
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.17%"]) == 1
    assert "FAIL packing ff: mean gap +0.1705 pp (limit gap:0.17%)" in capsys.readouterr().out


def test_a_gap_taken_against_another_kind_of_reference_is_not_a_change(tmp_path, capsys):
    """``compare`` ignored ``gap_kind``: an unchanged heuristic measured
    against a best-known value in A and against a proven optimum in B
    (the exact method proved more) was flagged ``gap+`` and failed the
    guard, though only its reference had moved."""
    a = solves(tmp_path / "a", ff_gap=0.05)
    b = solves(tmp_path / "b", ff_gap=0.05)
    rows = pd.read_csv(a / "bench-solves.csv")
    rows.loc[rows["instance"].isin(["i1", "i3"]), "gap_kind"] = "best known"
    rows.to_csv(a / "bench-solves.csv", index=False)
    rows = pd.read_csv(b / "bench-solves.csv")
    rows.loc[(rows["method"] == "ff") & rows["instance"].isin(["i1", "i3"]), "gap"] = 0.2   # the optimum is higher
    rows.to_csv(b / "bench-solves.csv", index=False)
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 0
    out = capsys.readouterr().out
    assert "gap+" not in out and "FAIL" not in out
    assert "ff: 2 solves' gaps were taken against another reference in B (best known -> optimum): " \
           "left out of both" in out
    rows.loc[(rows["method"] == "ff") & (rows["instance"] == "i5"), "gap"] = 0.3          # a real change beside
    rows.to_csv(b / "bench-solves.csv", index=False)
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 1
    assert "FAIL packing ff: mean gap +6.25 pp" in capsys.readouterr().out


@pytest.mark.parametrize("edit, needle", [("nan", "line 3 has no seconds"), ("twice", "line 14 repeats ff on instance i5 (c)")])
def test_a_solve_without_a_time_or_given_twice_is_refused(tmp_path, capsys, edit, needle):
    """A ``seconds`` of NaN was dropped silently (the method then read
    ``faster``), and a repeated row was read as two solves (``gaps-lost
    faster``); a score CSV's error rows keep their empty time."""
    a, b = solves(tmp_path / "a", 0.05), solves(tmp_path / "b", 0.05)
    rows = pd.read_csv(b / "bench-solves.csv")
    if edit == "nan":
        rows.loc[1, "seconds"] = float("nan")
    else:
        rows = pd.concat([rows, rows.iloc[[10]]], ignore_index=True)
    rows.to_csv(b / "bench-solves.csv", index=False)
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
    scored = tmp_path / "s.csv"
    pd.DataFrame([{"family": "packing", "instance": "i0", "method": "ff", "gap": 0.1, "status": "feasible",
                   "seconds": 0.01},
                  {"family": "packing", "instance": "i1", "method": "ff", "gap": None, "status": "error",
                   "seconds": None}]).to_csv(scored, index=False)
    assert main(["compare", str(scored), str(scored)]) == 0


def test_a_gap_that_grew_against_a_weaker_reference_is_a_regression(tmp_path, capsys):
    """Every solve whose reference changed kind had its gap left out, also
    where the move could not explain the change: ff's gap grew from 1 %
    against a bound to 30 % against the optimum (a bound is never below
    the optimum: the solution got worse), and the guard passed."""
    a, b = solves(tmp_path / "a", 0.01), solves(tmp_path / "b", 0.30)
    for run, kind in ((a, "bound"), (b, "optimum")):
        rows = pd.read_csv(run / "bench-solves.csv")
        rows.loc[rows["method"] == "ff", "gap_kind"] = kind
        rows.to_csv(run / "bench-solves.csv", index=False)
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 1
    out = capsys.readouterr().out            # the three gaps of 0 on both sides: explained, left out
    assert "FAIL packing ff: mean gap +29.00 pp" in out and "ff: 3 solves' gaps were taken" in out


def _scores_kind(path, kind, ref, values):
    """A knapsack score CSV of greedy-mkp's values against reference ``ref`` of kind ``kind``."""
    pd.DataFrame([{"family": "knapsack", "instance": f"i{i}", "method": "greedy-mkp", "value": v, "bound": ref,
                   "gap": (ref - v) / ref, "gap_kind": kind, "status": "feasible", "seconds": 0.01}
                  for i, v in enumerate(values)]).to_csv(path, index=False)
    return path


def test_score_csvs_take_bs_gap_against_as_reference_when_the_kind_moved(tmp_path, capsys):
    """Score CSVs hold each solve's value and reference: a solve measured
    against a best-known 95 in A and a proven optimum 100 in B is compared
    on A's reference, so an unchanged value is no change and a worse one
    is one."""
    scores = _scores_kind
    a = scores(tmp_path / "a.csv", "best known", 95.0, [90.0, 95.0])
    same = scores(tmp_path / "same.csv", "optimum", 100.0, [90.0, 95.0])
    worse = scores(tmp_path / "worse.csv", "optimum", 100.0, [80.0, 95.0])
    assert main(["compare", str(a), str(same), "--fail-on", "gap:0.5%"]) == 0
    out = capsys.readouterr().out
    assert "gap+" not in out and "greedy-mkp: 2 solves' gaps were taken against another reference in B " \
                                 "(best known -> optimum): B's taken against A's reference" in out
    assert main(["compare", str(a), str(worse), "--fail-on", "gap:0.5%"]) == 1
    assert "FAIL knapsack greedy-mkp: mean gap +5.26 pp" in capsys.readouterr().out
    # B beating A's best-known value is better, not a gap of 5 % (it failed the guard); the best-known
    # value moving by itself (95, then 100 found by an exact method) is no change of an unchanged method
    better = scores(tmp_path / "better.csv", "optimum", 100.0, [90.0, 100.0])
    moved = scores(tmp_path / "moved.csv", "best known", 100.0, [90.0, 95.0])
    assert main(["compare", str(a), str(better), "--fail-on", "gap:0.5%"]) == 0
    assert "gap-" in capsys.readouterr().out
    assert main(["compare", str(a), str(moved), "--fail-on", "gap:0.5%"]) == 0
    assert "gap+" not in capsys.readouterr().out
    # a minimisation: a makespan below A's reference beats it
    pd.DataFrame([{"family": "mapping", "instance": "m0", "method": "minmin", "value": 110.0, "bound": 100.0,
                   "gap": 0.1, "gap_kind": "best known", "status": "feasible", "seconds": 0.01}]).to_csv(
        tmp_path / "ma.csv", index=False)
    pd.DataFrame([{"family": "mapping", "instance": "m0", "method": "minmin", "value": 95.0, "bound": 90.0,
                   "gap": 5 / 90, "gap_kind": "optimum", "status": "feasible", "seconds": 0.01}]).to_csv(
        tmp_path / "mb.csv", index=False)
    assert main(["compare", str(tmp_path / "ma.csv"), str(tmp_path / "mb.csv"), "--fail-on", "gap:0.5%"]) == 0
    assert "-15.00" in capsys.readouterr().out       # 110 -> 95 against A's 100: +10 % -> -5 %


def test_a_gap_in_one_run_alone_is_left_out_of_its_mean(tmp_path, capsys):
    """A score CSV without a reference for instance i1 (a cut exact
    solve), then one with it: ff's values did not change, but its mean
    over two instances (30 %) against A's over one (10 %) failed the gap
    guard (+20 pp).  Each method's means are taken where both runs have a
    gap; a gap B has alone is said and not held against it, one A has
    alone still fails as lost, with the counts as measured."""
    def scores(path, refs):
        rows = [{"family": "knapsack", "instance": f"i{i}", "method": "ff", "value": v, "bound": r,
                 "gap": None if r is None else (r - v) / r, "gap_kind": None if r is None else "optimum",
                 "status": "feasible", "seconds": 0.01} for i, (v, r) in enumerate(zip([90.0, 50.0], refs))]
        rows.append({"family": "knapsack", "instance": "i0", "method": "bb", "value": 95.0, "bound": 100.0,
                     "gap": 0.05, "gap_kind": "optimum", "status": "feasible", "seconds": 0.01})  # in both
        pd.DataFrame(rows).to_csv(path, index=False)
        return path
    a = scores(tmp_path / "a.csv", [100.0, None])
    b = scores(tmp_path / "b.csv", [100.0, 100.0])
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 0
    out = capsys.readouterr().out
    assert "gap+" not in out and "ff: solve has a gap in B alone (no reference or no answer in A): " \
                                 "left out of B's mean" in out
    assert "bb: " not in out and "alone" not in out.replace("ff: solve has a gap in B alone", "")
    from epochbench.compare import compare_runs
    row = compare_runs(a, b).set_index("method").loc["ff"]
    assert (row["gapped_a"], row["gapped_b"], row["gained_n"]) == (1, 2, 1)     # as measured
    assert main(["compare", str(b), str(a), "--fail-on", "gap:0.5%"]) == 1
    out = capsys.readouterr().out
    assert "FAIL knapsack ff: gaps on 1 of 2 solves (A: 2 of 2)" in out and "gaps-lost" in out
    assert "ff: solve has a gap in A alone" in out


def test_a_gap_lost_on_an_instance_of_several_configurations_counts_each_solve(tmp_path, capsys):
    """A results folder (configurations c1, c2 of instances i0, i1) against
    a score CSV without a reference for i0: i0's key holds two solves of A,
    and both gaps are left out and counted (it said 3 of 4 and one solve)."""
    run = tmp_path / "a"
    run.mkdir()
    pd.DataFrame([{"family": "knapsack", "config": c, "instance": i, "method": "ff", "gap": 0.1,
                   "gap_kind": "optimum", "seconds": 0.01} for c in ("c1", "c2") for i in ("i0", "i1")]).to_csv(
        run / "bench-solves.csv", index=False)
    pd.DataFrame([{"family": "knapsack", "instance": "i0", "method": "ff", "value": 90.0, "bound": None, "gap": None,
                   "gap_kind": None, "status": "feasible", "seconds": 0.01},
                  {"family": "knapsack", "instance": "i1", "method": "ff", "value": 90.0, "bound": 100.0, "gap": 0.1,
                   "gap_kind": "optimum", "status": "feasible", "seconds": 0.01}]).to_csv(tmp_path / "b.csv",
                                                                                          index=False)
    assert main(["compare", str(run / "bench-solves.csv"), str(tmp_path / "b.csv"), "--fail-on", "gap:0.5%"]) == 1
    out = capsys.readouterr().out
    assert "ff: 2 solves have a gap in A alone" in out and "gaps on 1 of 2 solves (A: 4 of 4)" in out


@pytest.mark.parametrize("column, line", [("instance", 3), ("method", 4), ("family", 5), ("config", 3)])
def test_a_row_with_a_blank_key_is_refused_naming_its_line(tmp_path, capsys, column, line):
    """A blank instance turned off the matching of instances for the whole
    file (a method compared on 4 instances against 3: a false gain, exit
    0); a blank method or family dropped its row without a word (an audit
    of the outputs)."""
    a = solves(tmp_path / "a", 0.05)
    b = solves(tmp_path / "b", 0.05)
    df = pd.read_csv(b / "bench-solves.csv")
    df[column] = df[column].astype(object)
    df.loc[line - 2, column] = ""
    df.to_csv(b / "bench-solves.csv", index=False)
    assert main(["compare", str(a), str(b)]) == 2
    assert capsys.readouterr().err.strip() == (f"epochbench compare: error: {b / 'bench-solves.csv'}: line {line} has "
                                               f"no {column}")


def test_score_csvs_of_different_instances_under_one_name_are_refused(tmp_path, capsys):
    """A generator's instance name leaves out some of its parameters
    (mkp's tightness): two families of other data were compared as the same
    instances.  score writes each instance's digest (its data, not its
    meta); compare refuses two CSVs that name different data alike, and
    compares the same instances read back from their files."""
    import numpy as np

    import epochbench as eb
    from epochbench.instances.core import digest
    tight, loose = (eb.generate("mkp", n=10, count=2, tightness=t, seed=1) for t in (0.25, 0.75))
    assert [i.name for i in tight] == [i.name for i in loose]
    a, b, again = (eb.score(f, ["greedy-mkp", "greedy-ratio"]) for f in (tight, loose, tight))
    for name, table in (("a", a), ("b", b), ("c", again)):
        table.to_csv(tmp_path / f"{name}.csv", index=False)
    assert main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 2
    assert "hold different instances under the same name (2 of 2, e.g. mkp-" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "c.csv")]) == 0
    inst = tight[0]
    same = type(inst)(**{**{f: getattr(inst, f) for f in ("capacity", "profit")},
                         "weights": np.asfortranarray(inst.weights.astype(np.int32)), "meta": {"name": "other"}})
    assert digest(same) == digest(inst) != digest(loose[0])


def test_json_files_are_compared_on_benchmarks_and_said_so(tmp_path, capsys):
    """In JSON files a key is a benchmark (of several instances): the lines
    under a family counted benchmarks as 'instances'."""
    def doc(names):
        return {"benchmarks": [{"name": n, "extra_info": {"method": "ff", "mean_gap": 0.1, "instances": 3},
                                "stats": {"median": 0.001}} for n in names]}
    for name, names in (("a", ["t[n32-ff]", "t[n64-ff]"]), ("b", ["t[n32-ff]"]), ("c", ["t[n128-ff]"])):
        (tmp_path / f"{name}.json").write_text(json.dumps(doc(names)))
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert "ff: compared on the benchmark both runs measured (1 in A alone)" in capsys.readouterr().out
    assert main(["compare", str(tmp_path / "b.json"), str(tmp_path / "c.json")]) == 0
    assert "ff: no benchmark measured in both runs (1 in A, 1 in B): not compared" in capsys.readouterr().out


def _timed(folder, seconds):
    folder.mkdir()
    pd.DataFrame([{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff", "kind": "heuristic",
                   "gap": 0.0, "gap_kind": "optimum", "seconds": t} for i, t in enumerate(seconds)]
                 ).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_the_time_ratio_is_the_median_of_per_instance_ratios(tmp_path, capsys):
    """The ratio of the two runs' medians jumped between clusters of
    instance sizes: two runs of the same code read x2.25 for a method whose
    per-instance ratios had a median of 1.16, and a 30 % guard failed 12
    methods.  Here one instance of five is 10 times slower: the medians
    read x10, the instances x1."""
    from epochbench.compare import compare_runs
    a = _timed(tmp_path / "a", [0.001, 0.01, 0.01, 0.1, 0.1])
    b = _timed(tmp_path / "b", [0.001, 0.01, 0.1, 0.1, 0.1])
    row = compare_runs(a, b).set_index("method").loc["ff"]
    assert row["median_ms_a"] == pytest.approx(10) and row["median_ms_b"] == pytest.approx(100)
    assert row["time_ratio"] == pytest.approx(1.0) and row["flag"] == ""
    assert main(["compare", str(a), str(b), "--fail-on", "time:30%"]) == 0
    c = _timed(tmp_path / "c", [0.0015, 0.015, 0.015, 0.15, 0.15])      # every instance 1.5 times slower
    assert compare_runs(a, c).set_index("method").loc["ff", "time_ratio"] == pytest.approx(1.5)
    capsys.readouterr()
    assert main(["compare", str(a), str(c), "--fail-on", "time:30%"]) == 1
    assert "FAIL packing ff: time x1.50 (limit time:30%)" in capsys.readouterr().out


def _two_sets(folder, ff_big, ff_small):
    """mapping's shape: ff alone on the big matrices (config big), ff and
    cpsat on the small ones (config small): the leaderboard's two blocks."""
    folder.mkdir()
    rows = []
    for i in range(4):
        rows.append({"family": "mapping", "config": "big", "instance": f"b{i}", "method": "ff", "kind": "heuristic",
                     "gap": ff_big, "gap_kind": "best known", "seconds": 1e-3})
        rows += [{"family": "mapping", "config": "small", "instance": f"s{i}", "method": m, "kind": k,
                  "gap": g, "gap_kind": "optimum", "seconds": 1e-3}
                 for m, k, g in (("ff", "heuristic", ff_small), ("cpsat", "exact", 0.0))]
    pd.DataFrame(rows).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def test_each_instance_set_is_compared_and_guarded_on_its_own(tmp_path, capsys):
    """A method measured on two sets was one mean over both: 10 points
    worse on one and 10 better on the other read +0.00 and passed
    ``--fail-on gap``; the leaderboards rank each set on its own."""
    from epochbench.compare import compare_runs
    a = _two_sets(tmp_path / "a", 0.10, 0.10)
    b = _two_sets(tmp_path / "b", 0.20, 0.00)
    table = compare_runs(a, b).set_index(["set", "method"])
    assert table.loc[("big", "ff"), "d_mean"] == pytest.approx(10.0)
    assert table.loc[("small", "ff"), "d_mean"] == pytest.approx(-10.0)
    assert table.loc[("small", "cpsat"), "flag"] == ""
    assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 1
    out = capsys.readouterr().out
    assert "on big:" in out and "on small:" in out
    assert "FAIL mapping ff on big: mean gap +10.00 pp (limit gap:0.5%)" in out and "ff on small" not in out
    c = _two_sets(tmp_path / "c", 0.10, 0.10)
    assert main(["compare", str(a), str(c), "--fail-on", "gap:0%"]) == 0


def test_a_folder_against_a_score_csv_of_some_families_compares_those(tmp_path, capsys):
    """bench-scores.csv holds the families the suite scores in one table
    (packing, epochs): every method of the others read as gone from B and
    failed the guard."""
    folder = solves(tmp_path / "run", ff_gap=0.05)
    rows = pd.read_csv(folder / "bench-solves.csv")
    rows.assign(value=1.0).to_csv(folder / "bench-scores.csv", index=False)
    _two_sets(tmp_path / "m", 0.1, 0.1)
    other = pd.read_csv(tmp_path / "m" / "bench-solves.csv")
    pd.concat([rows, other]).to_csv(folder / "bench-solves.csv", index=False)
    assert main(["compare", str(folder), str(folder / "bench-scores.csv"), "--fail-on", "gap:0%"]) == 0
    out, err = capsys.readouterr()
    assert "mapping" not in out and "gone" not in out
    assert "alone holds mapping: not compared" in err
    assert main(["compare", str(tmp_path / "m"), str(folder / "bench-scores.csv")]) == 2
    assert "holds mapping and B" in capsys.readouterr().err    # packing: nothing in common, one line


def test_a_run_that_did_not_finish_is_said_so(tmp_path, capsys):
    """An interrupted or failed run's tables hold what it measured before
    it stopped; they were compared without a word."""
    a = solves(tmp_path / "a", ff_gap=0.05)
    b = solves(tmp_path / "b", ff_gap=0.05)
    (b / "run.json").write_text(json.dumps({"id": "b", "command": "bench", "status": "interrupted"}))
    (a / "run.json").write_text(json.dumps({"id": "a", "command": "bench", "status": "finished"}))
    assert main(["compare", str(a), str(b)]) == 0
    err = capsys.readouterr().err
    assert f"B ({b}) is a run recorded 'interrupted'" in err and "A (" not in err


def test_a_row_with_an_extra_cell_is_named_by_its_line(tmp_path, capsys):
    a = solves(tmp_path / "a", ff_gap=0.05)
    b = solves(tmp_path / "b", ff_gap=0.05)
    lines = (b / "bench-solves.csv").read_text().splitlines()
    lines[2] += ",surplus"
    (b / "bench-solves.csv").write_text("\n".join(lines) + "\n")
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "not a readable CSV (ParserError: " in err and "in line 3" in err and err.count("\n") == 1


def test_a_run_folder_without_gaps_says_why(tmp_path, capsys):
    """A speed-only selection (-k "knapsack and speed") writes run.json and
    no gap table; compare said the folder was no results folder at all."""
    a = solves(tmp_path / "a", ff_gap=0.05)
    (tmp_path / "speed").mkdir()
    (tmp_path / "speed" / "run.json").write_text(json.dumps({"id": "s", "command": "bench", "status": "finished"}))
    assert main(["compare", str(a), str(tmp_path / "speed")]) == 2
    assert "a run folder without bench-solves.csv: its run scored no gap" in capsys.readouterr().err
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "run.json").write_text(json.dumps({"id": "e", "command": "experiment", "status": "finished"}))
    assert main(["compare", str(a), str(tmp_path / "exp")]) == 2
    assert "a run folder of 'epochbench experiment', which writes no bench-solves.csv" in capsys.readouterr().err


def test_the_sets_do_not_depend_on_which_run_is_a(tmp_path, capsys):
    """The sets were the blocks of A's solves alone: a run of ff alone (-k
    ff) has one block for ff's two configurations, so with it as A a gap 10
    points worse on the small set passed the guard, and the other order
    failed it.  A method new in B was shown under no set."""
    from epochbench.compare import compare_runs
    full = _two_sets(tmp_path / "full", 0.10, 0.10)
    worse = _two_sets(tmp_path / "worse", 0.10, 0.20)
    rows = pd.read_csv(full / "bench-solves.csv")
    (tmp_path / "ffonly").mkdir()
    rows[rows["method"] == "ff"].to_csv(tmp_path / "ffonly" / "bench-solves.csv", index=False)
    for a, b in ((tmp_path / "ffonly", worse), (full, worse)):
        table = compare_runs(a, b).set_index(["set", "method"])
        assert table.loc[("small", "ff"), "d_mean"] == pytest.approx(10.0), (a, b)
        assert table.loc[("big", "ff"), "d_mean"] == pytest.approx(0.0)
        assert main(["compare", str(a), str(b), "--fail-on", "gap:0.5%"]) == 1
        assert "FAIL mapping ff on small: mean gap +10.00 pp" in capsys.readouterr().out
    table = compare_runs(tmp_path / "ffonly", worse).set_index("method")
    assert table.loc["cpsat", "set"] == "small" and table.loc["cpsat", "flag"] == "new"
