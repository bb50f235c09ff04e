"""The generic-engine backfilling variants build their plans and scans the
fast way (slack-bf and threshold-bf: each plan one compiled call; the
priority orders' bookkeeping and multi-queue's scan: numpy over the queue);
each gives the schedules of the rule written step by step, kept here as the
oracle (the code these policies ran before)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from epochbench.sim.backfill import FCFSBackfill, SJFBackfill  # noqa: F401  (registers them)
from epochbench.sim.profile import rebuild
from epochbench.sim.engine import wake_time
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.variants import MultiQueue, SlackBackfill, ThresholdBackfill
from epochbench.sim.policies import Step

from test_sim_engine import random_stream, stream


class _PlanByProfile:
    """Plans as a profile operation per booking (CompiledProfile): ``_plan``,
    and ``_base_plan`` booking the reserved jobs, then the new ones on the
    profile it ends with (compressed or not)."""

    def _plan(self, now, jobs, starting=None):
        tb, prof = self.table, self._profile(now)
        if starting is not None:
            prof.add(now, now + tb.estimate[starting], tb.demand[starting], -1)
        return {j: self._book(prof, j) for j in jobs}

    def _base_plan(self, now, guarded, new):
        tb = self.table
        prof = self._profile(now)
        plan = {j: self._book(prof, j) for j in guarded}
        keep = self._in_force
        if not (all(plan[j] <= max(self.deadline[j], keep.get(j, np.inf)) for j in guarded)
                or any(j not in keep or keep[j] < now for j in guarded) or self._overrun(now)):
            self.compressions += 1
            prof = self._profile(now)
            for j in guarded:
                prof.add(keep[j], keep[j] + tb.estimate[j], tb.demand[j], -1)
            for j in guarded:
                prof.add(keep[j], keep[j] + tb.estimate[j], tb.demand[j], 1)
                plan[j] = self._book(prof, j)
        for j in new:
            plan[j] = self._book(prof, j)
        return plan


class SlackByProfile(_PlanByProfile, SlackBackfill):
    pass


class ThresholdByProfile(_PlanByProfile, ThresholdBackfill):
    pass


class MultiQueueJobByJob(MultiQueue):
    """multi-queue's scan asking each queued job for its lenders in turn."""

    def _usable(self, i, j):
        need = int(self.table.demand[j, 0])
        return int(self.free[i]) + sum(int(self.free[p]) for p in self._lenders(i, need))

    def _serve(self, now, i, start):
        q, tb = self.queues[i], self.table
        k = 0
        while k < len(q) and tb.demand[q[k], 0] <= self._usable(i, q[k]):
            self._take(i, q[k], start)
            k += 1
        del q[:k]
        if not q:
            return
        shadow, extra, _ = self._reservation(now, i, q[0])
        if np.isnan(tb.promised[q[0]]):
            tb.promised[q[0]] = shadow
        usable = int(self.free[i]) + sum(int(self.free[p]) for p in self._lenders(i, 1))
        narrow = [j for j in q[1:] if tb.demand[j, 0] <= self.sizes[i]]
        self.steps.append(Step(now, np.array([usable]), narrow, shadow, np.array([extra])))
        done = set()
        for j in q[1:]:
            need = int(tb.demand[j, 0])
            if need > self._usable(i, j):
                continue
            if now + tb.estimate[j] <= shadow:
                pass
            elif need <= extra:
                extra -= need
            else:
                continue
            self._take(i, j, start)
            done.add(j)
        self.queues[i] = [j for j in q if j not in done]


class FCFSJobByJob(FCFSBackfill):
    """The priority orders' pass with a Python step per queued job."""

    def schedule(self, now, machine, start):
        from epochbench.sim.backfill import ORDERS
        tb = self.table
        if not self._q:
            return
        order = ORDERS[self.order](tb, np.asarray(self._q, dtype=np.int64), machine.free)
        running = np.asarray(machine.running(), dtype=np.int64)
        run_end = np.maximum(tb.start[running] + tb.estimate[running], now)
        rebuild(now, order, running, run_end, tb.demand, tb.estimate, machine.capacity, self._pt, self._pf, self._res)
        started = set()
        for j in order:
            j = int(j)
            if np.isnan(tb.promised[j]):
                tb.promised[j] = self._res[j]
            if self._res[j] <= now and machine.fits(j):
                start(j)
                started.add(j)
        self._q = [j for j in self._q if j not in started]
        self._wake = wake_time(now, (self._res[j] for j in self._q))


class SJFJobByJob(FCFSJobByJob):
    order = "sjf"


def _same(df, cap, fast, oracle):
    a, b = simulate(df, cap, fast), simulate(df, cap, oracle)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert a.passes == b.passes
    return fast


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_slack_plans_in_one_call_equal_the_plans_booked_one_by_one(seed, k):
    df = random_stream(np.random.default_rng(seed), 120, k=k, overrun=seed % 3 == 0)
    for factor in (0.0, 0.3, np.inf):
        _same(df, [16] * k, SlackBackfill(slack_factor=factor), SlackByProfile(slack_factor=factor))
    _same(df, [16] * k, ThresholdBackfill(slowdown_threshold=1.5), ThresholdByProfile(slowdown_threshold=1.5))


