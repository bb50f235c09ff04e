"""The [capannini2007] farm state and its Job-Machine matrix (instances/farm.py)."""
import numpy as np
import pytest

from epochbench.instances import InstanceError
from epochbench.instances import farm as fm


def small_state(**jobs_kw):
    """2 machines (4 and 8 CPUs, benchmark 200 / 400), 2 licenses (copies 1, 5;
    license 1 not usable on machine 0), jobs given by keyword (defaults below)."""
    n = len(jobs_kw.get("estimate", [1000.0]))
    base = dict(estimate=[1000.0] * n, bench=[400.0] * n, cpus=[1] * n, licenses=[[0, 0]] * n,
                input_size=[100.0] * n, input_location=[0] * n, deadline=[np.nan] * n, submit=[0.0] * n,
                progress=[0.0] * n, running_on=[-1] * n, ids=list(range(n)))
    base.update(jobs_kw)
    jobs = fm.Jobs(**{k: np.array(v, dtype=bool if k == "licenses" else None) for k, v in base.items()})
    mach = fm.Machines(cpus=np.array([4, 8]), bench=np.array([200.0, 400.0]),
                       license_ok=np.array([[True, False], [True, True]]))
    bw = np.array([[np.inf, 10.0], [10.0, np.inf]])
    return fm.FarmState(mach, np.array([1, 5]), jobs, bw, now=0.0)


# ---- generator ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def big():
    return fm.generate_farm(np.random.default_rng(3), jobs=2000, machines=200, licenses=20)


def test_generator_uses_the_ranges_of_section_6(big):
    j, m = big.jobs, big.machines
    assert 500 <= j.estimate.min() and j.estimate.max() <= 3000
    for cpus in (j.cpus, m.cpus):
        assert cpus.min() == 1 and cpus.max() == 8
    for b in (j.bench, m.bench):
        assert 200 <= b.min() and b.max() <= 600
    assert 100 <= j.input_size.min() and j.input_size.max() <= 800
    assert 0.27 < np.isnan(j.deadline).mean() < 0.33          # 30% without deadline
    assert 0.18 < j.licenses.mean() < 0.22                     # license needed by a job: 20%
    assert 0.88 < m.license_ok.mean() < 0.92                   # license suitability: 90%
    usable = m.license_ok.sum(axis=0)
    ratio = big.copies / usable
    assert np.all(ratio >= 0.55 - 1 / usable) and np.all(ratio <= 0.65 + 1 / usable)
    slack = (j.deadline - j.submit) / j.estimate - 1
    slack = slack[~np.isnan(slack)]
    assert 0.25 <= slack.min() and slack.max() <= 1.5
    assert np.all(j.submit <= big.now)


def test_previous_plan_runs_distinct_eligible_machines(big):
    run = big.jobs.running_on
    busy = run[run >= 0]
    assert busy.size == 100 and np.unique(busy).size == 100  # busy = 0.5 of 200 machines
    ok = fm.eligible(big)
    i = np.nonzero(run >= 0)[0]
    assert ok[i, run[i]].all()
    assert np.all(big.jobs.progress[run < 0] == 0) and np.all(big.jobs.progress[i] < 0.9)


def test_generator_is_deterministic():
    a = fm.generate_farm(np.random.default_rng(7), jobs=30, machines=10, licenses=4)
    b = fm.generate_farm(np.random.default_rng(7), jobs=30, machines=10, licenses=4)
    assert np.array_equal(fm.preference_matrix(a), fm.preference_matrix(b))


def test_generator_rejects_bad_ranges():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="ratio"):
        fm.generate_farm(rng, ratio=(0.6, 0.5))
    with pytest.raises(ValueError, match="busy"):
        fm.generate_farm(rng, busy=1.5)


# ---- the heuristics -------------------------------------------------------------------------
def test_f1_follows_figure_2():
    # Deadline 100, Nxtime 20, k = 2: t = 60; line from (60, Min) to (100, Max)
    f = fm.f1([50.0, 60.0, 80.0, 100.0, 101.0], 60.0, 100.0, 0.1, 10.0)
    assert f == pytest.approx([0.1, 0.1, 0.1 + 9.9 * 20 / 40, 10.0, 0.1])


def test_minimal_requirements_check_cpus_and_license_types():
    s = small_state(cpus=[2, 6, 1], licenses=[[1, 0], [0, 0], [0, 1]], estimate=[1000.0] * 3)
    assert fm.eligible(s).tolist() == [[True, True], [False, True], [False, True]]


def test_deadline_delta_is_equation_1():
    # one job, Estimated 1000 on benchmark 400: Nxtime 2000 on machine 0, 1000 on machine 1
    s = small_state(deadline=[1500.0])
    c = fm.Constants(literal_fbar=True)
    nx = np.array([2000.0, 1000.0])
    f = fm.f1(nx, 1500.0 - c.k * nx, 1500.0, c.min, c.max)   # Now = 0: Extime = Nxtime
    fbar = c.max - f
    want = f.sum() * fbar / fbar.sum()
    got = fm.deadline_delta(s, c, fm.eligible(s))
    assert got[0] == pytest.approx(want)
    assert f.tolist()[0] == c.min and c.min < f[1] < c.max  # late on machine 0, urgent on machine 1
    assert np.all(fm.deadline_delta(small_state(), c, fm.eligible(small_state())) == 0)  # no deadline


