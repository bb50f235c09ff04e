"""Metrics and reader rules that no test pinned (mutation review): values
worked by hand, each test one rule.

- :mod:`epochbench.sim.metrics`: capacity loss of a table with a job that
  never started is NaN (both paths), the weight at K = 1 is ``procs x t^e``
  exactly, ``small_threshold=0`` is valid, and the weight is the job's
  duration (t^e), not ``end - start``;
- :mod:`epochbench.instances._swf_parse`: the compiled SWF parser leaves a
  number of 16 significant digits to the general reader, and reads a
  positive decimal exponent exactly;
- :mod:`epochbench.instances.jobs`: an estimate of 0 is unknown, an extra
  resource is checked against its own capacity, the largest-job capacity
  ignores jobs without processors, NaN runtimes are refused, a
  hand-written CSV kills at the estimate, a hand-written ``duration`` that
  differs is refused and ``NA`` is no number;
- :mod:`epochbench.instances.table`: :func:`narrowest_int` takes a type's
  maximum itself.

The compiled twins of the metrics are forced with the ``kernels_loaded``
switch the suite already uses (``tests/test_metrics_rules.py``); the SWF
reader's compiled parser with ``tests/test_jobs_readers_edge.py``'s.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import epochbench.sim.metrics as M
from epochbench.instances import jobs as jobs_mod
from epochbench.instances.core import InstanceError
from epochbench.instances.jobs import make_workload, read_swf, read_table
from epochbench.instances.table import narrowest_int
from epochbench.sim.metrics import capacity_loss, per_job, summarize

BOTH = pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])


def _result(rows):
    """A result table from rows (id, submit, start, end, procs, duration), times as floats."""
    df = pd.DataFrame(rows, columns=["id", "submit", "start", "end", "procs", "duration"])
    for col in ("submit", "start", "end", "duration"):
        df[col] = df[col].astype(float)
    return df.assign(estimate=df["duration"], runtime=df["duration"])


def _swf_line(i: int, submit: str, runtime: str, procs: int = 2) -> str:
    """One SWF job line with ``submit`` and ``runtime`` written as given."""
    return f"{i} {submit} 0 {runtime} {procs} -1 -1 {procs} 200 -1 1 1 1 1 1 -1 -1 -1\n"


def _compiled_swf(monkeypatch) -> None:
    """Make read_swf take the compiled parser (not the numpy reader of short integer files)."""
    monkeypatch.setattr(jobs_mod, "kernels_loaded", lambda: True)
    monkeypatch.setattr(jobs_mod, "_integer_columns", lambda *a: pytest.fail("numpy reader used"))


# ---- sim/metrics.py ------------------------------------------------------------------------
@pytest.mark.timeout(30)
@BOTH
def test_capacity_loss_with_a_job_that_never_started_is_nan(monkeypatch, compiled):
    """A NaN start gives capacity loss NaN on both paths: the sweep has no place for it (the kernel never ends)."""
    monkeypatch.setattr(M, "kernels_loaded", lambda: compiled)
    # job 2 never started; with its end NaN too the horizon is NaN already, so the end is given here
    for end in (np.nan, 20.0):
        res = _result([(1, 0, 0, 10, 2, 10), (2, 0, np.nan, end, 2, 10), (3, 5, 10, 20, 4, 10)])
        assert math.isnan(capacity_loss(res, [4]))


def test_weight_at_one_resource_is_procs_times_duration_exactly():
    """At K = 1 the requirement is ``procs`` itself: (7 / 25) x 25 would weigh 7.000000000000001 nodes."""
    res = _result([(1, 0, 0, 100, 7, 100)])
    assert M.requirement(res, [25]).tolist() == [7.0]
    assert per_job(res, [25])["weight"].tolist() == [700.0]


def test_small_threshold_zero_is_valid():
    """``small_threshold=0`` is an integer >= 0: accepted, and no job (procs >= 1) counts as small."""
    res = _result([(1, 0, 0, 10, 1, 10), (2, 0, 10, 20, 2, 10)])
    s = summarize(res, [4], small_threshold=0)
    assert (s["small_jobs"], s["large_jobs"]) == (0, 2)


def test_weighted_response_weighs_by_duration_not_end_minus_start():
    """[leinberger1999]'s weight is requirement x execution time t^e (``duration``), not ``end - start``."""
    # 2 nodes x t^e 10 s = 20; response 30 s: weight x response = 600, over the weight 20 = 30 s
    # (with end - start = 30 s the weight would be 60 and the weighted response 1800)
    res = _result([(1, 0, 0, 30, 2, 10)])
    s = summarize(res, [4])
    assert s["weighted_response"] == 600.0
    assert s["weighted_response_norm"] == 30.0
    assert per_job(res, [4])["weight"].tolist() == [20.0]


