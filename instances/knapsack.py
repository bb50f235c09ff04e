"""The ``knapsack`` family: which jobs may hold critical licenses ([capannini2007] 4.2).

A 0-1 multidimensional knapsack (MKP): job i brings ``profit[i]`` and uses
``weights[i, l]`` units of license l (0/1 in the farm; any non-negative
integer in OR-Library's files); the chosen jobs use at most ``capacity[l]``
copies of each license.  Maximise the total profit.  JSON::

    {"kind": "knapsack", "capacity": [...], "weights": [[...]], "profit": [...], "meta": {...}}

Generators (``epochbench generate NAME``):

=============  ===============================================================  =========
farm-mkp       jobs asking for critical licenses in a [capannini2007] farm, profit       003 §4.2,
               c-bar_i from the Job-Machine matrix, license ratio ranges of       §6, tab. 1
               table 1
mkp            random MKP, uncorrelated or correlated profits (Chu & Beasley      --
               1998 construction)
orlib-mknap1   OR-Library ``mknap1.txt`` (7 problems, optima in the headers)     data README
orlib-mknapcb  OR-Library ``mknapcbK.txt`` (30 problems each), the values of     data README
               ``mkcbres.txt`` in ``meta["best_known"]`` / ``meta["lp_bound"]``
=============  ===============================================================  =========

``meta["optimum"]`` is set only where the reference value is a proven optimum
(``mknap1`` headers); Chu & Beasley's GA values are best known values, not
proofs, so ``mknapcb`` problems carry ``best_known`` (and the LP bound).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from . import farm as _farm
from . import io as _io
from .checks import distinct, exact_loads, indices, over
from .core import InfeasibleSolution, InstanceError, int_matrix, meta_dict, profit_vector
from .data import absent, data_root
from .generators import _children, _choice, _fraction, _int, register_generator


@dataclass(frozen=True, eq=False)
class KnapsackInstance:
    """The license knapsack of convergent scheduling ([capannini2007]
    section 4.2): which jobs keep their licences (the family ``knapsack``, a
    0-1 multidimensional knapsack, maximising the profit).  Made by
    :meth:`build` (which validates: ``build(capacity, weights, profit)``),
    a generator or :func:`epochbench.load`; frozen, its
    arrays read-only.

    Parameters
    ----------
    capacity : (L,) int64 array
        Copies of each licence.
    weights : (n, L) int64 array
        The copies each job needs.
    profit : (n,) float array
        Each job's profit.
    meta : dict
        ``name`` and any other JSON values (``optimum``, ``best_known``).

    Notes
    -----
    ``kind`` is ``"knapsack"``, ``sense`` ``"max"``; the decision is a
    tuple of the item indices kept.
    """

    capacity: np.ndarray  # (L,) int
    weights: np.ndarray   # (n, L) int
    profit: np.ndarray    # (n,) float
    meta: dict = field(default_factory=dict)

    kind = "knapsack"
    sense = "max"

    @property
    def n(self) -> int:
        return self.weights.shape[0]

    @property
    def k(self) -> int:
        return self.capacity.shape[0]

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "<unnamed>"))

    @classmethod
    def build(cls, capacity, weights, profit, meta=None, source="<instance>") -> "KnapsackInstance":
        """Validate and build; every error names ``source`` and the field."""
        cap = int_matrix(capacity, "capacity", source, ndim=1)
        if cap.shape[0] == 0:
            raise InstanceError(f"{source}: field 'capacity' is empty (L must be >= 1)")
        if isinstance(weights, (list, tuple)) and len(weights) == 0:
            weights = np.zeros((0, cap.shape[0]), dtype=np.int64)
        w = int_matrix(weights, "weights", source, ndim=2)
        if w.shape[0] and w.shape[1] != cap.shape[0]:
            raise InstanceError(f"{source}: field 'weights' has {w.shape[1]} licenses per job, "
                                f"but 'capacity' has L = {cap.shape[0]}")
        if w.shape[0] == 0:
            w = np.zeros((0, cap.shape[0]), dtype=np.int64)
            w.setflags(write=False)
        prof = profit_vector(profit, source, w.shape[0])
        return cls(cap, w, prof, meta_dict(meta, source))

    def value(self, selected: Sequence[int]) -> float:
        """Profit of the jobs ``selected``, summed in index order (the same
        set, the same value, whatever order it was picked in).  O(s log s)."""
        idx = np.sort(np.asarray(list(selected), dtype=np.int64))
        return float(self.profit[idx].sum()) if idx.size else 0.0

    def rho(self) -> np.ndarray:
        """``rho_l`` of [capannini2007] 4.1 over all jobs: demand / capacity."""
        return _farm.license_rho(self.weights, self.capacity)

    def describe(self, selected) -> dict:
        """License usage of a selection: used / capacity over the licenses
        critical in the instance (``rho_l > 1``), [capannini2007] table 1's figure."""
        return {"license_usage": license_usage(self, selected)}

    def to_dict(self) -> dict:
        """The instance as the fields of its file (:func:`epochbench.save`
        writes them as JSON): arrays stay numpy arrays, so ``json.dumps`` of
        this dict needs them as lists first
        (:func:`epochbench.instances.core.json_text` does that); ``from_dict``
        reads either back.  O(size)."""
        return {"kind": "knapsack", "capacity": self.capacity, "weights": self.weights,
                "profit": self.profit, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict, source="<dict>") -> "KnapsackInstance":
        """The instance of a file's fields ``d`` (its ``to_dict``, lists or
        arrays), validated as :meth:`build` does; every error names
        ``source`` and the field (:class:`~epochbench.instances.core.InstanceError`)."""
        if d.get("kind") != "knapsack":
            raise InstanceError(f"{source}: field 'kind' is {d.get('kind')!r}, expected 'knapsack'")
        _io.check_fields(d, {"capacity": "array", "weights": "matrix", "profit": "array"}, source,
                         required=("capacity", "weights", "profit"))
        return cls.build(d["capacity"], d["weights"], d["profit"], d.get("meta"), source=source)