def test_license_weight_and_delta():
    # copies (1, 5); s = [[1,0],[1,1],[0,1]]: rho = (2, 0.4), license 0 critical
    s = small_state(licenses=[[1, 0], [1, 1], [0, 1]], estimate=[1000.0] * 3)
    assert fm.license_rho(s.jobs.licenses, s.copies) == pytest.approx([2.0, 0.4])
    w = fm.license_weight(s.jobs.licenses, s.copies)
    assert w == pytest.approx([2 * 2.0, 2 * 2.0 + 0.4, 0.4])   # |L| = 2 multiplies critical ones
    c = fm.Constants()
    d = fm.license_delta(s, c, fm.eligible(s))
    assert d[1, 1] == pytest.approx(c.licenses) and d[0, 0] == pytest.approx(c.licenses * 4.0 / 4.4)
    assert d[1, 0] == 0  # job 1 needs license 1, not usable on machine 0


def test_input_wait_overhead_aging():
    c = fm.Constants()
    s = small_state(input_location=[1], submit=[-50.0], running_on=[1], progress=[0.5])
    ok = fm.eligible(s)
    # Transf = (100 / 10, 0): share (1, 0)
    assert fm.input_delta(s, c, ok)[0] == pytest.approx([0.0, c.input])
    # Remaining = 1000 * 0.5 * 400 / BM_m = (1000, 500); Sup = 1000
    assert fm.wait_delta(s, c, ok)[0] == pytest.approx([0.0, c.wait * 0.5])
    assert fm.overhead_delta(s, c, ok)[0].tolist() == [0.0, c.overhead]
    assert fm.aging_delta(s, c, ok)[0] == pytest.approx([c.aging * 50] * 2)
    assert fm.Constants.non_preemptive().overhead == 800.0


def test_non_preemptive_overhead_can_be_overridden():
    """Footnote 1 sets Delta to 800 for the versions without preemption; a
    --cs-constant overhead=... replaces it (it raised a TypeError: the
    keyword twice)."""
    assert fm.Constants.parse(["overhead=5"], preemptive=False).overhead == 5.0
    assert fm.Constants.parse(["aging=0.5"], preemptive=False).overhead == 800.0
    assert fm.Constants.non_preemptive(overhead=3.0, aging=0.5) == fm.Constants(overhead=3.0, aging=0.5)


@pytest.mark.parametrize("seed,c", [(1, fm.Constants()), (2, fm.Constants(literal_fbar=True)),
                                    (3, fm.Constants.non_preemptive()), (4, fm.Constants(k=2.0))])
def test_preference_matrix_sums_the_heuristics_and_zeroes_ineligible(seed, c):
    """The compiled all-heuristics pass equals the sum of the seven numpy
    heuristics; interarrival 200 spreads the jobs over all three parts of
    f_1 (early, urgent, late)."""
    s = fm.generate_farm(np.random.default_rng(seed), jobs=40, machines=12, licenses=6, interarrival=200.0)
    ok = fm.eligible(s)
    p = fm.preference_matrix(s, c)
    want = np.where(ok, c.base, 0.0) + sum(h(s, c, ok) for h in fm.HEURISTICS.values())
    assert p == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert np.all((p > 0) == ok)
    nx = fm.nxtime(s)
    dl = s.jobs.deadline[:, None]
    regions = {(s.now + nx <= dl - c.k * nx)[ok].any(), (s.now + nx > dl)[ok].any()}
    assert regions == {True}  # both an early and a late entry occur (NaN deadlines compare False)
    assert np.array_equal(fm.preference_matrix(s, c, ok=ok), p)
    only = fm.preference_matrix(s, c, heuristics=("aging",))
    assert only == pytest.approx(np.where(ok, c.base, 0.0) + fm.aging_delta(s, c, ok))
    with pytest.raises(ValueError, match="unknown heuristic"):
        fm.preference_matrix(s, heuristics=("nope",))


def test_mkp_profit_is_the_mean_positive_preference():
    p = np.array([[2.0, 0.0, 4.0], [0.0, 0.0, 0.0]])
    assert fm.mkp_profit(p).tolist() == [3.0, 0.0]


# ---- the state API --------------------------------------------------------------------------
def test_take_concat_advance_and_validation():
    s = small_state(estimate=[1000.0, 2000.0], running_on=[1, -1])
    j2 = s.jobs.take([1]).concat(s.jobs.take([0]))
    assert j2.estimate.tolist() == [2000.0, 1000.0] and j2.running_on.tolist() == [-1, 1]
    later = s.advance(100.0, {1: 0})
    # job 0 ran on machine 1 (benchmark 400 = its own): 100 / 1000 done
    assert later.jobs.progress == pytest.approx([0.1, 0.0])
    assert later.jobs.running_on.tolist() == [-1, 0] and later.now == 100.0
    with pytest.raises(ValueError, match="back in time"):
        later.advance(50.0)
    with pytest.raises(InstanceError, match="running_on"):
        small_state(estimate=[1.0, 1.0], running_on=[1, 1])
    with pytest.raises(InstanceError, match="jobs.cpus"):
        small_state(estimate=[1.0, 1.0], cpus=[1])
    assert fm.previous_pairs(s) == [[0, 1]]


def test_a_base_of_zero_is_refused_since_zero_marks_an_entry_not_eligible():
    """``base`` is where an eligible entry starts; 0 means "not eligible".
    With base, aging and wait at 0 a run stopped on a 28-line traceback
    ("nothing runs and nothing arrives", jobs queued): eligible jobs read as
    ineligible.  Every other constant may still be 0."""
    with pytest.raises(ValueError, match=r"constant base=0\.0: a number in \(0, 1e\+09\], the value an eligible "
                                         r"entry starts from \(0 marks an entry that is not eligible\)"):
        fm.Constants(base=0.0)
    with pytest.raises(ValueError, match="constant base=0"):
        fm.Constants.parse("base=0,aging=0,wait=0")
    zero = {f: 0.0 for f in ("max", "min", "k", "input", "overhead", "aging", "licenses", "wait")}
    assert fm.Constants(**zero).base == 0.1
