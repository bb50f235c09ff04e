"""The benchmark suite's configurations and its session store.

A configuration is (family, generator, parameters); the suite benchmarks
every registered method on the instances of every configuration.  Exact
methods run first, each instance once, and their checked results give the
reference bound against which every method's gap is measured.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from epochbench.instances import generators
from epochbench.instances.registry import get, names, solve

from .scoring import gap_fields, gap_vs, reference, rows_or_disagreement, share_text

EXACT_ORDER = ("cpsat", "milp-highs", "milp-cbc")


@dataclass(frozen=True)
class Config:
    family: str
    generator: str
    params: tuple  # sorted (key, value) pairs
    time_limit: float

    @property
    def id(self) -> str:
        p = dict(self.params)
        parts = [self.generator] + [f"{k}{p[k]}" for k in ("k", "dist", "n", "d") if k in p]
        return "-".join(str(x) for x in parts)

    def instances(self):
        return _instances(self)


_CACHE: dict = {}


def _instances(cfg: Config):
    if cfg not in _CACHE:
        _CACHE[cfg] = generators.generate(cfg.generator, **dict(cfg.params))
    return _CACHE[cfg]


def configs(quick: bool) -> list[Config]:
    """Packing: Leinberger K in {2, 4, 8} x uniform/exponential, and LOS, at
    n = 32, 64, 256 (quick: 32, 64); epochs: [leinberger1999] fig. 1 and VBP n = 20."""
    sizes = (32, 64) if quick else (32, 64, 256)
    count = 3 if quick else 5
    tl = 5.0 if quick else 10.0
    out = []
    for k in (2, 4, 8):
        for dist in ("uniform", "exponential"):
            for n in sizes:
                out.append(Config("packing", "leinberger",
                                  tuple(sorted(dict(n=n, k=k, dist=dist, count=count, seed=1).items())), tl))
    for n in sizes:
        out.append(Config("packing", "los", tuple(sorted(dict(n=n, count=count, seed=1).items())), tl))
    out.append(Config("epochs", "fig1", (), tl))
    if (generators.data_root() / "vbp").is_dir():
        out.append(Config("epochs", "vbp", tuple(sorted(dict(n=20, d=3, per_class=1 if quick else 2).items())), tl))
    return out


def plugin_heuristics(family: str) -> list[str]:
    """The heuristics of ``family`` that plug-ins registered, in registry
    order: the benchmark modules that name the built-ins they measure
    (knapsack, mapping, assignment) measure these beside them, as the
    README promises of a plug-in (they were never collected)."""
    return [n for n in names(family, "heuristic") if get(family, n).origin != "builtin"]


def methods_for(family: str) -> list[str]:
    """Exact methods first (they set the reference), then heuristics."""
    exact = [m for m in EXACT_ORDER if m in names(family, "exact")]
    exact += [m for m in names(family, "exact") if m not in exact]
    return exact + names(family, "heuristic")


@dataclass
class Store:
    results: dict = field(default_factory=dict)  # cfg.id -> inst name -> method -> Result
    timing: dict = field(default_factory=dict)  # (cfg.id, method) -> median seconds
    instance_timing: dict = field(default_factory=dict)  # (cfg.id, method, instance) -> median seconds
    configs: dict = field(default_factory=dict)
    #: (cfg.id, method) of the benchmarks that ran; the other results are
    #: reference solves (:meth:`ensure_reference`), left off the leaderboards
    selected: set = field(default_factory=set)
    #: (cfg.id, method) of the benchmarks that failed (an answer refused, an
    #: exception): left off the leaderboards, and the summary says so
    failed: set = field(default_factory=set)
    #: (cfg, method, the benchmark's ``extra_info``) of the benchmarks that ran:
    #: :meth:`refresh_infos` scores them again once every method has run
    infos: list = field(default_factory=list)

    def result(self, cfg: Config, inst, method: str):
        """Checked result of ``method`` on ``inst`` (solved once per session)."""
        self.configs[cfg.id] = cfg
        per = self.results.setdefault(cfg.id, {}).setdefault(inst.name, {})
        if method not in per:
            params = {"time_limit": cfg.time_limit, "threads": 1} if get(cfg.family, method).exact else {}
            per[method] = solve(inst, method, **params)
        return per[method]

    def ensure_reference(self, cfg: Config) -> None:
        """Solve every instance with the built-in exact methods not yet run
        (only needed when a run selects heuristics alone, e.g. with -k; a
        plug-in's exact method is solved only when its benchmark is
        selected: one that crashed or claimed falsely failed the built-in
        benchmarks it was never asked for), one task
        per solve through :func:`epochbench.sweep.run_tasks`: the first in
        this process for :data:`LOCAL_FIRST_S` seconds, the rest on a local
        cluster of ``$EPOCHBENCH_WORKERS`` or every core (in this process
        for one solve or one worker); all on the Dask scheduler of
        ``$EPOCHBENCH_SCHEDULER`` when one is set.  Each solve has a worker
        (or this process) to itself."""
        from .sweep import run_tasks
        self.configs[cfg.id] = cfg
        per = self.results.setdefault(cfg.id, {})
        tasks = [{"instance": inst, "method": m} for inst in cfg.instances() for m in methods_for(cfg.family)
                 if get(cfg.family, m).exact and get(cfg.family, m).origin == "builtin"
                 and m not in per.get(inst.name, {})]
        call = functools.partial(_exact_solve, time_limit=cfg.time_limit)
        done = _solved_here_first(call, tasks)
        more, _ = run_tasks(call, tasks, [i for i in range(len(tasks)) if i not in done], workers=None,
                            progress=False, stop_on_error=True, exclusive=True)
        done.update(more)
        for i, task in enumerate(tasks):
            per.setdefault(task["instance"].name, {})[task["method"]] = done[i]

    def _scored(self, cfg: Config):
        """Rows of :func:`epochbench.scoring.score_rows` for every instance of ``cfg``
        solved so far (reference bound from all its results; where the
        results disagree, no gap and ``error`` = ``"disagreement: ..."``, as
        ``score`` writes them: a plug-in's false claim crashed the session's
        end with a traceback, no leaderboard)."""
        per_inst = self.results.get(cfg.id, {})
        for inst in cfg.instances():
            if inst.name in per_inst:
                yield from rows_or_disagreement(inst, list(per_inst[inst.name].values()))

    def gaps(self, cfg: Config, method: str) -> list[tuple[float, str, str]]:
        return [(r["gap"], r["gap_kind"], r["status"]) for r in self._scored(cfg) if r["method"] == method]

    def per_instance(self, cfg: Config, method: str) -> list[dict]:
        """``method``'s :func:`instance_record` on every instance of ``cfg`` solved so far."""
        return [{k: r[k] for k in INSTANCE_FIELDS} for r in self._scored(cfg) if r["method"] == method]

    def extra_info(self, cfg: Config, method: str) -> dict:
        """A packing or epochs benchmark's ``extra_info``: mean, largest
        gap and share at the reference (gaps of the instances solved so far,
        against the reference of all their results), the kinds of those
        references, the statuses and the per-instance records."""
        gaps = self.gaps(cfg, method)
        vals = np.array([g for g, _, _ in gaps], dtype=float)
        some = bool(np.isfinite(vals).any())
        return {"family": cfg.family, "config": cfg.id, "method": method, "kind": get(cfg.family, method).kind,
                "instances": len(cfg.instances()),
                "mean_gap": float(np.nanmean(vals)) if some else None,
                "max_gap": float(np.nanmax(vals)) if some else None,
                "optimal_share": float(np.mean(vals <= 1e-9)),
                "gap_vs": sorted({k for _, k, _ in gaps}),
                "statuses": sorted({s for _, _, s in gaps}),
                "per_instance": self.per_instance(cfg, method)}

    def refresh_infos(self) -> None:
        """Score every benchmark of :attr:`infos` again: an exact method's
        ``extra_info`` is written when its benchmark runs, before the
        methods after it may prove an optimum it only bounded (at short
        time limits the first one was scored against its own bound, where
        the leaderboard, built at the end, takes that optimum)."""
        for cfg, method, info in self.infos:
            info.update(self.extra_info(cfg, method))

    @property
    def rows(self) -> list[dict]:
        rows, shown = [], self.selected - self.failed       # a failed benchmark is off the board
        for cid, cfg in self.configs.items():
            for r in self._scored(cfg):
                rows.append({"config": cid, "generator": cfg.generator, **dict(cfg.params), **r,
                             "selected": (cid, r["method"]) in shown})
        return rows

    def reference_only(self) -> dict[str, list[str]]:
        """Per family, the methods solved only as references (their
        benchmarks not selected, e.g. by ``-k``): left off the leaderboards."""
        out: dict[str, set] = {}
        for cid, per in self.results.items():
            family = self.configs[cid].family
            for methods in per.values():
                out.setdefault(family, set()).update(m for m in methods if (cid, m) not in self.selected
                                                     and (cid, m) not in self.failed)
        return {f: sorted(ms) for f, ms in out.items() if ms}

    def failed_methods(self) -> dict[str, list[str]]:
        """Per family, the methods whose benchmark failed on some
        configuration (left off its board)."""
        out: dict[str, set] = {}
        for cid, method in self.failed:
            cfg = self.configs.get(cid)
            if cfg is not None:
                out.setdefault(cfg.family, set()).add(method)
        return {f: sorted(ms) for f, ms in out.items()}


