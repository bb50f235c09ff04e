"""The ``packing`` and ``epochs`` families (seed 000 section 2, seed 002 LOS).

``packing``: which queued jobs start now on a machine of K resources.  Job j
needs ``demand[j]`` (a K-vector); the selected jobs must fit in
``capacity - used``.  With a reservation for the blocked queue head (EASY /
LOS, seed 002 "Freedom from starvation"), jobs flagged ``runtime_past_shadow``
(still running at the shadow time) must also fit together in ``extra``.

``epochs``: the fewest equal-length epochs that run every job, each epoch a
set of jobs fitting in ``capacity`` (vector bin packing; seed 000 figure 1,
"UNC").
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from .core import (
    InfeasibleSolution,
    InstanceError,
    float_vector,
    int_matrix,
)

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
        dem = _demand(demand, source, k)
        n = dem.shape[0]
        usd = int_matrix(np.zeros(k, dtype=np.int64) if used is None else used, "used", source, ndim=1)
        if usd.shape[0] != k:
            raise InstanceError(f"{source}: field 'used' has length {usd.shape[0]}, capacity has K = {k}")
        over = np.nonzero(usd > cap)[0]
        if over.size:
            raise InstanceError(f"{source}: field 'used' exceeds 'capacity' on resource {int(over[0])}")
        est = None if estimate is None else float_vector(estimate, "estimate", source, n)
        prof = None if profit is None else float_vector(profit, "profit", source, n)
        if objective not in OBJECTIVES:
            raise InstanceError(f"{source}: field 'objective' must be one of {OBJECTIVES}, got {objective!r}")
        if objective == "profit" and prof is None:
            raise InstanceError(f"{source}: objective 'profit' needs field 'profit'")
        res = None
        if shadow is not None or extra is not None or runtime_past_shadow is not None:
            if shadow is None or extra is None:
                raise InstanceError(f"{source}: a reservation needs both 'shadow' and 'extra'")
            ext = int_matrix(extra, "extra", source, ndim=1)
            if ext.shape[0] != k:
                raise InstanceError(f"{source}: field 'extra' has length {ext.shape[0]}, capacity has K = {k}")
            if runtime_past_shadow is None:
                if est is None:
                    raise InstanceError(
                        f"{source}: reservation needs 'runtime_past_shadow' flags or 'estimate'")
                flags = now + est > float(shadow)
            else:
                flags = np.asarray(runtime_past_shadow, dtype=bool)
                if flags.shape != (n,):
                    raise InstanceError(
                        f"{source}: field 'runtime_past_shadow' must have length {n}, got {flags.shape}")
            flags = flags.copy()
            flags.setflags(write=False)
            res = Reservation(float(shadow), ext, flags)
        return cls(cap, dem, usd, est, prof, res, objective, dict(meta or {}))

    # ---- derived quantities -------------------------------------------------
    @property
    def free(self) -> np.ndarray:
        return self.capacity - self.used

    def weights(self, objective: str | None = None) -> np.ndarray:
        """Per-job objective coefficient: the objective is ``weights[S].sum()``."""
        objective = objective or self.objective
        if objective == "count":
            return np.ones(self.n)
        if objective == "profit":
            if self.profit is None:
                raise InstanceError(f"{self.name}: objective 'profit' needs field 'profit'")
            return np.asarray(self.profit, dtype=float)
        cap = self.capacity.astype(float)
        share = np.divide(self.demand, cap, out=np.zeros(self.demand.shape), where=cap > 0)
        return share.sum(axis=1) / self.k

    def value(self, selected: Sequence[int], objective: str | None = None) -> float:
        idx = np.asarray(list(selected), dtype=np.int64)
        return float(self.weights(objective)[idx].sum()) if idx.size else 0.0

    def with_objective(self, objective: str) -> "PackingInstance":
        return replace(self, objective=objective)

    # ---- JSON -----------------------------------------------------------------
    def to_dict(self) -> dict:
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
        _expect_kind(d, "packing", source)
        for key in ("capacity", "demand"):
            if key not in d:
                raise InstanceError(f"{source}: field '{key}' missing")
        return cls.build(d["capacity"], d["demand"], d.get("used"), estimate=d.get("estimate"),
                         profit=d.get("profit"), shadow=d.get("shadow"), extra=d.get("extra"),
                         runtime_past_shadow=d.get("runtime_past_shadow"), now=d.get("now", 0.0),
                         objective=d.get("objective", "utilization"), meta=d.get("meta"), source=source)


@dataclass(frozen=True, eq=False)
class EpochsInstance(_Jobs):
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
        dem = _demand(demand, source, cap.shape[0])
        too_big = np.nonzero((dem > cap).any(axis=1))[0]
        if too_big.size:
            j = int(too_big[0])
            raise InstanceError(
                f"{source}: field 'demand' row {j} {dem[j].tolist()} exceeds the machine "
                f"{cap.tolist()}; it can never run")
        return cls(cap, dem, dict(meta or {}))

    def lower_bound(self) -> int:
        """max_k ceil(sum_j demand[j,k] / capacity[k]) (at least 1 if any job)."""
        if self.n == 0:
            return 0
        tot = self.demand.sum(axis=0)
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
        return {"kind": "epochs", "capacity": self.capacity, "demand": self.demand, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict, source="<dict>") -> "EpochsInstance":
        _expect_kind(d, "epochs", source)
        for key in ("capacity", "demand"):
            if key not in d:
                raise InstanceError(f"{source}: field '{key}' missing")
        return cls.build(d["capacity"], d["demand"], d.get("meta"), source=source)


def _expect_kind(d: dict, kind: str, source: str) -> None:
    if d.get("kind") != kind:
        raise InstanceError(f"{source}: field 'kind' is {d.get('kind')!r}, expected {kind!r}")


# ---- independent feasibility checks ----------------------------------------------
def check_packing(inst: PackingInstance, selected) -> tuple[int, ...]:
    """Raise :class:`InfeasibleSolution` unless ``selected`` is a feasible start set.

    Checks: integer indices in range, no repeats, the sum of demands fits in
    ``capacity - used`` on every resource, and, with a reservation, the jobs
    flagged past the shadow time fit in ``extra``.  Uses plain integer sums,
    nothing from any solver.
    """
    name = inst.name
    try:
        sel = tuple(int(j) for j in selected)
    except (TypeError, ValueError):
        raise InfeasibleSolution(f"{name}: selection {selected!r} is not a list of job indices") from None
    if any(not 0 <= j < inst.n for j in sel):
        raise InfeasibleSolution(f"{name}: selection {list(sel)} has an index outside 0..{inst.n - 1}")
    if len(set(sel)) != len(sel):
        raise InfeasibleSolution(f"{name}: selection {list(sel)} starts a job twice")
    load = [int(u) for u in inst.used]
    ext = [0] * inst.k
    for j in sel:
        for r in range(inst.k):
            load[r] += int(inst.demand[j, r])
            if inst.reservation is not None and inst.reservation.past_shadow[j]:
                ext[r] += int(inst.demand[j, r])
    for r in range(inst.k):
        if load[r] > int(inst.capacity[r]):
            raise InfeasibleSolution(
                f"{name}: resource {r} over-committed: used {int(inst.used[r])} + selected "
                f"{load[r] - int(inst.used[r])} > capacity {int(inst.capacity[r])}")
        if inst.reservation is not None and ext[r] > int(inst.reservation.extra[r]):
            raise InfeasibleSolution(
                f"{name}: reservation broken on resource {r}: jobs running past the shadow time "
                f"need {ext[r]} > extra {int(inst.reservation.extra[r])}")
    return sel


def check_epochs(inst: EpochsInstance, bins) -> tuple[tuple[int, ...], ...]:
    """Raise :class:`InfeasibleSolution` unless ``bins`` runs every job exactly
    once and every bin fits in ``capacity``."""
    name = inst.name
    out = tuple(tuple(int(j) for j in b) for b in bins)
    seen = sorted(j for b in out for j in b)
    if seen != list(range(inst.n)):
        missing = sorted(set(range(inst.n)) - set(seen))
        raise InfeasibleSolution(
            f"{name}: bins must hold every job exactly once (missing {missing[:10]}, "
            f"{len(seen) - len(set(seen))} repeated)")
    for e, b in enumerate(out):
        if not b:
            raise InfeasibleSolution(f"{name}: epoch {e} is empty")
        load = [sum(int(inst.demand[j, r]) for j in b) for r in range(inst.k)]
        for r in range(inst.k):
            if load[r] > int(inst.capacity[r]):
                raise InfeasibleSolution(
                    f"{name}: epoch {e} over-commits resource {r}: {load[r]} > {int(inst.capacity[r])}")
    return out


def reservation_from_running(capacity, used, head_demand, running_demand, running_remaining,
                             now: float = 0.0):
    """Shadow time and extra capacity for a blocked queue head (seed 002,
    "Freedom from starvation"; EASY).

    Running jobs are released in order of (remaining time, index); the shadow
    time is ``now + rem`` of the first running job whose release makes the head
    fit, and ``extra`` is the capacity free at that time beyond the head's
    demand.  Returns ``(shadow, extra)``; ``(now, free - head)`` if the head
    fits already.  Raises :class:`InstanceError` if it never fits.
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
            return float(now + rem[i]), free - head
    raise InstanceError(f"head job {head.tolist()} does not fit even when every running job has ended")


from . import io as _io  # noqa: E402  (registration after the classes exist)

_io.register_family("packing", PackingInstance, check_packing)
_io.register_family("epochs", EpochsInstance, check_epochs)
