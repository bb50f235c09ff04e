"""Mapping heuristics: independent tasks onto heterogeneous machines from an
ETC matrix, minimising the makespan ([vadhiyar-notes], "application scheduling";
[braun2001], JPDC 61(6), who compare the same heuristics on the same
test bed).

Every function takes a :class:`~epochbench.instances.mapping.MappingInstance` and returns
the machine index of every task (a numpy int64 array of length t).  The
machines' ready times are their initial availability ``mat(j)``.  Ties go to
the lowest task index, then the lowest machine index; with this rule Min-Min
and Max-Min reproduce the REFERENCE.csv makespans of the 12 Braun matrices
(no tie occurs there: the highest-index rule gives the same mappings).

Greedy: ``olb``, ``uda`` (minimum execution time), ``mct``, ``minmin``,
``maxmin`` ([vadhiyar-notes]), ``sufferage``, ``duplex``.  Metaheuristics: ``ga``,
``sa``, ``tabu`` ([vadhiyar-notes]), deterministic for a given ``seed``; their
budgets are parameters.  Loops in heuristics/_mapping_kernels.py.
"""
from __future__ import annotations

import time

import numpy as np

from epochbench.instances.checks import check_count, check_flag, check_share, is_int, is_number
from epochbench.instances.core import InfeasibleSolution
from epochbench.instances.mapping import MappingInstance
from epochbench.instances.registry import get, names, register, solve

from . import _mapping_kernels as _k

__all__ = ["olb", "uda", "mct", "minmin", "maxmin", "sufferage", "duplex", "ga", "sa", "tabu",
           "makespans"]


def _arrays(inst: MappingInstance):
    # fresh writable C-ordered copies: numba compiles read-only arrays as another type
    return np.array(inst.etc, dtype=np.float64, order="C"), np.array(inst.ready, dtype=np.float64)


# ---- greedy ----------------------------------------------------------------------------
@register("mapping", "olb")
def olb(inst: MappingInstance) -> np.ndarray:
    """OLB, opportunistic load balancing ([vadhiyar-notes] "Scheduling heuristics"):
    each task in index order to the machine that is available first,
    regardless of its ETC there.  O(t m).

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    Cost: O(t m).

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    """
    return _k.olb(*_arrays(inst))


@register("mapping", "uda")
def uda(inst: MappingInstance) -> np.ndarray:
    """UDA, user-directed allocation (= MET, minimum execution time; [vadhiyar-notes]
    "Scheduling heuristics"): each task to the machine with its lowest ETC,
    regardless of availability.  O(t m).

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    Cost: O(t m).

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    """
    return np.asarray(inst.etc.argmin(axis=1), dtype=np.int64)


@register("mapping", "mct")
def mct(inst: MappingInstance) -> np.ndarray:
    """MCT, minimum completion time ([braun2001] sec. 2): each task in
    index order to the machine where it completes first.  O(t m).

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    Cost: O(t m).

    References
    ----------
    .. [braun2001] T. D. Braun, H. J. Siegel, N. Beck, L. L. Bölöni, M. Maheswaran, A. I. Reuther,
       J. P. Robertson, M. D. Theys, B. Yao, D. Hensgen, R. F. Freund. A Comparison of Eleven Static
       Heuristics for Mapping a Class of Independent Tasks onto Heterogeneous Distributed Computing
       Systems. Journal of Parallel and Distributed Computing 61(6):810-837, 2001.
       https://doi.org/10.1006/jpdc.2000.1714.
    """
    return _k.mct(*_arrays(inst))


@register("mapping", "minmin")
def minmin(inst: MappingInstance) -> np.ndarray:
    """Min-Min ([vadhiyar-notes] "Min-Min"): among the unmapped tasks take the one
    with the smallest minimum completion time, map it to that machine,
    update the machine's availability, repeat.  O(t^2 m) at worst.

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    Cost: O(t^2 m) at worst.

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    """
    return _k.batch_greedy(*_arrays(inst), _k.MINMIN)


