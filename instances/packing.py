"""The ``packing`` and ``epochs`` families ([leinberger1999] section 2, [vadhiyar-notes] LOS).

``packing``: which queued jobs start now on a machine of K resources.  Job j
needs ``demand[j]`` (a K-vector); the selected jobs must fit in
``capacity - used``.  With a reservation for the blocked queue head (EASY /
LOS, [vadhiyar-notes] "Freedom from starvation"), jobs flagged ``runtime_past_shadow``
(still running at the shadow time) must also fit together in ``extra``.

``epochs``: the fewest equal-length epochs that run every job, each epoch a
set of jobs fitting in ``capacity`` (vector bin packing; [leinberger1999] figure 1,
"UNC").
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from .core import (
    InfeasibleSolution,
    InstanceError,
    Result,
    float_array,
    float_vector,
    int_matrix,
    meta_dict,
    profit_vector,
)
from . import io as _io
from .checks import SEQUENCES, distinct, exact_bin_loads, exact_loads, indices, over, short, subset_sums_fit

OBJECTIVES = ("utilization", "count", "profit")


def _demand(value, source: str, k: int) -> np.ndarray:
    if isinstance(value, (list, tuple)) and len(value) == 0:
        value = np.zeros((0, k), dtype=np.int64)
    demand = int_matrix(value, "demand", source, ndim=2)
    if demand.shape[0] and demand.shape[1] != k:
        raise InstanceError(
            f"{source}: field 'demand' has {demand.shape[1]} resources per job, "
            f"but 'capacity' has K = {k}")
    if demand.shape[0] == 0:
        demand = np.zeros((0, k), dtype=np.int64)
        demand.setflags(write=False)
    return demand


def _flags(value, name: str, source: str) -> np.ndarray:
    """``value`` as a bool vector: booleans, or the integers 0 and 1; NaN,
    fractions, other numbers and strings refused (numpy would read any
    non-zero as true).  O(n)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        raise InstanceError(f"{source}: field '{name}' is not a flat array of true / false") from None
    if arr.dtype.kind == "b":
        return arr
    if arr.size == 0 or (arr.dtype.kind in "iu" and np.isin(arr, (0, 1)).all()):
        return arr.astype(bool)
    raise InstanceError(f"{source}: field '{name}' must hold true / false (or 0 / 1), got "
                        f"{short(arr.tolist(), 40)}")


@dataclass(frozen=True, eq=False)
class Reservation:
    """Head-of-queue reservation: at time ``shadow`` the head starts and
    ``extra`` (K) is what remains beyond its needs; jobs flagged in
    ``past_shadow`` would still run then, so together they fit in ``extra``."""

    shadow: float
    extra: np.ndarray
    past_shadow: np.ndarray  # bool, one per queued job


class _Jobs:
    """Shape and name of an instance with ``capacity`` (K) and ``demand`` (n x K)."""

    @property
    def n(self) -> int:
        return self.demand.shape[0]

    @property
    def k(self) -> int:
        return self.capacity.shape[0]

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "<unnamed>"))


