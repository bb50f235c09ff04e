"""Per-epoch recording (issue 4 item 3): every selection step of a policy as
a ``packing`` instance, with the choice the policy made.

A selection step is the packing problem the policy solves at a scheduling
pass: the machine with what is free after the queue head's starts, the
candidates in queue order and, for EASY-style policies, the head's
reservation (shadow time and extra resources).  :class:`EpochRecorder` is an
``on_pass`` hook of :class:`epochbench.sim.engine.Engine`; its instances carry
``meta["choice"]`` (candidate positions of the jobs the policy started, in
start order), so the ``recorded`` packing method replays the policy's own
choice and ``epochbench score`` puts it next to the exact optimum.
:class:`GangRecorder` does the same for the row-filling steps of the gang
simulator (:mod:`epochbench.sim.gang`: Schedule and FillMatrix, one instance per row).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from epochbench.instances.checks import recorded_choice
from epochbench.instances.io import write_family
from epochbench.instances.packing import fits_any

from .engine import Policy, packing_instance, positions


class EpochRecorder:
    """``on_pass`` hook recording ``policy``'s selection steps.

    ``min_candidates``: skip steps with fewer candidates (a step with none
    has nothing to decide); ``limit``: stop recording after that many.  A
    step where no candidate fits (:func:`~epochbench.instances.packing.fits_any`)
    is not recorded either, and counted in ``nothing_fits``: every method's
    decision there is the empty one, which ``score`` counted at the
    optimum for each (on a loaded stream, most steps), as ``--epoch-gaps``
    does not.
    Each instance's ``meta`` also holds the selector's options
    (``selector_options``, when given: a replay of the choice needs them)
    and, under an exact selector, ``selector_status`` (``optimal``,
    ``feasible``, or ``fallback`` / ``rule_better`` where the policy's own
    rule decided: :class:`~epochbench.sim.policies.Step`); the manifest's
    params hold the policy's ``options``."""

    def __init__(self, policy: Policy, *, label: str = "", min_candidates: int = 1,
                 limit: int | None = None):
        if not getattr(policy, "has_selector", False):
            raise ValueError(f"policy {policy.name!r} has no packing selection step to record")
        self.policy, self.label = policy, label
        self.min_candidates, self.limit = min_candidates, limit
        self.instances: list = []
        self.passes = self.nothing_fits = 0

    def __call__(self, now, machine, queue, started) -> None:
        self.passes += 1
        step = self.policy.step
        if step is None or len(step.candidates) < self.min_candidates:
            return
        if self.limit is not None and len(self.instances) >= self.limit:
            return
        tb = self.policy.table
        meta = {"name": f"{self.label}epoch{len(self.instances):06d}", "choice": None,   # filled in below
                "policy": self.policy.name, "selector": getattr(self.policy, "selector", None),
                "time": float(now), "job_ids": [int(tb.ids[j]) for j in step.candidates]}
        if getattr(self.policy, "selector_options", None):   # a replay of the choice needs them (fullness=excess)
            meta["selector_options"] = dict(self.policy.selector_options)
        if getattr(step, "outcome", None) is not None:      # an exact selector's: proven, or not, or the rule's
            meta["selector_status"] = step.outcome
        inst, choice = step_instance(self.policy, now, machine, started, meta)
        if not fits_any(inst):
            self.nothing_fits += 1
            return
        inst.meta["choice"] = choice
        self.instances.append(inst)

    def write(self, folder, **params) -> Path:
        """The recorded steps as a family folder (``manifest.json`` + one
        JSON file per step; its params count ``nothing_fits``)."""
        if not self.instances:
            raise ValueError(f"policy {self.policy.name!r} made no selection step with "
                             f">= {self.min_candidates} candidate(s) where one fits: nothing to record")
        return write_family(folder, self.instances, generator="record-epochs",
                            params={"policy": self.policy.name, "options": self.policy.settings(),
                                    "passes": self.passes, "nothing_fits": self.nothing_fits, **params})