#: seconds of reference solves that :meth:`Store.ensure_reference` runs in
#: this process before it hands the rest to a local cluster: starting one
#: (a worker per core, each importing the library) took about 4 s of a 13 s
#: ``bench --quick -k`` run of one packing heuristic, whose 12 reference
#: solves take well under a second in this process (8.7 s in all that way)
LOCAL_FIRST_S = 2.0


def _solved_here_first(call, tasks: list) -> dict:
    """``{i: call(tasks[i])}`` for the first tasks, run in this process one
    after the other until :data:`LOCAL_FIRST_S` seconds have passed (at
    most one solve's time limit more); none when a scheduler is set
    (``$EPOCHBENCH_SCHEDULER``: the solves are that scheduler's).  An
    exception a solve raises propagates, as with ``stop_on_error``."""
    import time

    from .sweep import run_tasks, scheduler_of
    done: dict = {}
    if scheduler_of(None) is not None:
        return done
    t0 = time.perf_counter()
    for i in range(len(tasks)):
        if time.perf_counter() - t0 >= LOCAL_FIRST_S:
            break
        got, _ = run_tasks(call, tasks, [i], workers=1, progress=False, stop_on_error=True, exclusive=True)
        done.update(got)
    return done


def _exact_solve(task: dict, *, time_limit: float):
    """The checked result of an exact method on one instance, one thread
    (a task of :meth:`Store.ensure_reference`)."""
    return solve(task["instance"], task["method"], time_limit=time_limit, threads=1)


