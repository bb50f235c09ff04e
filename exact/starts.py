"""Warm starts: every exact method begins from the best decision of its
family's fast heuristics that ran within :data:`START_SHARE` of its time
limit, and never returns anything worse than that start.  (The heuristics
run in :data:`START_HEURISTICS` order until that share is spent: a limit of
a millisecond may leave time for the first one only, and a heuristic that
did not run can beat the answer.)

A solver given a time limit may stop with a poor incumbent, or none: the
exact side of a gap is then weaker than the heuristic it is meant to judge.
:func:`best_start` runs the family's fast heuristics (:data:`START_HEURISTICS`,
found through the registry, each decision checked there) within a small
share of the time limit and keeps the best; the exact methods give it to
the solver as a hint (CP-SAT ``AddHint``, the MIP start of CBC and HiGHS)
and fall back to it when the solver's answer is worse or missing.
"""
from __future__ import annotations

import time

from epochbench.instances.core import Result

#: per family, the fast heuristics whose best decision starts the exact
#: methods (names not registered are skipped: a family may lack some)
START_HEURISTICS: dict[str, tuple[str, ...]] = {
    "packing": ("bl", "bb", "bestfit", "ff", "worstfit"),
    "epochs": ("ffd-l2", "ffd-max", "ffd-sum", "bc-dot", "bc-l2", "bestfit", "bb", "bl"),
    "knapsack": ("greedy-mkp", "greedy-ratio"),
    "assignment": ("mfs", "imfs", "mis"),
    "mapping": ("minmin", "sufferage", "duplex", "maxmin", "mct"),
}
#: at most this share of an exact call's time limit goes to the start
START_SHARE = 0.1


def warm_up_starts(family: str) -> None:
    """Load numba (:func:`~epochbench.instances.lazy.load_kernels`) and the
    compiled kernels of ``family``'s start heuristics (their ``warm_up``
    hooks; for one without a hook, one untimed call on the family's tiny
    instance, :func:`~epochbench.instances.registry.first_call_warm_up`, as
    its own first timed call would get), so that an exact method's clock
    does not pay for them (0.2 s for Min-Min's and MFS's kernels): the
    exact methods' own hooks call this before the clock starts."""
    from epochbench.instances.lazy import load_kernels
    from epochbench.instances.registry import METHODS, load
    load_kernels()
    for name in START_HEURISTICS.get(family, ()):
        if METHODS.find((family, name)) is not None:
            load(family, name)             # its hook, or one untimed call on a tiny instance


def better(a: float, b: float, sense: str) -> bool:
    """``a`` strictly better than ``b`` for an objective of ``sense`` (by
    more than 1e-12 of the larger: relative, objectives far below 1 included)."""
    tol = 1e-12 * max(abs(a), abs(b))
    return a > b + tol if sense == "max" else a < b - tol


def beats(a: float, b: float, sense: str) -> bool:
    """``a`` better than ``b`` for an objective of ``sense`` by any amount:
    the test by which an exact method keeps the better of two *checked*
    decisions (its start and the solver's answer).  :func:`better`'s
    tolerance is for claims (a bound against a value); between two checked
    decisions it would keep one up to 1e-12 of the value worse: a unit at
    1e15 (found by a fuzzing review: ``cpsat`` on a knapsack of profits 1
    and 1e15 + 1, scaled inexactly, returned ``optimal`` one unit below its
    own start)."""
    return a > b if sense == "max" else a < b


def best_start(inst, *, budget: float, family: str | None = None, names=None, accept=None) -> Result | None:
    """The best checked decision of the fast heuristics on ``inst``.

    Parameters
    ----------
    inst : an instance of ``family`` (default ``inst.kind``)
    budget : seconds; no heuristic starts once they are spent (the first
        always runs)
    names : heuristics to try (default :data:`START_HEURISTICS` of the family)
    accept : callable, optional
        ``accept(result) -> bool``: only decisions it accepts compete (the
        assignment family's exact model needs maximum cardinality, which a
        heavier but smaller matching lacks)

    Returns
    -------
    Result or None
        The best :class:`~epochbench.instances.core.Result` (ties: the
        first in ``names``), None when no heuristic is registered or every
        one failed.  Its ``method`` names the heuristic.

    Notes
    -----
    Each decision goes through :func:`epochbench.instances.registry.solve`,
    which checks feasibility; a heuristic that raises is skipped (its bug
    is the heuristic's, reported by its own benchmark and tests).
    """
    from epochbench.instances.registry import METHODS, solve
    family = family or inst.kind
    sense = getattr(inst, "sense", "max")
    deadline = time.perf_counter() + max(0.0, float(budget))
    best = None
    for name in names if names is not None else START_HEURISTICS.get(family, ()):
        m = METHODS.find((family, name))
        if m is None or m.exact:
            continue
        if best is not None and time.perf_counter() >= deadline:
            break
        try:
            res = solve(inst, name, describe=False)
        except Exception:   # noqa: BLE001 - a broken heuristic only loses its turn here
            continue
        if res.decision is None or res.value is None or (accept is not None and not accept(res)):
            continue
        if best is None or better(float(res.value), float(best.value), sense):
            best = res
    return best


def given_start(inst, start) -> Result | None:
    """A ``start`` its caller gave an exact method, checked as any decision
    is: a :class:`~epochbench.instances.core.Result` whose decision passes
    the family's checker, with its value recomputed (a start claiming 99
    for a decision worth 0.16 beat the solver's optimum, which was
    returned no more, nor proved).  None stays None.  ``ValueError``
    naming ``start`` otherwise.  O(size of the decision)."""
    from dataclasses import replace

    from epochbench.instances.core import InfeasibleSolution
    from epochbench.instances.io import check
    if start is None:
        return None
    if not isinstance(start, Result):
        raise ValueError(f"start: expected an epochbench Result (e.g. what eb.solve returns), got "
                         f"{type(start).__name__}")
    try:
        decision = check(inst, start.decision)
    except (InfeasibleSolution, TypeError, ValueError) as exc:
        raise ValueError(f"start: {exc}") from None
    return replace(start, decision=decision, value=float(inst.value(decision)))


def start_info(start: Result | None) -> dict:
    """What ``info`` says about the start: heuristic and value."""
    if start is None:
        return {"start": "none"}
    return {"start": start.method, "start_value": float(start.value)}


__all__ = ["START_HEURISTICS", "START_SHARE", "best_start", "better", "given_start", "start_info", "warm_up_starts"]
