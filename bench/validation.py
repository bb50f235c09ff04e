"""Validate a user's heuristic: feasibility on edge cases and random instances,
then gap and time against the exact optimum next to the built-in heuristics.

``epochbench validate MODULE:FUNCTION --family packing`` calls this.  The
function gets an instance (``capacity``, ``used``, ``demand`` as numpy arrays)
and returns the indices of the jobs it starts (packing) or a list of bins
(epochs), or the suite's own :class:`~epochbench.instances.Result`.
"""
from __future__ import annotations

import functools
import math
import numbers
import time
import traceback
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from epochbench.instances import EpochsInstance, InfeasibleSolution, PackingInstance
from epochbench.instances.checks import is_int
from epochbench.instances.core import Result, content, handed
from epochbench.instances.registry import as_result, methods, snapshot, solve_step, using

from .checks import MAX_COUNT
from .scoring import (at_reference_share, better, comparable, gap_fields, gap_vs, milliseconds, reference,
                      run_methods, shown)
from .sweep import run_tasks


def _packing(cap, demand, used=None, name="", **kw) -> PackingInstance:
    return PackingInstance.build(cap, np.asarray(demand, dtype=np.int64).reshape(-1, len(cap)), used,
                                 meta={"name": name, "generator": "validate"}, **kw)


def packing_edge_cases() -> list[PackingInstance]:
    """Empty queue, nothing fits, everything fits, K = 1, ties, zero demands,
    a full machine, and a reservation that forbids the otherwise best choice."""
    return [
        _packing([10, 10], [], name="edge-empty-queue"),
        _packing([10, 10], [[11, 1], [1, 11], [6, 6]], used=[5, 5], name="edge-nothing-fits"),
        _packing([10, 10], [[1, 2], [2, 1], [3, 3]], name="edge-everything-fits"),
        _packing([7], [[3], [4], [2], [5], [1]], name="edge-k1"),
        _packing([8, 8], [[4, 4], [4, 4], [4, 4], [4, 4]], name="edge-ties"),
        _packing([5, 5, 5], [[0, 0, 0], [5, 5, 5], [0, 1, 0]], name="edge-zero-demand"),
        _packing([6, 6], [[1, 1], [2, 2]], used=[6, 6], name="edge-machine-full"),
        _packing([10], [[7], [3], [1], [2], [2]], used=[5], estimate=[4, 5, 6, 4, 2], shadow=28,
                 extra=[3], now=25, name="edge-reservation-los"),
    ]