STORE = Store()
_WARM: set = set()


def warm_up(cfg: Config, method: str) -> None:
    """Solve the configuration's first instance once, untimed and unrecorded,
    so that one-time library start-up (CP-SAT, HiGHS) is not in the timing."""
    if (cfg.family, method) not in _WARM:
        insts = cfg.instances()
        if insts:
            params = {"time_limit": 1.0, "threads": 1} if get(cfg.family, method).exact else {}
            solve(insts[0], method, **params)
        _WARM.add((cfg.family, method))


#: what a benchmark's ``extra_info["per_instance"]`` holds for each instance
INSTANCE_FIELDS = ("instance", "value", "bound", "gap", "gap_kind", "ref_source", "status", "seconds")


def instance_record(inst, res, gap_fields: dict) -> dict:
    """One instance's entry of ``extra_info["per_instance"]``: the method's
    value, the reference (``bound``) and its kind, the gap, status and time
    (``gap_fields``: :func:`epochbench.scoring.gap_of` of ``res``)."""
    return {"instance": inst.name, **{k: gap_fields.get(k) for k in ("value", "bound", "gap", "gap_kind",
                                                                       "ref_source")},
            "status": res.status, "seconds": res.seconds}


#: pytest-benchmark's options that decide the rounds, with their defaults
ROUND_OPTIONS = {"--benchmark-min-rounds": "benchmark_min_rounds", "--benchmark-max-time": "benchmark_max_time"}