def step_instance(policy: Policy, now: float, machine, started, meta: dict) -> tuple:
    """The policy's current selection step (``policy.step``) as a packing
    instance with ``meta``, and the candidate positions of the jobs it
    ``started`` (in start order)."""
    step = policy.step
    inst = packing_instance(policy.table, machine.capacity, step.free, step.candidates, now=now,
                            shadow=step.shadow, extra=step.extra, meta=meta)
    return inst, _choice(step, started)


def _choice(step, started) -> list[int]:
    """The candidate positions of the jobs ``started`` at ``step`` (in start
    order): :func:`~epochbench.sim.engine.positions`."""
    return positions(step.candidates, started)


def choice_of(inst) -> list[int]:
    """The recorded choice of an instance written by :class:`EpochRecorder`
    (:func:`~epochbench.instances.checks.recorded_choice`: a list of job
    indices, else an ``InstanceError``)."""
    return recorded_choice(inst)


# ---- per-epoch gaps along a run (issue 18 item 6) ----------------------------------------------
#: a gap at most this is an epoch where the method matched the reference (``optimal_share``)
GAP_TOL = 1e-9


def _signed_gap(ref: float, value: float) -> float:
    """``(ref - value) / |ref|``; 0 when both are 0, NaN when only ``ref`` is
    (no scale to measure a difference against)."""
    if ref == 0:
        return 0.0 if value == 0 else float("nan")
    return (ref - value) / abs(ref)