# ---- instances/_swf_parse.py ---------------------------------------------------------------
def test_a_16_digit_swf_time_is_left_to_the_general_reader(tmp_path, monkeypatch):
    """16 significant digits are more than one float64 operation converts exactly: the compiled parser
    declines and the value read is Python's (9865452293525111 rounds to ...112 as a float64)."""
    _compiled_swf(monkeypatch)
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 4\n" + _swf_line(1, "986.5452293525111", "100"))
    w = read_swf(path)
    assert w.table["submit"].tolist() == [float("986.5452293525111")]


def test_the_compiled_swf_parser_reads_exponents_exactly(tmp_path, monkeypatch):
    """The compiled parser reads ``2.5e2`` as 250.0 and ``1.0000000000001e2`` as Python does (the
    exponent's power of ten applied once, exactly)."""
    _compiled_swf(monkeypatch)
    monkeypatch.setattr(jobs_mod, "_swf_body", lambda *a: pytest.fail("compiled parser declined"))
    path = tmp_path / "e.swf"
    path.write_text("; MaxProcs: 4\n" + _swf_line(1, "0", "2.5e2") + _swf_line(2, "1", "1.0000000000001e2"))
    w = read_swf(path)
    assert w.table["runtime"].tolist() == [250.0, float("1.0000000000001e2")]
    assert w.table["runtime"][1] == 100.00000000001


# ---- instances/jobs.py ---------------------------------------------------------------------
def test_an_estimate_of_zero_is_unknown_and_takes_the_runtime():
    """An estimate <= 0 means unknown: the runtime, counted as such (0 is not an estimate to floor at 1 s)."""
    w = make_workload({"id": [1], "submit": [0], "runtime": [100], "procs": [1], "estimate": [0]}, 4)
    assert w.table["estimate"].tolist() == [100.0]
    assert w.table["duration"].tolist() == [100.0]
    assert w.meta["adjusted"] == {"estimate_unknown_set_to_runtime": 1}


def test_an_extra_resource_is_checked_against_its_own_capacity():
    """``res_mem`` is compared with the memory capacity (32), not with the processors' (8)."""
    w = make_workload({"id": [1, 2], "submit": [0, 0], "runtime": [10, 10], "procs": [1, 1],
                       "res_mem": [16, 40]}, [8, 32])
    assert w.table["id"].tolist() == [1]
    assert w.dropped == {"too_much_mem": 1}


def test_largest_job_capacity_ignores_jobs_without_processors(tmp_path):
    """A job of 0 processors is dropped, so its memory does not size the machine: capacity [2, 10]."""
    path = tmp_path / "j.csv"
    path.write_text("id,submit,runtime,procs,res_mem\n1,0,100,0,100\n2,0,100,2,10\n")
    w = read_table(path)
    assert w.capacity.tolist() == [2, 10]
    assert w.dropped == {"no_processors": 1}


def test_a_nan_runtime_is_refused_naming_the_job():
    """A runtime must be a number (only ``estimate`` and ``deadline`` may be NaN)."""
    with pytest.raises(InstanceError, match=r"column 'runtime' has nan at job 1 of the input \(id 1\)"):
        make_workload({"id": [1], "submit": [0], "runtime": [float("nan")], "procs": [1]}, 4)


def test_a_hand_written_csv_kills_jobs_at_their_estimate(tmp_path):
    """A CSV without the ``# epochbench`` line has no flag: jobs are killed at their estimate (the default)."""
    path = tmp_path / "h.csv"
    path.write_text("id,submit,runtime,procs,estimate\n1,0,100,1,50\n")
    w = read_table(path)
    assert w.kill_at_estimate is True
    assert w.table["duration"].tolist() == [50.0]


def test_a_hand_written_duration_column_is_refused(tmp_path):
    """Only write_table's own ``duration`` (with its metadata line) is dropped; a hand-written one that
    differs from the derived duration is refused, not silently replaced."""
    path = tmp_path / "d.csv"
    path.write_text("id,submit,runtime,procs,duration\n1,0,100,1,1000\n")
    with pytest.raises(InstanceError, match=r"column 'duration' is derived, never read"):
        read_table(path)


def test_na_in_a_csv_estimate_is_not_a_number(tmp_path):
    """Only an empty field, ``NaN`` and ``nan`` are missing; pandas' other NA spellings (``NA``) are text."""
    path = tmp_path / "na.csv"
    path.write_text("id,submit,runtime,procs,estimate\n1,0,100,1,NA\n")
    with pytest.raises(InstanceError, match=r"column 'estimate' has 'NA', not a number"):
        read_table(path)


# ---- instances/table.py --------------------------------------------------------------------
def test_narrowest_int_takes_a_types_own_bounds():
    """A type holds its own minimum and maximum: 127 fits int8, -32768 and 32767 fit int16."""
    assert narrowest_int(np.array([127], dtype=np.int64)).dtype == np.int8
    assert narrowest_int(np.array([-32768, 32767], dtype=np.int64)).dtype == np.int16
    assert narrowest_int(np.array([128], dtype=np.int64)).dtype == np.int16
