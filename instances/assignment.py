"""The ``assignment`` family: match jobs to machines on the Job-Machine matrix ([capannini2007] section 5).

``preference`` is an n x m matrix of non-negative numbers, ``P[i, m] > 0``
the preference of job i for machine m and ``0`` "not eligible".  A decision
is a set of ``[job, machine]`` pairs, each job and each machine at most once,
only eligible pairs.  JSON::

    {"kind": "assignment", "preference": [[...]], "meta": {...}}

Objective, lexicographic as [capannini2007] section 5 asks ("maximizes both the
cardinality ... and the sum of the selected associations"): first the number
of pairs, then their total preference.  How the suite scores it:

* ``value(pairs)`` is the total preference (weight) alone, and
  ``describe(pairs)`` adds ``cardinality`` and ``max_cardinality`` (the
  maximum matching size, Hopcroft-Karp) to ``Result.info``;
* the exact methods optimise cardinality first: they fix the cardinality to
  the maximum (``exact/assignment.py``) and maximise the weight, so their
  ``value`` is the weight of the lexicographic optimum and their ``bound`` an
  upper bound on the weight of every maximum-cardinality matching;
* hence the gap ``|bound - value| / bound`` of a method is its weight gap
  against the lexicographic optimum.  A matching with fewer pairs than
  ``max_cardinality`` (MIS can return one) may weigh more than that optimum;
  its gap is then the distance, not a shortfall, and its cardinality
  shortfall is reported separately (``cardinality`` < ``max_cardinality``;
  the benchmarks give a cardinality gap next to the weight gap).

``meta["previous"]`` may hold the previous plan's pairs (IMFS starts from
them); ``meta["optimum"]`` the weight of a known lexicographic optimum.

Generators: ``assign-random`` (random matrices, optionally one job arriving
or leaving after an optimal plan), ``assign-farm`` (the matrix of a [capannini2007]
farm state, :mod:`epochbench.instances.farm`), ``orlib-assign`` (OR-Library
``assign100.txt``, cost turned into preference).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import farm as _farm
from . import io as _io
from .checks import SEQUENCES, index, short
from .core import InfeasibleSolution, InstanceError, float_array, meta_dict
from .data import absent, data_root
from .generators import _bool, _children, _choice, _fraction, _int, register_generator

EVENTS = ("none", "arrive", "leave")


@dataclass(frozen=True, eq=False)
class AssignmentInstance:
    """Jobs matched to machines ([capannini2007] section 5): the family
    ``assignment``, maximising the number of pairs, then their weight.
    Made by :meth:`build` (which validates), a generator or
    :func:`epochbench.load`; frozen, its array read-only.

    Parameters
    ----------
    preference : (n, m) float array
        Job-machine preferences, finite and >= 0; 0 marks a pair that is
        not eligible.
    meta : dict
        ``name``, optional ``previous`` (the previous plan's pairs, which
        IMFS keeps), ``cost`` (a cost-minimising data set's units) and any
        other JSON values.

    Notes
    -----
    ``kind`` is ``"assignment"``, ``sense`` ``"max"``; the decision is a
    tuple of ``(job, machine)`` pairs (:func:`check_assignment`).
    """

    preference: np.ndarray  # (n, m) float, 0 = not eligible
    meta: dict = field(default_factory=dict)

    kind = "assignment"
    sense = "max"

    @property
    def n(self) -> int:
        return self.preference.shape[0]

    @property
    def k(self) -> int:
        """Number of machines m (the protocol's second size)."""
        return self.preference.shape[1]

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "<unnamed>"))

    @classmethod
    def build(cls, preference, meta=None, source="<instance>") -> "AssignmentInstance":
        """Validate and build; every error names ``source`` and the field."""
        p = float_array(preference, "preference", source)  # finite numbers, no booleans
        if p.size == 0 and p.ndim < 2:
            p = p.reshape(0, 0)
        if p.ndim != 2:
            raise InstanceError(f"{source}: field 'preference' must have 2 dimensions, got shape {p.shape}")
        if not np.all(np.isfinite(p)):
            raise InstanceError(f"{source}: field 'preference' has a non-finite entry")
        if p.size and p.min() < 0:
            idx = np.unravel_index(int(np.argmin(p)), p.shape)
            raise InstanceError(f"{source}: field 'preference' has a negative entry {p[idx]} at {list(map(int, idx))}")
        k = min(p.shape)
        with np.errstate(over="ignore"):     # the Hungarian method's weight of a full matching (lexicographic_matching)
            top = float(k * (k * float(p.max()) + 1.0 + float(p.max()))) if p.size else 0.0
        if not np.isfinite(top):
            raise InstanceError(f"{source}: field 'preference' has entries (up to {float(p.max()):g}) too large to "
                                f"weigh a matching of {k} pairs in a float (1.8e308); scale them down")
        p.setflags(write=False)
        meta = meta_dict(meta, source)
        if meta.get("previous") is not None:
            meta["previous"] = _pairs(meta["previous"], p.shape, f"{source}: field 'meta.previous'")
        return cls(p, meta)

    def value(self, pairs) -> float:
        """Weight of the matching ``pairs`` ((job, machine)), summed in job
        order (the same pairs, the same value, whatever order they came
        in).  O(p log p)."""
        a = np.asarray(list(pairs), dtype=np.int64).reshape(-1, 2)
        a = a[np.lexsort((a[:, 1], a[:, 0]))]
        return float(self.preference[a[:, 0], a[:, 1]].sum())

    def max_cardinality(self) -> int:
        """Size of a maximum matching on the eligible pairs (:func:`maximum_matching`)."""
        return len(maximum_matching(self.preference))

    def describe(self, pairs) -> dict:
        return {"cardinality": len(pairs), "max_cardinality": self.max_cardinality()}

    def previous(self) -> list[tuple[int, int]]:
        """The previous plan's pairs of ``meta["previous"]`` (empty if none)."""
        return [tuple(p) for p in self.meta.get("previous") or []]

    def to_dict(self) -> dict:
        """The instance as JSON fields; with no job, ``machines`` too (the
        matrix of 0 rows is ``[]`` in JSON, which keeps no width: a 0 x 3
        instance came back 0 x 0)."""
        out = {"kind": "assignment", "preference": self.preference, "meta": self.meta}
        if self.n == 0:
            out["machines"] = self.k
        return out

    @classmethod
    def from_dict(cls, d: dict, source="<dict>") -> "AssignmentInstance":
        """The instance of a file's fields ``d`` (its ``to_dict``, lists or
        arrays), validated as :meth:`build` does; every error names
        ``source`` and the field (:class:`~epochbench.instances.core.InstanceError`)."""
        if d.get("kind") != "assignment":
            raise InstanceError(f"{source}: field 'kind' is {d.get('kind')!r}, expected 'assignment'")
        _io.check_fields(d, {"preference": "matrix", "machines": "number"}, source, required=("preference",))
        pref, m = d["preference"], d.get("machines")
        if m is not None:
            if not (isinstance(m, int) and m >= 0):
                raise InstanceError(f"{source}: field 'machines' must be an integer >= 0, got {m!r}")
            width = len(pref[0]) if len(pref) else m
            if width != m:
                raise InstanceError(f"{source}: field 'machines' is {m}, but the rows of 'preference' have {width}")
            if not len(pref):
                pref = np.zeros((0, m))
        return cls.build(pref, d.get("meta"), source=source)


