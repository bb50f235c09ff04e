"""Options that change nothing get a note, not silence.

``solve --method ff --threads 8`` and ``score --methods ff,bl --time-limit 3``
ran exactly as without the option and said nothing; ``simulate --machine
farm --policy cs-i-p --exact-time-limit 2`` limited no step (the default
matcher and knapsack are heuristics and the oracle is off).  The run goes on
(a script may pass the same flags to every method) with one note on stderr
each; the Python call warns (``NoEffect``).  Each test fails on the code before.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest

import epochbench as eb
from epochbench import cli


@pytest.fixture
def one(tmp_path):
    eb.save(eb.generate("leinberger", n=6, k=2, count=1, seed=1, load=0.3)[0], tmp_path / "i.json")
    return tmp_path / "i.json"


@pytest.mark.parametrize("flag, value, said", [
    ("--threads", "8", "epochbench solve: note: --threads has no effect: it sets an exact method's solver threads, "
                       "and ff is a heuristic"),
    ("--time-limit", "5", "epochbench solve: note: --time-limit has no effect: it limits exact methods and "
                          "heuristics with a budget of their own (mapping: ga, sa, tabu), and ff has none"),
])
def test_solve_notes_a_flag_a_heuristic_does_not_use(one, capsys, flag, value, said):
    assert cli.main(["solve", str(one), "--method", "ff", flag, value, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.strip() == said
    assert json.loads(out)["method"] == "ff"


def test_solve_says_nothing_of_flags_that_apply(one, tmp_path, capsys):
    assert cli.main(["solve", str(one), "--method", "cpsat", "--threads", "2", "--time-limit", "5", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] == "optimal" and "note" not in err
    etc = eb.generate("braun-range", count=1, seed=0)[0]
    eb.save(etc, tmp_path / "m.json")
    assert cli.main(["solve", str(tmp_path / "m.json"), "--method", "sa", "--time-limit", "0.05"]) == 0   # its budget
    assert cli.main(["solve", str(one), "--method", "ff"]) == 0
    assert "note" not in capsys.readouterr().err


@pytest.mark.parametrize("flags, said", [
    (["--threads", "4"], "epochbench score: note: --threads has no effect: it sets an exact method's solver "
                         "threads, and ff, bl are heuristics"),
    (["--time-limit", "3"], "epochbench score: note: --time-limit has no effect: it limits exact methods, and "
                            "ff, bl have none"),
])
def test_score_notes_a_flag_no_method_uses(one, tmp_path, capsys, flags, said):
    assert cli.main(["score", str(one), "--methods", "ff,bl", *flags, "--out", str(tmp_path / "s")]) == 0
    assert said in capsys.readouterr().err.splitlines()
    assert list(pd.read_csv(tmp_path / "s.csv")["method"]) == ["ff", "bl"]


def test_score_takes_them_with_an_exact_method_and_records_the_defaults(one, tmp_path, capsys):
    out = tmp_path / "s"
    assert cli.main(["score", str(one), "--methods", "ff,cpsat", "--threads", "2", "--time-limit", "3",
                     "--out", str(out)]) == 0
    assert "note" not in capsys.readouterr().err
    run = json.loads((tmp_path / "s.run.json").read_text())
    assert (run["time_limit"], run["threads"]) == (3.0, 2)
    assert cli.main(["score", str(one), "--methods", "ff", "--out", str(tmp_path / "d")]) == 0
    run = json.loads((tmp_path / "d.run.json").read_text())
    assert (run["time_limit"], run["threads"]) == (10.0, 1)          # the defaults, as before
    assert list(pd.read_csv(tmp_path / "d.csv")["method"]) == ["ff"]


def test_farm_exact_time_limit_without_an_exact_step_warns():
    from epochbench.sim.runner import NoEffect
    with pytest.warns(NoEffect, match=r"exact_time_limit= has no effect: it limits a CS policy's exact steps .*"
                                      r"cs-i-p with imfs and greedy-mkp has none"):
        res = eb.simulate(None, "cs-i-p", machine="farm", farm_jobs=20, exact_time_limit=2)
    assert res.n == 20


@pytest.mark.parametrize("extra", [{"mkp": "cpsat"}, {"matcher": "hungarian"}, {"oracle_every": 5}])
def test_farm_exact_time_limit_with_an_exact_step_is_silent(extra, recwarn):
    res = eb.simulate(None, "cs-i-p", machine="farm", farm_jobs=20, exact_time_limit=2, **extra)
    assert res.n == 20
    assert not [w for w in recwarn if "no effect" in str(w.message)]


def test_farm_exact_time_limit_on_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["simulate", "--machine", "farm", "--policy", "cs-i-p", "--farm-jobs", "20",
                     "--exact-time-limit", "2"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "note" in line]
    assert notes == ["epochbench simulate: note: --exact-time-limit has no effect: it limits a CS policy's exact "
                     "steps (an exact --matcher or --mkp, or --oracle-every), and cs-i-p with imfs "
                     "and greedy-mkp has none"]
    assert cli.main(["simulate", "--machine", "farm", "--policy", "cs-i-p", "--farm-jobs", "20"]) == 0
    assert "note" not in capsys.readouterr().err


def test_a_runs_other_warnings_are_shown_as_they_come_and_the_run_ends(capsys, recwarn):
    """The first notes block recorded every warning and, showing the others
    again into the same record, never ended: a selector or plug-in that
    warned hung ``simulate``."""
    import threading
    import warnings

    from epochbench.cli_simulate import _notes
    from epochbench.sim.runner import NoEffect

    def run():
        with _notes("simulate"):
            warnings.warn("a selector's own warning", UserWarning)
            warnings.warn(NoEffect("--x has no effect"))
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive()
    assert capsys.readouterr().err == "epochbench simulate: note: --x has no effect\n"
    assert [str(w.message) for w in recwarn] == ["a selector's own warning"]    # shown as ever (here: to pytest)