def rounds(config, default: int, probe=None) -> int:
    """Rounds of a benchmark timed with ``pedantic``: the suite's ``default``
    unless the command line sets ``--benchmark-min-rounds`` or
    ``--benchmark-max-time``; then pytest-benchmark's own rule: enough rounds
    to fill ``max-time`` (one call of ``probe`` measures a round), at least
    ``min-rounds``.

    Notes
    -----
    Benchmarks whose rounds are fixed by their data (an exact method: one
    solve per instance, cached) do not call this."""
    import math
    import time

    args = [str(a) for a in config.invocation_params.args]
    given = {opt for opt in ROUND_OPTIONS for a in args if a == opt or a.startswith(opt + "=")}
    if not given:
        return default
    floor = int(config.getoption(ROUND_OPTIONS["--benchmark-min-rounds"]))
    if "--benchmark-max-time" not in given or probe is None:
        return max(default, floor)
    t0 = time.perf_counter()
    probe()
    each = max(time.perf_counter() - t0, 1e-7)
    return max(1, math.ceil(float(config.getoption(ROUND_OPTIONS["--benchmark-max-time"])) / each), floor)


def median_seconds(benchmark) -> float:
    """A pytest-benchmark fixture's median round time in seconds; NaN when
    timing is off (``--benchmark-disable``: the function ran once, untimed)."""
    stats = getattr(benchmark, "stats", None)
    return float(stats.stats.median) if stats is not None else float("nan")


#: per-instance rows of the families whose benchmarks keep their own tables
#: (knapsack, assignment, mapping): :func:`record` adds them; with
#: :attr:`Store.rows` (packing, epochs) they make the leaderboards
BOARD: list[dict] = []
#: reference kinds, short, for the leaderboard's ``vs`` column
_KIND_SHORT = {"optimum": "opt", "best known": "best", "bound": "bound", "no bound": "none"}


#: (family, config, instance) -> (the instance, [(its :data:`BOARD` row, the Result)]) of the solves
#: recorded with their result: the leaderboard takes their gaps against the reference of all of them
#: (:func:`_regap`), as ``score`` does
SOLVED: dict = {}


def record(family: str, config: str, instance: str, method: str, kind: str, gap: float | None, gap_kind: str,
           seconds: float, short: bool = False, *, inst=None, result=None, status: str | None = None) -> None:
    """One solve of a benchmark for the leaderboards: its gap (against the
    reference of kind ``gap_kind``) and its decision time; ``short``: it
    falls short of the family's first objective (an assignment with fewer
    pairs than the maximum), so it is never at the reference, whatever its
    gap on the second.  With the instance ``inst`` and the checked
    ``result``, the leaderboard measures the gap again against every result
    recorded for that instance (a method that beats the data set's best
    known value is the reference of the others, not of itself alone).
    ``status``: the solve's (default: ``result``'s), which tells an exact
    solve cut short by its time limit (``feasible``) on the board."""
    if status is None and result is not None:
        status = result.status
    row = {"family": family, "config": config, "instance": instance, "method": method, "kind": kind,
           "gap": np.nan if gap is None else float(gap), "gap_kind": gap_kind, "seconds": float(seconds),
           "short": bool(short), "status": status}
    BOARD.append(row)
    if inst is not None and result is not None:
        SOLVED.setdefault((family, config, instance), (inst, []))[1].append((row, result))


def _regap() -> None:
    """The gaps of the rows of :data:`SOLVED` against the reference of all
    the results of their instance (:func:`epochbench.scoring.reference`):
    each was taken against the data set's value and its own result only."""
    for inst, solves in SOLVED.values():
        ref = reference(inst, [r for _, r in solves])
        for row, r in solves:
            g = gap_fields(inst, r, ref)
            row["gap"] = np.nan if g["gap"] is None else float(g["gap"])
            row["gap_kind"] = g["gap_kind"]


