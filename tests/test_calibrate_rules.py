"""Calibration rules that a one-token change broke unseen (mutation review, round 9):
the measuring window's first and last jobs, a job never started waiting to
the window's end, a queue exactly rtol from the target converged, the
doubling loop stopping at the first close factor, and the regula falsi
search with the Illinois step on a known q(f).
"""
import math
import types

import numpy as np
import pandas as pd
import pytest

import epochbench.sim.calibrate as cal_mod
from epochbench.sim.calibrate import mean_queue_length, queue_window


# ---- Mutation review M9b, sim/calibrate.py: the measuring window's indices and
# the queue of a job never started, by hand.
#
# Module docstring: "The window runs from the arrival of job floor(warmup x n)
# ... to the arrival of job ceil((1 - cooldown) x n) - 1"; mean_queue_length:
# "jobs never started wait to the end" (of the window).


SUBMIT_0 = [0.0, 1.0, 2.0, 3.0, 4.0]          # n = 5 arrivals, job k at k seconds


def test_the_window_starts_at_job_floor_warmup_x_n():
    """warmup 0.1, n = 5: floor(0.5) = job 0 (arrival 0), not ceil(0.5) = job 1;
    warmup 0.3: floor(1.5) = job 1.  (Mutant C1: floor -> ceil.)"""
    assert queue_window(SUBMIT_0, 0.1, 0.0) == (0.0, 4.0)
    assert queue_window(SUBMIT_0, 0.3, 0.0) == (1.0, 4.0)


def test_the_window_ends_at_job_ceil_one_minus_cooldown_x_n_minus_1():
    """cooldown 0.1, n = 5: ceil(4.5) - 1 = job 4 (arrival 4), not
    floor(4.5) - 1 = job 3; cooldown 0.3: ceil(3.5) - 1 = job 3.
    (Mutant C2: ceil -> floor.)"""
    assert queue_window(SUBMIT_0, 0.0, 0.1) == (0.0, 4.0)
    assert queue_window(SUBMIT_0, 0.0, 0.3) == (0.0, 3.0)


def test_a_job_never_started_waits_to_the_windows_end():
    """Window [0, 10] (warmup 0: jobs 0 and 2 arrive at 0 and 10).  Job 0
    starts at once; job 1 (submitted at 5) never starts: it waits [5, 10],
    5 s, so the mean queue is 5 / 10 = 0.5.  (Mutant C7: a NaN start read
    as the window's start, so job 1 would wait nothing.)"""
    res = pd.DataFrame({"submit": [0.0, 5.0, 10.0], "start": [0.0, np.nan, 10.0]})
    assert mean_queue_length(res, warmup=0.0) == pytest.approx(0.5)


# ---- Mutation review M9b, sim/calibrate.py calibrate_rate's search, on synthetic
# q(f) curves: the stream's simulation is replaced (monkeypatch) by a known
# function of the arrival-rate factor f, so every step can be worked by hand.
#
# Module docstring: calibrate_rate "brackets the target by doubling or halving
# f, then narrows the bracket by regula falsi on (log f, log q) with the
# Illinois modification ..., until q is within ``rtol`` of the target".


@pytest.fixture
def calibrate(monkeypatch):
    """calibrate_rate on a 3-job stream whose mean queue length at factor f is Q(f)."""
    def run(Q, target, **kw):
        monkeypatch.setattr(cal_mod, "scale_arrivals",
                            lambda jobs, f: pd.DataFrame({"submit": [0.0, 1.0 / f], "f": [f, f]}))
        monkeypatch.setattr(cal_mod, "simulate", lambda scaled, cap, pol, **o: types.SimpleNamespace(jobs=scaled))
        monkeypatch.setattr(cal_mod, "mean_queue_length", lambda jobs, w, c: Q(float(jobs["f"].iloc[0])))
        return cal_mod.calibrate_rate(pd.DataFrame({"submit": [0.0, 1.0, 2.0]}), [1], target, **kw)
    return run