class EpochGaps:
    """``on_pass`` hook: at every selection step of ``policy``, the fast
    packing ``methods`` (default FF, BL, BB) solve the same step and their
    per-epoch gap to the policy's own choice is recorded.

    Run with an exact selector (``--selector mkp-bb``: the oracle), the
    policy's choice is the step's optimum and the gap of a method is how far
    its start set would have been from it, epoch by epoch, along the
    oracle's own trajectory: ``(ref - value) / |ref|`` with ``ref`` the
    value of the policy's choice (utilization of the step); where the policy
    started nothing (``ref`` = 0: FCFS with its head blocked) and a method
    starts something, the gap is undefined (NaN: left out of the summary,
    which counts such steps in ``undefined``).  A step
    whose exact answer was not proven (the selector's ``selector_stats``
    counted it unproven) is flagged ``proven = False``, as is every step of
    a policy without an exact selector; there a method can beat the
    reference and its gap is negative.  Recording reads the
    simulator's state only; the schedule does not change.

    Parameters
    ----------
    policy : Policy
        A policy with a packing selection step (``has_selector``).
    methods : sequence of str
        Registered packing methods (heuristics), solved at every step.
    min_candidates : int
        Skip steps with fewer candidates.

    Notes
    -----
    Per step, the cost of the methods on an instance of the step's
    candidates (O(picks n K) each for the greedy rules).
    """

    def __init__(self, policy: Policy, methods=("ff", "bl", "bb"), *, min_candidates: int = 1):
        from epochbench.instances.registry import get
        if not getattr(policy, "has_selector", False):
            raise ValueError(f"policy {policy.name!r} has no packing selection step to compare with")
        methods = tuple(methods)
        if not methods:
            raise ValueError("epoch gaps: name at least one packing method")
        for m in methods:
            if get("packing", m).exact:
                raise ValueError(f"epoch gaps: {m!r} is an exact method; compare heuristics with the run's "
                                 "selector")
            if get("packing", m).kind == "replay":     # refused at the run's first step, naming that step
                raise ValueError(f"epoch gaps: {m!r} replays the choice recorded at an epoch, which a live step "
                                 "has not; the policy's own choice is each step's reference already")
        self.policy, self.methods = policy, methods
        selector = getattr(policy, "selector", None)
        self.exact = selector is not None and get("packing", selector).exact
        self.min_candidates = max(int(min_candidates), 1)
        self.rows: list[dict] = []
        self._unproven = 0
        self.skipped = 0            # selection steps with fewer than min_candidates candidates
        self.contradicted = 0       # steps claimed optimal that a method beat

    def __call__(self, now, machine, queue, started) -> None:
        stats = getattr(self.policy, "selector_stats", None) or {}
        unproven = int(stats.get("unproven", 0))
        proven = self.exact and unproven == self._unproven
        self._unproven = unproven
        step = self.policy.step
        if step is None:
            return
        if len(step.candidates) < self.min_candidates:
            self.skipped += bool(step.candidates)    # a step without candidates decides nothing: no step
            return
        if getattr(step, "instance", None) is not None:     # the selector's own instance of this step
            inst, choice = step.instance, _choice(step, started)
        else:
            inst, choice = step_instance(self.policy, now, machine, started, {"name": f"epoch@{now:g}"})
        ref = inst.value(choice)
        row = {"time": float(now), "candidates": len(step.candidates), "started": len(choice),
               "reference": ref, "proven": bool(proven)}
        for m in self.methods:
            value = self._solve(inst, m, now, step)
            row[f"{m}_value"] = value
            row[f"{m}_gap"] = _signed_gap(ref, value)
        if proven and any(row[f"{m}_value"] > ref + GAP_TOL * max(1.0, abs(ref)) for m in self.methods):
            row["proven"] = False           # a method beat the "optimum": the claim is refuted
            self.contradicted += 1
        self.rows.append(row)

    def _solve(self, inst, method: str, now: float, step) -> float:
        """``method``'s value on the step; a plug-in method that fails (raises,
        or answers what the checker refuses) is one line naming it and the
        step (:class:`~epochbench.instances.core.MethodFailed`), as a
        failing selector is."""
        from epochbench.instances.registry import solve_step
        return solve_step(inst, method, lambda: (f"epoch gaps: method {method!r} failed at step {len(self.rows) + 1} "
                                                 f"of policy {self.policy.name!r}, time {now:g}, on "
                                                 f"{len(step.candidates)} candidate job(s)"), describe=False).value

    def frame(self):
        """The recorded steps as a DataFrame, one row per step; ``counted``:
        the step is one that :meth:`summary`'s gaps are over (something
        fits, and under an exact selector it was proven), so that a gap
        column's mean over the counted rows is the summary's mean (a step
        where nothing fits holds a gap of 0 for every method: a review
        averaged -5.2 % over the whole column where the report said -30.5 %)."""
        import pandas as pd
        cols = ["time", "candidates", "started", "reference", "proven", "counted"] + \
            [f"{m}_{x}" for m in self.methods for x in ("value", "gap")]
        return pd.DataFrame([{**r, "counted": self._counted(r)} for r in self.rows], columns=cols)

    def _counted(self, row: dict) -> bool:
        """Whether :meth:`summary`'s gaps count the recorded step ``row``."""
        return (row["proven"] or not self.exact) and not _nothing_fits(row, self.methods)

    def summary(self) -> dict:
        """Per method ``{m}_gap``: ``count``, ``mean``, ``median``, ``p90``,
        ``max`` (fractions) and ``optimal_share`` (steps with gap <=
        1e-9: at or better than the reference, a heuristic policy's choice
        being beaten where a gap is negative), and ``undefined`` (steps where the policy started nothing and
        the method something: no gap, left out of the others), over the
        steps recorded where something fits (the policy or
        a method starts a job: a step whose candidates all wait has no
        decision to compare, and would count as optimal for every method);
        ``steps``, ``unproven`` and ``nothing_fits`` (those steps left out)
        counts.  Under an exact selector the gaps are over its proven steps
        alone: an unproven step's reference is what the selector fell back
        on (the policy's own rule) or an answer without a proof, so a gap to
        it is no gap to the optimum (at a selector's time limit of 1e-4 s,
        977 steps, all unproven, read ``ff_gap`` mean 0 %: FF against
        itself); ``unproven`` counts them (as the selector's own
        ``selector_stats`` does; 0 under a heuristic policy, whose steps no
        solver proves) and ``nothing_fits`` the others' steps where nothing
        fits, so that ``steps`` = ``unproven`` + ``nothing_fits`` + a
        method's ``count`` + ``undefined`` (an unproven step was counted in
        ``nothing_fits`` too, and a heuristic policy's every step read
        unproven).  ``contradicted``: steps the selector called optimal where
        a method did better (a plug-in's claim refuted; counted in
        ``unproven``); ``skipped``: selection steps left out for having
        fewer than ``min_candidates`` candidates, at least one (not in
        ``steps``; a selector's ``selector_stats`` counts ``steps`` +
        ``skipped``)."""
        counted = [r for r in self.rows if r["proven"]] if self.exact else self.rows
        fits = [r for r in self.rows if self._counted(r)]
        out = {"steps": len(self.rows), "unproven": len(self.rows) - len(counted),
               "nothing_fits": len(counted) - len(fits), "contradicted": self.contradicted,
               "skipped": self.skipped, "min_candidates": self.min_candidates}
        for m in self.methods:
            g = np.array([r[f"{m}_gap"] for r in fits], dtype=float)
            undefined = int(np.isnan(g).sum())
            g = g[~np.isnan(g)]
            out[f"{m}_gap"] = {"count": int(g.size), "undefined": undefined,
                               "mean": float(g.mean()) if g.size else None,
                               "median": float(np.median(g)) if g.size else None,
                               "p90": float(np.quantile(g, 0.9)) if g.size else None,
                               "max": float(g.max()) if g.size else None,
                               "optimal_share": float(np.mean(g <= GAP_TOL)) if g.size else None}
        return out

    def write(self, path) -> Path:
        """The steps as CSV at ``path`` (folders made; written atomically,
        :func:`epochbench.instances.files.atomic_path`)."""
        from epochbench.instances.files import atomic_path
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            self.frame().to_csv(tmp, index=False)
        return path