def _pairs(value, shape, where) -> list[list[int]]:
    """Validate ``[[job, machine], ...]``: integers in range, distinct jobs
    and machines (eligibility is not required of a previous plan)."""
    try:
        raw = [(a, b) for a, b in value]
        pairs = [[int(a), int(b)] for a, b in raw]
    except (TypeError, ValueError):
        raise InstanceError(f"{where}: expected a list of [job, machine] pairs, got {value!r}") from None
    for (a, b), pair in zip(raw, pairs):
        if isinstance(a, bool) or isinstance(b, bool) or a != pair[0] or b != pair[1]:
            raise InstanceError(f"{where}: pair {[a, b]} has a non-integer index")
    for a, b in pairs:
        if not (0 <= a < shape[0] and 0 <= b < shape[1]):
            raise InstanceError(f"{where}: pair {[a, b]} outside {shape[0]} jobs x {shape[1]} machines")
    if len({a for a, _ in pairs}) != len(pairs) or len({b for _, b in pairs}) != len(pairs):
        raise InstanceError(f"{where}: a job or a machine appears in two pairs")
    return pairs


def _decision_pairs(pairs, name: str) -> list[tuple[int, int]]:
    """``pairs`` read strictly as [job, machine] pairs of integers (an
    (p, 2) integer array, or a sequence of 2-sequences); range not checked."""
    if isinstance(pairs, np.ndarray) and pairs.dtype.kind in "iu" and pairs.ndim == 2 and pairs.shape[1] == 2:
        return [(a, b) for a, b in pairs.tolist()]
    if not isinstance(pairs, SEQUENCES) or (isinstance(pairs, np.ndarray) and pairs.size and pairs.dtype != object):
        raise InfeasibleSolution(f"{name}: {short(pairs, 40)} ({type(pairs).__name__}) is not a sequence of "
                                 "[job, machine] pairs")
    out = []
    for i, p in enumerate(pairs):
        if not isinstance(p, SEQUENCES) or (isinstance(p, np.ndarray) and p.ndim != 1) or len(p) != 2:
            raise InfeasibleSolution(f"{name}: pair {i} is {short(p, 40)}, not a [job, machine] pair")
        out.append((index(p[0], f"{name}: pair {i} job", "job"), index(p[1], f"{name}: pair {i} machine", "machine")))
    return out