class CountedSlack(SlackByProfile):
    """The oracle, counting the compressions that also book new reservations (two or more)."""

    booked_new = 0

    def _base_plan(self, now, guarded, new):
        before = self.compressions
        plan = super()._base_plan(now, guarded, new)
        if self.compressions > before and len(new) >= 2:
            CountedSlack.booked_new += 1
        return plan


def test_the_slack_plans_cover_compressions_that_book_new_reservations():
    """Slack 0 on overloaded streams: the compression branch runs, and books
    the new reservations in queue order on the compressed profile."""
    CountedSlack.booked_new = 0
    for seed in range(4):
        df = random_stream(np.random.default_rng(seed), 150, load=3.0)
        _same(df, [16], SlackBackfill(slack_factor=0.0), CountedSlack(slack_factor=0.0))
    assert CountedSlack.booked_new > 0


@pytest.mark.parametrize("seed", range(6))
def test_multi_queue_scan_equals_the_job_by_job_scan(seed):
    df = random_stream(np.random.default_rng(seed), 200, cap=16)
    for kw in ({"lend": True}, {"lend": True, "queue_bounds": (10.0, 30.0)},
               {"partitions": (4, 12), "queue_bounds": (25.0,)}):
        if not kw.get("lend") and df["procs"].max() > 12:
            df = df.assign(procs=np.minimum(df["procs"], 12))
        _same(df, [16], MultiQueue(**kw), MultiQueueJobByJob(**kw))


@pytest.mark.parametrize("seed", range(6))
def test_priority_order_passes_equal_the_job_by_job_pass(seed):
    df = random_stream(np.random.default_rng(seed), 200, k=1 + seed % 2, overrun=seed % 2 == 0)
    cap = [16] * (1 + seed % 2)
    _same(df, cap, FCFSBackfill(), FCFSJobByJob())
    _same(df, cap, SJFBackfill(), SJFJobByJob())


@pytest.mark.parametrize("seed", range(8))
def test_fcfs_extending_its_plan_gives_the_plan_of_the_whole_queue(seed):
    """fcfs-bf books only the jobs arrived since the last pass while that plan holds: every job
    ended at its estimate, none runs past it, every slot due started.  Streams whose estimates are
    exact (every pass extends), mostly exact, and with overruns, on K = 1 and 2: the schedules of
    the whole queue planned at every pass, and the extending passes counted."""
    rng = np.random.default_rng(100 + seed)
    k = 1 + seed % 2
    df = random_stream(rng, 300, k=k, overrun=seed % 4 == 3)
    exact = rng.random(len(df)) < (1.0, 0.95, 0.7, 0.9)[seed % 4]
    df = df.assign(duration=np.where(exact, df["estimate"], df["duration"]))
    df = df.assign(runtime=df["duration"])
    pol = _same(df, [16] * k, FCFSBackfill(), FCFSJobByJob())
    passes = simulate(df, [16] * k, pol).passes
    assert pol.extended > 0 and (seed % 4 or pol.extended >= passes - 1), (pol.extended, passes)


def lost_estimate_streams(tiny: float, count: int):
    """Streams with estimates lost in the time they are added to (``t + e == t``: ``tiny`` at t = 0,
    or 1e-9 at t = 1e9), with their capacities: a hand-made one (job 4 starts at 2 under a plan of the
    whole queue), then ``count`` random ones where three jobs in ten have such an estimate."""
    base = 1e9 if tiny == 1e-9 else 0.0
    yield stream([(1, base, 3, 1.0, 1.0), (2, base, 1, tiny, tiny), (3, base, 3, 1.0, 1.0),
                  (4, base + 1, 1, tiny, tiny)]), [3]
    rng = np.random.default_rng(7)
    for _ in range(count):
        df = random_stream(rng, 120, cap=4)
        small = rng.random(len(df)) < 0.3
        est = np.where(small, tiny, df["estimate"])
        df = df.assign(estimate=est, duration=np.where(small, tiny, est), submit=df["submit"] + base)
        yield df.assign(runtime=df["duration"]), [4]


@pytest.mark.parametrize("tiny", [1e-300, 5e-324, 1e-9])
def test_fcfs_does_not_extend_a_plan_with_a_slot_of_no_width(tiny):
    """An estimate lost in the time it is added to (``t + e == t``) books a slot of no width, which
    leaves a second row at its time showing the job's resources free: a plan of the whole queue makes
    that row again at every pass, an extension had forgotten it (job 4 started at 2, not at 1; found
    by a review's fuzzing: 188 of 7,000 streams with such estimates differed).  1e-9 at t = 1e9 too."""
    for df, cap in lost_estimate_streams(tiny, 20):
        _same(df, cap, FCFSBackfill(), FCFSJobByJob())