def test_a_queue_exactly_rtol_from_the_target_is_within_rtol(calibrate):
    """q(1) = 0.5, target 1, rtol 0.5: |0.5 - 1| = 0.5 <= 0.5 x 1 (exact in
    floating point): converged at the first guess, one simulation.
    (Mutant C12: ``<=`` -> ``<`` in close().)"""
    cal = calibrate(lambda f: 0.5 * f, 1.0, rtol=0.5)
    assert cal.converged and cal.simulations == 1 and cal.factor == 1.0 and cal.note == ""


def test_bracketing_stops_at_the_first_factor_within_rtol(calibrate):
    """q(f) = 0.3 f, target 1, rtol 0.45: q(1) = 0.3 is too short, f doubles;
    q(2) = 0.6 is within 0.45 of 1: stop there (2 simulations), not at
    q(4) = 1.2.  (Mutant C13: the check inside the doubling loop dropped.)"""
    cal = calibrate(lambda f: 0.3 * f, 1.0, rtol=0.45)
    assert cal.converged and cal.simulations == 2 and cal.factor == 2.0
    assert [f for f, _ in cal.history] == [1.0, 2.0]


def test_regula_falsi_in_log_log_hits_a_power_law_in_one_step(calibrate):
    """q(f) = f^2, target 10: doubling gives q(1) = 1, q(2) = 4, q(4) = 16;
    log q is linear in log f, so the secant through (log 2, log 4) and
    (log 4, log 16) crosses log 10 at f = sqrt(10): one step, 4 simulations.
    (Mutant C19: the secant's sign flipped.)"""
    cal = calibrate(lambda f: f * f, 10.0, rtol=1e-6)
    assert cal.converged and cal.simulations == 4
    assert cal.factor == pytest.approx(math.sqrt(10.0), rel=1e-9)


def test_illinois_keeps_a_steep_convex_curve_to_a_few_steps(calibrate):
    """q(f) = exp(3 f), target 1000 (f* = ln(1000) / 3 = 2.3026), rtol 1e-3:
    bracket [2, 4] after 3 simulations; plain regula falsi keeps the far end
    at 4 and creeps up from below; the Illinois halving of the stuck end's
    residual reaches the band in 4 more steps (7 simulations in all; plain
    regula falsi needs 15, wider bisection guards (0.2 instead of 0.02) 10).
    (Mutants C21: no halving; C20: guard 0.02 -> 0.2.)"""
    cal = calibrate(lambda f: math.exp(3 * f), 1000.0, rtol=1e-3)
    assert cal.converged and cal.factor == pytest.approx(math.log(1000) / 3, rel=1e-3)
    assert cal.simulations <= 7


# ---- More of calibrate_rate's search on synthetic q(f) (mutation review): the
# closest point returned when the runs are spent, the rtol checks after each
# halving and after bracketing, the bracket the halving loop leaves, the
# Illinois halving on the low end, and the window of unsorted arrivals.


def test_out_of_runs_returns_the_closest_point_not_the_last(calibrate):
    """Guards against returning the last factor tried instead of the one
    whose queue is closest to the target ("the closest point found is
    returned").  q(f) = f^2, target 9, 3 simulations: doubling tries q(1) =
    1, q(2) = 4, q(4) = 16; the fourth (regula falsi) run is refused.
    Relative errors 8/9, 5/9, 7/9: f = 2 with q = 4 is the best point."""
    cal = calibrate(lambda f: f * f, 9.0, max_simulations=3)
    assert not cal.converged and cal.simulations == 3
    assert cal.history == [(1.0, 1.0), (2.0, 4.0), (4.0, 16.0)]
    assert cal.factor == 2.0 and cal.mean_queue == 4.0
    assert cal.rel_error == pytest.approx(4.0 / 9.0 - 1.0)
    assert "max_simulations=3" in cal.note


