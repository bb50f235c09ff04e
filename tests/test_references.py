"""Gaps only against references that can be trusted: gap kinds and sources,
"no bound" on a timeout that proved nothing, reference values matched by data
set and name (the VBP stem collision), ``score --reference FILE``, gaps in a
data set's cost units (assign100), false ``optimal`` claims in ``validate``."""
import itertools
import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.scoring import (SolverDisagreement, format_table, read_reference_file, read_references, reference, score,
                                summarize)
from epochbench.validation import validate, verdict_table
from epochbench.instances import InstanceError, PackingInstance, Result, registry
from epochbench.instances.assignment import load_orlib_assign
from epochbench.instances.data import data_root
from epochbench.instances.generators import load_vbp
from epochbench.instances.registry import solve
from epochbench.instances.mapping import load_braun

DATA = data_root()
VBP = DATA / "vbp"
ASSIGN100 = DATA / "assign" / "assign100.txt"


def pk(name="p"):
    return PackingInstance.build([10], [[6], [5], [5]], meta={"name": name})


# ---- a fake exact method: a timeout that proved nothing --------------------------------------
def _timeout(bound):
    def fake(inst, *, time_limit=1.0, threads=1):
        return Result(inst.kind, "fake", (), math.nan, "timeout", 0.001, bound)
    return fake


@pytest.fixture
def fake_exact(monkeypatch):
    """Registers exact packing method ``fake-none``: a timeout that proved
    nothing (no solution, bound None)."""
    for name, bound in (("fake-none", None),):
        monkeypatch.setitem(registry._REGISTRY, ("packing", name),
                            registry.Method("packing", name, _timeout(bound), "exact", "test"))


def test_timeout_without_bound_gives_no_gap_and_says_no_bound(fake_exact):
    table = score([pk()], ["fake-none", "ff"], time_limit=0.1)
    assert (table["gap_kind"] == "no bound").all()
    assert table["gap"].isna().all() and table["bound"].isna().all()
    assert table.loc[table.method == "ff", "value"].iloc[0] == pytest.approx(0.6)  # still reported
    assert table.loc[table.method == "fake-none", "status"].iloc[0] == "timeout"
    text = format_table(summarize(table))
    assert "no bound" in text and "nan" not in text.lower()