@register("mapping", "maxmin")
def maxmin(inst: MappingInstance) -> np.ndarray:
    """Max-Min ([vadhiyar-notes] "Max-Min"): as Min-Min, but take the task whose
    minimum completion time is largest.  O(t^2 m) at worst.

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    Cost: O(t^2 m) at worst.

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    """
    return _k.batch_greedy(*_arrays(inst), _k.MAXMIN)


@register("mapping", "sufferage")
def sufferage(inst: MappingInstance) -> np.ndarray:
    """Sufferage ([maheswaran1999], one task per step): among the
    unmapped tasks take the one that would suffer most if denied its best
    machine (second-best minus best completion time) and map it to its best
    machine.  O(t^2 m) at worst.

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    Cost: O(t^2 m) at worst.

    References
    ----------
    .. [maheswaran1999] M. Maheswaran, S. Ali, H. J. Siegel, D. Hensgen, R. F. Freund. Dynamic
       Mapping of a Class of Independent Tasks onto Heterogeneous Computing Systems. Journal of
       Parallel and Distributed Computing 59(2):107-131, 1999.
       https://doi.org/10.1006/jpdc.1999.1581.
    """
    return _k.batch_greedy(*_arrays(inst), _k.SUFFERAGE)


@register("mapping", "duplex")
def duplex(inst: MappingInstance) -> np.ndarray:
    """Duplex ([braun2001] sec. 2): the better of Min-Min and Max-Min
    (Min-Min on a tie).  Twice Min-Min's cost.

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    References
    ----------
    .. [braun2001] T. D. Braun, H. J. Siegel, N. Beck, L. L. Bölöni, M. Maheswaran, A. I. Reuther,
       J. P. Robertson, M. D. Theys, B. Yao, D. Hensgen, R. F. Freund. A Comparison of Eleven Static
       Heuristics for Mapping a Class of Independent Tasks onto Heterogeneous Distributed Computing
       Systems. Journal of Parallel and Distributed Computing 61(6):810-837, 2001.
       https://doi.org/10.1006/jpdc.2000.1714.
    """
    a, b = minmin(inst), maxmin(inst)
    return b if inst.value(b) < inst.value(a) else a


# ---- evaluation -------------------------------------------------------------------------
def makespans(inst: MappingInstance, pop: np.ndarray) -> np.ndarray:
    """Makespan of every row of ``pop`` (P x t machine indices), vectorised:
    one gather and one bincount over P t entries."""
    p, t = pop.shape
    m = inst.k
    flat = inst.etc.ravel()
    key = pop + (np.arange(p, dtype=np.int64) * m)[:, None]
    load = np.bincount(key.ravel(), weights=flat.take(pop + np.arange(t) * m).ravel(),
                       minlength=p * m).reshape(p, m)
    if not inst.has_ready:
        return load.max(axis=1)
    used = np.bincount(key.ravel(), minlength=p * m).reshape(p, m) > 0
    return np.where(used, load + inst.ready, 0.0).max(axis=1)


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