def check_knapsack(inst: KnapsackInstance, selected) -> tuple[int, ...]:
    """Raise :class:`InfeasibleSolution` unless ``selected`` is a feasible
    selection: a sequence of integer job indices (no floats, booleans or
    strings: :func:`epochbench.instances.checks.indices`) in range, no repeats, and on
    every license the summed weights within ``capacity``.  Nothing from any
    solver.  Returns the indices in the given order, as Python ints.

    Notes
    -----
    O(|selected| L).  Sums are exact (:func:`epochbench.instances.checks.exact_loads`):
    int64 when the magnitudes prove no overflow, Python integers otherwise
    (weights near 2**62 cannot wrap into a feasible-looking sum).
    """
    name = inst.name
    sel = indices(selected, inst.n, f"{name}: selection")
    distinct(sel, f"{name}: selection", "takes")
    loads = exact_loads(inst.weights, sel)
    r = over(loads, inst.capacity)
    if r is not None:
        raise InfeasibleSolution(f"{name}: license {r} over-committed: {int(loads[r])} > capacity "
                                 f"{int(inst.capacity[r])}")
    return sel


def license_usage(inst: KnapsackInstance, selected) -> float:
    """Share of the critical licenses' copies a selection uses: ``sum_{l in
    L_c} used_l / sum_{l in L_c} capacity_l`` (1.0 when no license is
    critical or the critical ones have no copies: none is left idle)."""
    crit = inst.rho() > 1.0
    if not crit.any() or inst.capacity[crit].sum() == 0:
        return 1.0
    idx = np.asarray(list(selected), dtype=np.int64)
    used = inst.weights[idx][:, crit].sum() if idx.size else 0
    return float(used / inst.capacity[crit].sum())