def leaderboard_rows() -> pd.DataFrame:
    """Every solve behind the leaderboards: the packing and epochs rows of
    :data:`STORE` whose benchmark ran (:attr:`Store.selected`) and :data:`BOARD`.  Decision times are per decision: a
    heuristic's is its median over the pytest-benchmark rounds on that
    instance (:attr:`Store.instance_timing`; else the configuration's
    median, else its one checked solve), an exact method's its solve's own
    wall time (so that the leaderboard's p90 is a p90 of decisions)."""
    keep = ["family", "config", "instance", "method", "kind", "gap", "gap_kind", "seconds", "short", "status"]
    store = pd.DataFrame(STORE.rows)
    if not store.empty:
        store = store[store["selected"]]                # reference solves alone are no benchmark of theirs
    if not store.empty:
        store = store.assign(seconds=[_decision_seconds(*row) for row in
                                      zip(store["config"], store["method"], store["instance"], store["kind"],
                                          store["seconds"])], short=False)[keep]
    _regap()
    board = pd.DataFrame(BOARD, columns=keep)
    return pd.concat([d for d in (store, board) if not d.empty], ignore_index=True) if (
        not store.empty or not board.empty) else pd.DataFrame(columns=keep)


def _decision_seconds(config: str, method: str, instance: str, kind: str, solved: float) -> float:
    """The decision time of one row of :data:`STORE` (see :func:`leaderboard_rows`)."""
    if kind == "exact":
        return solved
    return STORE.instance_timing.get((config, method, instance), STORE.timing.get((config, method), solved))


def time_rounds(benchmark, func, insts: list, rounds: int, warmup_rounds: int, method=None) -> dict:
    """Time ``func`` on ``insts`` in turn (pytest-benchmark's pedantic
    rounds, one call each) and return each instance's median round time
    (:func:`instance_medians`, by name): the per-decision times a
    leaderboard row takes (:func:`record`), rather than the time of one
    checked solve made before the rounds (a first call pays for what later
    ones find ready: up to 2.2 times the rounds' median on the fast
    methods).  ``method`` (the registry's entry of ``func``), when not a
    built-in, is timed as it is scored (:func:`timed_checked`): on a copy of
    each instance, every timed answer checked afterwards (a plug-in that
    answered a checked call properly could answer the timed ones with
    anything, fast, and change the suite's cached instances)."""
    if method is not None and method.origin != "builtin":
        return timed_checked(benchmark, method, insts, rounds, warmup_rounds)
    cycle, used = itertools.cycle(insts), []

    def setup():
        inst = next(cycle)
        used.append(inst.name)
        return (inst,), {}
    benchmark.pedantic(func, setup=setup, rounds=rounds, iterations=1, warmup_rounds=warmup_rounds)
    return instance_medians(benchmark, used, warmup_rounds)


def timed_checked(benchmark, method, insts: list, rounds: int, warmup_rounds: int) -> dict:
    """:func:`time_rounds` for a method that is not epochbench's own: the
    rounds run on one copy of each instance (made before them, so that its
    memory is as warm as a built-in's instance), and after the rounds every
    answer passes the family's checker on the original and the copies are
    unchanged (an :class:`~epochbench.instances.core.InfeasibleSolution`
    or ``ValueError`` naming the method otherwise).  A randomised method
    may answer differently from round to round: each answer is checked."""
    from epochbench.instances.core import InfeasibleSolution, content, handed
    from epochbench.instances.registry import as_result
    copies = {inst.name: handed(inst) for inst in insts}
    cycle, used, answers = itertools.cycle(insts), [], []

    def setup():
        inst = next(cycle)
        used.append(inst)
        return (copies[inst.name][0],), {}

    def call(inst):
        answers.append(method.func(inst))
    benchmark.pedantic(call, setup=setup, rounds=rounds, iterations=1, warmup_rounds=warmup_rounds)
    for inst in insts:
        if content(copies[inst.name][0]) != copies[inst.name][1]:
            from epochbench.instances.core import InstanceChanged
            raise InstanceChanged(f"{inst.name}: method {method.name!r} ({method.origin}) changed the instance it "
                                  "was given in a timed round")
    for inst, out in zip(used, answers):
        try:
            as_result(inst, method.name, out, 0.0, describe=False)
        except InfeasibleSolution as exc:
            raise InfeasibleSolution(f"method {method.name!r} ({method.origin}), a timed round: {exc}") from None
    return instance_medians(benchmark, [inst.name for inst in used], warmup_rounds)


