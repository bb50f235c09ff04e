"""Farm scheduling policies of [capannini2007] (Capannini et al., SC07) section 6.

* :class:`ConvergentScheduling` -- CS (sections 4-5): the Job-Machine
  matrix ``P`` of the seven heuristics (:func:`epochbench.instances.farm.preference_matrix`),
  Clustering & Pre-Matching (the license MKP over the jobs asking for
  critical licenses, ``greedy-mkp`` by default or any ``knapsack`` method of
  the registry, e.g. ``cpsat`` as an oracle; rows of discarded jobs cleared),
  then the matching on what is left (``mis``, ``mfs``, ``imfs`` or an exact
  ``assignment`` method such as ``hungarian``).  Every knapsack and matching
  goes through :func:`epochbench.instances.registry.solve`, hence through the
  families' feasibility checkers.  Four versions (section 6):

  ========== ============ ========== =====================================
  name       incremental  preemptive matching default
  ========== ============ ========== =====================================
  cs-i-p     yes          yes        IMFS from the previous plan
  cs-i-np    yes          no         IMFS, from an empty plan (below)
  cs-ni-p    no           yes        MFS from scratch
  cs-ni-np   no           no         MFS
  ========== ============ ========== =====================================

  Preemptive versions use the constants of footnote 1 (overhead Delta 8) and
  re-plan all jobs in the system (running ones may be stopped or moved);
  non-preemptive ones use Delta 800 and, beyond the seed's "simulate
  non-preemptable jobs by a large Delta", keep every running job on its
  machine structurally: the knapsack sees the copies left by the running
  jobs and the matching the free machines only, so no plan can interrupt a
  job.  So the knapsack profit c-bar_i (section 4.2) is averaged over the
  free machines' columns of the matrix there, not over all of M_Aff_i,
  which can reorder the greedy.  ``incremental`` means the matching starts from the previous plan
  (IMFS, section 5); the matrix is recomputed in full at every event (the
  deadline and anti-aging terms change with the clock for every job).
  In the non-preemptive versions the previous plan holds only running jobs,
  whose machines are not in the matching, so IMFS receives no previous
  plan (``previous`` is empty) and cs-i-np's matching is IMFS started from
  scratch, which reaches MFS's lexicographic optimum (cs-i-np and cs-ni-np
  differ only where matchings of equal weight tie): the "incremental" part
  is exercised by cs-i-p only.
  ``oracle_every=K`` solves every K-th epoch's knapsack (``cpsat``) and
  matching (``hungarian``) exactly as well and records the gaps in
  ``stats`` (issue 8 "per-epoch"): only against a proven optimum
  (``mkp_gap``) or a proven bound (``mkp_gap_vs_bound``); an oracle epoch
  that proved nothing gives no gap and is counted (``mkp_oracle_unproven``).
  An exact knapsack or matcher that times out without a solution does not
  leave the step empty: it falls back to ``greedy-mkp`` / the policy's own
  matcher (``knapsack_fallback``, ``match_fallback``); one that ends with a
  solution it did not prove best (``feasible``) is used and counted
  (``knapsack_unproven``, ``match_unproven``).
* :class:`EDF` -- section 6: jobs by earliest deadline (increasing
  deadline; jobs without one last, by arrival), machines by decreasing
  benchmark, each job on the best
  free machine meeting its CPUs and licenses; a job that finds none may
  preempt the running job with the latest deadline (later than its own) on
  an eligible machine if that frees what it needs.
* :class:`FarmBackfill` -- EASY backfilling on the farm (``easy``: arrival
  order) and flexible backfilling with CS priorities (``bf-rm``: queue by
  the CS priority ``c-bar_i`` of 4.2, reservation for the first job
  recomputed at every event; ``bf-unrm``: the reserved job keeps its
  reservation through events until it starts: it stays at the head whatever
  the priorities say, but the time and machine of its reservation are
  found again at each event, as EASY's are, so that a job ending before its
  estimate moves them earlier; the paper's "maintains the first queued job
  reservation" is read as the job, since a time kept past the earliest one
  would only let backfilled jobs delay the head).  The reservation is the
  earliest estimated time an eligible machine and the head's licenses are
  free together; a later job starts now on a free machine if it ends (by
  estimate) before that time or leaves the reserved machine and the
  reserved license copies alone.  Non-preemptive.

Cost per pass: CS O(N M L) for the matrix plus the matcher (MFS O(nu M
(N + M)), IMFS O((a + e) N M)); EDF O(N M); backfilling O(N M + R log R).
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING

import numpy as np

from epochbench.instances import farm as _farm
from epochbench.instances.core import gap
from epochbench.instances.lazy import lazy_module
from epochbench.instances.registry import solve, solve_step

from . import registry as _registry
from .farm import FarmPolicy, FarmStream, FarmView
from .farm_names import POLICIES          # the policies and options, in the registry

if TYPE_CHECKING:
    from epochbench.instances.assignment import AssignmentInstance
    from epochbench.instances.knapsack import KnapsackInstance

#: the instance modules, imported when a farm policy first builds an instance
#: (not when the policy registry is listed)
_assignment_module = lazy_module("epochbench.instances.assignment")
_knapsack_module = lazy_module("epochbench.instances.knapsack")


# ---- convergent scheduling ----------------------------------------------------------------------
def license_knapsack(lic: np.ndarray, capacity: np.ndarray, profit: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                          np.ndarray]:
    """[capannini2007] 4.2 pre-matching input: among candidate jobs (rows of ``lic``,
    0/1 license requests) with ``profit`` > 0 and license ``capacity`` left,
    the critical licenses (demand > capacity, i.e. ``rho_l > 1``), the jobs
    that cannot run at all (they ask for a license with no copy left) and
    the knapsack items (jobs asking for a critical license).  Returns
    ``(items, blocked, critical)``: item and blocked row indices, critical
    mask.  O(N L)."""
    cand = profit > 0
    blocked = cand & (lic[:, capacity <= 0].any(axis=1) if lic.shape[1] else False)
    live = cand & ~blocked
    crit = lic[live].sum(axis=0) > capacity
    items = live & (lic[:, crit].any(axis=1) if crit.any() else False)
    return np.nonzero(items)[0], np.nonzero(blocked)[0], crit


class ConvergentScheduling(FarmPolicy):
    """CS of [capannini2007] sections 4-5 (module docstring).  ``matcher`` /
    ``knapsack``: registry method names; ``constants`` override footnote 1;
    ``oracle_every`` records per-epoch gaps against ``cpsat`` / ``hungarian``."""

    def __init__(self, incremental: bool = True, preemptive: bool = True, *, matcher: str | None = None,
                 knapsack: str = "greedy-mkp", constants: _farm.Constants | None = None,
                 exact_time_limit: float = 1.0, oracle_every: int = 0, threads: int = 1):
        from epochbench.instances.registry import get_named
        self.incremental, self.preemptive = bool(incremental), bool(preemptive)
        self.matcher = matcher or ("imfs" if incremental else "mfs")
        self.knapsack = knapsack
        get_named("assignment", self.matcher, "matcher")       # unknown names: refused now, not mid-run
        get_named("knapsack", self.knapsack, "mkp")
        self.constants = constants or (_farm.Constants() if preemptive else _farm.Constants.non_preemptive())
        self.exact_time_limit, self.threads = float(exact_time_limit), int(threads)
        self.oracle_every = int(oracle_every)
        self.name = f"cs-{'i' if incremental else 'ni'}-{'p' if preemptive else 'np'}"

    @property
    def moves_running(self) -> bool:
        """The preemptive versions re-plan running jobs ([capannini2007] section
        3: "A job's execution may be interrupted whenever a schedule event
        (job submission or ending) happens")."""
        return self.preemptive

    def exact_steps(self) -> bool:
        """Whether a step calls an exact method, which ``exact_time_limit``
        limits: the matcher or the knapsack method is exact, or the oracle
        runs."""
        from epochbench.instances.registry import get
        return (bool(self.oracle_every) or get("knapsack", self.knapsack).exact
                or get("assignment", self.matcher).exact)

    def options(self) -> dict:
        return {"matcher": self.matcher, "knapsack": self.knapsack, "oracle_every": self.oracle_every,
                "constants": asdict(self.constants)}

    def load_step_methods(self) -> None:
        """The knapsack and matching methods' kernels and solvers, the
        fallback's and the oracle's (:func:`~epochbench.instances.registry.load`):
        the first pass paid 0.6 s for them."""
        from epochbench.instances.registry import load
        for family, name in (("knapsack", self.knapsack), ("knapsack", "greedy-mkp"), ("assignment", self.matcher),
                             *((("knapsack", "cpsat"), ("assignment", "hungarian")) if self.oracle_every else ())):
            load(family, name)

    def reset(self, stream: FarmStream) -> None:
        self.stats = {"knapsacks": 0, "discarded": 0, "blocked": 0, "mkp_gap": [], "mkp_gap_vs_bound": [],
                      "mkp_oracle_unproven": 0, "knapsack_fallback": 0, "match_fallback": 0, "knapsack_unproven": 0,
                      "match_unproven": 0, "match_gap": [], "match_card_gap": []}
        self._chose_none = None

    def _exact_kw(self, method: str, family: str) -> dict:
        from epochbench.instances.registry import cold, get
        m = get(family, method)
        return cold(m, {"time_limit": self.exact_time_limit, "threads": self.threads}) if m.exact else {}

    def plan(self, view: FarmView) -> dict[int, int]:
        self._chose_none = None
        state = view.state()
        p = _farm.preference_matrix(state, self.constants, ok=view.eligible[view.jobs])
        run = state.jobs.running_on
        if self.preemptive:
            rows = np.arange(state.n)
            cols = np.arange(state.m)
            capacity = state.copies.astype(np.int64)
            fixed: dict[int, int] = {}
        else:
            rows = np.nonzero(run < 0)[0]
            cols = np.nonzero(view.machine_job < 0)[0]
            capacity = view.license_free.astype(np.int64)
            fixed = {int(view.jobs[k]): int(run[k]) for k in np.nonzero(run >= 0)[0]}
        sub = p[np.ix_(rows, cols)]
        # Clustering & Pre-Matching (4.2): clear the rows the license knapsack discards
        lic = state.jobs.licenses[rows]
        profit = _farm.mkp_profit(sub)
        items, blocked, crit = license_knapsack(lic, capacity, profit)
        sub[blocked] = 0.0
        self.stats["blocked"] += int(blocked.size)
        if items.size:
            inst = _knapsack_module.KnapsackInstance.build(
                capacity[crit], lic[items][:, crit].astype(np.int64), profit[items],
                {"name": f"{self.name}-mkp-{view.passes}"})
            res = self._knapsack(inst)
            if not res.decision:
                self._chose_none = ("mkp", res.method, items.size)
            keep = np.zeros(items.size, dtype=bool)
            keep[list(res.decision)] = True
            sub[items[~keep]] = 0.0
            self.stats["knapsacks"] += 1
            self.stats["discarded"] += int((~keep).sum())
            if self._oracle(view):
                with self._measuring():
                    self._mkp_oracle(inst, res)
        # Matching (5)
        prev = None
        if self.incremental and self.preemptive:
            k = np.nonzero(run >= 0)[0]  # preemptive: rows and cols are all jobs and all machines
            keep = sub[k, run[k]] > 0
            prev = np.stack([k[keep], run[k][keep]], axis=1).tolist()
        inst = _assignment_module.AssignmentInstance.build(
            sub, {"name": f"{self.name}-match-{view.passes}", "previous": prev})
        res = self._match(inst, self.matcher, prev)
        if not res.decision and (sub > 0).any():
            self._chose_none = ("matcher", res.method, int((sub > 0).any(axis=1).sum()))
        if self._oracle(view):
            with self._measuring():
                ex = solve(inst, "hungarian")
                self.stats["match_gap"].append(gap(res.value, ex.value) if ex.value > 0 else 0.0)
                card = len(ex.decision)
                self.stats["match_card_gap"].append((card - len(res.decision)) / card if card else 0.0)
        plan = dict(fixed)
        for k, c in res.decision:
            plan[int(view.jobs[rows[k]])] = int(cols[c])
        return plan

    def why_stuck(self) -> str | None:
        """Why a farm with jobs queued and nothing running is stuck, as far
        as this policy knows (:func:`~epochbench.sim.farm.simulate_farm`
        adds it to its line): the last pass's knapsack or matcher chose none
        of the jobs it was given.  Only a user's method does that while a
        job can run (the built-in ones keep or pair at least one)."""
        if self._chose_none is None:
            return None
        role, method, n = self._chose_none
        return f"its last pass's {role} {method!r} chose none of the {n} job(s) it was given"

    def _knapsack(self, inst: KnapsackInstance):
        """The license knapsack by ``self.knapsack``.  An exact method that
        timed out without a solution does not discard every item: the step
        falls back to ``greedy-mkp``, the policy's own rule (counted in
        ``stats["knapsack_fallback"]``)."""
        res = self._solved(inst, self.knapsack, "mkp", self._exact_kw(self.knapsack, "knapsack"))
        if not res.decision and res.status in ("timeout", "infeasible"):
            self.stats["knapsack_fallback"] += 1
            res = solve(inst, "greedy-mkp", describe=False)
        else:
            self._unproven(res, "knapsack", self.knapsack, "knapsack_unproven")
        return res

    def _solved(self, inst, method: str, role: str, kw: dict):
        """``solve(inst, method)`` for one of the policy's steps; a user's
        method that raises or gives a decision the checker refuses stops the
        run with one line naming it, its role (``matcher``, ``mkp``) and the
        step (a traceback, or an ``InfeasibleSolution`` read as bad input,
        exit status 2), as a pool selector's failure does."""
        return solve_step(inst, method, lambda: f"{role} {method!r} of policy {self.name!r} failed on step "
                                                f"{inst.meta.get('name')!r}", describe=False, **kw)

    def _unproven(self, res, family: str, method: str, key: str) -> None:
        """Count in ``stats[key]`` an exact step's answer that its time
        limit cut short (``feasible``: used, not proven best)."""
        from epochbench.instances.registry import get
        if get(family, method).exact and res.status != "optimal":
            self.stats[key] += 1

    def _match(self, inst: AssignmentInstance, matcher: str, prev):
        """The matching by ``matcher``; an exact one that timed out without a
        solution falls back to the policy's own matcher (IMFS when
        incremental, else MFS; counted in ``stats["match_fallback"]``)."""
        kw = self._exact_kw(matcher, "assignment")
        if matcher == "imfs":
            kw["previous"] = prev or []
        res = self._solved(inst, matcher, "matcher", kw)
        if not res.decision and res.status in ("timeout", "infeasible"):
            self.stats["match_fallback"] += 1
            res = self._match(inst, "imfs" if self.incremental else "mfs", prev)
        else:
            self._unproven(res, "assignment", matcher, "match_unproven")
        return res

    def _mkp_oracle(self, inst: KnapsackInstance, res) -> None:
        """Per-epoch gap of the knapsack step against ``cpsat``: against a
        proven optimum in ``stats["mkp_gap"]``, against a proven upper bound
        only in ``stats["mkp_gap_vs_bound"]`` (an upper estimate of the gap);
        an oracle that proved nothing is counted in
        ``stats["mkp_oracle_unproven"]`` and gives no gap."""
        ex = solve(inst, "cpsat", time_limit=self.exact_time_limit, threads=self.threads)
        if ex.status == "optimal":
            key, ref = "mkp_gap", ex.value
        elif ex.bound is not None:
            key, ref = "mkp_gap_vs_bound", ex.bound
        else:
            self.stats["mkp_oracle_unproven"] += 1
            return
        g = gap(res.value, ref)
        if g is not None and np.isfinite(g):
            self.stats[key].append(float(g))

    def _oracle(self, view: FarmView) -> bool:
        return self.oracle_every > 0 and view.passes % self.oracle_every == 0

    @contextmanager
    def _measuring(self):
        """Time spent inside is measurement (oracles), not scheduling."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.untimed += time.perf_counter() - t0


# ---- EDF ----------------------------------------------------------------------------------------
class EDF(FarmPolicy):
    """[capannini2007] section 6 EDF (module docstring); preemptive by default.

    Jobs are taken by increasing deadline.  [capannini2007] writes that EDF sorts
    the jobs "in decreasing order" of deadline; that contradicts the name
    (Earliest Deadline First) and the policy's purpose (the most urgent job
    first), so we read it as decreasing urgency, i.e. increasing deadline.
    A job preempted in a pass waits for the next event, as the paper's
    preempted jobs are "rescheduled" at the next scheduling step, even when
    an eligible machine is still free: placing it there at once would move
    it to another (often slower) machine in the middle of its run (on a
    two-machine example it then ended at 1,990 s rather than 1,100 s), and
    on [capannini2007]'s set-up (1,500 jobs, 150 machines, 3 seeds) it
    changes the late share by 0.1 point.  O(N M) per pass."""

    def __init__(self, preemptive: bool = True):
        self.preemptive = bool(preemptive)
        self.name = "edf" if preemptive else "edf-np"

    def reset(self, stream: FarmStream) -> None:
        self.stats = {"preempted": 0}
        self.order_m = np.argsort(-stream.machines.bench, kind="stable")
        self.lic = stream.jobs.licenses
        dl = stream.jobs.deadline
        self.key = np.where(np.isnan(dl), np.inf, dl)

    def plan(self, view: FarmView) -> dict[int, int]:
        plan = {int(i): int(m) for i, m in zip(view.running, view.running_on[view.running_on >= 0])}
        mjob = view.machine_job.copy()
        free_lic = view.license_free.copy()
        q = view.queued
        q = q[np.lexsort((q, view.stream.jobs.submit[q], self.key[q]))]
        om = self.order_m
        for i in q:
            need = self.lic[i]
            lic_ok = bool(np.all(free_lic[need] >= 1))
            free = mjob[om] < 0
            if lic_ok and free.any():
                cand = om[free & view.eligible[i, om]]
                if cand.size:
                    m = int(cand[0])
                    plan[int(i)] = m
                    mjob[m] = i
                    free_lic -= need
                    continue
            if not self.preemptive or not np.isfinite(self.key[i]):
                if not free.any():
                    break  # no machine free and no later job may preempt (EDF order)
                continue
            # preempt the running job with the latest deadline after ours that frees what i needs
            jm = mjob[om]
            ok = view.eligible[i, om] & (jm >= 0)
            if not ok.any():
                continue
            jj = np.where(ok, jm, 0)
            ok &= self.key[jj] > self.key[i]
            short = need & (free_lic < 1)
            if short.any():
                ok &= self.lic[jj][:, short].all(axis=1)
            if not ok.any():
                continue
            k = int(np.argmax(np.where(ok, self.key[jj], -np.inf)))  # first (fastest) among the latest
            best = int(om[k])
            j = int(mjob[best])
            del plan[j]
            free_lic += self.lic[j]
            free_lic -= need
            plan[int(i)] = best
            mjob[best] = i
            self.stats["preempted"] += 1
        return plan


# ---- backfilling -------------------------------------------------------------------------------
class FarmBackfill(FarmPolicy):
    """EASY / flexible backfilling on the farm (module docstring).
    ``order``: ``"fcfs"`` (EASY) or ``"cs"`` (CS priority ``c-bar_i``);
    ``keep_reservation``: BF-unrm.  Non-preemptive.  O(N M + R log R)."""

    preemptive = False

    def __init__(self, order: str = "fcfs", keep_reservation: bool = False, name: str | None = None,
                 constants: _farm.Constants | None = None):
        if order not in ("fcfs", "cs"):
            raise ValueError(f"order must be 'fcfs' or 'cs', got {order!r}")
        self.order, self.keep = order, bool(keep_reservation)
        self.constants = constants or _farm.Constants.non_preemptive()
        self.name = name or ("easy" if order == "fcfs" else ("bf-unrm" if keep_reservation else "bf-rm"))

    def options(self) -> dict:
        return {"order": self.order, "keep_reservation": self.keep}

    def reset(self, stream: FarmStream) -> None:
        self.stats = {"backfilled": 0, "reservations": 0}
        self.order_m = np.argsort(-stream.machines.bench, kind="stable")
        self.lic = stream.jobs.licenses
        self.reserved = -1

    def _queue(self, view: FarmView) -> np.ndarray:
        q = view.queued
        if self.order == "fcfs":
            return q[np.lexsort((q, view.stream.jobs.submit[q]))]
        state = view.state()
        prio = _farm.mkp_profit(_farm.preference_matrix(state, self.constants, ok=view.eligible[view.jobs]))
        pos = np.searchsorted(view.jobs, q)
        order = np.lexsort((q, -prio[pos]))
        q = q[order]
        if self.keep and self.reserved >= 0 and self.reserved in q:
            q = np.concatenate(([self.reserved], q[q != self.reserved]))
        return q

    def _start(self, i, mjob, free_lic, view):
        """Best (highest benchmark) free eligible machine for i, -1 if none or
        licenses short."""
        if not np.all(free_lic[self.lic[i]] >= 1):
            return -1
        ok = (mjob[self.order_m] < 0) & view.eligible[i, self.order_m]
        cand = self.order_m[ok]
        return int(cand[0]) if cand.size else -1

    def plan(self, view: FarmView) -> dict[int, int]:
        plan = {int(i): int(m) for i, m in zip(view.running, view.running_on[view.running_on >= 0])}
        mjob = view.machine_job.copy()
        free_lic = view.license_free.copy()
        q = list(self._queue(view))
        # start jobs in queue order while the head fits
        while q:
            m = self._start(q[0], mjob, free_lic, view)
            if m < 0:
                break
            i = int(q.pop(0))
            plan[i], mjob[m] = m, i
            free_lic -= self.lic[i]
            if i == self.reserved:
                self.reserved = -1
        if not q:
            return plan
        head = int(q[0])
        if self.keep and self.reserved < 0:
            self.reserved = head
        shadow, rm, extra = self._reservation(head, plan, mjob, free_lic, view)
        self.stats["reservations"] += 1
        for i in q[1:]:
            if not (mjob < 0).any():
                break
            i = int(i)
            need = self.lic[i]
            if not np.all(free_lic[need] >= 1):
                continue
            ok = (mjob[self.order_m] < 0) & view.eligible[i, self.order_m]
            for m in self.order_m[ok]:
                m = int(m)
                ends = view.now + float(view.remaining([i], [m])[0]) <= shadow
                if not ends and (m == rm or np.any(extra[need] < 1)):
                    continue
                plan[i], mjob[m] = m, i
                free_lic -= need
                if not ends:
                    extra -= need
                self.stats["backfilled"] += 1
                break
        return plan

    def _reservation(self, head, plan, mjob, free_lic, view):
        """Earliest estimated time ``shadow`` at which an eligible machine
        ``rm`` and the head's licenses are free together (running jobs end
        by estimate), and the license copies ``extra`` left at that time
        beyond the head's."""
        run = np.array(sorted(plan), dtype=np.int64)
        mach = np.array([plan[i] for i in run], dtype=np.int64)
        end = view.now + view.remaining(run, mach) if run.size else np.zeros(0)
        order = np.argsort(end, kind="stable")
        lic = free_lic.copy()
        freem = mjob < 0
        need = self.lic[head]
        elig = view.eligible[head]
        t = view.now
        for k in order:
            t = float(end[k])
            freem[mach[k]] = True
            lic += self.lic[run[k]]
            if np.all(lic[need] >= 1):
                ok = freem[self.order_m] & elig[self.order_m]
                if ok.any():
                    rm = int(self.order_m[ok][0])
                    return t, rm, lic - need
        raise RuntimeError(f"{self.name}: job {head} fits nowhere even on an empty farm")


def make_farm_policy(name: str, **kw) -> FarmPolicy:
    """A farm policy object by name (:data:`POLICIES`, through the policy
    registry); CS options ``matcher``, ``knapsack``, ``exact_time_limit``,
    ``oracle_every``, ``constants``; other policies take none."""
    try:
        spec = _registry.get_policy("farm", name)
    except KeyError:
        raise ValueError(f"unknown farm policy {name!r}; known: {', '.join(POLICIES)}") from None
    try:
        return spec.make(**kw)
    except ValueError as exc:
        raise ValueError(f"policy {name!r}: {exc}") from None


__all__ = ["license_knapsack", "ConvergentScheduling", "EDF", "FarmBackfill", "POLICIES", "make_farm_policy"]