# ---- [capannini2007] farm ----------------------------------------------------------------------------
def from_farm(state: _farm.FarmState, p: np.ndarray | None = None, meta: dict | None = None) -> KnapsackInstance:
    """The MKP of [capannini2007] section 4.2 at one farm state: the items are the
    jobs asking for at least one critical license (``rho_l > 1`` over all
    jobs in the system) that some machine can run; weights are their license
    requests (0/1, all L licenses), capacity the license copies, profit
    ``c-bar_i`` (:func:`epochbench.instances.farm.mkp_profit`) of the Job-Machine matrix
    ``p`` (default: :func:`epochbench.instances.farm.preference_matrix`).  ``meta`` gets
    ``jobs`` (farm positions of the items), ``critical`` and ``no_machine``
    (jobs with a critical license but no eligible machine, left out).
    O(N M L)."""
    p = _farm.preference_matrix(state) if p is None else np.asarray(p, dtype=float)
    lic = state.jobs.licenses
    crit = _farm.license_rho(lic, state.copies) > 1.0
    asks = lic[:, crit].any(axis=1) if crit.any() else np.zeros(state.n, dtype=bool)
    profit = _farm.mkp_profit(p)
    items = np.nonzero(asks & (profit > 0))[0]
    info = dict(meta or {})
    info.update(jobs=items.tolist(), critical=np.nonzero(crit)[0].tolist(),
                no_machine=int((asks & (profit <= 0)).sum()), farm_jobs=state.n, machines=state.m,
                licenses=state.n_licenses)
    return KnapsackInstance.build(state.copies, lic[items].astype(np.int64), profit[items], info,
                                  source=str(info.get("name", "farm")))


def farm_mkp(*, n: int = 300, machines: int = 100, licenses: int = 40, ratio_lo: float = 0.40,
             ratio_hi: float = 0.45, need: float = _farm.NEED, count: int = 10, seed: int = 0) -> list[KnapsackInstance]:
    """License knapsacks of [capannini2007] table 1: ``n`` jobs in a farm of
    ``machines`` machines and ``licenses`` licenses (section 6: 100, 40), the
    license ratio uniform in [``ratio_lo``, ``ratio_hi``] (table 1: 0.40-0.45,
    0.45-0.50, 0.50-0.55, 0.55-0.60), each license needed with probability
    ``need``; other farm ranges as :func:`epochbench.instances.farm.generate_farm`.
    Items: the jobs asking for a critical license (:func:`from_farm`)."""
    n, machines, licenses = _int("n", n, 0), _int("machines", machines, 1), _int("licenses", licenses, 1)
    count, seed = _int("count", count, 0), _int("seed", seed, 0)
    lo, hi, need = _fraction("ratio_lo", ratio_lo), _fraction("ratio_hi", ratio_hi), _fraction("need", need)
    if lo > hi:
        raise ValueError(f"ratio_lo must be <= ratio_hi, got {lo} > {hi}")
    params = dict(n=n, machines=machines, licenses=licenses, ratio_lo=lo, ratio_hi=hi, need=need,
                  count=count, seed=seed)
    out = []
    for i, rng in enumerate(_children(seed, count)):
        state = _farm.generate_farm(rng, jobs=n, machines=machines, licenses=licenses, ratio=(lo, hi), need=need)
        name = f"farm-mkp-{round(100 * lo)}-{round(100 * hi)}-n{n}-s{seed:04d}-{i:03d}"
        out.append(from_farm(state, meta=dict(name=name, family="knapsack", generator="farm-mkp",
                                              params=dict(params), seed=seed, index=i)))
    return out


# ---- random MKP --------------------------------------------------------------------------------
CORRELATIONS = ("uncorrelated", "correlated")


def random_mkp(*, n: int = 100, k: int = 5, tightness: float = 0.5, correlation: str = "uncorrelated",
               count: int = 10, seed: int = 0) -> list[KnapsackInstance]:
    """Random MKP after [chu1998]: weights uniform in 1..1000,
    ``capacity_l = tightness * sum_i weights[i, l]``; profits uniform in
    1..1000 (``uncorrelated``) or ``sum_l weights[i, l] / k + 500 q_i``, q
    uniform in (0, 1), rounded (``correlated``).  Cost O(count n k)."""
    n, k, count, seed = _int("n", n, 0), _int("k", k, 1), _int("count", count, 0), _int("seed", seed, 0)
    tightness = _fraction("tightness", tightness)
    if tightness == 0:                  # every capacity 0: an instance whose only packing is the empty one
        raise ValueError("tightness must be a number in (0, 1]: 0 makes every capacity 0, so that nothing fits")
    _choice("correlation", correlation, CORRELATIONS)
    params = dict(n=n, k=k, tightness=tightness, correlation=correlation, count=count, seed=seed)
    out = []
    for i, rng in enumerate(_children(seed, count)):
        w = rng.integers(1, 1001, (n, k))
        cap = np.floor(tightness * w.sum(axis=0)).astype(np.int64)
        if correlation == "uncorrelated":
            profit = rng.integers(1, 1001, n).astype(float)
        else:
            profit = np.rint(w.sum(axis=1) / k + 500 * rng.random(n))
        meta = dict(name=f"mkp-{correlation[0]}-n{n}-k{k}-s{seed:04d}-{i:03d}", family="knapsack", generator="mkp",
                    params=dict(params), seed=seed, index=i)
        out.append(KnapsackInstance.build(cap, w, profit, meta, source=meta["name"]))
    return out