def instance_medians(benchmark, used: list, warmup_rounds: int) -> dict:
    """Median round time per instance of a pytest-benchmark run whose
    setup recorded, in ``used``, the instance of every round:
    ``warmup_rounds`` first, then the timed ones (pytest-benchmark may call
    the setup again after them: ``--benchmark-cprofile`` does, for its
    profiled call, which gave each instance the next one's time when the
    names were counted from the end); ``{instance: seconds}``; empty when
    timing is off."""
    data = getattr(getattr(getattr(benchmark, "stats", None), "stats", None), "data", None)
    if not data:
        return {}
    per: dict = {}
    for name, t in zip(used[warmup_rounds:warmup_rounds + len(data)], data):
        per.setdefault(name, []).append(t)
    return {name: float(np.median(ts)) for name, ts in per.items()}


def leaderboard(rows: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """Per family, one row per method: solves, mean / p90 / max gap (%), share
    at the reference (%), median and p90 decision time (ms), and what the
    gaps are measured against (``vs``: opt = a proven optimum, best = a best
    known value, bound = a valid bound), and ``no ans``: the solves that
    gave no decision (a timeout without a solution, an error) although there
    was a reference to measure it against; ``short``: the solves short of
    the family's first objective (an assignment with fewer pairs than the
    maximum, whose gap is on the weight alone); ``cut``: an exact method's
    solves that ended without a proof (status ``feasible``: its time limit
    cut it short, or a claim it made was withdrawn; its gap is that
    solution's); the gaps are over the others, so
    a method with such solves, or with a short solve, ranks
    after every method that answered all in full (then by mean gap), and
    methods with no gap last.  ``at ref %`` is over the solves with a
    reference, the unanswered ones included (0 % for a method that answered
    none), and a short solve is never at it.

    ``set`` names the instances a row is measured on (:func:`instance_sets`).
    Where a family's methods were measured on different instances (mapping:
    the heuristics on 512 x 16 matrices, the exact methods on 32 x 4 ones),
    the board has one block of rows per set, each ranked on its own, and a
    method measured on several sets has a row in each: gaps and times over
    different instances are not compared.  O(rows log rows)."""
    df = leaderboard_rows() if rows is None else rows
    out = {}
    for family, f in df.groupby("family", sort=False):
        out[family] = pd.concat([_ranked(g).assign(set=label) for label, g in instance_sets(f)],
                                ignore_index=True)
    return out


def with_sets(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (:func:`leaderboard_rows`) with the leaderboard block each
    belongs to (``set``, :func:`instance_sets`), as ``bench-solves.csv``
    holds them: a block of several configurations could not be told from
    that file alone."""
    sets = pd.Series("", index=rows.index, dtype=object)
    for _, f in rows.groupby("family", sort=False):
        for label, part in instance_sets(f):
            sets[part.index] = label
    return rows.assign(set=sets)


def instance_sets(f: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One family's solves in blocks within which every method solved the
    same instances: each (method, configuration) pair's instances (by name)
    form its set; the pairs that solved the same set go together, and the
    groups with the same methods merge.  A block is named after its
    configuration, else ``N instances, M configurations`` (M those of each
    method, ``each`` where the methods ran configurations of their own, as
    assignment's name their method); blocks come in
    order of first appearance.  A family whose methods all solved the same
    instances is one block."""
    pairs = f.groupby(["method", "config"], sort=False)["instance"].agg(frozenset)
    same: dict[frozenset, list] = {}
    for key, names in pairs.items():
        same.setdefault(names, []).append(key)
    blocks: dict[frozenset, list] = {}
    for keys in same.values():
        blocks.setdefault(frozenset(m for m, _ in keys), []).extend(keys)
    pair = pd.MultiIndex.from_arrays([f["method"], f["config"]])
    out, seen = [], {}
    for keys in blocks.values():
        part = f[pair.isin(keys)]
        configs = list(dict.fromkeys(c for _, c in keys))
        each = max(sum(1 for m, _ in keys if m == method) for method in dict.fromkeys(m for m, _ in keys))
        name = str(configs[0]) if len(configs) == 1 else (     # assignment's configurations name their method:
            f"{part['instance'].nunique()} instances, {each} configurations"   # 4 methods x 6 read "24"
            + (" each" if each < len(configs) else ""))
        seen[name] = seen.get(name, 0) + 1
        out.append((name if seen[name] == 1 else f"{name} ({seen[name]})", part))
    return out


def _ranked(f: pd.DataFrame) -> pd.DataFrame:
    """One block of a leaderboard (see :func:`leaderboard`)."""
    table = []
    for method, g in f.groupby("method", sort=False):
        gaps = g["gap"].astype(float).dropna()
        ms = 1000 * g["seconds"].astype(float)
        has = not gaps.empty
        missed = int((g["gap"].isna() & (g["gap_kind"] != "no bound")).sum())
        short = g["short"].fillna(False).astype(bool) if "short" in g else pd.Series(False, index=g.index)
        at = int(((g["gap"].astype(float) <= 1e-9) & ~short).sum())      # a solve without an answer is not at it
        table.append({"method": method, "kind": g["kind"].iloc[0], "solves": len(g), "no ans": missed,
                      "short": int(short.sum()),
                      "cut": _cut(g),
                      "mean %": 100 * gaps.mean() if has else np.nan,
                      "p90 %": 100 * gaps.quantile(0.9) if has else np.nan,
                      "max %": 100 * gaps.max() if has else np.nan,
                      "at ref %": 100 * at / (len(gaps) + missed) if has or missed else np.nan,
                      "median ms": float(ms.median()), "p90 ms": float(ms.quantile(0.9)),
                      "vs": "/".join(sorted({_KIND_SHORT.get(k, k) for k in g["gap_kind"]}))})
    t = pd.DataFrame(table)
    return (t.assign(_none=t["mean %"].isna(), _short=(t["no ans"] > 0) | (t["short"] > 0))
            .sort_values(["_none", "_short", "mean %", "median ms"], kind="stable")
            .drop(columns=["_none", "_short"]).reset_index(drop=True))


def _cut(g: pd.DataFrame) -> int:
    """Exact solves of ``g`` that ended without a proof (status ``feasible``)."""
    return int(((g["kind"] == "exact") & (g["status"] == "feasible")).sum()) if "status" in g else 0


def board_blocks(table: pd.DataFrame) -> list[tuple[str | None, pd.DataFrame]]:
    """A leaderboard's blocks, ``(set, rows without the set column)``; one
    block with ``None`` for a board measured on one set (or one without
    ``set``)."""
    if "set" not in table:
        return [(None, table)]
    sets = list(dict.fromkeys(table["set"]))
    rest = table.drop(columns=["set"])
    if len(sets) == 1:
        return [(None, rest)]
    return [(s, rest[table["set"] == s].reset_index(drop=True)) for s in sets]


def format_leaderboard(table: pd.DataFrame) -> str:
    """A leaderboard as text, at most 100 columns wide; one block per
    instance set, under its name, where there are several.  The ``short``
    and ``cut`` columns are left out of a block where they count nothing."""
    def num(x, digits=2):
        return "-" if pd.isna(x) else f"{x:.{digits}f}"

    def text(t):
        t = t.drop(columns=[c for c in ("short", "cut") if c in t and not t[c].any()])   # counts of nothing
        return t.assign(**{c: t[c].map(num) for c in ("mean %", "p90 %", "max %")},
                        **{"at ref %": t["at ref %"].map(lambda x: share_text(x / 100).rstrip("%"))},
                        **{c: t[c].map(ms_text) for c in ("median ms", "p90 ms")}).to_string(index=False)
    blocks = board_blocks(table)
    if len(blocks) == 1:
        return text(blocks[0][1])
    return "\n".join(f"on {name[:90]}:\n{text(t)}" for name, t in blocks)


def ms_text(x: float) -> str:
    """A time in ms with three significant digits, never in e-notation:
    ``0.00386``, ``6.46``, ``131``, ``1,010``, ``22,400``."""
    if pd.isna(x):
        return "-"
    if abs(x) >= 1000:
        return f"{float(f'{x:.3g}'):,.0f}"
    return f"{x:.3g}" if abs(x) >= 1e-4 or x == 0 else f"{x:.1e}"


def summary_table() -> pd.DataFrame:
    """Per (config, method): mean and max gap, share optimal, median ms.

    Heuristic times are pytest-benchmark medians over rounds cycling through
    the configuration's instances; exact times are the median of one solve
    per instance.  ``gap_vs`` says what the gaps are measured against
    (:func:`epochbench.scoring.gap_vs`); ``gap_note`` is ``*`` where some gap is not
    against a proven optimum.
    """
    df = pd.DataFrame(STORE.rows)
    out = []
    for (cid, method), g in df.groupby(["config", "method"], sort=False):
        gaps = g["gap"].astype(float)
        t = STORE.timing.get((cid, method), float(np.median(g["seconds"])))
        out.append({"config": cid, "method": method, "kind": g["kind"].iloc[0], "instances": len(g),
                    "mean_gap": gaps.mean(), "max_gap": gaps.max(),
                    "optimal": float((gaps <= 1e-9).mean()),
                    "median_ms": 1000 * t, "gap_vs": gap_vs(g["gap_kind"]),
                    "gap_note": "*" if (g["gap_kind"] != "optimum").any() else ""})
    return pd.DataFrame(out)


def by_generator_and_k() -> pd.DataFrame:
    """Mean and max gap per (family, generator, K, dist, method) over every size."""
    df = pd.DataFrame(STORE.rows)
    keys = [c for c in ("family", "generator", "k", "dist") if c in df]
    df[keys] = df[keys].astype("object").where(df[keys].notna(), "-")
    if "k" in df:
        df["k"] = df["k"].map(lambda v: v if v == "-" else int(v))
    grouped = df.groupby(keys + ["method"], sort=False)
    g = grouped["gap"]
    return pd.DataFrame({"mean_gap": g.mean(), "max_gap": g.max(),
                         "optimal": g.apply(lambda s: float((s <= 1e-9).mean())),
                         "unproven": grouped["gap_kind"].apply(lambda s: int((s != "optimum").sum())),
                         "gap_vs": grouped["gap_kind"].apply(gap_vs),
                         }).reset_index()


def median_ms_by_size() -> pd.DataFrame:
    """Median decision time (ms) per method (rows) and queue length n (columns),
    over the packing solves of the leaderboard (:func:`leaderboard_rows`:
    one time per decision, as the board's median).  It was the median of
    the configurations' medians, one configuration's figure: cpsat at n = 64
    read 239 ms where its solves' median was 125 ms."""
    cfg_n = {cid: dict(cfg.params).get("n") for cid, cfg in STORE.configs.items()
             if cfg.family == "packing"}
    rows = leaderboard_rows()
    rows = rows[(rows["family"] == "packing") & rows["config"].isin(cfg_n)]
    if rows.empty:
        return pd.DataFrame()
    rows = rows.assign(n=rows["config"].map(cfg_n), ms=1000 * rows["seconds"].astype(float))
    return rows.pivot_table(index="method", columns="n", values="ms", aggfunc="median", sort=False)


#: tables benchmark modules keep of their own (file name -> rows), written into
#: the run's folder with the others at the end (:func:`rows_writer`)
MODULE_TABLES: dict[str, list] = {}


def rows_writer(rows: list, name: str):
    """A module-scoped autouse fixture for a benchmark module that keeps its
    own tidy ``rows``: they are written as ``NAME`` into the run's results
    folder at the end of the session, where an earlier run's copy is
    renamed first (as for every table of the suite)."""
    import pytest

    @pytest.fixture(scope="module", autouse=True)
    def _write_rows(request):
        MODULE_TABLES[name] = rows
        yield

    return _write_rows