def random_packing(count: int, seed: int) -> list[PackingInstance]:
    """Random queues: K in {1, 2, 4, 8}, n up to 40, a background load, and a
    reservation on every third instance.  Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        k = int(rng.choice([1, 2, 4, 8]))
        n = int(rng.integers(1, 41))
        cap = rng.integers(8, 101, size=k)
        demand = (rng.random((n, k)) * cap * rng.uniform(0.1, 0.6)).astype(np.int64)
        used = (rng.random(k) * cap * 0.5).astype(np.int64)
        kw = {}
        if i % 3 == 2:
            kw = {"shadow": 1.0, "extra": (rng.random(k) * (cap - used)).astype(np.int64),
                  "runtime_past_shadow": rng.random(n) < 0.5}
        out.append(_packing(cap, demand, used, name=f"random-{seed}-{i:03d}", **kw))
    return out


def epochs_cases(count: int, seed: int) -> list[EpochsInstance]:
    rng = np.random.default_rng(seed)
    out = [EpochsInstance.build([16, 32], [[8, 4], [4, 2], [7, 16], [11, 20], [1, 12], [1, 10]],
                                meta={"name": "edge-seed000-fig1"}),
           EpochsInstance.build([5], [[5], [5], [5]], meta={"name": "edge-one-per-epoch"})]
    for i in range(count):
        k = int(rng.choice([1, 2, 3]))
        cap = rng.integers(10, 51, size=k)
        n = int(rng.integers(2, 13))
        dem = np.maximum(1, (rng.random((n, k)) * cap * 0.6).astype(np.int64))
        out.append(EpochsInstance.build(cap, dem, meta={"name": f"random-{seed}-{i:03d}"}))
    return out


def _knapsack(cap, weights, profit, name):
    from epochbench.instances.knapsack import KnapsackInstance
    w = np.asarray(weights, dtype=np.int64).reshape(-1, len(cap))
    return KnapsackInstance.build(cap, w, profit, meta={"name": name, "generator": "validate"})


def knapsack_cases(count: int, seed: int) -> list:
    """0-1 MKP edge cases (no job, one job that fits / does not, identical
    jobs, zero weights, a license with no copy) and ``count`` random ones
    (L in 1..4 licenses, n up to 25)."""
    out = [_knapsack([3, 2], [], [], "edge-no-job"),
           _knapsack([3], [[2]], [5], "edge-one-fits"),
           _knapsack([3], [[4]], [5], "edge-one-too-big"),
           _knapsack([4, 4], [[2, 2]] * 4, [3] * 4, "edge-identical"),
           _knapsack([2, 2], [[0, 0], [1, 2], [2, 1]], [1, 4, 4], "edge-zero-weight"),
           _knapsack([0, 5], [[1, 0], [0, 3], [0, 3]], [7, 2, 2], "edge-license-without-copies")]
    rng = np.random.default_rng(seed)
    for i in range(count):
        k, n = int(rng.integers(1, 5)), int(rng.integers(1, 26))
        w = rng.integers(0, 10, size=(n, k))
        cap = np.maximum(1, (w.sum(axis=0) * rng.uniform(0.2, 0.7)).astype(np.int64))
        out.append(_knapsack(cap, w, rng.integers(1, 50, size=n), f"random-{seed}-{i:03d}"))
    return out


def _assignment(p, name):
    from epochbench.instances.assignment import AssignmentInstance
    return AssignmentInstance.build(np.asarray(p, dtype=float), meta={"name": name, "generator": "validate"})


def assignment_cases(count: int, seed: int) -> list:
    """Matching edge cases (no job, one pair, nothing eligible, all equal,
    more jobs than machines, one machine) and ``count`` random preference
    matrices (up to 12 x 12, densities 0.2 to 1)."""
    out = [_assignment(np.zeros((0, 3)), "edge-no-job"),
           _assignment([[4.0]], "edge-one-pair"),
           _assignment(np.zeros((3, 3)), "edge-nothing-eligible"),
           _assignment(np.full((4, 4), 2.0), "edge-all-equal"),
           _assignment([[1, 2], [2, 1], [3, 3], [1, 0]], "edge-more-jobs-than-machines"),
           _assignment([[5], [7], [0]], "edge-one-machine")]
    rng = np.random.default_rng(seed)
    for i in range(count):
        n, m = int(rng.integers(1, 13)), int(rng.integers(1, 13))
        p = rng.integers(1, 100, size=(n, m)) * (rng.random((n, m)) < rng.uniform(0.2, 1.0))
        out.append(_assignment(p, f"random-{seed}-{i:03d}"))
    return out


def _mapping(etc, name, ready=None):
    from epochbench.instances.mapping import MappingInstance
    return MappingInstance.build(np.asarray(etc, dtype=float), ready, meta={"name": name, "generator": "validate"})


def mapping_cases(count: int, seed: int) -> list:
    """ETC edge cases (one task, one machine, all equal, a machine busy
    until late, tiny times) and ``count`` random matrices (up to 10 tasks x 4
    machines, so that the exact reference proves its optimum quickly)."""
    out = [_mapping([[3.0, 5.0]], "edge-one-task"),
           _mapping([[3.0], [1.0], [2.0]], "edge-one-machine"),
           _mapping(np.full((4, 2), 2.0), "edge-all-equal"),
           _mapping([[1.0, 9.0], [1.0, 9.0], [2.0, 8.0]], "edge-busy-machine", ready=[30.0, 0.0]),
           _mapping([[0.01, 1.0], [0.01, 0.01]], "edge-tiny-times")]
    rng = np.random.default_rng(seed)
    for i in range(count):
        t, m = int(rng.integers(1, 11)), int(rng.integers(1, 5))
        out.append(_mapping(rng.uniform(1, 100, size=(t, m)).round(2), f"random-{seed}-{i:03d}"))
    return out


#: family -> instances(count, seed): edge cases first, then ``count`` random ones
CASES = {"packing": lambda count, seed: packing_edge_cases() + random_packing(count, seed),
         "epochs": epochs_cases, "knapsack": knapsack_cases, "assignment": assignment_cases,
         "mapping": mapping_cases}


@dataclass
class Verdict:
    rows: pd.DataFrame
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def table(self) -> pd.DataFrame:
        """The per-instance rows (the name :func:`epochbench.validate` documents)."""
        return self.rows


def _run_user(func, inst, label: str):
    """``func`` on a copy of ``inst``: its checked result (None on failure),
    a failure line (or None) and what it returned.  The answer is checked
    against ``inst`` itself, so a function that changes the instance it is
    given (``meta``, or an array it made writable) cannot make the checker
    or the reference see another problem; changing it is a failure of its
    own."""
    given, before = handed(inst)
    t0 = time.perf_counter()
    try:
        out = func(given)
    except (Exception, SystemExit) as exc:  # the user's bug (sys.exit included), reported with the instance
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return None, f"{inst.name}: {label} raised {tb}", None
    seconds = time.perf_counter() - t0
    if isinstance(out, Result) and out.decision is None and out.status in ("timeout", "infeasible"):
        return None, f"{inst.name}: {label} gave no answer (status {out.status}, no decision)", out   # not a bad one
    try:
        res = as_result(inst, label, out, seconds)
    except InfeasibleSolution as exc:         # a wrong kind of value is no decision at all, not an infeasible one
        what = "no decision" if "not a decision" in str(exc) else "an infeasible answer"
        said = str(exc).replace(f"{inst.name}: {label} returned ", f"{inst.name}: ", 1)   # named once, here
        return None, f"{label} returned {what} on {said}", out
    except (TypeError, ValueError) as exc:
        return None, f"{inst.name}: {label} returned {out!r}, not a decision ({exc})", out
    if content(given) != before:
        return res, (f"{inst.name}: {label} changed the instance it was given (its answer was checked on the "
                     "original)"), out
    return res, None, out


def wrong_value(inst, out, res, label: str) -> str | None:
    """A failure line if the candidate answered with a :class:`Result`
    whose ``value`` is not what its decision is worth (1e-6 relative, as
    :func:`false_claim`): every score uses the recomputed value, but a
    heuristic that misreports its own objective has a bug worth knowing.
    A value that is not a finite number claims nothing."""
    claimed = getattr(out, "value", None) if isinstance(out, Result) else None
    if not isinstance(claimed, numbers.Real) or isinstance(claimed, bool) or not math.isfinite(claimed):
        return None
    if abs(claimed - res.value) <= 1e-6 * max(1.0, abs(res.value)):
        return None
    return f"{inst.name}: {label} reports the value {claimed:g} for its decision, which is worth {res.value:g}"


def false_claim(inst, res, ref_results, label: str, exact: str) -> str | None:
    """A failure line if ``res`` claims ``optimal`` but is not: ``exact`` proved
    a different optimum, or another checked answer of this run is better;
    or if it claims a ``bound`` that a checked answer of this run (or
    ``exact``'s optimum) lies beyond.  None when the claims hold or cannot
    be checked (``exact`` proved nothing)."""
    if res is None:
        return None
    return _false_optimum(inst, res, ref_results, label, exact) or _false_bound(inst, res, ref_results, label)


def _false_bound(inst, res, ref_results, label: str) -> str | None:
    """A failure line if ``res`` claims a ``bound`` that a checked answer of
    this run lies beyond (a heuristic's bound is scored nowhere, but a
    candidate that states a false one is not sound)."""
    if res.bound is None:
        return None
    beyond = [r for r in ref_results if comparable(inst, r) and better(r.value, res.bound, inst.sense)
              and abs(r.value - res.bound) > 1e-6 * max(1.0, abs(r.value))]
    if beyond:
        return f"{inst.name}: {label} claims the bound {res.bound:g}, but {beyond[0].method} found {beyond[0].value:g}"
    return None


def _false_optimum(inst, res, ref_results, label: str, exact: str) -> str | None:
    """The ``optimal`` claim of :func:`false_claim`."""
    if res.status != "optimal":
        return None
    proof = next((r for r in ref_results if r.method == exact and r.status == "optimal"), None)
    if proof is not None and abs(proof.value - res.value) > 1e-6 * max(1.0, abs(proof.value)):
        return (f"{inst.name}: {label} claims optimal, but its decision is worth {res.value:g} and {exact} "
                f"proved the optimum {proof.value:g}")
    beat = [r for r in ref_results if comparable(inst, r) and better(r.value, res.value, inst.sense)]
    if beat:
        return (f"{inst.name}: {label} claims optimal, but its decision is worth {res.value:g} and "
                f"{beat[0].method} found {beat[0].value:g}")
    return None


def no_answer(inst, res, ref_results, label: str) -> str | None:
    """A failure line if ``res`` gives no answer: status ``timeout`` (a
    candidate runs without a time limit here) or ``infeasible`` where a
    checked solution exists (every family here has one: the built-ins found
    it).  Such a result passed before on the families whose empty decision
    is feasible (packing, knapsack, assignment), and a candidate that gave
    up on its hard instances had the better table."""
    if res is None or res.status not in ("timeout", "infeasible"):
        return None
    found = [r for r in ref_results if comparable(inst, r)]
    if res.status == "infeasible" and found:
        return (f"{inst.name}: {label} claims the instance infeasible, but {found[0].method} found a checked "
                f"solution of value {found[0].value:g}")
    return f"{inst.name}: {label} gave no answer (status {res.status}; it runs without a time limit here)"


def validate(func, family: str = "packing", *, count: int = 30, seed: int = 0, label: str | None = None,
             time_limit: float = 10.0, exact: str = "cpsat", workers: int | None = 1,
             scheduler: str | None = None, progress=None) -> Verdict:
    """Run ``func`` and the built-in heuristics of ``family`` on edge cases and
    ``count`` random instances; check each answer; score against ``exact``.

    Gaps follow :func:`epochbench.scoring.reference` (a heuristic's ``optimal`` is a
    claim, not a proof); a result object of ``func`` that claims ``optimal``
    is checked against ``exact``'s proven optimum (:func:`false_claim`) and
    a false claim is a failure of the verdict.  ``workers`` / ``scheduler``:
    one task per instance through :func:`epochbench.sweep.run_tasks` (default
    1: in this process; None: a local cluster of ``$EPOCHBENCH_WORKERS`` or
    every core, the command line's default; each task has a worker to itself,
    since the verdict compares times); ``progress(done, instance)`` after
    each instance;
    the methods travel with the tasks (:func:`~epochbench.instances.registry.using`)."""
    given = label
    label = label or getattr(func, "__name__", "candidate")
    if family not in CASES:
        from epochbench.instances.registry import did_you_mean
        raise ValueError(f"family: validate supports {', '.join(CASES)}, not {family!r}{did_you_mean(family, CASES)}")
    if not is_int(count) or not 0 <= count <= MAX_COUNT:   # 0: the edge cases alone
        raise ValueError(f"count: must be an integer from 0 to {MAX_COUNT:,}, got {count!r}")
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    count, seed = int(count), int(seed)
    _no_required_keywords(func, label)
    _exact_reference(family, exact)
    insts = CASES[family](count, seed)
    builtin = [m.name for m in methods(family) if m.kind == "heuristic" and m.origin == "builtin"]
    label = _own_label(label, given is not None, {exact, *(m.name for m in methods(family) if m.origin == "builtin")})
    count = iter(range(1, len(insts) + 1))
    call = functools.partial(_check_one, func=func, label=label, exact=exact, builtin=builtin,
                             time_limit=time_limit, shipped=snapshot(family, [exact] + builtin))
    done, _ = run_tasks(call, [{"instance": inst} for inst in insts], workers=workers, scheduler=scheduler,
                        progress=False, stop_on_error=True, exclusive=True, dashboard=progress is not None,
                        on_result=(lambda i, _: progress(next(count), insts[i])) if progress else None)
    rows = [row for i in range(len(insts)) for row in done[i][0]]
    return Verdict(pd.DataFrame(rows), [done[i][1] for i in range(len(insts)) if done[i][1]])


def _no_required_keywords(func, label: str) -> None:
    """ValueError (one line) for a parameter of ``func`` after the instance
    without a default, as the command line refuses it: every call would
    fail alike, and the verdict listed the same TypeError for every
    instance."""
    import inspect
    try:      # the function itself, not what a functools.wraps wrapper names (it may supply the keyword)
        params = list(inspect.signature(func, follow_wrapped=False).parameters.values())
    except (TypeError, ValueError):                # a signature Python cannot read: let through
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    if not positional:           # partial(f, k=1) of f(k, inst): the instance would bind to k
        raise ValueError(f"{label}: takes no positional parameter for the instance (its parameters: "
                         f"{', '.join(map(str, params)) or 'none'}); validate calls func(instance)")
    missing = [p.name for p in params if p is not positional[0] and p.default is p.empty
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        raise ValueError(f"{label}: parameter {missing[0]!r} has no default, and validate calls func(instance); "
                         f"bind it first: functools.partial({getattr(func, '__name__', 'func')}, "
                         f"{missing[0]}=...)")


def _own_label(label: str, given: bool, taken: set) -> str:
    """The candidate's name in the verdict: no built-in method of the family
    (the rows of those it is compared with would read as its own, and an
    exact method's name would pass its claims off as the method's proofs;
    ``taken``), and no
    comma (method names have none).  A function named like one (``def ff``,
    ``def hungarian``) is labelled ``yours:ff``; a ``label`` given so is a
    ValueError."""
    if "," in label or any(c.isspace() for c in label):
        raise ValueError(f"label: {label!r} has a comma or a space; method names have none")
    if label not in taken:
        return label
    if given:
        raise ValueError(f"label: {label!r} is a method of the family (its rows would read as the candidate's); "
                         f"choose another name")
    return f"yours:{label}"


def _exact_reference(family: str, exact) -> None:
    """ValueError unless ``exact`` names an exact method of ``family`` (a
    heuristic proves nothing: every gap would read "no bound")."""
    exact_names = [m.name for m in methods(family) if m.exact]
    if not isinstance(exact, str) or exact not in exact_names:
        what = "a heuristic" if any(m.name == exact for m in methods(family)) else "not a method"
        raise ValueError(f"exact: {exact!r} is {what} of {family}; give an exact method: "
                         f"{', '.join(exact_names)}")


def _check_one(task: dict, *, func, label, exact, builtin, time_limit, shipped=()) -> tuple[list[dict], str | None]:
    """One instance of :func:`validate`: its rows and its failure line (or None)."""
    with using(shipped):
        return _check_instance(task["instance"], func, label, exact, builtin, time_limit)


#: the longest failure line (characters); a longer one is cut, "..." marking the cut
FAILURE_WIDTH = 400


def _one_line(text: str, width: int = FAILURE_WIDTH) -> str:
    """A failure line on one line (runs of white space, line breaks
    included, as one space) of at most ``width`` characters: a heuristic's
    exception text with a line break printed over two lines, and one of
    20,000 characters in full for every instance (161 KB of output)."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _check_instance(inst, func, label, exact, builtin, time_limit) -> tuple[list[dict], str | None]:
    rows = []
    # the reference first: a user's exact method that fails stops the validation in one line naming it
    # (an InfeasibleSolution came out of validate, which says it raises ValueError only for bad arguments)
    ref_results = [solve_step(inst, exact, lambda: f"the exact reference {exact!r} failed on instance {inst.name!r}",
                              time_limit=time_limit, threads=1)]
    ref_results += run_methods(inst, builtin, time_limit=time_limit)
    res, problem, out = _run_user(func, inst, label)
    problem = (problem or false_claim(inst, res, ref_results, label, exact)
               or (res is not None and wrong_value(inst, out, res, label)) or no_answer(inst, res, ref_results, label))
    problem = _one_line(problem) if problem else problem
    ours = [res] if res is not None else []
    ref = reference(inst, ref_results + ours)
    if res is None:
        rows.append({"instance": inst.name, "method": label, "ok": False, "gap": np.nan,
                     "gap_kind": ref.kind, "short": False, "seconds": np.nan})   # the columns of the rows below
    for r in ours + ref_results:
        g = gap_fields(inst, r, ref)
        rows.append({"instance": inst.name, "method": r.method, "ok": not (r is res and problem),
                     "gap": g["gap"], "gap_kind": g["gap_kind"], "short": g["short"], "seconds": r.seconds})
    return rows, problem


def verdict_table(v: Verdict) -> str:
    """Per method: instances, failures, ``short`` (assignment: matchings
    with fewer pairs than a maximum one, never at the reference; shown when
    any is), mean / max gap over the instances
    that passed ("no bound" where none had a reference), share at the
    reference (a failed instance counts as not at it), what the gaps are
    measured against (``gap_vs``), median ms."""
    ok = v.rows["ok"].astype(bool)
    df = v.rows.assign(gap=v.rows["gap"].where(ok), _missed=~ok)
    by = df.groupby("method", sort=False)
    agg = by.agg(
        instances=("instance", "count"), failures=("ok", lambda s: int((~s.astype(bool)).sum())),
        mean_gap=("gap", "mean"), max_gap=("gap", "max"),
        gap_vs=("gap_kind", gap_vs),
        median_ms=("seconds", lambda s: milliseconds(float(np.nanmedian(s))) if s.notna().any() else "-"),
    ).reset_index()
    shares = {m: at_reference_share(g["gap"], g["_missed"], g["short"] if "short" in g else None) for m, g in by}
    agg.insert(agg.columns.get_loc("max_gap") + 1, "optimal", agg["method"].map(shares))
    if "short" in df and df["short"].fillna(False).astype(bool).any():
        # matchings with fewer pairs than possible (assignment): counted as score counts them
        short = by["short"].agg(lambda s: int(s.fillna(False).astype(bool).sum()))
        agg.insert(agg.columns.get_loc("failures") + 1, "short", agg["method"].map(short))
    return shown(agg).to_string(index=False)
