"""The experiment registry and sweep runner (bench/experiments)."""
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.experiments import EXPERIMENTS, Experiment, Options, register, run_experiment, sweep


def square(task):
    return [{"x": task["x"], "y": task["x"] ** 2}]


def failing(task):
    raise ZeroDivisionError("boom")


def test_sweep_keeps_task_order_in_process_and_in_pool():
    tasks = [{"x": x} for x in range(6)]
    serial = sweep(square, tasks, jobs=1, progress=False)
    parallel = sweep(square, tasks, jobs=2, progress=False)
    assert serial == parallel
    assert [r["y"] for r in serial] == [x * x for x in range(6)]
    assert [r["task"] for r in serial] == list(range(6))


def test_sweep_names_the_failing_task():
    with pytest.raises(RuntimeError, match=r"task \{'x': 3\} failed: ZeroDivisionError"):
        sweep(failing, [{"x": 3}], jobs=1, progress=False)
    with pytest.raises(ValueError, match="jobs"):
        sweep(square, [{"x": 1}], jobs=0)


def test_a_sweep_whose_every_task_failed_leaves_no_empty_checkpoint(tmp_path):
    """Every task failed: an empty NAME.partial.jsonl was left behind; one
    that held rows before is kept."""
    ck = tmp_path / "exp.partial.jsonl"
    with pytest.raises(RuntimeError, match="failed: ZeroDivisionError"):
        sweep(failing, [{"x": 3}, {"x": 4}], jobs=1, progress=False, checkpoint=ck)
    assert not ck.exists()
    sweep(square, [{"x": 1}], jobs=1, progress=False, checkpoint=ck)
    size = ck.stat().st_size
    with pytest.raises(RuntimeError, match="failed: ZeroDivisionError"):
        sweep(failing, [{"x": 3}], jobs=1, progress=False, checkpoint=ck)
    assert ck.stat().st_size == size > 0


CALLS = []


def counted(task):
    CALLS.append(task["x"])
    if task["x"] == 3 and task.get("fail"):
        raise ZeroDivisionError("killed")
    return square(task)


def test_sweep_checkpoint_resumes_an_interrupted_sweep(tmp_path):
    ck = tmp_path / "exp.partial.jsonl"
    tasks = [{"x": x, "fail": True} for x in range(5)]
    with pytest.raises(RuntimeError, match="killed"):
        sweep(counted, tasks, jobs=1, progress=False, checkpoint=ck)
    assert len(ck.read_text().splitlines()) == 4  # tasks 0, 1, 2 and 4: a failure does not stop the others
    with open(ck, "a") as f:
        f.write('{"task": {"x": 4, "fa')          # a line cut short by a kill
    CALLS.clear()
    rows = sweep(counted, [dict(t, fail=False) if t["x"] >= 3 else t for t in tasks], jobs=1, progress=False,
                 checkpoint=ck)
    assert CALLS == [3, 4]                          # only the missing tasks ran
    assert [r["y"] for r in rows] == [x * x for x in range(5)] and [r["task"] for r in rows] == list(range(5))


def _toy():
    def tasks(opts):
        return [{"x": x} for x in range(2 if opts.quick else 4)]

    def table(df):
        return df.groupby(lambda i: 0)["y"].sum().rename("total").reset_index(drop=True).to_frame()

    def plot(df, path):
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ax.plot(df["x"], df["y"])
        fig.savefig(path)
        plt.close(fig)

    return register(Experiment("toy-test", "squares", tasks, square, table, plot))


def test_run_experiment_writes_csv_png_and_table(tmp_path, capsys):
    _toy()
    df, table = run_experiment("toy-test", Options(quick=True, jobs=1, out=tmp_path, progress=False))
    assert list(df["y"]) == [0, 1] and int(table["total"].iloc[0]) == 1
    assert pd.read_csv(tmp_path / "toy-test.csv")["y"].tolist() == [0, 1]
    assert (tmp_path / "toy-test.png").stat().st_size > 0
    assert main(["experiment", "toy-test", "--jobs", "1", "--quiet", "--out", str(tmp_path)]) == 0
    assert "toy-test.csv (4 rows)" in capsys.readouterr().out
    assert main(["experiment", "no-such", "--out", str(tmp_path)]) == 2
    EXPERIMENTS.pop("toy-test")