def check_assignment(inst: AssignmentInstance, pairs) -> tuple[tuple[int, int], ...]:
    """Raise :class:`InfeasibleSolution` unless ``pairs`` is a matching of
    eligible pairs: a sequence of [job, machine] pairs (each a 2-sequence of
    integers: no floats, booleans or strings, :func:`epochbench.instances.checks.index`)
    in range, no job and no machine twice, ``preference > 0`` on every pair.
    Returns the pairs sorted by job, as tuples of Python ints.

    Notes
    -----
    O(p log p) for p pairs; nothing from any solver.
    """
    name = inst.name
    out = _decision_pairs(pairs, name)
    n, m = inst.preference.shape
    for a, b in out:
        if not (0 <= a < n and 0 <= b < m):
            raise InfeasibleSolution(f"{name}: pair {[a, b]} outside {n} jobs x {m} machines")
        if not inst.preference[a, b] > 0:
            raise InfeasibleSolution(f"{name}: job {a} is not eligible for machine {b} (preference 0)")
    jobs = [a for a, _ in out]
    machines = [b for _, b in out]
    if len(set(jobs)) != len(jobs):
        raise InfeasibleSolution(f"{name}: a job is matched twice in {sorted(out)}")
    if len(set(machines)) != len(machines):
        raise InfeasibleSolution(f"{name}: a machine runs two jobs in {sorted(out)}")
    return tuple(sorted(out))


def maximum_matching(p: np.ndarray) -> list[tuple[int, int]]:
    """A maximum-cardinality matching of the eligible pairs ``p > 0``
    (Hopcroft-Karp, scipy).  O(E sqrt(n + m))."""
    from scipy.sparse import csr_matrix          # lazy: SciPy only when a matching is computed
    from scipy.sparse.csgraph import maximum_bipartite_matching
    p = np.asarray(p)
    if p.size == 0 or not (p > 0).any():
        return []
    col_of = maximum_bipartite_matching(csr_matrix(p > 0), perm_type="column")
    return [(int(i), int(k)) for i, k in enumerate(col_of) if k >= 0]


def lexicographic_matching(p: np.ndarray) -> list[tuple[int, int]]:
    """Maximum-cardinality matching of maximum weight on ``p > 0`` with the
    Hungarian method (scipy ``linear_sum_assignment``, maximising): every
    eligible entry gets ``BIG + p`` with ``BIG = min(n, m) max(p) + 1``, more
    than any matching weighs, ineligible ones 0, so a full assignment's value
    is ``|M| BIG + w(M)`` over its eligible pairs ``M``.  Exact for integer
    ``p`` while ``min(n, m) (BIG + max p) < 2**53``; for floats up to that
    sum's rounding.  O((n + m)^3)."""
    from .lazy import import_module                    # lazy: SciPy only when used; a Ctrl-C while its
    linear_sum_assignment = import_module("scipy.optimize").linear_sum_assignment   # HiGHS loads: an interrupt
    p = np.asarray(p, dtype=float)
    elig = p > 0
    if not elig.any():
        return []
    big = min(p.shape) * float(p.max()) + 1.0
    rows, cols = linear_sum_assignment(np.where(elig, p + big, 0.0), maximize=True)
    keep = elig[rows, cols]
    return [(int(a), int(b)) for a, b in zip(rows[keep], cols[keep])]


# ---- generators -------------------------------------------------------------------------
def _leaving(plan, rng, n: int, name: str) -> int:
    """The job that leaves: a matched one (a running job ends), any if none is."""
    if n == 0:
        raise ValueError(f"{name}: event 'leave' needs at least one job")
    matched = [a for a, _ in plan]
    return int(rng.choice(matched)) if matched else int(rng.integers(n))