# ---- OR-Library ------------------------------------------------------------------------------
def _numbers(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except FileNotFoundError:
        raise InstanceError(absent(path, "no such file")) from None
    except IsADirectoryError:
        raise InstanceError(f"{path}: is a folder, expected a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read ({exc})") from None


_INT_TOKEN = re.compile(r"[+-]?\d{1,19}")    # then checked against int64's range (19 digits may pass it)
_INT64 = 2 ** 63
_NUMBER_TOKEN = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?")


def parse_orlib_mkp(path) -> list[tuple[int, int, float, np.ndarray, np.ndarray, np.ndarray]]:
    """OR-Library MKP file (``mknap1``, ``mknapcbK``): the problem count, then
    per problem ``n m opt``, n profits, m rows of n weights, m capacities.
    Returns ``(n, m, opt, profit, weights (n, m), capacity)`` per problem;
    raises :class:`InstanceError` naming the file, problem and field."""
    path = Path(path)
    tok = _numbers(path)
    pos = 0

    def take(count: int, what: str, conv=float):
        nonlocal pos
        if pos + count > len(tok):
            raise InstanceError(f"{path}: file ends inside {what} (needs {count} numbers, "
                                f"{len(tok) - pos} left)")
        chunk = tok[pos:pos + count]
        pos += count
        pattern = _INT_TOKEN if conv is int else _NUMBER_TOKEN
        bad = next((t for t in chunk if not pattern.fullmatch(t)
                    or (conv is int and not -_INT64 <= int(t) < _INT64)), None)
        if bad is not None:
            kind = "an integer within int64" if conv is int else "a number"
            raise InstanceError(f"{path}: {what}: {bad[:40]!r} is not {kind}")
        return [conv(t) for t in chunk]

    (count,) = take(1, "the problem count", int)
    out = []
    for q in range(1, count + 1):
        n, m = take(2, f"problem {q} header (n m)", int)
        (opt,) = take(1, f"problem {q} header (optimum)")
        if n < 0 or m < 1:
            raise InstanceError(f"{path}: problem {q} header: n = {n}, m = {m}")
        profit = np.array(take(n, f"problem {q} profits"))
        w = np.array(take(n * m, f"problem {q} weights", int), dtype=np.int64).reshape(m, n).T
        cap = np.array(take(m, f"problem {q} capacities", int), dtype=np.int64)
        out.append((n, m, opt, profit, w, cap))
    if pos != len(tok):
        raise InstanceError(f"{path}: {len(tok) - pos} number(s) after the {count} problems announced")
    return out


def load_mknap1(path=None) -> list[KnapsackInstance]:
    """The 7 problems of OR-Library ``mknap1.txt`` (default
    ``data_root()/orlib/mknap1.txt``); ``meta["optimum"]`` from each header
    (proven optima of Petersen's set; problem 2 has decimal profits)."""
    path = Path(path) if path else data_root() / "orlib" / "mknap1.txt"
    out = []
    for q, (n, m, opt, profit, w, cap) in enumerate(parse_orlib_mkp(path), 1):
        meta = dict(name=f"mknap1-{q}", family="knapsack", generator="orlib-mknap1",
                    params={"file": path.name, "problem": q}, seed=None, optimum=opt,
                    dataset="orlib-mknap1", ref_source=path.name)
        out.append(KnapsackInstance.build(cap, w, profit, meta, source=f"{path}: problem {q}"))
    return out


@lru_cache(maxsize=4)
def read_mkcbres(path) -> dict[str, dict]:
    """``mkcbres.txt``: problem name (``m.n-ii``) -> ``{"best_known": GA value,
    "lp_bound": LP relaxation}`` ([chu1998]."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InstanceError(absent(path, "no such file")) from None
    split = text.find("LP optimal")
    if split < 0:
        raise InstanceError(f"{path}: no 'LP optimal' table")
    row = re.compile(r"^\s*(\d+\.\d+-\d+)\s+(\S+)\s*$", re.M)
    table: dict[str, dict] = {}
    for part, key in ((text[:split], "best_known"), (text[split:], "lp_bound")):
        for name, val in row.findall(part):
            try:
                table.setdefault(name, {})[key] = float(val)
            except ValueError:
                raise InstanceError(f"{path}: problem {name}: {val!r} is not a number") from None
    if not table:
        raise InstanceError(f"{path}: no problem rows")
    return table


def load_mknapcb(path, results=None, first: int | None = None) -> list[KnapsackInstance]:
    """The problems of an OR-Library ``mknapcbK.txt`` file, named ``m.n-ii``
    as in ``mkcbres.txt`` (default: the file beside it), whose values land in
    ``meta["best_known"]`` and ``meta["lp_bound"]``; only the ``first``
    problems with ``first`` (an integer: 2.5 would quietly act as 3)."""
    first = None if first is None else _int("first", first, 0)
    path = Path(path)
    res_path = Path(results) if results else path.parent / "mkcbres.txt"
    table = read_mkcbres(str(res_path)) if res_path.is_file() else {}
    out = []
    for q, (n, m, _, profit, w, cap) in enumerate(parse_orlib_mkp(path)):
        if first is not None and q >= first:
            break
        name = f"{m}.{n}-{q:02d}"
        known = {**table[name], "ref_source": res_path.name} if name in table else {}
        meta = dict(name=name, family="knapsack", generator="orlib-mknapcb",
                    params={"file": path.name, "problem": q}, seed=None, dataset="orlib-mknapcb", **known)
        out.append(KnapsackInstance.build(cap, w, profit, meta, source=f"{path}: problem {q}"))
    return out


def _mknap1_family(*, root: str | None = None) -> list[KnapsackInstance]:
    """OR-Library mknap1: the 7 Petersen problems with their proven optima
    (``root``: folder of mknap1.txt, default ``orlib`` in the data folder)."""
    return load_mknap1(Path(root) / "mknap1.txt" if root else None)


def _mknapcb_family(*, file: int = 1, first: int | None = None, root: str | None = None) -> list[KnapsackInstance]:
    """OR-Library mknapcbK (Chu & Beasley): 30 problems, best known values and
    LP bounds of mkcbres.txt in meta (``root`` default: ``orlib`` in the data folder)."""
    base = Path(root) if root else data_root() / "orlib"
    return load_mknapcb(base / f"mknapcb{_int('file', file, 1)}.txt", first=first)


_io.register_family("knapsack", KnapsackInstance, check_knapsack)
register_generator("farm-mkp", farm_mkp, help={
    "n": "jobs in the farm (items: those asking for a critical license)",
    "machines": "machines in the farm", "licenses": "license types L",
    "ratio_lo": "license ratio, lower end (table 1: 0.40, 0.45, 0.50, 0.55)",
    "ratio_hi": "license ratio, upper end (table 1: 0.45, 0.50, 0.55, 0.60)",
    "need": "probability that a job needs a license"})
register_generator("mkp", random_mkp, help={
    "n": "items", "k": "constraints (licenses) L", "tightness": "capacity / total weight per constraint",
    "correlation": "profits independent of the weights or correlated with them"},
    choices={"correlation": CORRELATIONS})
register_generator("orlib-mknap1", _mknap1_family, help={"root": "folder of mknap1.txt (default: orlib in the data folder)"},
                   none_types={"root": str})
register_generator("orlib-mknapcb", _mknapcb_family, help={
    "file": "K of mknapcbK.txt", "first": "only the first problems of the file",
    "root": "folder of the files (default: orlib in the data folder)"}, none_types={"first": int, "root": str})

__all__ = ["KnapsackInstance", "check_knapsack", "license_usage", "from_farm", "farm_mkp", "random_mkp",
           "parse_orlib_mkp", "load_mknap1", "read_mkcbres", "load_mknapcb"]