def test_halving_stops_at_the_first_factor_within_rtol(calibrate):
    """Guards against the halving loop going past a factor whose queue is
    already within rtol.  q(f) = 3 f, target 1, rtol 0.6: q(1) = 3 is too
    long, f halves; q(0.5) = 1.5 is within 0.6 of 1: stop there (2
    simulations), not at q(0.25) = 0.75."""
    cal = calibrate(lambda f: 3.0 * f, 1.0, rtol=0.6)
    assert cal.converged and cal.simulations == 2 and cal.factor == 0.5
    assert [f for f, _ in cal.history] == [1.0, 0.5]


def test_a_bracket_end_within_rtol_ends_the_search(calibrate):
    """Guards against starting regula falsi when the factor that closed the
    bracket is already within rtol.  q(f) = 0.3 f, target 1, rtol 0.25:
    q(1) = 0.3 and q(2) = 0.6 are too short (0.6 is 0.4 off), q(4) = 1.2
    ends the doubling and is 0.2 <= 0.25 off: converged at f = 4 after 3
    simulations (a secant step would try f = 1 / 0.3)."""
    cal = calibrate(lambda f: 0.3 * f, 1.0, rtol=0.25)
    assert cal.converged and cal.simulations == 3 and cal.factor == 4.0
    assert [f for f, _ in cal.history] == [1.0, 2.0, 4.0]


def test_halving_narrows_the_bracket_from_above(calibrate):
    """Guards against the halving loop lowering only the low end and
    leaving the first guess as the high end.  q(f) = exp(3 f), target 1000
    (f* = ln(1000) / 3 = 2.3026), rtol 1e-3, first guess 16: q(16), q(8),
    q(4) are too long, q(2) = 403 too short, so the bracket is [2, 4]
    (not [2, 16]); regula falsi with the Illinois step then reaches the
    band in 4 steps: 8 simulations."""
    cal = calibrate(lambda f: math.exp(3 * f), 1000.0, rtol=1e-3, factor=16.0)
    assert cal.converged and cal.simulations == 8
    fs = [f for f, _ in cal.history]
    assert fs[:4] == [16.0, 8.0, 4.0, 2.0]
    assert all(2.0 < f < 4.0 for f in fs[4:])
    assert cal.factor == pytest.approx(math.log(1000) / 3, rel=1e-3)


def test_illinois_halves_the_low_end_of_a_concave_curve(calibrate):
    """Guards against a missing Illinois halving of the low end's residual
    when the high end moves twice in a row.  q(f) = 1000 (1 - exp(-f)),
    target 990 (f* = ln 100 = 4.6052), rtol 1e-4: doubling brackets [4, 8]
    (q = 981.7, 999.7).  The curve is concave in (log f, log q), so the
    secant lands above f*: 5.5203, then 4.8261 (the high end moved twice:
    the low end's residual is halved); the next step lands below, 4.5432,
    and then 4.6107 is within rtol: 8 simulations (plain regula falsi, the
    low end stuck at 4, needs 10)."""
    cal = calibrate(lambda f: 1000.0 * (1.0 - math.exp(-f)), 990.0, rtol=1e-4)
    assert cal.converged and cal.simulations == 8
    fs = [f for f, _ in cal.history]
    assert fs[:4] == [1.0, 2.0, 4.0, 8.0]
    assert fs[4:] == pytest.approx([5.520298391795535, 4.8261295358658005, 4.543239456973988,
                                    4.610686808056876], rel=1e-9)
    assert abs(cal.mean_queue - 990.0) <= 1e-4 * 990.0


def test_the_window_sorts_the_arrivals_first():
    """Guards against taking the window's jobs in table order: the window
    runs between arrivals in arrival order.  Arrivals [4, 0, 2, 1, 3],
    warmup 0, cooldown 0: from the first arrival (0) to the last (4)."""
    assert queue_window([4.0, 0.0, 2.0, 1.0, 3.0], 0.0, 0.0) == (0.0, 4.0)
    assert queue_window([4.0, 0.0, 2.0, 1.0, 3.0], 0.2, 0.2) == (1.0, 3.0)