@pytest.mark.parametrize("name", ["braun", "zhang-gang-kth", "backfill-variants"])
def test_an_experiment_whose_data_is_absent_stops_in_one_line(name, tmp_path, monkeypatch, capsys):
    from epochbench.cli import main
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path / "no-data"))
    out = tmp_path / "out"
    assert main(["experiment", name, "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "which is absent" in err and not out.exists()


def test_a_line_of_the_partial_file_that_is_no_record_is_said_not_skipped_silently(tmp_path, capsys):
    from epochbench import sweep as sw
    ck = tmp_path / "exp.partial.jsonl"
    tasks = [{"x": x} for x in range(3)]
    with open(ck, "w") as log:
        for t in tasks:
            sw.append_record(log, t, [{"y": t["x"]}])
    lines = ck.read_text().splitlines()
    ck.write_text("\n".join([lines[0], "not json", lines[1], lines[2]]) + '\n{"task": {"x": 2')   # torn tail
    bad: list[int] = []
    assert sorted(sw.load_stamped(ck, tasks, bad)) == [0, 1, 2] and bad == [2]    # the torn last line is no error


def test_the_braun_table_says_how_many_matrices_each_exact_method_proved():
    import numpy as np
    from epochbench.experiments.braun import braun_table
    rows = [dict(instance=i, method=m, seed=0 if m == "ga" else None, makespan=v, bound=None, status=st, seconds=1.0,
                 lp_bound=8.0, lp_reference=8.0, best_known=9.0, gap_lp=(v - 8) / 8, gap_best=(v - 9) / 9, budget="-")
            for i in ("a", "b") for m, st, v in (("minmin", "feasible", 10.0), ("ga", "feasible", 9.7),
                                                 ("cpsat", "optimal" if i == "a" else "feasible", 9.0),
                                                 ("milp-highs", "feasible", 9.5))]
    t = braun_table(pd.DataFrame(rows)).set_index("method")
    assert t.loc["cpsat", "proven"] == 1 and t.loc["milp-highs", "proven"] == 0      # ranked 1 and 2 unproven
    assert np.isnan(t.loc["ga", "proven"]) and np.isnan(t.loc["minmin", "proven"])


def test_zhang_gang_kth_refuses_seeds_it_cannot_run(capsys, tmp_path):
    from epochbench.cli import main
    from epochbench.experiments import Options
    from epochbench.experiments.zhang_gang import _tasks
    with pytest.raises(ValueError, match="--seeds: zhang-gang-kth replays the one KTH trace"):
        _tasks(Options(quick=True, seeds=3), "kth")
    assert _tasks(Options(quick=True, seeds=1), "kth") == _tasks(Options(quick=True), "kth")
    from epochbench.instances.data import data_root
    if not (data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz").is_file():
        pytest.skip(f"the KTH trace is not in {data_root()} (set EPOCHBENCH_DATA): the command stops on it first")
    assert main(["experiment", "zhang-gang-kth", "--quick", "--seeds", "3", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--seeds: zhang-gang-kth replays the one KTH trace" in err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())    # nothing recorded as run


STOP_AT = {"x": None}


def mixed(task):
    """Rows of every JSON kind, numpy scalars among them; stops at task ``STOP_AT``."""
    import numpy as np
    if task["x"] == STOP_AT["x"]:
        raise ZeroDivisionError("interrupted")
    return [{"x": np.int64(task["x"]), "y": float(task["x"] ** 2), "nan": np.float64("nan"), "label": f"t{task['x']}",
             "flag": np.bool_(task["x"] % 2), "none": None if task["x"] else 1.5}]


def _mixed_experiment():
    def table(df):
        return df[["y"]].sum().to_frame("total")      # a TypeError where a y is text
    EXPERIMENTS.pop("mixed-test", None)
    return register(Experiment("mixed-test", "mixed rows", lambda opts: [{"x": x} for x in range(4)], mixed, table))


def _interrupted_mixed_run(tmp_path, monkeypatch):
    """``mixed-test`` run until its task 3 fails: its output folder and the
    partial file holding tasks 0 to 2."""
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path / "data"))
    _mixed_experiment()
    out = tmp_path / "o"
    STOP_AT["x"] = 3
    assert main(["experiment", "mixed-test", "--jobs", "1", "--quiet", "--out", str(out)]) == 1   # task 3 failed
    return out, out / "mixed-test.partial.jsonl"


@pytest.mark.parametrize("edit, said", [
    ({"y": "abc"}, "line 2: row 1: 'y' is 'abc' (text), where the experiment writes number"),
    ({"wait_mean": 3.0}, "line 2: row 1 has the key 'wait_mean', which the experiment does not write"),
    ({"label": 7}, "line 2: row 1: 'label' is 7 (number), where the experiment writes text"),
])
def test_a_reused_row_edited_by_hand_is_refused_in_one_line_naming_the_file_and_line(
        edit, said, tmp_path, monkeypatch, capsys):
    import json
    out, partial = _interrupted_mixed_run(tmp_path, monkeypatch)
    lines = partial.read_text().splitlines()
    assert len(lines) == 3
    STOP_AT["x"] = None
    capsys.readouterr()
    assert main(["experiment", "mixed-test", "--jobs", "1", "--quiet", "--out", str(out)]) == 0   # untouched: reused
    assert pd.read_csv(out / "mixed-test.csv")["y"].tolist() == [0.0, 1.0, 4.0, 9.0]
    rec = json.loads(lines[1])                                  # the interrupted run's records again, one edited
    rec["rows"][0].update(edit)
    partial.write_text("\n".join([lines[0], json.dumps(rec), lines[2]]) + "\n")
    capsys.readouterr()
    assert main(["experiment", "mixed-test", "--jobs", "1", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{partial}: {said}" in err, err
    with pytest.raises(ValueError, match="edited by hand"):
        run_experiment("mixed-test", Options(jobs=1, out=out, progress=False))
    EXPERIMENTS.pop("mixed-test")


def test_a_partial_file_written_before_records_named_their_columns_still_resumes(tmp_path, monkeypatch, capsys):
    """Records without ``columns`` (written by an earlier version) were
    checked against the other records' kinds, and a column that is null in
    some tasks and a number in others (braun's seed, an exact method's
    bound; here ``none``) refused a resume that had worked."""
    import json
    out, partial = _interrupted_mixed_run(tmp_path, monkeypatch)
    old = [{k: v for k, v in json.loads(line).items() if k != "columns"} for line in partial.read_text().splitlines()]
    assert [r["rows"][0]["none"] for r in old] == [1.5, None, None]
    partial.write_text("".join(json.dumps(r) + "\n" for r in old))
    STOP_AT["x"] = None
    capsys.readouterr()
    assert main(["experiment", "mixed-test", "--jobs", "1", "--quiet", "--out", str(out)]) == 0
    assert pd.read_csv(out / "mixed-test.csv")["y"].tolist() == [0.0, 1.0, 4.0, 9.0]
    EXPERIMENTS.pop("mixed-test")


def test_the_braun_figure_of_two_methods_is_laid_out(tmp_path):
    """``experiment braun --tasks 0:2`` (two greedy methods) drew a figure
    too short for its axes: matplotlib warned that constrained layout was
    not applied."""
    import warnings

    from epochbench.experiments.braun import braun_plot
    df = pd.DataFrame({"instance": ["u_c_hihi.0"] * 2, "method": ["olb", "uda"], "seed": [None, None],
                       "gap_best": [0.95, 5.45], "budget": ["-", "-"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        braun_plot(df, tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 0


def test_the_braun_experiments_data_stamp_covers_its_reference_values(monkeypatch, tmp_path):
    from epochbench.experiments import data_code, load_experiments
    exp = load_experiments()["braun"]
    (tmp_path / "braun").mkdir()
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path))
    (tmp_path / "braun" / "REFERENCE.csv").write_text("name,lp_bound\nu_c_hihi.0,1\n")
    before = data_code(exp)
    (tmp_path / "braun" / "REFERENCE.csv").write_text("name,lp_bound\nu_c_hihi.0,2\n")
    assert data_code(exp) != before