@dataclass(frozen=True, eq=False)
class PackingInstance(_Jobs):
    """One scheduling epoch's start decision: which of the waiting jobs to
    start now on the free part of the machine (the family ``packing``,
    maximising).  Made by :meth:`build` (which validates), a generator or
    :func:`epochbench.load`; frozen, its arrays read-only.

    Parameters
    ----------
    capacity : (K,) int64 array
        The machine's size per resource (processors first).
    demand : (n, K) int64 array
        Each waiting job's need per resource.
    used : (K,) int64 array
        What running jobs hold; the free part is ``capacity - used``.
    estimate : (n,) float array or None
        The jobs' runtime estimates (LOS and the reservation read them).
    profit : (n,) float array or None
        Each job's profit: needed by the objective ``"profit"``.
    reservation : Reservation or None
        EASY's head-of-queue reservation: jobs flagged past the shadow time
        fit together in ``extra`` (:class:`Reservation`).
    objective : {"utilization", "count", "profit"}
        What a selection is worth (:meth:`weights`): the mean share of the
        machine it uses, the number of jobs, or their profit.
    meta : dict
        ``name`` and any other JSON values (``optimum``, ``upper_bound``,
        ``dataset``: what :func:`~epochbench.bench.scoring.reference` reads).

    Notes
    -----
    ``kind`` is ``"packing"``, ``sense`` ``"max"``; ``n`` jobs, ``k``
    resources.  A decision is a tuple of job indices
    (:func:`~epochbench.instances.packing.check_packing`).
    """

    capacity: np.ndarray
    demand: np.ndarray
    used: np.ndarray
    estimate: np.ndarray | None = None
    profit: np.ndarray | None = None
    reservation: Reservation | None = None
    objective: str = "utilization"
    meta: dict = field(default_factory=dict)

    kind = "packing"
    sense = "max"

    @classmethod
    def build(cls, capacity, demand, used=None, *, estimate=None, profit=None,
              shadow=None, extra=None, runtime_past_shadow=None, now=0.0,
              objective="utilization", meta=None, source="<instance>"):
        """Validate and build; every error names ``source`` and the field."""
        cap = int_matrix(capacity, "capacity", source, ndim=1)
        k = cap.shape[0]
        if k == 0:
            raise InstanceError(f"{source}: field 'capacity' is empty (K must be >= 1)")
        if objective == "utilization":         # its shares divide by the capacity (a knapsack's license may have none)
            _positive_capacity(cap, source)
        dem = _demand(demand, source, k)
        n = dem.shape[0]
        usd = int_matrix(np.zeros(k, dtype=np.int64) if used is None else used, "used", source, ndim=1)
        if usd.shape[0] != k:
            raise InstanceError(f"{source}: field 'used' has length {usd.shape[0]}, capacity has K = {k}")
        over = np.nonzero(usd > cap)[0]
        if over.size:
            raise InstanceError(f"{source}: field 'used' exceeds 'capacity' on resource {int(over[0])}")
        est = None if estimate is None else float_vector(estimate, "estimate", source, n)
        if est is not None and est.size and est.min() < 0:     # a duration
            raise InstanceError(f"{source}: field 'estimate' has a negative entry {est.min()} at "
                                f"{int(np.argmin(est))}")
        prof = None if profit is None else profit_vector(profit, source, n)
        if objective not in OBJECTIVES:
            raise InstanceError(f"{source}: field 'objective' must be one of {OBJECTIVES}, got {objective!r}")
        if objective == "profit" and prof is None:
            raise InstanceError(f"{source}: objective 'profit' needs field 'profit'")
        res = None
        if shadow is not None or extra is not None or runtime_past_shadow is not None:
            if shadow is None or extra is None:
                raise InstanceError(f"{source}: a reservation needs both 'shadow' and 'extra'")
            shadow = float(float_array(shadow, "shadow", source, ndim=0))
            now = float(float_array(now, "now", source, ndim=0))
            ext = int_matrix(extra, "extra", source, ndim=1)
            if ext.shape[0] != k:
                raise InstanceError(f"{source}: field 'extra' has length {ext.shape[0]}, capacity has K = {k}")
            beyond = np.nonzero(ext > cap)[0]
            if beyond.size:       # what is left beside the head at its start: never more than the machine
                r = int(beyond[0])
                raise InstanceError(f"{source}: field 'extra' has {int(ext[r])} on resource {r}, beyond its "
                                    f"capacity {int(cap[r])}")
            if shadow < now:
                raise InstanceError(f"{source}: field 'shadow' ({shadow:g}) is before 'now' ({now:g}): the head's "
                                    "reservation lies ahead")
            if runtime_past_shadow is None:
                if est is None:
                    raise InstanceError(
                        f"{source}: reservation needs 'runtime_past_shadow' flags or 'estimate'")
                flags = now + est > float(shadow)
            else:
                flags = _flags(runtime_past_shadow, "runtime_past_shadow", source)
                if flags.shape != (n,):
                    raise InstanceError(
                        f"{source}: field 'runtime_past_shadow' must have length {n}, got {flags.shape}")
            flags = flags.copy()
            flags.setflags(write=False)
            res = Reservation(float(shadow), ext, flags)
        return cls(cap, dem, usd, est, prof, res, objective, meta_dict(meta, source))

    # ---- derived quantities -------------------------------------------------
    @property
    def free(self) -> np.ndarray:
        """``capacity - used``, read-only, computed once (a simulated step
        asks for it in every solve and check)."""
        free = self.__dict__.get("_free")
        if free is None:
            free = self.capacity - self.used
            free.setflags(write=False)
            self.__dict__["_free"] = free
        return free

    def weights(self, objective: str | None = None) -> np.ndarray:
        """Per-job objective coefficient: the objective is ``weights[S].sum()``.
        Read-only, computed once per objective (the instance's arrays are
        read-only too): a simulated step asks for them at every solve and
        every check of its value."""
        objective = objective or self.objective
        cache = self.__dict__.setdefault("_weights_by_objective", {})
        w = cache.get(objective)
        if w is None:
            w = self._weights(objective)
            w.setflags(write=False)
            cache[objective] = w
        return w

    def _weights(self, objective: str) -> np.ndarray:
        if objective == "count":
            return np.ones(self.n)
        if objective == "profit":
            if self.profit is None:
                raise InstanceError(f"{self.name}: objective 'profit' needs field 'profit'")
            return np.array(self.profit, dtype=float)
        cap = self.capacity.astype(float)
        share = np.divide(self.demand, cap, out=np.zeros(self.demand.shape), where=cap > 0)
        return share.sum(axis=1) / self.k

    def value(self, selected: Sequence[int], objective: str | None = None) -> float:
        """The objective's value of the jobs ``selected``, summed in index
        order: the same set has the same value whatever order it was picked
        in (BL's pick order and CP-SAT's sorted set differed in the last
        place, 0.22866666666666668 against 0.2286666666666667).  O(s log s)."""
        idx = np.sort(np.asarray(list(selected), dtype=np.int64))
        return float(self.weights(objective)[idx].sum()) if idx.size else 0.0

    def with_objective(self, objective: str) -> "PackingInstance":
        return replace(self, objective=objective)

    # ---- JSON -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """The instance as the fields of its file (:func:`epochbench.save`
        writes them as JSON): arrays stay numpy arrays, so ``json.dumps`` of
        this dict needs them as lists first
        (:func:`epochbench.instances.core.json_text` does that); ``from_dict``
        reads either back.  O(size)."""
        d = {"kind": "packing", "capacity": self.capacity, "used": self.used,
             "demand": self.demand, "objective": self.objective}
        if self.estimate is not None:
            d["estimate"] = self.estimate
        if self.profit is not None:
            d["profit"] = self.profit
        if self.reservation is not None:
            d["shadow"] = self.reservation.shadow
            d["extra"] = self.reservation.extra
            d["runtime_past_shadow"] = self.reservation.past_shadow
        d["meta"] = self.meta
        return d

    @classmethod
    def from_dict(cls, d: dict, source="<dict>") -> "PackingInstance":
        """The instance of a file's fields ``d`` (its ``to_dict``, lists or
        arrays), validated as :meth:`build` does; every error names
        ``source`` and the field (:class:`~epochbench.instances.core.InstanceError`)."""
        _expect_kind(d, "packing", source)
        _io.check_fields(d, PACKING_FIELDS, source, required=("capacity", "demand"))
        now = d.get("now")
        return cls.build(d["capacity"], d["demand"], d.get("used"), estimate=d.get("estimate"),
                         profit=d.get("profit"), shadow=d.get("shadow"), extra=d.get("extra"),
                         runtime_past_shadow=d.get("runtime_past_shadow"), now=0.0 if now is None else now,
                         objective=d.get("objective", "utilization"), meta=d.get("meta"), source=source)


@dataclass(frozen=True, eq=False)
class EpochsInstance(_Jobs):
    """Jobs to run in the fewest epochs (the family ``epochs``, minimising:
    vector bin packing), each epoch a set of jobs that fit the machine
    together.  Made by :meth:`build` (which validates), a generator or
    :func:`epochbench.load`; frozen, its arrays read-only.

    Parameters
    ----------
    capacity : (K,) int64 array
        The machine's size per resource; every entry positive.
    demand : (n, K) int64 array
        Each job's need per resource; no row above ``capacity``.
    meta : dict
        ``name`` and any other JSON values (``optimum``, ``lower_bound``).

    Notes
    -----
    ``kind`` is ``"epochs"``, ``sense`` ``"min"``; the decision is a tuple
    of bins, each a tuple of job indices; :meth:`lower_bound` is the
    volume bound scoring falls back on.
    """

    capacity: np.ndarray
    demand: np.ndarray
    meta: dict = field(default_factory=dict)

    kind = "epochs"
    sense = "min"

    @classmethod
    def build(cls, capacity, demand, meta=None, source="<instance>"):
        cap = int_matrix(capacity, "capacity", source, ndim=1)
        if cap.shape[0] == 0:
            raise InstanceError(f"{source}: field 'capacity' is empty (K must be >= 1)")
        _positive_capacity(cap, source)
        dem = _demand(demand, source, cap.shape[0])
        too_big = np.nonzero((dem > cap).any(axis=1))[0]
        if too_big.size:
            j = int(too_big[0])
            raise InstanceError(
                f"{source}: field 'demand' row {j} {dem[j].tolist()} exceeds the machine "
                f"{cap.tolist()}; it can never run")
        return cls(cap, dem, meta_dict(meta, source))

    def lower_bound(self) -> int:
        """max_k ceil(sum_j demand[j,k] / capacity[k]) (at least 1 if any job)."""
        if self.n == 0:
            return 0
        tot = self.demand.sum(axis=0, dtype=object)     # Python integers: no int64 overflow
        cap = self.capacity
        lb = max(int(-(-int(t) // int(c))) if c > 0 else 0 for t, c in zip(tot, cap))
        return max(lb, 1)

    def packing(self, remaining: Sequence[int]) -> PackingInstance:
        """The packing instance of one epoch: an empty machine, the jobs left."""
        idx = np.asarray(list(remaining), dtype=np.int64)
        return PackingInstance.build(self.capacity, self.demand[idx] if idx.size else np.zeros((0, self.k)),
                                     meta={"name": f"{self.name}/epoch"})

    def value(self, bins) -> float:
        return float(len(bins))

    def to_dict(self) -> dict:
        """The instance as the fields of its file (:func:`epochbench.save`
        writes them as JSON): arrays stay numpy arrays, so ``json.dumps`` of
        this dict needs them as lists first
        (:func:`epochbench.instances.core.json_text` does that); ``from_dict``
        reads either back.  O(size)."""
        return {"kind": "epochs", "capacity": self.capacity, "demand": self.demand, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict, source="<dict>") -> "EpochsInstance":
        """The instance of a file's fields ``d`` (its ``to_dict``, lists or
        arrays), validated as :meth:`build` does; every error names
        ``source`` and the field (:class:`~epochbench.instances.core.InstanceError`)."""
        _expect_kind(d, "epochs", source)
        _io.check_fields(d, EPOCHS_FIELDS, source, required=("capacity", "demand"))
        return cls.build(d["capacity"], d["demand"], d.get("meta"), source=source)


#: JSON type of each field of a packing / epochs instance file (:func:`epochbench.instances.io.check_fields`)
PACKING_FIELDS = {"capacity": "array", "demand": "matrix", "used": "array", "estimate": "array",
                  "profit": "array", "shadow": "number", "extra": "array", "runtime_past_shadow": "flags",
                  "now": "number", "objective": "string"}
EPOCHS_FIELDS = {"capacity": "array", "demand": "matrix"}


def _expect_kind(d: dict, kind: str, source: str) -> None:
    if d.get("kind") != kind:
        raise InstanceError(f"{source}: field 'kind' is {d.get('kind')!r}, expected {kind!r}")


# ---- independent feasibility checks ----------------------------------------------
def check_packing(inst: PackingInstance, selected) -> tuple[int, ...]:
    """Raise :class:`InfeasibleSolution` unless ``selected`` is a feasible start set.

    Checks: a sequence of integer job indices (no floats, booleans or
    strings: :func:`epochbench.instances.checks.indices`) in range, no repeats, the
    sum of demands fits in ``capacity - used`` on every resource, and, with
    a reservation, the jobs flagged past the shadow time fit in ``extra``.
    Returns the indices in pick order, as Python ints.  Nothing from any
    solver.

    Notes
    -----
    O(|selected| K).  Sums are exact (:func:`epochbench.instances.checks.exact_loads`):
    int64 when the magnitudes prove no overflow, Python integers otherwise.
    """
    name = inst.name
    sel = indices(selected, inst.n, f"{name}: selection")
    distinct(sel, f"{name}: selection", "starts")
    load = exact_loads(inst.demand, sel, inst.used, fits=subset_sums_fit(inst, "demand_used", inst.demand, inst.used))
    r = over(load, inst.capacity)
    if r is not None:
        raise InfeasibleSolution(
            f"{name}: resource {r} over-committed: used {int(inst.used[r])} + selected "
            f"{int(load[r]) - int(inst.used[r])} > capacity {int(inst.capacity[r])}")
    res = inst.reservation
    if res is not None and sel:
        late = tuple(j for j in sel if res.past_shadow[j])
        ext = exact_loads(inst.demand, late, fits=subset_sums_fit(inst, "demand", inst.demand))
        r = over(ext, res.extra)
        if r is not None:
            raise InfeasibleSolution(
                f"{name}: reservation broken on resource {r}: jobs running past the shadow time "
                f"need {int(ext[r])} > extra {int(res.extra[r])}")
    return sel


def fits_alone(inst: PackingInstance) -> np.ndarray:
    """Per job of ``inst``, whether it alone is a feasible start
    (:func:`check_packing`): it fits in ``capacity - used`` and, past the
    shadow time, in ``extra``.  O(n K)."""
    fits = (inst.demand <= inst.free).all(axis=1)
    res = inst.reservation
    if res is not None:
        fits &= ~np.asarray(res.past_shadow, dtype=bool) | (inst.demand <= res.extra).all(axis=1)
    return fits


def fits_any(inst: PackingInstance) -> bool:
    """Whether some job of ``inst`` alone is a feasible start (:func:`fits_alone`).
    Where none is, every decision is the empty one: a simulated step with
    nothing to decide.  O(n K)."""
    return bool(fits_alone(inst).any())


def check_epochs(inst: EpochsInstance, bins) -> tuple[tuple[int, ...], ...]:
    """Raise :class:`InfeasibleSolution` unless ``bins`` runs every job exactly
    once and every bin fits in ``capacity``.

    ``bins`` is a sequence of non-empty bins, each a sequence of integer job
    indices (:func:`epochbench.instances.checks.indices`); an empty bin is refused, an
    empty plan accepted only for an empty queue.  Returns the bins as tuples
    of Python ints.

    Notes
    -----
    O(n K); exact sums (:func:`epochbench.instances.checks.exact_bin_loads`).
    """
    name = inst.name
    if not isinstance(bins, SEQUENCES):
        raise InfeasibleSolution(f"{name}: bins {short(bins, 40)} ({type(bins).__name__}) is not a sequence of bins")
    out = []
    for e, b in enumerate(bins):
        if not isinstance(b, SEQUENCES):
            raise InfeasibleSolution(f"{name}: epoch {e} is {short(b, 40)} ({type(b).__name__}), "
                                     "not a sequence of job indices")
        out.append(indices(b, inst.n, f"{name}: epoch {e}"))
    out = tuple(out)
    seen = sorted(j for b in out for j in b)
    if seen != list(range(inst.n)):
        missing = sorted(set(range(inst.n)) - set(seen))
        twice = sorted({j for j, k in zip(seen, seen[1:]) if j == k})
        raise InfeasibleSolution(
            f"{name}: bins must hold every job exactly once (missing: {_listed(missing)}; "
            f"more than once: {_listed(twice)})")
    empty = next((e for e, b in enumerate(out) if not b), None)
    if empty is not None:
        raise InfeasibleSolution(f"{name}: epoch {empty} is empty")
    if out:
        loads = exact_bin_loads(inst.demand, out)
        bad = np.argwhere(np.asarray(loads > inst.capacity, dtype=bool))
        if bad.size:
            e, r = map(int, bad[0])
            raise InfeasibleSolution(
                f"{name}: epoch {e} over-commits resource {r}: {int(loads[e, r])} > {int(inst.capacity[r])}")
    return out


def reservation_from_running(capacity, used, head_demand, running_demand, running_remaining,
                             now: float = 0.0):
    """Shadow time and extra capacity for a blocked queue head ([vadhiyar-notes],
    "Freedom from starvation"; EASY).

    Running jobs are released in order of (remaining time, index); the shadow
    time is ``now + rem`` of the first running job whose release makes the head
    fit, and ``extra`` is the capacity free at that time beyond the head's
    demand: every running job that ends at or before the shadow time, those
    ending exactly then included, has freed its resources (as the simulator's
    EASY counts them).  Returns ``(shadow, extra)``; ``(now, free - head)`` if
    the head fits already.  Raises :class:`InstanceError` if it never fits.
    O(m log m + m K) for m running jobs.
    """
    cap = np.asarray(capacity, dtype=np.int64)
    free = cap - np.asarray(used, dtype=np.int64)
    head = np.asarray(head_demand, dtype=np.int64)
    if np.all(head <= free):
        return float(now), free - head
    rd = np.asarray(running_demand, dtype=np.int64).reshape(-1, cap.shape[0])
    rem = np.asarray(running_remaining, dtype=float)
    for i in sorted(range(len(rem)), key=lambda i: (rem[i], i)):
        free = free + rd[i]
        if np.all(head <= free):
            free = free + rd[(rem == rem[i]) & (np.arange(len(rem)) > i)].sum(axis=0)  # same end time
            return float(now + rem[i]), free - head
    raise InstanceError(f"head job {head.tolist()} does not fit even when every running job has ended")


_io.register_family("packing", PackingInstance, check_packing)
_io.register_family("epochs", EpochsInstance, check_epochs)


def _listed(jobs: list[int], most: int = 10) -> str:
    """Job indices for a message: ``none``, or ``job 0`` / ``jobs 0, 3``
    (the first ``most``, ``...`` and the count when there are more; a bare
    ``0`` read as a count of none)."""
    if not jobs:
        return "none"
    more = f", ... ({len(jobs)} jobs)" if len(jobs) > most else ""
    return ("job " if len(jobs) == 1 else "jobs ") + ", ".join(map(str, jobs[:most])) + more


#: seconds each epoch's call of :func:`epochs_by` gets at least, once the plan's
#: ``time_limit`` is (nearly) spent: a time limit is a positive number (``eb.solve``
#: refuses 0), and the jobs left must still be placed (CBC's own floor is 0.01 s too)
MIN_EPOCH_TIME_LIMIT = 0.01


def _epoch_time_limit(deadline: float) -> float:
    """The ``time_limit`` of the next epoch's call: the seconds left until
    ``deadline`` (``time.perf_counter()``), at least :data:`MIN_EPOCH_TIME_LIMIT`.
    It was 0 once the budget was spent: every later epoch's exact sub-solve
    stopped before it began, and a packer calling ``eb.solve`` with it was
    refused (``time_limit: must be a positive finite number, got 0.0``)."""
    return max(deadline - time.perf_counter(), MIN_EPOCH_TIME_LIMIT)


def _positive_capacity(cap: np.ndarray, source: str) -> None:
    """InstanceError unless every resource has a capacity >= 1: a resource
    of capacity 0 took no job and its share of the utilization counted 0
    (a packing of everything was worth (K - 1) / K; an epoch plan's lower
    bound divided by it)."""
    zero = np.nonzero(cap < 1)[0]
    if zero.size:
        raise InstanceError(f"{source}: field 'capacity' is {int(cap[zero[0]])} on resource {int(zero[0])}; "
                            "each resource needs a capacity >= 1")


def epochs_by(packer, name: str | None = None):
    """Turn a packing heuristic into an ``epochs`` solver: each epoch starts
    what ``packer`` picks from the jobs left on an empty machine ([leinberger1999]
    fig. 1).  The packer sees every job left: ``ff`` so derived is the
    figure's FCFS/FF (the first job left always fits an empty machine and
    comes first), but ``bb`` and ``bl`` pick among all of them, head
    included, where the paper's FCFS/BB and FCFS/BL would start the head
    first (fig. 1 with ``bb``: 3 epochs under ``scaled``, 2, UNC's, under
    ``excess`` and ``off``).  A ``time_limit`` is the whole plan's: each epoch's call gets
    what is left of it, at least :data:`MIN_EPOCH_TIME_LIMIT` (0.01 s) once
    it is spent, so a plan finished after its budget runs past it by about
    that per epoch (a heuristic's plan: ``solve`` records no overrun for it).  Raises
    :class:`~epochbench.instances.core.InfeasibleSolution` if it ever picks
    nothing (the plan would never end: the method's failure, not a bad
    argument), or an index outside the jobs left, or one twice; the
    messages name ``packer`` by ``name`` (its registered name) when given."""
    own = getattr(packer, "__name__", None) or type(packer).__name__  # any callable: a partial, an object
    label = name or own
    def solve(inst: "EpochsInstance", **params) -> list[list[int]]:
        remaining = np.arange(inst.n)
        bins = []
        budget = params.pop("time_limit", None)          # one budget for the whole plan, not one per epoch
        deadline = None if budget is None else time.perf_counter() + budget
        while remaining.size:
            if deadline is not None:
                params["time_limit"] = _epoch_time_limit(deadline)
            picked = packer(inst.packing(remaining), **params)
            if isinstance(picked, Result):                # a heuristic may answer with a Result
                picked = picked.decision
            where = f"{inst.name}: epoch {len(bins)}: {label}'s selection of the {remaining.size} jobs left"
            picked = indices(picked, remaining.size, where)     # the packer's own indices, 0..left - 1
            distinct(picked, where, "starts")
            if not len(picked):
                raise InfeasibleSolution(f"{inst.name}: {label} started nothing with "
                                         f"{remaining.size} jobs left")
            bins.append([int(remaining[i]) for i in picked])
            remaining = np.delete(remaining, list(picked))
        return bins
    solve.__name__ = f"epochs_{own}"
    solve.__wrapped__ = packer                     # its parameters (and check_params hook) are the packer's
    solve.__doc__ = f"Epoch-after-epoch {label}: " + (getattr(packer, "__doc__", None) or "").split("\n")[0]
    if hasattr(packer, "warm_up"):                 # the packer's compiled kernel, loaded before timing
        solve.warm_up = packer.warm_up
    return solve