def test_printed_score_summary_says_no_bound(fake_exact, tmp_path, capsys):
    folder = tmp_path / "fam"
    assert main(["generate", "leinberger", "--out", str(folder), "--n", "6", "--k", "2", "--count", "2",
                 "--seed", "3"]) == 0
    capsys.readouterr()
    assert main(["score", str(folder), "--methods", "fake-none,ff", "--time-limit", "0.1",
                 "--out", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    summary = [ln for ln in out.splitlines() if " ff " in f" {ln} " or "fake-none" in ln]
    assert summary and all("no bound" in ln and "%" not in ln for ln in summary)
    table = pd.read_csv(tmp_path / "s.csv")
    assert (table["gap_kind"] == "no bound").all() and table["gap"].isna().all()


def test_a_bound_that_a_checked_solution_beats_is_refused(tmp_path, capsys):
    wrong = [Result("packing", "cpsat", (), 0.0, "timeout", 0.0, 0.0), Result("packing", "ff", (0,), 0.6,
                                                                             "feasible", 0.0)]
    with pytest.raises(SolverDisagreement, match=r"ff found a checked value 0.6, better than 0 proved by run"):
        reference(pk(), wrong)
    from epochbench.instances import save_instance
    save_instance(pk(), tmp_path / "p.json")
    (tmp_path / "ub.csv").write_text("instance,upper_bound\np,0.5\n")
    assert main(["score", str(tmp_path / "p.json"), "--methods", "ff", "--reference", str(tmp_path / "ub.csv")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "disagreement" in err[0] and "ub.csv upper_bound" in err[0]


def test_a_best_known_value_beyond_a_proof_is_a_disagreement():
    """A best-known value is the value of some solution: an optimum or a
    bound that it beats is wrong (or the best-known value is), and the
    reference says so instead of trusting either."""
    ff = Result("packing", "ff", (0,), 0.6, "feasible", 0.0)
    inst = pk()
    claimed = PackingInstance.build(inst.capacity, inst.demand, meta={**inst.meta, "best_known": 0.95,
                                                                      "upper_bound": 0.9})
    with pytest.raises(SolverDisagreement, match=r"best-known value 0.95 of instance meta is better than 0.9"):
        reference(claimed, [ff])
    fine = PackingInstance.build(inst.capacity, inst.demand, meta={**inst.meta, "best_known": 0.9,
                                                                   "upper_bound": 0.9})
    assert reference(fine, [ff]).kind == "best known"


def _family_with_a_refuted_optimum(tmp_path, capsys):
    """Three packing instances in ``tmp_path/fam`` and ``bad.csv`` claiming an
    optimum of 0.0001 for the second (any checked solution refutes it)."""
    folder = tmp_path / "fam"
    assert main(["generate", "leinberger", "--out", str(folder), "--n", "6", "--k", "2", "--count", "3",
                 "--seed", "3"]) == 0
    names = sorted(p.stem for p in folder.glob("leinberger*.json"))
    (tmp_path / "bad.csv").write_text(f"instance,optimum\n{names[1]},0.0001\n")
    capsys.readouterr()
    return folder, names


def test_a_disagreement_costs_its_instance_not_the_run(tmp_path, capsys):
    """A reference that a checked solution refutes: every instance is still
    scored and written; the refuted one's rows have no gap and say why in
    ``error``; the command exits 1 with one line; ``score`` raises with the
    table attached."""
    folder, names = _family_with_a_refuted_optimum(tmp_path, capsys)
    assert main(["score", str(folder), "--methods", "ff,cpsat", "--reference", str(tmp_path / "bad.csv"),
                 "--out", str(tmp_path / "s")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"epochbench score: disagreement: {names[1]}: ")
    t = pd.read_csv(tmp_path / "s.csv", keep_default_na=False)
    assert len(t) == 6
    bad, good = t[t.instance == names[1]], t[t.instance != names[1]]
    assert (bad.error.str.startswith("disagreement: ")).all() and (bad.gap == "").all()
    assert (good.error == "").all() and (good.gap != "").all()
    record = json.loads((tmp_path / "s.run.json").read_text())     # 'epochbench runs' prints its error
    assert record["status"] == "failed" and record["disagreements"] == 1
    assert record["error"].startswith(f"1 disagreement(s), first: disagreement: {names[1]}: ")
    # two refuted instances: the record names the first, as printed first
    (tmp_path / "bad2.csv").write_text(f"instance,optimum\n{names[0]},0.0001\n{names[2]},0.0001\n")
    assert main(["score", str(folder), "--methods", "ff", "--reference", str(tmp_path / "bad2.csv"),
                 "--out", str(tmp_path / "s2")]) == 1
    first = capsys.readouterr().err.strip().splitlines()[0]
    record = json.loads((tmp_path / "s2.run.json").read_text())
    assert record["error"] == f"2 disagreement(s), first: {first.removeprefix('epochbench score: ')}"
    assert names[0] in record["error"]
    from epochbench.instances import read_family
    with pytest.raises(SolverDisagreement) as caught:
        score(read_family(folder), ["ff"], references=[tmp_path / "bad.csv"])
    assert len(caught.value.table) == 3


def test_the_printed_summary_counts_a_disagreement_apart_from_no_bound(tmp_path, capsys):
    """The rows of an instance whose references disagree have no gap and
    gap_kind "no bound"; the printed summary counted them as "no bound"
    ("optimum 2, no bound 1"), as if nothing had been proved, not that two
    proofs clashed.  The CSV keeps its fields."""
    folder, names = _family_with_a_refuted_optimum(tmp_path, capsys)
    assert main(["score", str(folder), "--methods", "ff", "--reference", str(tmp_path / "bad.csv"),
                 "--out", str(tmp_path / "s")]) == 1
    ff = [ln for ln in capsys.readouterr().out.splitlines() if " ff " in f" {ln} "]
    assert len(ff) == 1 and "no bound 2, disagree 1" in ff[0] and ff[0].split()[4:6] == ["no", "gap"], ff
    t = pd.read_csv(tmp_path / "s.csv")
    assert list(t.columns) == list(pd.read_csv(tmp_path / "s.csv", nrows=0).columns) and "gap_kind" in t
    assert (t.loc[t.instance == names[1], "gap_kind"] == "no bound").all()
    alone = summarize(t[t.instance == names[1]])          # nothing but the disagreement: it names it
    assert alone["gap_vs"].tolist() == ["disagree"] and "disagree" in format_table(alone)
    assert "no bound" not in format_table(alone)


def test_reference_kinds_and_sources():
    bound_only = reference(pk(), [Result("packing", "cpsat", (0,), 0.6, "feasible", 0.0, 1.2)])
    assert (bound_only.kind, bound_only.bound, bound_only.source) == ("bound", 1.2, "run (cpsat bound)")
    met = reference(pk(), [Result("packing", "cpsat", (1, 2), 1.0, "feasible", 0.0, 1.0)])
    assert met.kind == "optimum" and "meets" in met.source
    meta = PackingInstance.build([10], [[6], [5], [5]], meta={"name": "q", "best_known": 1.0, "upper_bound": 1.5,
                                                              "ref_source": "paper.csv"})
    ref = reference(meta, [Result("packing", "ff", (0,), 0.6, "feasible", 0.0)])
    assert (ref.kind, ref.bound, ref.source) == ("best known", 1.0, "instance meta (paper.csv)")
    # a heuristic's claim of optimality proves nothing
    claim = reference(pk(), [Result("packing", "ff", (0,), 0.6, "optimal", 0.0, 0.6)])
    assert claim.kind == "no bound"


# ---- VBP: reference values only for the data set's own files -----------------------------------
def _vbp(path, d, items):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{d}\n" + " ".join(["10"] * d) + f"\n{len(items)}\n"
                    + "".join(" ".join(map(str, it)) + " 1\n" for it in items))
    return path


def test_vbp_stem_collision_only_the_right_file_gets_the_optimum(tmp_path):
    items = [[6, 1], [6, 1], [3, 3]]  # n = 3, d = 2, optimum 2
    root = tmp_path / "vbp"
    root.mkdir()
    (root / "Panigrahy_summary_known.csv").write_text(
        "instance_name\tLB\tOPT\tbest_overall\nclass1_3_2_0\t2\t2\t2\nclass1_3_2_1\t2\t2\t2\nclass1_3_2_1\t3\t3\t3\n")
    right = load_vbp(_vbp(root / "class1" / "class1_3_2_0.vbp", 2, items))
    assert right.meta["optimum"] == 2 and right.meta["dataset"] == "panigrahy-vbp"
    assert right.meta["ref_source"] == "Panigrahy_summary_known.csv"
    impostors = {
        "other class folder": _vbp(root / "class2" / "class1_3_2_0.vbp", 2, items),
        "beside the summary": _vbp(root / "class1_3_2_0.vbp", 2, items),
        "another data set": _vbp(tmp_path / "other" / "class1" / "class1_3_2_0.vbp", 2, items),
        "n differs": _vbp(tmp_path / "x" / "vbp" / "class1" / "class1_3_2_0.vbp", 2, items + [[1, 1]]),
        "d differs": _vbp(tmp_path / "y" / "vbp" / "class1" / "class1_3_2_0.vbp", 3, [i + [1] for i in items]),
        "needs more bins than the optimum": _vbp(tmp_path / "z" / "vbp" / "class1" / "class1_3_2_0.vbp", 2,
                                                 [[9, 9], [9, 9], [9, 9]]),
        "listed twice": _vbp(root / "class1" / "class1_3_2_1.vbp", 2, items),
    }
    for where in ("x", "y", "z"):
        shutil.copy(root / "Panigrahy_summary_known.csv", tmp_path / where / "vbp")
    for why, path in impostors.items():
        meta = load_vbp(path).meta
        assert meta["optimum"] is None and "dataset" not in meta and "lower_bound" not in meta, why


@pytest.mark.skipif(not (DATA / "braun" / "REFERENCE.csv").is_file(), reason="Braun data absent")
def test_braun_reference_on_the_real_files():
    meta = load_braun(DATA / "braun" / "u_c_hihi.0").meta
    assert meta["dataset"] == "braun2001" and meta["ref_source"] == "REFERENCE.csv"
    assert meta["lp_bound"] <= meta["best_known"]


@pytest.mark.skipif(not (VBP / "Panigrahy_summary_known.csv").is_file(), reason=f"{VBP} absent (VBP data)")
def test_vbp_stem_collision_on_the_real_data(tmp_path):
    real = load_vbp(VBP / "class1" / "class1_20_3_0.vbp")
    assert real.meta["optimum"] == 6 and real.meta["dataset"] == "panigrahy-vbp"
    # class 2 data (optimum 13, 20 items, d = 3) under class 1's name in a copy of the data tree:
    # by stem alone it got optimum 6 and an 83 % or larger "gap to optimum"
    (tmp_path / "vbp" / "class1").mkdir(parents=True)
    shutil.copy(VBP / "Panigrahy_summary_known.csv", tmp_path / "vbp")
    fake = tmp_path / "vbp" / "class1" / "class1_20_3_0.vbp"
    shutil.copy(VBP / "class2" / "class2_20_3_0.vbp", fake)
    impostor = load_vbp(fake)
    assert impostor.meta["optimum"] is None and "best_known" not in impostor.meta
    table = score([impostor], ["ff"])
    assert table["gap_kind"].iloc[0] == "bound" and table["ref_source"].iloc[0] == "instance (lower_bound())"
    assert table["bound"].iloc[0] > 6
    every_real = [load_vbp(p) for p in sorted(VBP.glob("class*/*.vbp"))]
    assert all(i.meta.get("dataset") == "panigrahy-vbp" for i in every_real)


def test_braun_reference_needs_the_braun_shape(tmp_path):
    (tmp_path / "REFERENCE.csv").write_text(
        "instance,minmin_recomputed,maxmin_recomputed,lp_lower_bound_highs,chgogos_MS_makespan,"
        "chgogos_CPR_makespan,best_known_verified,gap_best_vs_lp_pct\nu_c_hilo.0,9,9,1,1,1,1,0\n")
    (tmp_path / "u_c_hilo.0").write_text("2 2 0\n1.5\n2\n3\n4.25\n")
    meta = load_braun(tmp_path / "u_c_hilo.0").meta
    assert "best_known" not in meta and "lp_bound" not in meta and "dataset" not in meta


# ---- score --reference FILE ---------------------------------------------------------------
def test_score_uses_a_reference_file_named_on_the_command_line(tmp_path, capsys):
    folder = tmp_path / "fam"
    assert main(["generate", "leinberger", "--out", str(folder), "--n", "6", "--k", "2", "--count", "3",
                 "--seed", "3"]) == 0
    names = sorted(p.stem for p in folder.glob("leinberger*.json"))
    ref = tmp_path / "mine.csv"
    ref.write_text("dataset,instance,best_known,upper_bound,notes\n"
                   f",{names[0]},0.01,,beaten by anything\n"
                   f",{names[1]},,1.0,trivial\n"
                   f"elsewhere,{names[2]},0.5,,another data set\n")
    capsys.readouterr()
    assert main(["score", str(folder), "--methods", "ff", "--reference", str(ref),
                 "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err.strip().splitlines()   # the row of another data set is used nowhere: said so
    assert err == ["epochbench score: mine.csv: column(s) 'notes' not read (the columns read: instance, dataset, "
                   "optimum, best_known, lower_bound, upper_bound)",
                   f"epochbench score: mine.csv: 1 of 3 row(s) name no instance here (elsewhere/{names[2]}): "
                   "ignored"]
    t = pd.read_csv(tmp_path / "s.csv").set_index("instance")
    # ff beats the file's 0.01: its checked value is the best known now, the gap measured against it
    assert t.loc[names[0], "gap_kind"] == "best known" and t.loc[names[0], "ref_source"] == "run (ff, beats mine.csv)"
    assert t.loc[names[0], "bound"] == pytest.approx(t.loc[names[0], "value"]) and t.loc[names[0], "gap"] == 0
    assert bool(t.loc[names[0], "beats_reference"])
    assert t.loc[names[1], "gap_kind"] == "bound" and t.loc[names[1], "ref_source"] == "mine.csv upper_bound"
    assert t.loc[names[1], "gap"] == pytest.approx(1 - t.loc[names[1], "value"])
    assert t.loc[names[2], "gap_kind"] == "no bound"  # the dataset column does not match
    # the same file twice with a contradicting optimum: a clear one-line refusal, exit 1
    bad = tmp_path / "bad.csv"
    bad.write_text(f"instance,optimum\n{names[1]},0.0001\n")
    capsys.readouterr()
    assert main(["score", str(folder), "--methods", "ff", "--reference", str(ref), "--reference", str(bad),
                 "--out", str(tmp_path / "s2")]) == 1
    assert "bad.csv" in capsys.readouterr().err


@pytest.mark.parametrize("text, match", [
    ("name,optimum\na,1\n", "column 'instance' missing"),
    ("instance,notes\na,x\n", "no reference column"),
    ("instance,optimum\na,abc\n", r"line 2: column 'optimum' is not a number"),
    ("instance,lower_bound\na,nan\n", r"line 2: column 'lower_bound' must be finite"),
    # a family's manifest given as the reference: its whole JSON was printed as the 'header'
    ('{"generator": "leinberger", "instances": ["a", "b"]}\n', r"JSON, not a reference CSV file"),
    ("[1, 2]\n", r"JSON, not a reference CSV file"),
    ("instance,optimum\na,1\na,2\n", r"line 3: instance 'a' listed twice"),
    ("instance,optimum\n,1\n", r"line 2: column 'instance' is empty"),
    ("instance,optimum\na,1,2,3\n", r"line 2: 4 cells, the header has 2"),
    # its missing cells were read as unknown without a word
    ("instance,optimum,best_known\na,1\n", r"line 2: 2 cells, the header has 3 \(an unknown value is an empty cell\)"),
    ("instance,lower_bound,upper_bound\na,5,4\n", r"line 2: lower_bound 5 is above upper_bound 4"),
    ("instance,optimum\n", "no rows under the header"),
    # a known column misspelt was ignored without a word, its values lost
    ("instance,optimum,bestknown\na,1,2\n", r"column 'bestknown' is not read; did you mean 'best_known'\?"),
    ("Instance,optimum\na,1\n", r"column 'Instance' is not read; did you mean 'instance'\?"),
    ("instance,Lower Bound\na,1\n", r"did you mean 'lower_bound'"),
    # the last of two optimum cells was kept, the first lost without a word
    ("instance,optimum,optimum\na,0.5,0.6\n", r"column 'optimum' given twice"),
    ("instance,optimum,instance\na,1,b\n", r"column 'instance' given twice"),
])
def test_malformed_reference_file_is_one_clear_line(tmp_path, capsys, text, match):
    path = tmp_path / "ref.csv"
    path.write_text(text)
    with pytest.raises(InstanceError, match=match):
        read_reference_file(path)
    (tmp_path / "p").mkdir()
    from epochbench.instances import save_instance
    save_instance(pk(), tmp_path / "p" / "p.json")
    capsys.readouterr()
    assert main(["score", str(tmp_path / "p"), "--methods", "ff", "--reference", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0]


def test_a_bound_on_the_wrong_side_is_reported_not_silently_dropped(tmp_path, capsys):
    """A maximising family's lower bound bounds nothing: the command says it
    ignores it (and still scores)."""
    from epochbench.instances import save_instance
    save_instance(pk(), tmp_path / "p.json")
    (tmp_path / "lb.csv").write_text("instance,lower_bound\np,0.5\n")
    capsys.readouterr()
    assert main(["solve", str(tmp_path / "p.json"), "--method", "ff", "--reference", str(tmp_path / "lb.csv")]) == 0
    err = capsys.readouterr().err
    assert "lb.csv: lower_bound bounds nothing on a maximising objective (1 instance(s), e.g. p): ignored" in err


def test_a_byte_order_mark_is_not_part_of_the_header(tmp_path):
    """Spreadsheets save CSV with a UTF-8 byte-order mark: the first column
    is still ``instance``."""
    path = tmp_path / "ref.csv"
    path.write_bytes("\ufeffinstance,best_known\na,1\n".encode("utf-8"))
    assert read_reference_file(path).rows == {(None, "a"): {"best_known": 1.0}}


def test_missing_reference_file(tmp_path, capsys):
    assert main(["score", str(tmp_path), "--methods", "ff", "--reference", str(tmp_path / "no.csv")]) == 2
    assert "no.csv: no such reference file" in capsys.readouterr().err


# ---- cost units -------------------------------------------------------------------------
def test_assignment_costs_are_scored_in_cost_units(tmp_path):
    cost = np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    path = tmp_path / "assign3.txt"
    path.write_text("3\n" + "\n".join(" ".join(map(str, r)) for r in cost) + "\n")
    inst = load_orlib_assign(path)
    best = min(sum(cost[i, p[i]] for i in range(3)) for p in itertools.permutations(range(3)))
    t = score([inst], ["hungarian", "mis"]).set_index("method")
    assert (t["units"] == "cost").all()
    assert t.loc["hungarian", "value"] == best and t.loc["hungarian", "bound"] == best
    assert t.loc["hungarian", "gap_kind"] == "optimum" and t.loc["hungarian", "gap"] == 0
    assert t.loc["hungarian", "family_value"] == 3 * 6 - best  # preferences (max cost + 1) - cost
    mis_cost = t.loc["mis", "value"]
    assert t.loc["mis", "gap"] == pytest.approx((mis_cost - best) / best)


@pytest.mark.skipif(not ASSIGN100.is_file(), reason=f"{ASSIGN100} absent (OR-Library data)")
def test_assign100_mis_gap_in_cost_units(tmp_path, capsys):
    (inst,) = [load_orlib_assign(ASSIGN100)]
    t = score([inst], ["mis", "hungarian"]).set_index("method")
    assert t.loc["hungarian", "value"] == 305 and t.loc["hungarian", "family_value"] == 9795
    assert t.loc["mis", "value"] == 522 and t.loc["mis", "bound"] == 305
    assert t.loc["mis", "gap"] == pytest.approx(217 / 305) and t.loc["mis", "gap"] == pytest.approx(0.71, abs=0.005)
    assert t.loc["mis", "units"] == "cost" and t.loc["mis", "gap_kind"] == "optimum"
    assert "71.15%" in format_table(summarize(t.reset_index()))
    # a results file in the data set's units agrees with the instance's optimum (305 = 9795 as preference)
    ok, wrong = tmp_path / "ok.csv", tmp_path / "wrong.csv"
    ok.write_text("dataset,instance,optimum\norlib-assign,assign100,305\n")
    wrong.write_text("dataset,instance,optimum\norlib-assign,assign100,300\n")
    assert score([inst], ["mis"], references=[ok])["gap"].iloc[0] == pytest.approx(217 / 305)
    with pytest.raises(SolverDisagreement, match="wrong.csv"):
        score([inst], ["mis"], references=[wrong])


# ---- validate: a false claim of optimality is a failure, not a traceback -----------------------
def claims_optimal_empty(inst):
    """Starts nothing and claims that is optimal."""
    return Result(inst.kind, "x", (), 0.0, "optimal", 0.0)


def claims_optimal_honestly(inst):
    """CP-SAT's proven answer, claimed optimal."""
    return registry.solve(inst, "cpsat", time_limit=5.0, threads=1)


def test_validate_reports_a_false_optimal_claim():
    v = validate(claims_optimal_empty, "packing", count=2, seed=1, time_limit=5.0)
    assert not v.ok
    lines = [f for f in v.failures if "claims optimal, but its decision is worth 0 and" in f]
    assert lines and all("cpsat proved the optimum" in f for f in lines)
    assert any(f.startswith("edge-everything-fits: ") for f in lines)
    assert not any(f.startswith("edge-nothing-fits") for f in v.failures)  # there 0 is the optimum
    assert "claims_optimal_empty" in verdict_table(v)
    honest = validate(claims_optimal_honestly, "packing", count=2, seed=1, time_limit=5.0)
    assert honest.ok, honest.failures
    mine = honest.rows[honest.rows.method == "claims_optimal_honestly"]
    assert (mine["gap"] == 0).all() and (mine["gap_kind"] == "optimum").all()


def test_validate_cli_prints_the_false_claim(capsys):
    code = main(["validate", "test_references:claims_optimal_empty", "--count", "1", "--time-limit", "5"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    assert ("FAIL edge-everything-fits: test_references:claims_optimal_empty claims optimal, but its decision is "
            "worth 0") in out
    assert "verdict: FAIL" in out


def test_validate_names_a_false_optimum_by_its_decision_and_a_decisionless_timeout_as_no_answer():
    """A Result claiming optimal with a made-up value read "claims optimal
    value X", X the recomputed value it never claimed; a Result of status
    timeout without a decision read "returned an infeasible answer ...
    selection None is not a sequence"."""
    from epochbench.instances.core import Result
    from epochbench.validation import validate

    def low_claim(inst):
        return Result("packing", "x", (), 123.0, "optimal", 0.0)

    def gave_up(inst):
        return Result("packing", "x", None, float("nan"), "timeout", 0.0)

    v = validate(low_claim, "packing", count=1, seed=1, time_limit=5.0)
    line = next(f for f in v.failures if f.startswith("edge-everything-fits: "))
    assert "claims optimal, but its decision is worth 0 and cpsat proved the optimum" in line
    assert "claims optimal value" not in " ".join(v.failures)
    v = validate(gave_up, "packing", count=1, seed=1, time_limit=5.0)
    assert v.failures and all("gave_up gave no answer (status timeout, no decision)" in f for f in v.failures)


def prints_and_takes_nothing(inst):
    print("HELLO FROM THE HEURISTIC")
    return ()


def test_a_heuristics_prints_go_to_stderr_not_before_the_report(capsys, tmp_path):
    """validate and score printed a heuristic's prints on stdout, before
    the verdict and the summary; now on stderr, in this process and on a
    sweep's workers (:func:`epochbench.sweep._on_worker`)."""
    from epochbench.sweep import _on_worker
    code = main(["validate", "test_references:prints_and_takes_nothing", "--count", "1", "--workers", "1"])
    out, err = capsys.readouterr()
    assert code == 0 and "HELLO" not in out and "HELLO FROM THE HEURISTIC" in err and "verdict: PASS" in out
    assert _on_worker(prints_and_takes_nothing, None) == (True, ())
    out, err = capsys.readouterr()
    assert out == "" and err == "HELLO FROM THE HEURISTIC\n"


# ---- new best-knowns out (issue 20.6) ------------------------------------------------------------
NEW_BEST = {"packing": ("leinberger", {"n": 12, "k": 2}, "bl"),
            "epochs": ("fig1", {}, "ffd-l2"),
            "knapsack": ("mkp", {"n": 30, "k": 3}, "greedy-mkp"),
            "assignment": ("assign-random", {"n": 10, "machines": 10}, "mfs"),
            "mapping": ("braun-range", {"tasks": 16, "machines": 4}, "minmin")}


@pytest.mark.parametrize("family", list(NEW_BEST))
def test_a_solution_better_than_a_best_known_value_is_flagged_and_rechecked(family, tmp_path, capsys):
    """A results file whose best-known value is worse than what a method
    finds: score flags the row, and the solution that ``solve --json``
    prints for it passes the family's checker again, read back from the
    JSON text (what a user would publish)."""
    from epochbench.instances.io import check, load_instance
    gen, params, method = NEW_BEST[family]
    folder = tmp_path / "fam"
    argv = ["generate", gen, "--out", str(folder)] + [f"--{k.replace('_', '-')}={v}" for k, v in params.items()]
    assert main(argv) == 0
    path = next(p for p in sorted(folder.glob("*.json")) if p.name != "manifest.json")
    doc = json.loads(path.read_text())
    if doc.get("meta", {}).pop("optimum", None) is not None:   # a stated optimum: nothing is news (fig1)
        path.write_text(json.dumps(doc))
    inst = load_instance(path)
    value = solve(inst, method).value
    worse = value * 0.5 if inst.sense == "max" else value * 2 + 1
    ref = tmp_path / "known.csv"
    ref.write_text(f"instance,best_known\n{inst.name},{worse}\n")
    capsys.readouterr()
    assert main(["score", str(path), "--methods", f"{method},cpsat", "--time-limit", "5", "--reference", str(ref),
                 "--out", str(tmp_path / "s")]) == 0
    table = pd.read_csv(tmp_path / "s.csv")
    flagged = table[table["beats_reference"].astype(bool)]
    assert set(flagged["method"]) == {method, "cpsat"}
    for m in flagged["method"]:
        capsys.readouterr()
        assert main(["solve", str(path), "--method", m, "--time-limit", "5", "--reference", str(ref), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["checked"] is True and doc["reference"]["beats_reference"] is True
        key = {"packing": "selected", "knapsack": "selected", "epochs": "bins", "assignment": "pairs",
               "mapping": "assignment"}[family]
        decision = doc[key]
        if family == "epochs":
            decision = [tuple(b) for b in decision]
        elif family == "assignment":
            decision = [tuple(p) for p in decision]
        check(inst, decision)                                     # raises if infeasible
        assert inst.value(check(inst, decision)) == pytest.approx(doc["value"])


def test_a_method_beaten_by_another_that_beats_the_best_known_value_has_its_gap_to_that(tmp_path):
    """bb beat a best-known 0.2 with 0.263 and ff had 0.181: bb was given a
    31.6 % gap against 0.2 (ranked below ff's 9.5 %), ff 9.5 % against a
    value that the run had beaten."""
    from epochbench.scoring import score
    from epochbench.instances.generators import generate
    inst = generate("leinberger", n=64, k=4, dist="uniform", count=1, seed=1)[0]
    t = score([inst], ["bb", "ff"]).set_index("method")
    vb, vf = t.loc["bb", "value"], t.loc["ff", "value"]
    assert vb > vf                                      # bb packs more on this instance
    ref = tmp_path / "r.csv"
    mid = (vb + vf) / 2
    ref.write_text(f"instance,best_known\n{inst.name},{mid}\n")
    t = score([inst], ["bb", "ff"], references=read_references([ref])).set_index("method")
    assert t.loc["bb", "gap"] == 0 and bool(t.loc["bb", "beats_reference"])
    assert t.loc["ff", "gap"] == pytest.approx((vb - vf) / vb) and not bool(t.loc["ff", "beats_reference"])
    assert (t["gap_kind"] == "best known").all() and (t["bound"] == vb).all()


def test_an_optimum_above_every_job_taken_at_once_is_a_disagreement(tmp_path, capsys):
    """A reference optimum of 5 on a packing whose jobs fill 0.8 of the
    machine together, and an OR-Library optimum above a knapsack's total
    profit, were taken: every heuristic got a gap of 84 % and 89 %."""
    from epochbench.instances import save_instance
    from epochbench.instances.assignment import AssignmentInstance
    from epochbench.instances.knapsack import KnapsackInstance
    both = PackingInstance.build([10], [[4], [4]], meta={"name": "both"})
    ff = solve(both, "ff")
    assert ff.value == pytest.approx(0.8) and reference(both, [ff]).kind == "no bound"
    over = PackingInstance.build([10], [[4], [4]], meta={"name": "both", "optimum": 0.99})
    with pytest.raises(SolverDisagreement, match=r"0.99 claimed by instance meta is above 0.8, the value of every "
                                                 r"job taken at once: no solution reaches it"):
        reference(over, [ff])
    knap = KnapsackInstance.build([3], [[5], [6]], [1, 2], meta={"name": "k", "best_known": 100})
    with pytest.raises(SolverDisagreement, match=r"100 claimed by instance meta is above 3"):
        reference(knap, [])
    pairs = AssignmentInstance.build(np.array([[3.0, 1.0], [2.0, 0.0]]), meta={"name": "a", "optimum": 6})
    with pytest.raises(SolverDisagreement, match=r"6 claimed by instance meta is above 5"):
        reference(pairs, [])
    save_instance(both, tmp_path / "both.json")
    (tmp_path / "opt.csv").write_text("instance,optimum\nboth,5\n")
    assert main(["score", str(tmp_path / "both.json"), "--methods", "ff", "--reference", str(tmp_path / "opt.csv")]) == 1
    err = capsys.readouterr().err
    assert "5 claimed by opt.csv is above 0.8" in err


def claims_a_bound_of_0(inst):
    """Starts nothing and claims no packing is worth more than 0."""
    return Result(inst.kind, "x", (), 0.0, "feasible", 0.0, bound=0.0)


def test_validate_reports_a_false_bound():
    """A candidate stating a bound that a checked answer beats passed with
    ``ok=True`` (only an ``optimal`` claim was checked); a bound that holds
    (the optimum's own, where nothing fits) is no failure."""
    v = validate(claims_a_bound_of_0, "packing", count=2, seed=1, time_limit=5.0)
    assert not v.ok
    assert any(f.startswith("edge-everything-fits: ") and "claims the bound 0, but" in f for f in v.failures)
    assert not any(f.startswith("edge-nothing-fits") for f in v.failures)
    honest = validate(claims_optimal_honestly, "packing", count=2, seed=1, time_limit=5.0)
    assert honest.ok, honest.failures


@pytest.mark.parametrize("header, says", [
    ("instance,optimun", "column 'optimun' is not read; did you mean 'optimum'"),
    ("instance,best_knwon", "column 'best_knwon' is not read; did you mean 'best_known'"),
    ("instance,datset,optimum", "column 'datset' is not read; did you mean 'dataset'")])
def test_a_reference_column_spelt_close_to_a_missing_one_is_refused(tmp_path, header, says):
    """A typo of a known column was dropped as one not read, exit 0."""
    ref = tmp_path / "r.csv"
    ref.write_text(f"{header}\na,0.5\n")
    with pytest.raises(InstanceError, match=says):
        read_reference_file(ref)


@pytest.mark.parametrize("column", ["optimal", "optimumvalue"])
def test_a_column_less_close_than_the_cutoff_is_only_not_read(tmp_path, column):
    """Only a close match (difflib's ratio >= 0.8) is refused as a typo:
    ``optimal`` (0.71) and ``optimumvalue`` (0.74) are other columns, read
    past and named as not read."""
    ref = tmp_path / "r.csv"
    ref.write_text(f"instance,{column},best_known\na,1,1\n")
    got = read_reference_file(ref)
    assert got.ignored == (column,)


def test_a_reference_file_says_which_columns_it_does_not_read(tmp_path):
    ref = tmp_path / "r.csv"
    ref.write_text("instance,optimum,optimun,notes\na,0.5,0.7,x\n")     # optimum is there: optimun is another column
    got = read_reference_file(ref)
    assert got.ignored == ("optimun", "notes")
    assert got.unused([])[0] == ("r.csv: column(s) 'optimun', 'notes' not read (the columns read: instance, dataset, "
                                 "optimum, best_known, lower_bound, upper_bound)")