# ---- genetic algorithm ------------------------------------------------------------------
@register("mapping", "ga")
def ga(inst: MappingInstance, *, population: int = 200, max_iter: int = 1000, patience: int = 150,
       crossover_rate: float = 0.6, mutation_rate: float = 0.4, seeded: bool = True, seed=0,
       stats: dict | None = None, time_limit: float | None = None) -> np.ndarray:
    """Genetic algorithm ([vadhiyar-notes] "GA"; [braun2001] sec. 2): a
    chromosome is a mapping (t machine indices).  ``population`` chromosomes,
    random, one of them Min-Min's mapping (``seeded``).  Per iteration:
    roulette-wheel selection of a new population with elitism (the best
    chromosome so far is kept, untouched, in slot 0; the wheel's slots are
    proportional to rank, best ``P``, worst 1, Braun's rank-based wheel:
    makespans differ too little for a score of 1/makespan to select);
    single-point crossover of random pairs (each chromosome joins a pair
    with probability ``crossover_rate``; tails after a random point swapped);
    mutation (each chromosome with probability ``mutation_rate``: one
    random task moved to another random machine; 1.0 mutates every
    chromosome, as the seed's slide reads); evaluation.  Stops after
    ``max_iter`` iterations or ``patience`` iterations without a new elite.
    Braun's rates 0.6 / 0.4 are the defaults.  The elite never worsens, so
    the result is never worse than Min-Min.  Random draws through the numpy
    Generator, the O(P t) copy / crossover / evaluation of a generation
    compiled (heuristics/_mapping_kernels.py:ga_generation).  ``stats`` (a
    dict) receives ``iterations``, ``elite`` (the elite's makespan, initial
    population first, then per iteration) and ``seed_makespan`` (Min-Min's).

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.
    population : int, default 200
        As described above.
    max_iter : int, default 1000
        As described above.
    patience : int, default 150
        As described above.
    crossover_rate : float, default 0.6
        As described above.
    mutation_rate : float, default 0.4
        As described above.
    seeded : bool, default True
        As described above.
    seed : int or numpy.random.Generator, default 0
        Seed of the method's random generator (or the generator itself); the same seed gives
        the same answer.
    stats : dict | None, default None
        As described above.
    time_limit : float | None, default None
        Wall-time budget in seconds from the call's start, checked after each
        generation (None: none); the first population, Min-Min's seed
        included, counts against it but is not interrupted.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    .. [braun2001] T. D. Braun, H. J. Siegel, N. Beck, L. L. Bölöni, M. Maheswaran, A. I. Reuther,
       J. P. Robertson, M. D. Theys, B. Yao, D. Hensgen, R. F. Freund. A Comparison of Eleven Static
       Heuristics for Mapping a Class of Independent Tasks onto Heterogeneous Distributed Computing
       Systems. Journal of Parallel and Distributed Computing 61(6):810-837, 2001.
       https://doi.org/10.1006/jpdc.2000.1714.
    """
    t0 = time.perf_counter()                       # the first population (Min-Min's seed) counts too
    _check_ga(inst, population=population, time_limit=time_limit, max_iter=max_iter, patience=patience,
              crossover_rate=crossover_rate, mutation_rate=mutation_rate, seeded=seeded, seed=seed, stats=stats)
    rng = _rng(seed)
    t, m = inst.etc.shape
    P, max_iter, patience = int(population), int(max_iter), int(patience)
    pop = rng.integers(0, m, size=(P, t), dtype=np.int64)
    seed_span = None
    if seeded:
        pop[0] = minmin(inst)
        seed_span = inst.value(pop[0])
    span = makespans(inst, pop)
    e = int(np.argmin(span))
    elite, elite_span = pop[e].copy(), float(span[e])
    history = [elite_span]
    rank_score = np.arange(P, 0, -1, dtype=float)  # best P ... worst 1
    etc, ready = _arrays(inst)
    new, new_span = np.empty_like(pop), np.empty(P)
    none = np.empty(0, dtype=np.int64)
    since = it = 0
    for it in range(1, max_iter + 1):
        # selection: rank-based roulette wheel ("add the probabilities until the sum exceeds r")
        order = np.argsort(span, kind="stable")
        score = np.empty(P)
        score[order] = rank_score
        cum = np.cumsum(score)
        cum /= cum[-1]
        pick = np.minimum(np.searchsorted(cum, rng.random(P - 1), side="right"), P - 1)
        pa = pb = cut = none
        if t > 1:
            cand = 1 + np.flatnonzero(rng.random(P - 1) < crossover_rate)
            rng.shuffle(cand)
            pairs = cand[: cand.size // 2 * 2].reshape(-1, 2)
            pa, pb = pairs[:, 0].copy(), pairs[:, 1].copy()
            cut = rng.integers(1, t, size=len(pairs))
        mut = task = off = none
        if m > 1:
            mut = 1 + np.flatnonzero(rng.random(P - 1) < mutation_rate)
            task = rng.integers(0, t, size=mut.size)
            off = rng.integers(1, m, size=mut.size)
        _k.ga_generation(pop, span, elite, elite_span, pick, pa, pb, cut, mut, task, off, etc, ready, new, new_span)
        pop, new = new, pop
        span, new_span = new_span, span
        b = int(np.argmin(span))
        if span[b] < elite_span:
            elite, elite_span, since = pop[b].copy(), float(span[b]), 0
        else:
            since += 1
        history.append(elite_span)
        if since >= patience or (time_limit is not None and time.perf_counter() - t0 >= time_limit):
            break
    if stats is not None:
        stats.update(iterations=it, elite=history, seed_makespan=seed_span)
    return elite


def _start(inst: MappingInstance, init: str, rng: np.random.Generator) -> np.ndarray:
    """The first mapping of SA and tabu: uniform random, or the answer of a
    registered deterministic mapping heuristic (``minmin``, ``mct``, ...);
    a user's is called as every method is (a copy of the instance, its
    answer checked: :func:`~epochbench.instances.registry.solve`)."""
    t, m = inst.etc.shape
    method = _init_method(init)
    if method is None:
        return rng.integers(0, m, size=t, dtype=np.int64)
    if method.origin != "builtin":   # a user's: handed a copy, its answer checked (a float or -1 was cast)
        try:
            return np.asarray(solve(inst, init, describe=False).decision, dtype=np.int64)
        except InfeasibleSolution as exc:
            raise InfeasibleSolution(f"the start, init={init!r} ({method.origin}): {exc}") from None
    return np.asarray(method.func(inst), dtype=np.int64)


#: the metaheuristics, which no metaheuristic starts from
METAHEURISTICS = ("ga", "sa", "tabu")


def _init_method(init):
    """The registered heuristic ``init`` names (None for ``random``);
    ValueError for a metaheuristic, an exact method or an unknown name."""
    if init == "random":
        return None
    if init in METAHEURISTICS:
        raise ValueError(f"init must be 'random' or a constructive mapping heuristic, not the metaheuristic {init!r}")
    try:
        method = get("mapping", init)
    except (KeyError, TypeError):
        constructive = [n for n in names("mapping", "heuristic") if n not in METAHEURISTICS]
        raise ValueError(f"init must be 'random' or a constructive mapping heuristic ({', '.join(constructive)}), "
                         f"got {init!r}") from None
    if method.exact:
        raise ValueError(f"init must be a heuristic, not the exact method {init!r}")
    return method


def _check_budget(name: str, time_limit) -> None:
    if time_limit is not None and (not is_number(time_limit) or not float(time_limit) >= 0.0):   # 0 in a direct call: the start itself
        raise ValueError(f"{name}: option 'time_limit' must be >= 0 seconds or None, got {time_limit!r}")


def _check_seed(name: str, seed) -> None:
    """An integer >= 0, a numpy Generator or SeedSequence, or None (fresh
    entropy), as ``numpy.random.default_rng`` takes them (its own errors
    named neither the method nor the option)."""
    if seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        return
    if not is_int(seed) or seed < 0:
        raise ValueError(f"{name}: option 'seed' must be an integer >= 0 or a numpy Generator, got {seed!r}")


def _check_stats(name: str, stats) -> None:
    """A dict (the search writes its figures into it at the end) or None:
    anything else failed only after the whole search had run."""
    if stats is not None and not isinstance(stats, dict):
        raise ValueError(f"{name}: option 'stats' must be a dict (it receives the search's figures) or None, "
                         f"got {type(stats).__name__}")


# ---- parameter checks before a run (``check_params`` hooks, :mod:`epochbench.methods`) ----
def _check_ga(inst, population=200, time_limit=None, max_iter=1000, patience=150, crossover_rate=0.6,
              mutation_rate=0.4, seeded=True, seed=0, stats=None, **_) -> None:
    check_count("ga", "population", population, 2)   # its kind before int(): NaN, None, a string
    _check_budget("ga", time_limit)
    check_count("ga", "max_iter", max_iter, 0)
    check_count("ga", "patience", patience, 0)
    check_share("ga", "crossover_rate", crossover_rate)
    check_share("ga", "mutation_rate", mutation_rate)
    check_flag("ga", "seeded", seeded)
    _check_seed("ga", seed)
    _check_stats("ga", stats)


def _check_sa(inst, init="random", cooling=0.9, time_limit=None, max_iter=100_000, patience=150, seed=0,
              stats=None, **_) -> None:
    if not is_number(cooling) or not 0.0 < float(cooling) < 1.0:   # a string is no number
        raise ValueError(f"sa: option 'cooling' must lie in (0, 1), got {cooling!r}")
    _check_budget("sa", time_limit)
    check_count("sa", "max_iter", max_iter, 0)
    check_count("sa", "patience", patience, 0)
    _check_seed("sa", seed)
    _check_stats("sa", stats)
    _init_method(init)


def _check_tabu(inst, init="random", time_limit=None, hops=1200, max_tries=1000, seed=0, stats=None,
                **_) -> None:
    _check_budget("tabu", time_limit)
    check_count("tabu", "hops", hops, 0)
    check_count("tabu", "max_tries", max_tries, 1)
    _check_seed("tabu", seed)
    _check_stats("tabu", stats)
    _init_method(init)

# ---- simulated annealing -------------------------------------------------------------------
#: simulated annealing draws its random numbers and refreshes its load sums in blocks of
#: this many steps, and checks a time limit every SA_CHECK steps within a block
SA_BLOCK, SA_CHECK = 4096, 256


@register("mapping", "sa")
def sa(inst: MappingInstance, *, init: str = "random", cooling: float = 0.9, patience: int = 150,
       max_iter: int = 100_000, time_limit: float | None = None, seed=0,
       stats: dict | None = None) -> np.ndarray:
    """Simulated annealing ([vadhiyar-notes] "Simulated Annealing"; [braun2001]
    sec. 2): start from a random mapping (``init="minmin"``: Min-Min's);
    temperature = its makespan.  Each iteration mutates the current mapping
    (one random task to another random machine); a lower makespan is
    accepted, a worse or equal one when a uniform ``z > y``, ``y = 1 / (1 +
    exp((old - new) / T))``; then ``T`` drops by 10% (``cooling``).  Stops
    after ``patience`` iterations without a change of the current makespan
    (Braun's 150), ``max_iter`` iterations or, with ``time_limit`` (seconds;
    None: no budget), once that much time has passed since the call (checked
    every 256 iterations; the start mapping counts but is not interrupted);
    returns the best mapping seen.  ``seed`` seeds the draws.

    The seed's 10 % cooling (``cooling=0.9``, the default) freezes within
    a few dozen iterations: T falls below any makespan difference and the
    walk stops in a one-move local optimum.  A slower ``cooling`` (e.g.
    0.999) keeps accepting worse moves longer and explores more.

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.
    init : str, default 'random'
        The first mapping: ``random``, or the answer of a constructive mapping
        heuristic (``minmin``, ``mct``, ``maxmin``, ...).
    cooling : float, default 0.9
        As described above.
    patience : int, default 150
        As described above.
    max_iter : int, default 100000
        As described above.
    time_limit : float | None, default None
        As described above.
    seed : int or numpy.random.Generator, default 0
        As described above.
    stats : dict | None, default None
        As described above.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    O(m) per iteration (compiled).  ``stats`` (a dict) receives
    ``iterations``, ``start_makespan``, ``final_makespan``, ``best_makespan``.

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    .. [braun2001] T. D. Braun, H. J. Siegel, N. Beck, L. L. Bölöni, M. Maheswaran, A. I. Reuther,
       J. P. Robertson, M. D. Theys, B. Yao, D. Hensgen, R. F. Freund. A Comparison of Eleven Static
       Heuristics for Mapping a Class of Independent Tasks onto Heterogeneous Distributed Computing
       Systems. Journal of Parallel and Distributed Computing 61(6):810-837, 2001.
       https://doi.org/10.1006/jpdc.2000.1714.
    """
    t0 = time.perf_counter()                       # the start mapping counts against time_limit
    _check_sa(inst, init=init, cooling=cooling, time_limit=time_limit, max_iter=max_iter, patience=patience,
              seed=seed, stats=stats)
    max_iter, patience = int(max_iter), int(patience)
    rng = _rng(seed)
    etc, ready = _arrays(inst)
    t, m = etc.shape
    cur = _start(inst, init, rng)
    load, cnt = _k.loads_of(etc, cur, m)
    cur_span = _k.span_of(load, cnt, ready)
    best, best_span = cur.copy(), cur_span
    start_span = temp = cur_span
    since = done = 0
    if m > 1:
        # the draws and the fresh sums come in blocks of SA_BLOCK steps whether or not a
        # time limit is set, which is checked every SA_CHECK steps: a limit that is not
        # reached leaves the answer as without one (blocks of 256 with a limit drew
        # another random sequence: score and eb.solve(..., time_limit=10) disagreed)
        out_of_time = False
        while done < max_iter and since < patience and not out_of_time:
            load, cnt = _k.loads_of(etc, cur, m)  # fresh sums: no drift from the +/- updates
            n = min(SA_BLOCK, max_iter - done)
            r_task, r_off, r_z = rng.integers(0, t, size=n), rng.integers(1, m, size=n), rng.random(n)
            step = n if time_limit is None else SA_CHECK
            for a in range(0, n, step):
                if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                    out_of_time = True
                    break
                steps, cur_span, best_span, temp, since = _k.anneal(
                    etc, ready, cur, load, cnt, cur_span, best, best_span, temp, float(cooling), since,
                    int(patience), r_task[a:a + step], r_off[a:a + step], r_z[a:a + step])
                done += steps
                if since >= patience:
                    break
    if stats is not None:
        stats.update(iterations=done, start_makespan=start_span, final_makespan=inst.value(cur),
                     best_makespan=inst.value(best))
    return best


# ---- tabu search --------------------------------------------------------------------------
@register("mapping", "tabu")
def tabu(inst: MappingInstance, *, hops: int = 1200, init: str = "random", max_tries: int = 1000, seed=0,
         stats: dict | None = None, time_limit: float | None = None) -> np.ndarray:
    """Tabu search ([vadhiyar-notes] "Tabu search"; [braun2001] sec. 2): from a
    random mapping, short hops: scan the task pairs (i, j), i < j, swapping
    their machines; a swap that lowers the makespan is kept and the scan
    restarts at i = 0, otherwise it goes on.  When a scan finds no better
    swap (a local optimum), the mapping joins the tabu list and a long hop
    jumps to a random mapping that differs from every tabu entry in at least
    half of the assignments (drawn until one does, at most ``max_tries``
    draws).  Stops when successful short hops plus long hops reach ``hops``
    (Braun's 1200).  Returns the best mapping seen.  O(t^2) per full scan
    (compiled), O(|tabu| t) per long-hop check.  The short hop is the
    notes' exchange of the two tasks' machines, so a descent never changes
    how many tasks a machine holds; only a long hop does.  [braun2001]
    describes a wider short hop, every pair of machines for the two tasks
    (m^2 mappings a pair), which is not what is built here: a mapping one
    reassignment away from a local optimum of swaps is reached only by
    chance (on 60 random 3 x 2 instances, tabu missed the optimum 16
    times, the worst 390 % above it; on the 12 [braun2001] matrices its
    mean gap to the best known is about 10 times Min-Min's).  ``stats`` (a dict) receives
    ``short_hops``, ``long_hops``, ``best_makespan``, ``stalled`` (no
    far-away mapping found).

    Parameters
    ----------
    inst : MappingInstance
        The ``etc`` matrix (t tasks x m machines) and the machines' ``ready``
        times.
    hops : int, default 1200
        As described above.
    init : str, default 'random'
        The first mapping: ``random``, or the answer of a constructive mapping
        heuristic (``minmin``, ``mct``, ``maxmin``, ...).
    max_tries : int, default 1000
        As described above.
    seed : int or numpy.random.Generator, default 0
        Seed of the method's random generator (or the generator itself); the same seed gives
        the same answer.
    stats : dict | None, default None
        As described above.
    time_limit : float | None, default None
        Wall-time budget in seconds from the call's start, looked at every
        :data:`TABU_PAIRS` task pairs of a scan (None: none); the start
        mapping (``init``) counts against it but is not interrupted.

    Returns
    -------
    numpy.ndarray
        The machine of each task (length t; checked by ``check_mapping``).

    Notes
    -----
    Cost: O(t^2) per full scan (compiled), O(|tabu| t) per long-hop check.

    References
    ----------
    .. [vadhiyar-notes] S. Vadhiyar. Scheduling on Parallel Systems. lecture notes, Supercomputer
       Education and Research Centre, Indian Institute of Science (undated).
    .. [braun2001] T. D. Braun, H. J. Siegel, N. Beck, L. L. Bölöni, M. Maheswaran, A. I. Reuther,
       J. P. Robertson, M. D. Theys, B. Yao, D. Hensgen, R. F. Freund. A Comparison of Eleven Static
       Heuristics for Mapping a Class of Independent Tasks onto Heterogeneous Distributed Computing
       Systems. Journal of Parallel and Distributed Computing 61(6):810-837, 2001.
       https://doi.org/10.1006/jpdc.2000.1714.
    """
    t0 = time.perf_counter()                       # the start mapping counts against time_limit
    _check_tabu(inst, init=init, hops=hops, max_tries=max_tries, seed=seed, time_limit=time_limit, stats=stats)
    hops, max_tries = int(hops), int(max_tries)
    rng = _rng(seed)
    etc, ready = _arrays(inst)
    t, m = etc.shape
    cur = _start(inst, init, rng)
    tabu_list = np.empty((0, t), dtype=np.int64)
    best, best_span = cur.copy(), inst.value(cur)
    used = short = long_hops = 0
    stalled = out_of_time = False
    while used < hops and not out_of_time:
        if used and time_limit is not None and time.perf_counter() - t0 >= time_limit:
            break
        load, cnt = _k.loads_of(etc, cur, m)
        if time_limit is None:
            n, span = _k.short_hops(etc, ready, cur, load, cnt, hops - used)
        else:                                      # the same hops in parts, the clock looked at between
            n, span, out_of_time = _timed_short_hops(etc, ready, cur, load, cnt, hops - used, t0 + time_limit)
        used += n
        short += n
        if span < best_span:
            best, best_span = cur.copy(), float(span)
        if used >= hops or out_of_time:
            break
        if long_hops >= len(tabu_list):  # grow by doubling
            tabu_list = np.concatenate([tabu_list, np.empty((max(len(tabu_list), 8), t), np.int64)])
        tabu_list[long_hops] = cur
        need = (t + 1) // 2
        for _ in range(max_tries):
            cand = rng.integers(0, m, size=t, dtype=np.int64)
            if _k.min_distance(cand, tabu_list, long_hops + 1) >= need:
                break
        else:
            stalled = True  # no far-away mapping found (tiny t or m): stop
            break
        long_hops += 1
        used += 1
        cur = cand
        span = inst.value(cur)
        if span < best_span:
            best, best_span = cur.copy(), span
    if stats is not None:
        stats.update(short_hops=short, long_hops=long_hops, best_makespan=inst.value(best), stalled=stalled)
    return best


#: task pairs a part of a timed tabu descent looks at between two looks at the clock
TABU_PAIRS = 1 << 16


def _timed_short_hops(etc, ready, cur, load, cnt, limit: int, deadline: float) -> tuple[int, float, bool]:
    """One tabu descent (:func:`~epochbench.heuristics._mapping_kernels.short_hops`)
    in parts of :data:`TABU_PAIRS` pairs, stopping at ``deadline``
    (``time.perf_counter()`` seconds); returns (hops, makespan, cut short)."""
    fin = _k.finish_times(load, cnt, ready)
    i = n = 0
    while True:
        k, span, i, finished = _k.short_hops_part(etc, ready, cur, load, fin, i, limit - n, TABU_PAIRS)
        n += k
        if finished:
            return n, float(span), False
        if time.perf_counter() >= deadline:
            return n, float(span), True


ga.check_params = _check_ga
sa.check_params = _check_sa
tabu.check_params = _check_tabu
