"""Gang scheduling under property tests: matrix invariants after every pass,
progress of every job in every scheduling cycle (the clock rule), node-time
conservation, the boundary skipping being exact, and the reductions of
[zhang-comparative] section 5.1 (MPL 1 = space sharing): GS-1 = FCFS, BGS-1 =
conservative backfilling."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from epochbench.instances.data import data_root
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.gang import simulate_gang
from epochbench.sim.gang_matrix import bits

N = 8
KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


@st.composite
def streams(draw, n_max=12, cap=N, overrun=False):
    n = draw(st.integers(1, n_max))
    gaps = draw(st.lists(st.sampled_from([0, 0, 1, 3, 10, 40]), min_size=n, max_size=n))
    procs = draw(st.lists(st.integers(1, cap), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(0, 90), min_size=n, max_size=n))
    est = draw(st.lists(st.integers(1, 100), min_size=n, max_size=n))
    ids = draw(st.permutations(list(range(1, n + 1))))
    sub = np.cumsum(gaps).astype(float)
    rows = []
    for i in range(n):
        dur = run[i] if overrun else min(run[i], est[i])
        rows.append({"id": ids[i], "submit": sub[i], "runtime": float(run[i]), "estimate": float(est[i]),
                     "procs": procs[i], "duration": float(dur)})
    df = pd.DataFrame(rows).astype({"id": "int64", "procs": "int64"})
    return df.sort_values(["submit", "id"], kind="stable").reset_index(drop=True)


def grid_checker(seen):
    """on_pass hook: rebuild the matrix from the row records alone and check
    that no cell holds two jobs and that a job holds the same columns in
    every row it occupies (independently of Matrix.grid)."""
    def hook(t, sim):
        m = sim.m
        cols_seen = {}
        for r in range(m.mpl):
            cells = {}
            for job in m.row[r]:
                cs = bits(m.cols[job])
                assert len(cs) == m.size[job]
                for c in cs:
                    assert c not in cells, f"t={t} row {r} column {c}: jobs {cells[c]} and {job}"
                    cells[c] = job
                cols_seen.setdefault(job, set()).add(tuple(cs))
            assert len(cells) == m.used[r]
        for job, variants in cols_seen.items():
            assert len(variants) == 1, f"job {job} holds different columns in different rows"
            assert (m.rows[job] >> m.home[job]) & 1
        m.grid()
        seen.append(t)
    return hook


def check_progress(trace, mpl, jobs):
    """Every job runs at least once per turn of the clock: its first run comes
    at most mpl - 1 positions after its placement, and two runs are at most
    mpl positions apart."""
    placed, runs = {}, {}
    for rec in trace:
        if rec[0] == "place":
            _, t, pos, job = rec
            placed[job] = pos
        else:
            _, t, pos, row, js = rec
            for j in js:
                runs.setdefault(j, []).append(pos)
    assert set(placed) == set(range(len(jobs)))
    for j, p0 in placed.items():
        pos = sorted(set(runs.get(j, [])))
        assert pos, f"job row {j} never ran"
        assert pos[0] - p0 <= mpl - 1, f"job row {j} placed at {p0} first ran at {pos[0]}"
        gaps = np.diff(pos)
        assert (gaps <= mpl).all(), f"job row {j} waited {gaps.max()} positions (mpl {mpl})"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=streams(), policy=st.sampled_from(["gs", "bgs", "mgs", "mbgs"]), mpl=st.integers(1, 4),
       variant=st.sampled_from([1, 2, 3]), discrete=st.booleans(), overhead=st.sampled_from([0.0, 0.05]),
       slice_=st.sampled_from([5.0, 20.0]))
def test_invariants_progress_and_conservation(df, policy, mpl, variant, discrete, overhead, slice_):
    if policy in ("mgs", "mbgs") and variant == 1:
        variant = 3
    seen = []
    kw = dict(mpl=mpl, slice=slice_, switch_overhead=overhead, discrete=discrete, variant=variant,
              migration_cost=3.0, migration_limit=None)
    r = simulate_gang(df, [N], policy, trace=True, check=True, on_pass=grid_checker(seen), **kw)
    j = r.jobs
    assert seen and j["end"].notna().all() and j["start"].notna().all()
    assert (j["placed"] >= j["submit"]).all() and (j["start"] >= j["placed"]).all()
    assert (j["end"] - j["start"] >= j["duration"] - 1e-9).all()
    # useful work is the duration plus the migration losses; the rest of the time in
    # execution is context switching
    switching = (j["procs"] * (j["executed"] - j["duration"] - j["penalty"])).sum()
    assert switching >= -1e-6
    span = j["end"].max() - j["submit"].min()
    if span > 0:
        assert r.kappa["capacity_lost_any_time_switch"] * N * span == pytest.approx(switching, abs=1e-6)
        busy = (j["procs"] * j["executed"]).sum()
        idle = r.kappa["capacity_lost_any_time_idle"] * N * span
        assert busy + idle == pytest.approx(N * span)
        assert 0 <= r.kappa["capacity_loss"] <= r.kappa["capacity_lost_any_time"] + 1e-12
    if overhead == 0 and policy in ("gs", "bgs"):
        assert (j["executed"] == j["duration"]).all()
    check_progress(r.trace, mpl, j)
    # visiting every slice boundary (trace) or jumping over the idle ones gives the same run
    plain = simulate_gang(df, [N], policy, **kw)
    pd.testing.assert_frame_equal(plain.jobs, j)
    assert plain.kappa == pytest.approx(r.kappa, nan_ok=True)


@settings(max_examples=80, deadline=None)
@given(df=streams(n_max=25), overrun=st.booleans(), data=st.data())
def test_mpl1_reduces_to_space_sharing(df, overrun, data):
    """[zhang-comparative] section 5.1: MPL 1 is space sharing.  GS-1 starts and ends every
    job as FCFS does; BGS-1 (continuous scheduling) as conservative backfilling,
    reservations included."""
    if overrun:
        df = data.draw(streams(n_max=25, overrun=True))
    a = simulate(df, [N], "fcfs").jobs
    b = simulate_gang(df, [N], "gs", mpl=1, slice=7.0, check=True).jobs
    pd.testing.assert_frame_equal(a[["id", "start", "end"]], b[["id", "start", "end"]])
    a = simulate(df, [N], "conservative").jobs
    b = simulate_gang(df, [N], "bgs", mpl=1, slice=7.0, check=True).jobs
    pd.testing.assert_frame_equal(a[["id", "start", "end", "promised"]], b[["id", "start", "end", "promised"]])


@pytest.mark.parametrize("policy, ref", [("gs", "fcfs"), ("bgs", "conservative")])
def test_mpl1_equals_space_sharing_on_kth(policy, ref):
    if not KTH.exists():
        pytest.skip(f"KTH trace absent at {KTH} (set EPOCHBENCH_DATA)")
    from epochbench.instances.jobs import read_swf
    w = read_swf(KTH)
    jobs = w.jobs.head(1500)
    a = simulate(jobs, w.capacity, ref).jobs
    b = simulate_gang(jobs, w.capacity, policy, mpl=1).jobs
    for col in ("start", "end", "promised"):
        np.testing.assert_array_equal(a[col].to_numpy(), b[col].to_numpy())


def test_time_sharing_orders_the_policies_on_a_busy_stream():
    """Not a claim of the seed on one small stream, but sanity: on a busy
    stream every job ends, BGS-3 waits less than GS-3, and the migration
    policies run."""
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"id": np.arange(1, n + 1), "submit": np.cumsum(rng.exponential(9.0, n)).round(),
                       "runtime": rng.integers(1, 400, n).astype(float), "procs": rng.integers(1, 17, n)})
    df["estimate"] = df["runtime"] * rng.uniform(1, 3, n).round(1)
    df["duration"] = df["runtime"]
    out = {}
    for pol in ("gs", "bgs", "mgs", "mbgs"):
        r = simulate_gang(df, [16], pol, mpl=3, slice=50.0, migration_cost=5.0)
        assert r.jobs["end"].notna().all()
        out[pol] = (r.jobs["start"] - r.jobs["submit"]).mean()
    assert out["bgs"] < out["gs"]