def _nothing_fits(row: dict, methods) -> bool:
    """A recorded step where neither the policy nor any method started a job."""
    return row["started"] == 0 and row["reference"] == 0 and all(row[f"{m}_value"] == 0 for m in methods)


def both(*hooks):
    """One ``on_pass`` hook calling ``hooks`` in turn (None skipped)."""
    hooks = [h for h in hooks if h is not None]

    def call(now, machine, queue, started):
        for h in hooks:
            h(now, machine, queue, started)
    return call


# ---- gang scheduling (sim.gang) -----------------------------------------------------------
def _bit_rows(masks, n: int) -> np.ndarray:
    """Bit sets (Python ints) of columns as a boolean matrix, one row per mask."""
    nb = (n + 7) // 8
    buf = np.frombuffer(b"".join(int(x).to_bytes(nb, "little") for x in masks), dtype=np.uint8)
    return np.unpackbits(buf.reshape(len(masks), nb), axis=1, bitorder="little")[:, :n].astype(bool)


class GangRecorder:
    """``recorder`` of :func:`epochbench.sim.gang.simulate_gang`: every row-filling
    decision of GS / BGS / MGS / MBGS as a ``packing`` instance with the
    policy's choice in ``meta["choice"]``, like :class:`EpochRecorder`.

    The matrix is one knapsack per row ([zhang-comparative] section 5: each row is a
    virtual machine of ``n`` processors), so every step gives one instance
    per row that has something to decide (some candidate fits its empty
    cells); objective ``profit`` = processors, so the value is the cells the
    step fills in that row and the gap is relative to the best fill.

    * ``schedule`` (Schedule, Schedule-1, Schedule-2): candidates = the
      waiting jobs, queue order, less those the step placed in other rows;
      the choice = those placed in the row (their home).  Resource 0: the
      row's empty cells (a new job takes any empty columns).  BGS / MBGS
      add the row's reservations: resources 1.. are the intervals of the
      row's availability profile (running jobs and the bookings of the jobs
      still waiting, :mod:`epochbench.sim.gang_backfill`), merged where the same
      candidates would run; a candidate started now needs
      its processors on every interval before now + ``mpl`` x estimate (a job
      placed by the step keeps its booked end).  A candidate's own future
      booking stays in the profile, so the instance's optimum is a lower
      bound on the best start set that delays no reservation (our reading:
      conservative backfilling has no single-reservation form).
    * ``fill`` (FillMatrix, FillMatrix-1): candidates = the jobs of the
      matrix not in the row whose columns are empty there, starting-time
      order; the choice = those replicated into the row.  Replicas keep
      their columns, so the resources are the column blocks the candidates
      cut the row into (capacity = the block's columns; a job needs all of
      each block it covers).  Rows take replicas independently, so the sum
      of the per-row optima is reachable.  FillMatrix-2 and the compaction
      steps move jobs between columns or rows and are not recorded.

    A Schedule row is scored given what the step put into the other rows;
    two rows' optima may use the same waiting job, so summed over rows they
    can exceed what one step can reach; per row it is exact.  ``min_candidates``: skip steps with
    fewer candidates; ``every``: keep one in ``every`` of the steps that have
    something to decide (an even sample of a long run; ``seen`` counts them);
    ``limit``: stop after that many instances; ``steps``: which steps to
    record.  A kept step where no candidate fits the row's profile
    (:func:`~epochbench.instances.packing.fits_any`) is counted in
    ``nothing_fits``, not recorded (as :class:`EpochRecorder`).  Recording reads the simulator's state only: the
    schedule is bit-identical with and without it (tests/test_gang_record.py).
    Cost per step O(rows x candidates x (profile intervals + columns)).
    """

    STEPS = ("schedule", "fill")

    def __init__(self, *, label: str = "", min_candidates: int = 1, limit: int | None = None,
                 steps=STEPS, every: int = 1):
        bad = sorted(set(steps) - set(self.STEPS))
        if bad:
            raise ValueError(f"steps: no gang step {bad[0]!r}; known: {', '.join(self.STEPS)}")
        self.label, self.limit, self.steps = label, limit, tuple(steps)
        self.min_candidates = max(int(min_candidates), 1)
        if int(every) != every or every < 1:
            raise ValueError(f"every: keep one step in every k >= 1, got {every!r}")
        self.every, self.seen = int(every), 0
        self.instances: list = []
        self.policy, self.nothing_fits = None, 0

    def _full(self) -> bool:
        return self.limit is not None and len(self.instances) >= self.limit

    def _keep(self) -> bool:
        """Count a step with something to decide; True for one in ``every``."""
        self.seen += 1
        return (self.seen - 1) % self.every == 0

    def _add(self, sim, t, step, r, cands, demand, capacity, used, estimate, choice, resources) -> None:
        from epochbench.instances.packing import PackingInstance

        self.policy = sim.policy
        meta = {"name": f"{self.label}epoch{len(self.instances):06d}", "choice": choice, "policy": sim.policy,
                "step": step, "row": int(r), "mpl": sim.mpl, "time": float(t),
                "job_ids": [int(sim.tb.ids[j]) for j in cands], "resources": resources}
        procs = np.array([sim.procs[j] for j in cands], dtype=np.int64)
        inst = PackingInstance.build(capacity, demand, used, estimate=estimate, profit=procs, objective="profit",
                                     meta=meta, source=f"gang {step} step at t={t:g}")
        if not fits_any(inst):               # a BGS row whose reservations block every candidate
            self.nothing_fits += 1           # (as EpochRecorder: no decision, not recorded)
            return
        self.instances.append(inst)

    # ---- Schedule ----------------------------------------------------------------------
    def before_schedule(self, sim):
        if "schedule" not in self.steps or self._full() or len(sim.queue) < self.min_candidates:
            return None
        return list(sim.queue), list(sim.m.used)

    def schedule(self, t, sim, before, placed) -> None:
        queue, used = before
        n, home, g = sim.n, sim.m.home, sim.guard
        procs = np.array([sim.procs[j] for j in queue], dtype=np.int64)
        row_of = np.array([home.get(j, -1) for j in queue], dtype=np.int64)   # -1: still waiting
        if g is None:
            est = np.asarray(sim.tb.estimate, dtype=np.float64)[queue]
            end = None
        else:
            est = g.est[queue]
            end = np.where(row_of >= 0, [g.end.get(j, math.inf) for j in queue], t + est)
        for r in range(sim.mpl):
            if self._full():
                return
            sel = np.nonzero((row_of < 0) | (row_of == r))[0]   # jobs placed in other rows are taken
            mine = np.nonzero(row_of[sel] == r)[0]
            if not sel.size or (not mine.size and n - used[r] < procs[sel].min()):
                continue                                   # nothing fits: nothing to decide
            if not self._keep():
                continue
            p = procs[sel]
            demand, cap, usd, names = p[:, None], [n], [used[r]], ["cells"]
            if g is not None:
                d, u, tk = self._profile(g, r, n, p, end[sel], {int(i): end[sel][i] for i in mine})
                demand = np.hstack([demand, d])
                cap, usd, names = cap + [n] * len(u), usd + u, names + [f"profile@{x:g}" for x in tk]
            self._add(sim, t, "schedule", r, [queue[i] for i in sel], demand, cap, usd, est[sel],
                      [int(i) for i in mine], names)

    @staticmethod
    def _profile(g, r, n, procs, end, started):
        """Interval resources of row ``r``'s profile: (demand, used, start
        times), intervals merged where the same candidates run (their ends)."""
        m = int(g.m[r])
        pt = g.pt[r, :m].copy()
        free = g.pf[r, :m, 0].astype(np.int64)
        for i, e in started.items():                       # the step's own starts: back to waiting
            free = free + np.where(pt < e, procs[i], 0)
        ends = np.unique(end)
        grp = np.searchsorted(ends, pt, side="right")      # candidates whose end is <= the interval start
        keep = grp < len(ends)
        if not keep.any():
            return np.zeros((len(procs), 0), np.int64), [], []
        pt, free, grp = pt[keep], free[keep], grp[keep]
        first = np.r_[0, np.nonzero(np.diff(grp))[0] + 1]           # grp is non-decreasing along pt
        used = np.clip(n - np.minimum.reduceat(free, first), 0, n)
        demand = np.where(pt[first][None, :] < np.asarray(end)[:, None], procs[:, None], 0)
        return demand.astype(np.int64), [int(u) for u in used], [float(x) for x in pt[first]]

    # ---- FillMatrix ----------------------------------------------------------------------
    def before_fill(self, sim):
        if "fill" not in self.steps or self._full():
            return None
        m = sim.m
        return list(m.occ), dict(m.rows), list(m.order)

    def fill(self, t, sim, before) -> None:
        occ, rows, order = before
        m, n = sim.m, sim.n
        for r in range(sim.mpl):
            if self._full():
                return
            cands = [j for j in order if not (rows[j] >> r) & 1 and not occ[r] & m.cols[j]]
            if not cands or len(cands) < self.min_candidates or not self._keep():
                continue
            cols = _bit_rows([m.cols[j] for j in cands], n)
            blocks, width = np.unique(cols[:, cols.any(axis=0)], axis=1, return_counts=True)
            choice = [i for i, j in enumerate(cands) if (m.rows[j] >> r) & 1]
            est = np.asarray(sim.tb.estimate, dtype=np.float64)[cands]
            self._add(sim, t, "fill", r, cands, blocks * width, width, np.zeros(len(width), np.int64), est,
                      choice, [f"columns x{w}" for w in width])

    def write(self, folder, **params) -> Path:
        """The recorded steps as a family folder (as :meth:`EpochRecorder.write`)."""
        if not self.instances:
            raise ValueError(f"gang policy {self.policy or '?'}: no row-filling step with "
                             f">= {self.min_candidates} candidate(s): nothing to record")
        return write_family(folder, self.instances, generator="record-epochs",
                            params={"policy": self.policy, "machine": "gang", "steps": list(self.steps),
                                    "nothing_fits": self.nothing_fits, **params})


__all__ = ["EpochGaps", "EpochRecorder", "GangRecorder", "both", "choice_of", "step_instance"]
