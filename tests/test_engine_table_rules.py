"""Rules of sim/engine.py's job table that no existing test pinned (mutation review,
round 7).  Expected values are worked by hand in each docstring."""
import numpy as np
import pandas as pd
import pytest

from epochbench.sim.pool import simulate_pool as simulate


def frame(rows):
    """rows: (id, submit, procs, duration, estimate), kept in the order given."""
    df = pd.DataFrame(rows, columns=["id", "submit", "procs", "duration", "estimate"])
    df = df.astype({"submit": float, "duration": float, "estimate": float})
    df["runtime"] = df["duration"]
    return df


@pytest.mark.parametrize("engine", ["auto", "generic"])
def test_a_stream_out_of_order_is_sorted_by_submit_then_id(engine):
    """Rule (JobTable.from_columns): rows are put in (submit, id) order, submit
    first.  One node; job 1 (submit 5) is given before job 2 (submit 0), each
    10 s.  Job 2 arrives first and runs 0-10; job 1 arrives at 5 and starts
    at 10.  Sorting by id first would replay job 1 at 5 and job 2 at 15."""
    res = simulate(frame([(1, 5, 1, 10, 10), (2, 0, 1, 10, 10)]), [1], "fcfs", engine=engine)
    assert res.jobs["id"].tolist() == [2, 1]
    assert dict(zip(res.jobs["id"], res.jobs["start"])) == {2: 0.0, 1: 10.0}


def test_a_job_of_zero_processors_is_refused():
    """Rule (engine._check): procs must be >= 1 (resources may be 0).  A job
    asking for 0 processors is a ValueError, not a job that runs on nothing."""
    with pytest.raises(ValueError, match="procs must be >= 1"):
        simulate(frame([(1, 0, 0, 10, 10)]), [4], "fcfs")
    with pytest.raises(ValueError, match="procs must be >= 1"):
        simulate(frame([(1, 0, 1, 10, 10), (2, 1, 0, 10, 10)]), [4], "fcfs", engine="generic")


def test_wake_time_asks_for_no_pass_at_or_before_now():
    """Rule (engine.wake_time): a plan asks for a pass only at a time after
    now; a job planned at or before now that still waits (it did not fit:
    a running job overran) asks for none (inf), else the engine would pass
    again at the same time forever.  Otherwise the earliest planned start."""
    from epochbench.sim.engine import wake_time
    assert wake_time(5.0, [5.0, 9.0]) == np.inf
    assert wake_time(5.0, [3.0]) == np.inf
    assert wake_time(5.0, [9.0, 7.0]) == 7.0
    assert wake_time(5.0, []) == np.inf
