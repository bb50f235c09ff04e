"""Metrics rules that a one-token change broke unseen (mutation review,
round 8; values worked by hand): the median of an even count, p90 by
numpy's linear rule, equal starts are not out of order and capacity loss
is measured from the first arrival, on both paths.

Most tests run the default process's numpy path only (the kernels are loaded
lazily); the compiled twins (``_started_late``, ``_empty_while_waiting``)
are forced here with the ``kernels_loaded`` switch the suite already uses."""
from __future__ import annotations

import pandas as pd
import pytest

import epochbench.sim.metrics as M
from epochbench.sim.metrics import capacity_loss, out_of_order, per_job, summarize

BOTH = pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])


def _result(rows, shift=0.0):
    """rows: (id, submit, start, end, procs, duration); times shifted by ``shift``."""
    df = pd.DataFrame(rows, columns=["id", "submit", "start", "end", "procs", "duration"])
    for col in ("submit", "start", "end"):
        df[col] = df[col].astype(float) + shift
    df["duration"] = df["duration"].astype(float)
    return df.assign(estimate=df["duration"], runtime=df["duration"])


# four 1-node jobs, all submitted at 0, on a 100-node machine: waits 0, 10, 20, 40 s
FOUR = [(1, 0, 0, 100, 1, 100), (2, 0, 10, 110, 1, 100), (3, 0, 20, 120, 1, 100), (4, 0, 40, 140, 1, 100)]


def test_wait_median_of_an_even_count_is_the_mean_of_the_middle_two():
    # sorted waits 0, 10, 20, 40: median = (10 + 20) / 2 = 15
    assert summarize(_result(FOUR), [100])["wait_median"] == 15.0


def test_wait_p90_is_numpys_linear_rule_by_hand():
    # virtual index (4 - 1) x 0.9 = 2.7: between 20 (index 2) and 40 (index 3): 20 + 0.7 x 20 = 34
    assert summarize(_result(FOUR), [100])["wait_p90"] == pytest.approx(34.0)


@BOTH
def test_equal_starts_are_not_out_of_order_on_both_paths(monkeypatch, compiled):
    monkeypatch.setattr(M, "kernels_loaded", lambda: compiled)
    # job 1 arrives first, both start at 5: no job that arrived earlier started *later*
    res = _result([(1, 0, 5, 15, 1, 10), (2, 1, 5, 15, 1, 10)])
    assert out_of_order(res["submit"], res["id"], res["start"]).tolist() == [False, False]
    assert per_job(res)["out_of_order"].tolist() == [False, False]
    s = summarize(res, [4])
    assert s["out_of_order_jobs"] == 0 and s["out_of_order_share"] == 0.0


@BOTH
def test_capacity_loss_is_measured_from_the_first_arrival_on_both_paths(monkeypatch, compiled):
    monkeypatch.setattr(M, "kernels_loaded", lambda: compiled)
    # N = 4, everything 1000 s after t = 0: job 1 (3 nodes) on [0, 10); job 2 (2 nodes) waits on [2, 10):
    # 1 idle node x 8 s, over N x (t^f_m - first arrival) = 4 x 20
    res = _result([(1, 0, 0, 10, 3, 10), (2, 2, 10, 20, 2, 10)], shift=1000.0)
    assert capacity_loss(res, [4]) == pytest.approx(8 / 80)
    assert summarize(res, [4])["capacity_loss"] == pytest.approx(8 / 80)


def test_utilization_of_a_job_that_never_ran_is_nan_from_a_dataframe_too():
    """(mutation review) pandas' ``max`` skipped the unrun job's NaN end: a
    DataFrame's utilization read 1.0 where the same table as Columns read NaN."""
    import numpy as np
    from epochbench.instances.table import as_columns
    df = pd.DataFrame({"id": [1, 2, 3], "submit": [0.0, 0.0, 5.0], "start": [0.0, np.nan, 10.0],
                       "end": [10.0, np.nan, 20.0], "procs": [2, 2, 4], "duration": [10.0, 10.0, 10.0]})
    assert np.isnan(M.utilization(df, 4)) and np.isnan(M.utilization(as_columns(df), 4))
    assert np.isnan(capacity_loss(df, 4))
    done = df.dropna()
    assert M.utilization(done, 4) == M.utilization(as_columns(done), 4) == (20 + 40) / (4 * 20)
