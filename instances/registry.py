"""Registry of methods per family: a heuristic or solver registers under a name
and the CLI, the benchmarks and the simulator find it here.

A *heuristic* is a plain function ``f(instance, **params)`` returning the
decision (packing: job indices in pick order; epochs: list of bins) or a
:class:`~epochbench.instances.core.Result`.  An *exact* method is ``f(instance, *,
time_limit, threads, **params)`` returning a :class:`Result` with its bound
and status.  :func:`solve` times the call, runs the family's independent
feasibility check and recomputes the objective; nothing unchecked leaves it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

from .core import Result
from .io import FAMILIES, check


#: ``replay`` methods return a decision stored with the instance (a recorded
#: policy choice); they are called like heuristics but never listed among them
KINDS = ("heuristic", "exact", "replay")


@dataclass(frozen=True)
class Method:
    family: str
    name: str
    func: Callable
    kind: str  # one of KINDS
    origin: str = "builtin"

    @property
    def exact(self) -> bool:
        return self.kind == "exact"


_REGISTRY: dict[tuple[str, str], Method] = {}


def register(family: str, name: str, *, kind: str = "heuristic", origin: str = "builtin"):
    """Decorator: register ``func`` as method ``name`` of ``family``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")

    def deco(func):
        key = (family, name)
        old = _REGISTRY.get(key)
        if old is not None and old.func is not func:
            raise ValueError(f"method {name!r} already registered for family {family!r} by {old.origin}")
        _REGISTRY[key] = Method(family, name, func, kind, origin)
        return func

    return deco


def get(family: str, name: str) -> Method:
    try:
        return _REGISTRY[(family, name)]
    except KeyError:
        known = ", ".join(names(family)) or "none"
        raise KeyError(f"no method {name!r} for family {family!r}; registered: {known}") from None


def names(family: str, kind: str | None = None) -> list[str]:
    return [m.name for (f, _), m in _REGISTRY.items() if f == family and (kind is None or m.kind == kind)]


def methods(family: str | None = None) -> list[Method]:
    return [m for (f, _), m in _REGISTRY.items() if family is None or f == family]


def as_result(inst, method: str, out, seconds: float, describe: bool = True) -> Result:
    """Wrap a heuristic's raw decision (or Result) as a checked :class:`Result`;
    ``describe=False`` skips the family's ``describe`` figures (the check
    always runs)."""
    if isinstance(out, Result):
        res = out if out.seconds else replace(out, seconds=seconds)
    else:
        res = Result(inst.kind, method, tuple(out), 0.0, "feasible", seconds)
    decision = check(inst, res.decision)
    info = res.info
    if describe and hasattr(inst, "describe"):  # family-specific figures of a decision, e.g. a matching's cardinality
        info = {**info, **inst.describe(decision)}
    return replace(res, family=inst.kind, method=method, decision=decision,
                   value=inst.value(decision), info=info)


def solve(inst, method: str, *, time_limit: float = 10.0, threads: int = 1, describe: bool = True,
          **params) -> Result:
    """Run ``method`` on ``inst``: timed, feasibility-checked, objective recomputed.

    Raises :class:`~epochbench.instances.core.InfeasibleSolution` if the decision fails
    the family's checker.  An exact method that found no solution returns
    status ``timeout`` or ``infeasible`` with an empty decision, which is
    checked too (an empty packing is feasible; an empty epoch plan is not
    unless the queue is empty, and then its status says why).  ``describe=False``
    leaves the family's ``describe`` figures out of ``info`` (a simulator
    calling a method at every event does not need them).
    """
    if inst.kind not in FAMILIES:
        raise KeyError(f"unknown family {inst.kind!r}")
    m = get(inst.kind, method)
    t0 = time.perf_counter()
    if m.exact:
        out = m.func(inst, time_limit=time_limit, threads=threads, **params)
    else:
        out = m.func(inst, **params)
    seconds = time.perf_counter() - t0
    if m.exact and isinstance(out, Result) and out.status in ("infeasible", "timeout") and not out.decision:
        return replace(out, family=inst.kind, method=method, seconds=out.seconds or seconds, bound=None)
    res = as_result(inst, method, out, seconds, describe)
    return honest(res, getattr(inst, "sense", "max")) if m.exact else res


#: relative tolerance of :func:`honest` between a claimed optimum or bound and the value
CLAIM_TOL = 1e-9


def honest(res: Result, sense: str) -> Result:
    """An exact method's result whose claims hold together: ``optimal`` needs
    ``bound == value`` (:data:`CLAIM_TOL` relative; a method that proved
    optimality reports its value as the bound), and a bound on the wrong
    side of the checked value (below it for ``sense="max"``) proves nothing.
    A claim that fails is withdrawn (``feasible``, ``bound=None``) and
    ``info["withdrawn"]`` says why.  O(1)."""
    if res.bound is None:
        if res.status == "optimal":
            return replace(res, bound=res.value)
        return res
    tol = CLAIM_TOL * max(1.0, abs(res.value))
    wrong_side = res.bound < res.value - tol if sense == "max" else res.bound > res.value + tol
    if wrong_side:
        why = f"bound {res.bound!r} is on the wrong side of the value {res.value!r}"
    elif res.status == "optimal" and abs(res.bound - res.value) > tol:
        why = f"optimal claimed with bound {res.bound!r} != value {res.value!r}"
    else:
        return res
    return replace(res, status="feasible", bound=None, info={**res.info, "withdrawn": why})
