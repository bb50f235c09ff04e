"""The ``mapping`` family: independent tasks onto heterogeneous machines
([vadhiyar-notes], "application scheduling": the ETC matrix, Min-Min, GA, ...).

An instance is an expected-time-to-compute matrix ``etc`` (t tasks x m
machines, >= 0: public ETC files round small times to 0.00; not one whose
optimum makespan is 0) and the machines' availability times ``ready`` (m,
default 0).  A decision maps every task to one machine: a tuple of t machine
indices.  With ``mat(j) = ready[j] + sum of etc[i, j] over the tasks i on j``,
every task on machine j completes by ``mat(j)``, and the objective is the
makespan of [vadhiyar-notes], ``max ct(i, j)`` over the tasks: the largest ``mat(j)``
over the machines that receive a task (a machine left idle does not count,
whatever its ready time; with ``ready = 0`` this is just the largest load).

Generators (``epochbench generate NAME``):

=============  ==========================================================  ===================
name           what                                                        source
=============  ==========================================================  ===================
braun-range    Braun's range-based ETC: task / machine heterogeneity        [braun2001]
               hi / lo, consistent / inconsistent / semi-consistent         (JPDC 61(6)) sec. 3
braun          the 12 Braun matrices (512 x 16) of ``data_root()/braun``    data README
               with REFERENCE.csv's figures in ``meta``
=============  ==========================================================  ===================

JSON: ``{"kind": "mapping", "etc": [[...]], "ready": [...], "meta": {...}}``.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from . import io as _io
from .checks import first_repeat, indices, short, split_names
from .core import InfeasibleSolution, InstanceError, float_array, meta_dict
from .data import absent, data_root
from .generators import _int, register_generator

__all__ = ["MappingInstance", "check_mapping", "water_level", "dual_bound", "braun_etc", "braun_range", "load_braun",
           "braun_family", "TASK_RANGE", "MACHINE_RANGE", "CONSISTENCY", "BRAUN_NAMES"]

#: [braun2001] section 3: upper end of the task-baseline range (phi_b) and
#: of the machine-multiplier range (phi_r) for high and low heterogeneity
TASK_RANGE = {"hi": 3000.0, "lo": 100.0}
MACHINE_RANGE = {"hi": 1000.0, "lo": 10.0}
#: c = consistent, i = inconsistent, s = semi-consistent (Braun's file names)
CONSISTENCY = ("c", "i", "s")
HETEROGENEITY = ("hi", "lo")
BRAUN_NAMES = tuple(f"u_{c}_{th}{mh}.0" for c in CONSISTENCY for th in HETEROGENEITY for mh in HETEROGENEITY)
#: ``u_c_hihi.0`` ([braun2001]), ``A.u_i_lolo`` (the larger HCSP sets of Nesmachnow et al.)
_BRAUN_NAME = re.compile(r"^(?:[A-Za-z]\.)?u_([cis])_(hi|lo)(hi|lo)(?:\.\d+)?$")
#: tasks x machines of the [braun2001] matrices (REFERENCE.csv's figures are of these)
BRAUN_SHAPE = (512, 16)
BRAUN_DATASET = "braun2001"
#: most ETC values a file may announce (refused before reading on)
MAX_ETC_VALUES = 10**8


@dataclass(frozen=True, eq=False)
class MappingInstance:
    """Independent tasks mapped to machines to minimise the makespan
    ([vadhiyar-notes]; [braun2001]): the family ``mapping``.  Made by
    :meth:`build` (which validates), a generator or
    :func:`epochbench.load`; frozen, its arrays read-only.

    Parameters
    ----------
    etc : (t, m) float array
        Expected time to compute each task on each machine, >= 0.
    ready : (m,) float array
        When each machine is free, >= 0 (zeros by default).
    meta : dict
        ``name`` and any other JSON values (``optimum``, ``lower_bound``).

    Notes
    -----
    ``kind`` is ``"mapping"``, ``sense`` ``"min"``; the decision is a tuple
    giving each task's machine; :meth:`lower_bound` is the bound scoring
    falls back on.
    """

    etc: np.ndarray    # (t, m) float, >= 0 (not 0 for every task where a machine is ready at 0)
    ready: np.ndarray  # (m,) float, >= 0
    meta: dict = field(default_factory=dict)

    kind = "mapping"
    sense = "min"

    @classmethod
    def build(cls, etc, ready=None, meta=None, source: str = "<instance>") -> "MappingInstance":
        """Validate and build; every error names ``source`` and the field."""
        # numbers only (no booleans, strings, integers beyond a float); NaN / inf refused below with the range
        arr = float_array(etc, "etc", source, finite=False)
        if arr.ndim != 2:
            raise InstanceError(f"{source}: field 'etc' must be a t x m matrix, got shape {arr.shape}")
        t, m = arr.shape
        if t == 0 or m == 0:
            raise InstanceError(f"{source}: field 'etc' has shape {arr.shape}; need at least one task and one machine")
        bad = ~np.isfinite(arr) | (arr < 0)     # 0 is a time (public ETC files round small ones to 0.00)
        if bad.any():
            i, j = map(int, np.argwhere(bad)[0])
            raise InstanceError(f"{source}: field 'etc' entry [{i}][{j}] = {float(arr[i, j])!r} "
                                "is not a number >= 0")
        if ready is None:
            rd = np.zeros(m)
        else:
            rd = float_array(ready, "ready", source, finite=False)
            if rd.shape != (m,):
                raise InstanceError(f"{source}: field 'ready' must have one entry per machine (m = {m}), "
                                    f"got shape {rd.shape}")
            badr = ~np.isfinite(rd) | (rd < 0)
            if badr.any():
                j = int(np.argmax(badr))
                raise InstanceError(f"{source}: field 'ready' entry [{j}] = {float(rd[j])!r} is not a number >= 0")
        with np.errstate(over="ignore"):
            total = float(rd.max() + arr.max(axis=1).sum())
        if not np.isfinite(total):             # no makespan, not even the worst schedule's, would be a number
            raise InstanceError(f"{source}: field 'etc': every task on its slowest machine after the latest "
                                "'ready' time takes longer than a float can hold (1.8e308); scale the times down")
        if ((arr == 0) & (rd == 0)).any(axis=1).all():
            raise InstanceError(f"{source}: field 'etc': every task takes 0 on a machine ready at 0, so the "
                                "optimum makespan is 0 and no gap to it is defined")
        arr.setflags(write=False)
        rd.setflags(write=False)
        return cls(arr, rd, meta_dict(meta, source))

    # ---- shape ------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of tasks t."""
        return self.etc.shape[0]

    @property
    def k(self) -> int:
        """Number of machines m."""
        return self.etc.shape[1]

    tasks = n
    machines = k

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "<unnamed>"))

    @property
    def has_ready(self) -> bool:
        return bool(np.any(self.ready > 0))

    # ---- objective --------------------------------------------------------------
    def finish_times(self, decision: Sequence[int]) -> np.ndarray:
        """``mat(j)`` after the mapping for every machine that receives a task,
        0 for an idle one.  O(t + m)."""
        a = np.asarray(decision, dtype=np.int64)
        load = np.bincount(a, weights=self.etc[np.arange(self.n), a], minlength=self.k)
        used = np.bincount(a, minlength=self.k) > 0
        return np.where(used, load + self.ready, 0.0)

    def value(self, decision: Sequence[int]) -> float:
        """Makespan ([vadhiyar-notes]): ``max ct(i, j)`` over the tasks.  O(t + m)."""
        return float(self.finish_times(decision).max())

    def describe(self, decision) -> dict:
        fin = self.finish_times(decision)
        return {"critical_machine": int(np.argmax(fin)),
                "tasks_per_machine": np.bincount(np.asarray(decision, dtype=np.int64), minlength=self.k).tolist()}

    def lower_bound(self) -> float:
        """A valid lower bound on the makespan, cheap (O(t m) per step, 60 steps):
        the largest of (1) ``max_i min_j (ready[j] + etc[i, j])``; (2) the
        water level C with ``sum_j max(0, C - ready[j]) = sum_i min_j etc[i, j]``
        (the least total work fits below C); (3) the LP dual bound
        ``sum_i min_j w_j etc[i, j]`` for weights ``w`` on the simplex (any such
        ``w`` gives a bound: ``sum_j w_j mat(j) <= C``), ``w`` improved by
        exponentiated-gradient steps.  :mod:`epochbench.exact.mapping` has the LP itself."""
        return makespan_lower_bound(self.etc, self.ready)

    # ---- JSON -------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The instance as the fields of its file (:func:`epochbench.save`
        writes them as JSON): arrays stay numpy arrays, so ``json.dumps`` of
        this dict needs them as lists first
        (:func:`epochbench.instances.core.json_text` does that); ``from_dict``
        reads either back.  O(size)."""
        return {"kind": "mapping", "etc": self.etc, "ready": self.ready, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict, source="<dict>") -> "MappingInstance":
        """The instance of a file's fields ``d`` (its ``to_dict``, lists or
        arrays), validated as :meth:`build` does; every error names
        ``source`` and the field (:class:`~epochbench.instances.core.InstanceError`)."""
        if d.get("kind") != "mapping":
            raise InstanceError(f"{source}: field 'kind' is {d.get('kind')!r}, expected 'mapping'")
        _io.check_fields(d, {"etc": "matrix", "ready": "array"}, source, required=("etc",))
        meta = d.get("meta") or {}
        if not isinstance(meta, dict):
            raise InstanceError(f"{source}: field 'meta' must be an object")
        return cls.build(d["etc"], d.get("ready"), meta, source=source)


def makespan_lower_bound(etc: np.ndarray, ready: np.ndarray) -> float:
    """:meth:`MappingInstance.lower_bound` of the matrix ``etc`` (t x m,
    t >= 1) and the ready times ``ready`` (m), any such arrays: also those
    that no instance holds (the exact methods' rounded integer data, where
    every task may take 0 on a machine ready at 0)."""
    lb1 = float((etc + ready).min(axis=1).max())
    lb2 = water_level(ready, float(etc.min(axis=1).sum()))
    return max(lb1, lb2, dual_bound(etc))


def water_level(ready: np.ndarray, work: float) -> float:
    """Smallest C with ``sum_j max(0, C - ready[j]) >= work``.  O(m log m)."""
    r = np.sort(np.asarray(ready, dtype=float))
    csum = np.cumsum(r)
    for k in range(1, r.size + 1):
        c = (work + csum[k - 1]) / k
        if k == r.size or c <= r[k]:
            return float(c)
    return float(r[-1])  # unreachable


def dual_bound(etc: np.ndarray, steps: int = 60) -> float:
    """``max over tried w`` of ``sum_i min_j w_j etc[i, j]`` (w >= 0, sum 1): the
    Lagrangian dual of the makespan LP, each value a valid lower bound.  Steps
    multiply ``w_j`` by ``exp(eta * (share of machine j's chosen work - 1/m))``.
    O(steps * t * m)."""
    t, m = etc.shape
    w = np.full(m, 1.0 / m)
    best = 0.0
    eta = 2.0
    for _ in range(steps):
        prod = etc * w
        j = prod.argmin(axis=1)
        val = float(prod[np.arange(t), j].sum())
        if val > best:
            best = val
        work = np.bincount(j, weights=etc[np.arange(t), j], minlength=m)
        if not work.sum() > 0:                 # each task's cheapest weighted machine takes 0: no step helps
            break
        g = work / work.sum() - 1.0 / m
        w = w * np.exp(eta * g)
        w /= w.sum()
        eta *= 0.95
    return best


# ---- independent feasibility check ------------------------------------------------
def check_mapping(inst: MappingInstance, decision) -> tuple[int, ...]:
    """Raise :class:`InfeasibleSolution` unless ``decision`` gives every task
    exactly one machine: a sequence of t integer machine indices in
    ``0..m-1`` (no floats, not even ``2.0``, no booleans or strings:
    :func:`epochbench.instances.checks.indices`).  Returns the normalised tuple of
    Python ints.  O(t); nothing from any solver."""
    name = inst.name
    out = indices(decision, inst.k, f"{name}: assignment", noun="machine", item="of task")
    if len(out) != inst.n:
        raise InfeasibleSolution(f"{name}: assignment has {len(out)} entries, the instance has {inst.n} tasks")
    return out


# ---- Braun's range-based generator ---------------------------------------------------
def braun_etc(rng: np.random.Generator, tasks: int, machines: int, task_het: str = "hi",
              machine_het: str = "hi", consistency: str = "i") -> np.ndarray:
    """One ETC matrix by [braun2001]'s range-based method (sec. 3): a
    baseline ``tau_i ~ U[1, phi_b)`` per task, ``etc[i, j] = tau_i * r_ij`` with
    ``r_ij ~ U[1, phi_r)``; ``phi_b`` = 3000 (hi) / 100 (lo), ``phi_r`` = 1000 (hi)
    / 10 (lo).  Consistent: each row sorted ascending (machine 0 fastest for
    every task); semi-consistent: the entries in the even columns of each row
    sorted among themselves, the odd columns left as drawn; inconsistent: as
    drawn.  O(t m log m)."""
    _choice("task_het", task_het, HETEROGENEITY)
    _choice("machine_het", machine_het, HETEROGENEITY)
    _choice("consistency", consistency, CONSISTENCY)
    tau = rng.uniform(1.0, TASK_RANGE[task_het], size=tasks)
    etc = tau[:, None] * rng.uniform(1.0, MACHINE_RANGE[machine_het], size=(tasks, machines))
    if consistency == "c":
        etc.sort(axis=1)
    elif consistency == "s":
        etc[:, 0::2] = np.sort(etc[:, 0::2], axis=1)
    return etc


def _choice(name, value, allowed):
    """Refuse ``value`` unless it is one of ``allowed``; an unhashable value (a
    list, a numpy array, whose ``==`` answers elementwise) never is."""
    if not isinstance(value, Hashable) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {short(value)}")


def _classes(value, allowed, name):
    """``[value]``, or every class of ``allowed`` for "all"; checked first, so
    that an array is refused before ``value == "all"`` compares elementwise."""
    _choice(name, value, allowed + ("all",))
    return list(allowed) if value == "all" else [value]


def braun_range(*, tasks: int = 512, machines: int = 16, task_het: str = "hi", machine_het: str = "hi",
                consistency: str = "i", count: int = 1, seed: int = 0, decimals: int = 2) -> list[MappingInstance]:
    """Braun's range-based ETC matrices ([braun2001] sec. 3; [vadhiyar-notes] ETC
    mapping), ``count`` per class; "all" for ``task_het``, ``machine_het`` or
    ``consistency`` gives every class (12 with all three).  Entries rounded to
    ``decimals`` (-1: not rounded), so that the exact models scale them to
    integers without error.  Instance ``i`` of class ``c`` draws from
    ``SeedSequence(seed).spawn(12)[c].spawn(count)[i]``: it depends on neither
    ``count`` nor the other classes asked for.  Names
    ``range_{c}_{task}{machine}_{t}x{m}_{seed}_{i}``."""
    tasks, machines = _int("tasks", tasks, 1), _int("machines", machines, 1)
    count, seed, decimals = _int("count", count, 0), _int("seed", seed, 0), _int("decimals", decimals, -1)
    out = []
    roots = np.random.SeedSequence(seed).spawn(len(BRAUN_NAMES))
    for c in _classes(consistency, CONSISTENCY, "consistency"):
        for th in _classes(task_het, HETEROGENEITY, "task_het"):
            for mh in _classes(machine_het, HETEROGENEITY, "machine_het"):
                cls = BRAUN_NAMES.index(f"u_{c}_{th}{mh}.0")
                for i, ss in enumerate(roots[cls].spawn(count)):
                    etc = braun_etc(np.random.default_rng(ss), tasks, machines, th, mh, c)
                    if decimals >= 0:
                        etc = np.maximum(np.round(etc, decimals), 10.0 ** -decimals)
                    params = dict(tasks=tasks, machines=machines, task_het=th, machine_het=mh,
                                  consistency=c, decimals=decimals)
                    meta = dict(name=f"range_{c}_{th}{mh}_{tasks}x{machines}_{seed}_{i}", family="mapping",
                                generator="braun-range", params=dict(params), seed=seed, index=i)
                    out.append(MappingInstance.build(etc, None, meta, source=meta["name"]))
    return out


# ---- the [braun2001] files -------------------------------------------------------
REFERENCE_CSV = "REFERENCE.csv"
_REF_COLUMNS = {"minmin": "minmin_recomputed", "maxmin": "maxmin_recomputed",
                "lp_bound": "lp_lower_bound_highs", "best_known": "best_known_verified",
                "gogos_ms": "chgogos_MS_makespan", "gogos_cpr": "chgogos_CPR_makespan"}


@lru_cache(maxsize=4)
def _reference(path: str) -> dict[str, dict]:
    """instance -> {minmin, maxmin, lp_bound, best_known, gogos_ms, gogos_cpr} of REFERENCE.csv."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"instance", *_REF_COLUMNS.values()} - set(reader.fieldnames or ())
        if missing:
            raise InstanceError(f"{path}: missing column(s) {sorted(missing)}")
        table = {}
        for row in reader:
            try:
                table[row["instance"]] = {k: float(row[c]) for k, c in _REF_COLUMNS.items()}
            except (TypeError, ValueError):
                raise InstanceError(f"{path}: line {reader.line_num}: reference values must be numbers, "
                                    f"got {row}") from None
    return table


def load_braun(path) -> MappingInstance:
    """One Braun ETC file: a header line ``t m`` or ``t m c`` (``c`` an
    integer >= 0, not used: 0 in the files of [braun2001] as this project's
    data holds them, the consistency code 0/1/2 in the larger HCSP sets),
    then t*m values >= 0 task-major (value k is ``etc[k // m][k % m]``).
    ``meta``: name = file name; consistency and heterogeneity parsed from
    ``u_{c}_{task}{machine}.N`` (or ``A.u_{c}_{task}{machine}``);
    for a Braun matrix (named as one of :data:`BRAUN_NAMES`, ``u_c_hihi.0``
    ..., and 512 x 16: ``dataset`` "braun2001")
    with ``REFERENCE.csv`` beside it, ``reference`` (Min-Min, Max-Min, LP
    bound, best known, Gogos et al.'s two values), ``lp_bound``,
    ``best_known`` and ``ref_source``.  Raises :class:`InstanceError` naming file and line."""
    path = Path(path)
    try:
        lines = path.read_text().split("\n")
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read ({exc})") from None
    head = lines[0].split()
    try:
        t, m, *rest = (int(x) for x in head)
        if t * m > MAX_ETC_VALUES:
            raise InstanceError(f"{path}: line 1: header asks for {t} x {m} values, more than {MAX_ETC_VALUES}")
    except InstanceError:
        raise
    except ValueError:
        raise InstanceError(f"{path}: line 1: header must be integers 't m' or 't m c', got {lines[0]!r}") from None
    if t < 1 or m < 1 or len(rest) > 1 or any(c < 0 for c in rest):
        raise InstanceError(f"{path}: line 1: header must be 't m' or 't m c' with t, m >= 1 and c >= 0, "
                            f"got {lines[0]!r}")
    values = []
    for no, line in enumerate(lines[1:], start=2):
        for tok in line.split():
            try:
                values.append(float(tok))
            except ValueError:
                raise InstanceError(f"{path}: line {no}: {tok!r} is not a number") from None
    if len(values) != t * m:
        raise InstanceError(f"{path}: header says {t} x {m} = {t * m} values, the file has {len(values)}")
    etc = np.array(values)
    bad = np.flatnonzero(~(np.isfinite(etc) & (etc >= 0)))
    if bad.size:                           # named by its line, as a token that is no number is
        k = int(bad[0])
        raise InstanceError(f"{path}: line {_line_of_value(lines, k)}: {values[k]!r} (etc[{k // m}][{k % m}]) "
                            "is not a time >= 0")
    meta = dict(name=path.name, family="mapping", generator="braun", params={"file": f"braun/{path.name}"},
                seed=None)
    mt = _BRAUN_NAME.match(path.name)
    if mt:
        meta.update(consistency=mt.group(1), task_het=mt.group(2), machine_het=mt.group(3))
    ref_path = path.parent / REFERENCE_CSV
    if path.name in BRAUN_NAMES and (t, m) == BRAUN_SHAPE:    # a Braun matrix by name and shape;
        # REFERENCE.csv's figures are of these
        meta.update(dataset=BRAUN_DATASET)
    if ref_path.is_file() and "dataset" in meta:
        ref = _reference(str(ref_path.resolve())).get(path.name)
        if ref is not None:
            meta.update(reference=ref, lp_bound=ref["lp_bound"], best_known=ref["best_known"],
                        ref_source=REFERENCE_CSV)
    return MappingInstance.build(etc.reshape(t, m), None, meta, source=str(path))


def _line_of_value(lines: list[str], k: int) -> int:
    """The line (counted from 1, header included) that holds the value at
    index ``k`` of an ETC file's values.  O(lines up to it)."""
    seen = 0
    for no, line in enumerate(lines[1:], start=2):
        seen += len(line.split())
        if seen > k:
            return no
    return len(lines)


def braun_family(*, root: str | None = None, names: str | Sequence[str] | None = None) -> list[MappingInstance]:
    """The 12 [braun2001] ETC matrices (512 x 16) under ``root``
    (default: ``braun`` in the data folder), in Braun's order c, i, s x hihi, hilo,
    lohi, lolo; ``names`` picks some, e.g. "u_c_hihi.0,u_i_lolo.0", or other
    files of the same format under ``root`` (the larger HCSP sets'
    "A.u_i_lolo", 1024 x 32 and 2048 x 64; :func:`load_braun`).  From
    Python, ``names`` may be a list of names too."""
    want = _names(names)
    base = Path(root) if root else data_root() / "braun"
    if not base.is_dir():
        raise InstanceError(absent(base, "no Braun data folder"))
    missing = [n for n in want if not (base / n).is_file()]
    if missing:
        raise InstanceError(f"{base}: Braun file(s) {missing} not found")
    return [load_braun(base / n) for n in want]


def _names(names) -> list[str]:
    """The file names ``names`` asks for: a comma / blank separated string or a
    list / tuple of names (all 12 when empty or None).  A name given twice is
    refused here: its two instances would share a name, which save and score
    refuse only later; so is a path (``../x/u_c_hihi.0``: the folder is
    ``root``'s)."""
    if names is None or isinstance(names, (str, list, tuple)) and not names:
        return list(BRAUN_NAMES)
    if isinstance(names, str):
        want = split_names(names, "names")
        if not want:           # blanks only: no name, which returned no instance, silently
            raise ValueError(f"names: no file name in {names!r} (leave it out for all 12)")
    elif isinstance(names, (list, tuple)) and all(isinstance(s, str) for s in names):
        want = list(names)
    else:
        raise ValueError(f"names must be a comma-separated string or a list of file names, got {short(names)}")
    twice = first_repeat(want)
    if twice is not None:
        raise ValueError(f"names lists {twice!r} twice")
    path = next((s for s in want if "/" in s or "\\" in s or s in (".", "..")), None)
    if path is not None:        # it was read from elsewhere, and the instance recorded braun/<name> as its file
        raise ValueError(f"names: {path!r} is a path, not a file name of the Braun folder (give root= / --root "
                         "for another folder)")
    return want


# ---- registration ----------------------------------------------------------------------
_io.register_family("mapping", MappingInstance, check_mapping)
register_generator(
    "braun-range", braun_range,
    help={"tasks": "number of tasks t", "machines": "number of machines m",
          "task_het": "task heterogeneity (phi_b = 3000 hi / 100 lo), or all",
          "machine_het": "machine heterogeneity (phi_r = 1000 hi / 10 lo), or all",
          "consistency": "c consistent, i inconsistent, s semi-consistent, or all",
          "decimals": "round ETC entries to this many decimals (-1: no rounding)"},
    choices={"task_het": HETEROGENEITY + ("all",), "machine_het": HETEROGENEITY + ("all",),
             "consistency": CONSISTENCY + ("all",)})
register_generator("braun", braun_family,
                   help={"names": "comma-separated file names (default: all 12)"},
                   none_types={"names": str})