def random_assignment(*, n: int = 20, machines: int = 20, density: float = 1.0, max_value: int = 100,
                      event: str = "none", count: int = 10, seed: int = 0) -> list[AssignmentInstance]:
    """Random matrices: each pair eligible with probability ``density``,
    integer preferences uniform in 1..``max_value``.  With ``event``
    ``arrive`` / ``leave`` the matrix is first planned optimally
    (:func:`lexicographic_matching`), then one job (a new random row; a
    matched job) arrives / leaves; the plan left becomes ``meta["previous"]``
    (the IMFS setting of [capannini2007] section 5).  Cost O(count (n + m)^3) with
    an event, O(count n m) without."""
    n, machines, count, seed = _int("n", n, 0), _int("machines", machines, 0), _int("count", count, 0), _int("seed", seed, 0)
    density, max_value = _fraction("density", density), _int("max_value", max_value, 1)
    _choice("event", event, EVENTS)
    params = dict(n=n, machines=machines, density=density, max_value=max_value, event=event, count=count, seed=seed)
    out = []
    for i, rng in enumerate(_children(seed, count)):
        def draw(rows):
            return np.where(rng.random((rows, machines)) < density, rng.integers(1, max_value + 1, (rows, machines)), 0)

        name = f"assign-random-{n}x{machines}{'' if event == 'none' else '-' + event}-s{seed:04d}-{i:03d}"
        meta = dict(name=name, family="assignment", generator="assign-random", params=dict(params), seed=seed, index=i)
        p = draw(n)
        if event != "none":
            plan = lexicographic_matching(p)
            if event == "arrive":
                p, prev = np.vstack([p, draw(1)]), plan
                meta.update(event="arrive", job=n)
            else:
                gone = _leaving(plan, rng, n, name)
                p, prev = np.delete(p, gone, axis=0), [(a - (a > gone), b) for a, b in plan if a != gone]
                meta.update(event="leave", job=gone)
            meta["previous"] = prev
        out.append(AssignmentInstance.build(p, meta, source=name))
    return out


def from_farm(state: _farm.FarmState, constants: _farm.Constants | None = None,
              meta: dict | None = None) -> AssignmentInstance:
    """The Job-Machine matrix of a farm state (:func:`epochbench.instances.farm.preference_matrix`)
    as an assignment instance; the previous plan (``jobs.running_on``, pairs
    still eligible) goes to ``meta["previous"]``.  O(N M L)."""
    p = _farm.preference_matrix(state, constants)
    info = dict(meta or {})
    info.update(previous=_farm.previous_pairs(state, p), jobs=state.jobs.ids.tolist(), now=state.now)
    return AssignmentInstance.build(p, info, source=str(info.get("name", "farm")))


def farm_assignment(*, n: int = 150, machines: int = 150, licenses: int = 20, busy: float = 0.5,
                    preemptive: bool = True, event: str = "none", count: int = 10,
                    seed: int = 0) -> list[AssignmentInstance]:
    """Job-Machine matrices of [capannini2007] farms (section 6: 150 machines, 20
    licenses; ranges of :func:`epochbench.instances.farm.generate_farm`), constants of
    footnote 1 (``preemptive``: overhead Delta 8, else 800).  ``event``:
    ``none`` keeps the generated previous plan (``busy`` x machines running
    jobs); ``arrive`` / ``leave`` first plans the state optimally
    (:func:`lexicographic_matching`) and runs that plan, then one job
    arrives (drawn like the others) or a running job leaves, and the matrix is
    recomputed; the plan left is ``meta["previous"]``.  O(count (n + m)^3)."""
    n, machines, licenses = _int("n", n, 0), _int("machines", machines, 1), _int("licenses", licenses, 0)
    count, seed, busy = _int("count", count, 0), _int("seed", seed, 0), _fraction("busy", busy)
    _choice("event", event, EVENTS)
    preemptive = _bool("preemptive", preemptive)
    c = _farm.Constants() if preemptive else _farm.Constants.non_preemptive()
    params = dict(n=n, machines=machines, licenses=licenses, busy=busy, preemptive=preemptive, event=event,
                  count=count, seed=seed)
    out = []
    for i, rng in enumerate(_children(seed, count)):
        state = _farm.generate_farm(rng, jobs=n, machines=machines, licenses=licenses, busy=busy)
        name = f"assign-farm-{n}x{machines}{'' if event == 'none' else '-' + event}-s{seed:04d}-{i:03d}"
        meta = dict(name=name, family="assignment", generator="assign-farm", params=dict(params), seed=seed, index=i)
        if event != "none":
            plan = lexicographic_matching(_farm.preference_matrix(state, c))
            state = state.advance(state.now, dict(plan))
            if event == "arrive":
                new = _farm.generate_farm(rng, jobs=1, machines=machines, licenses=licenses, busy=0.0,
                                          now=state.now).jobs
                age = state.now - new.submit                 # a generated job has waited: this one arrives now,
                new = replace(new, ids=np.array([int(state.jobs.ids.max(initial=-1)) + 1]),    # its deadline
                              submit=_farm._frozen(new.submit + age, float),               # as far after it
                              deadline=_farm._frozen(new.deadline + age, float))
                state = state.with_jobs(state.jobs.concat(new))
                meta.update(event="arrive", job=n)
            else:
                gone = _leaving(plan, rng, n, name)
                state = state.with_jobs(state.jobs.take(np.delete(np.arange(n), gone)))
                meta.update(event="leave", job=gone)
        out.append(from_farm(state, c, meta))
    return out


#: OR-Library assignment optima (minimum cost), from its assigninfo page
ASSIGN_OPTIMA = {"assign100.txt": 305}


def load_orlib_assign(path=None) -> AssignmentInstance:
    """OR-Library ``assignN.txt`` (default ``data_root()/assign/assign100.txt``):
    n, then n x n integer costs, row = job.  Preference ``(max cost + 1) -
    cost`` (every pair eligible, so the lexicographic optimum is the
    minimum-cost assignment); ``meta["optimum"] = n (max cost + 1) - min
    cost`` where the minimum cost is known (:data:`ASSIGN_OPTIMA`), and
    ``meta["cost"]`` the map back to cost, ``n (max cost + 1) - weight``
    (a missing pair costs max cost + 1), in which ``score`` reports."""
    path = Path(path) if path else data_root() / "assign" / "assign100.txt"
    try:
        tok = path.read_text().split()
    except FileNotFoundError:
        raise InstanceError(absent(path, "no such file")) from None
    except IsADirectoryError:
        raise InstanceError(f"{path}: is a folder, expected a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read ({type(exc).__name__}: {exc})") from None
    bad = next((t for t in tok if not re.fullmatch(r"[+-]?\d{1,15}", t)), None)
    if bad is not None:     # costs up to 10^15: n (max cost + 1) stays far inside int64
        raise InstanceError(f"{path}: {bad[:40]!r} is not an integer below 10^15")
    vals = [int(t) for t in tok]
    if not vals:
        raise InstanceError(f"{path}: empty file")
    n = vals[0]
    if n < 1 or len(vals) != 1 + n * n:
        raise InstanceError(f"{path}: header says n = {n}, so {n * n} costs, but the file has {len(vals) - 1}")
    cost = np.array(vals[1:], dtype=np.int64).reshape(n, n)
    if cost.min() < 0:
        raise InstanceError(f"{path}: negative cost {cost.min()}")
    top = int(cost.max()) + 1
    meta = dict(name=path.stem, family="assignment", generator="orlib-assign", params={"file": path.name},
                seed=None, cost_offset=top, dataset="orlib-assign",
                cost={"offset": n * top, "scale": -1, "sense": "min", "units": "cost"})
    if path.name in ASSIGN_OPTIMA:
        meta.update(min_cost=ASSIGN_OPTIMA[path.name], optimum=float(n * top - ASSIGN_OPTIMA[path.name]),
                    ref_source="OR-Library assigninfo")
    return AssignmentInstance.build(top - cost, meta, source=str(path))


def _orlib_assign_family(*, root: str | None = None) -> list[AssignmentInstance]:
    """OR-Library assign100 (100 x 100 costs, optimum 305) as preferences."""
    return [load_orlib_assign(Path(root) / "assign100.txt" if root else None)]


_io.register_family("assignment", AssignmentInstance, check_assignment)
_EVENT_HELP = "none, or one job arrives / leaves after an optimal plan (meta previous: the plan left)"
register_generator("assign-random", random_assignment, help={
    "n": "jobs (rows)", "machines": "machines (columns)", "density": "probability that a pair is eligible",
    "max_value": "largest preference", "event": _EVENT_HELP}, choices={"event": EVENTS})
register_generator("assign-farm", farm_assignment, help={
    "n": "jobs in the farm", "machines": "machines", "licenses": "license types",
    "busy": "share of machines running a job of the previous plan (event none)",
    "preemptive": "footnote 1 overhead constant 8 (else 800: non-preemptable jobs)", "event": _EVENT_HELP},
    choices={"event": EVENTS})
register_generator("orlib-assign", _orlib_assign_family,
                   help={"root": "folder of assign100.txt (default: assign in the data folder)"}, none_types={"root": str})

__all__ = ["AssignmentInstance", "check_assignment", "maximum_matching", "lexicographic_matching", "random_assignment", "from_farm",
           "farm_assignment", "load_orlib_assign", "ASSIGN_OPTIMA", "EVENTS"]
