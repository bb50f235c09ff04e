"""A computing farm at one scheduling event and its Job-Machine matrix ([capannini2007]).

[capannini2007] (Capannini et al., SC07) schedules batch jobs on heterogeneous
machines with floating software licenses by "convergent scheduling": seven
heuristics each add a preference ``Delta p[i, m]`` to a Job-Machine matrix
``P`` (section 4.1), jobs whose critical licenses cannot all be served are
discarded by a 0-1 multidimensional knapsack (section 4.2, family
``knapsack``), and jobs are matched to machines on ``P`` (section 5, family
``assignment``).  This module holds the farm and the matrix:

* :class:`Machines`, :class:`Jobs`, :class:`FarmState` -- the state at one
  event (frozen dataclasses over numpy arrays; ``Jobs.take`` / ``Jobs.concat``
  / ``FarmState.with_jobs`` / ``FarmState.advance`` let a simulator move from
  one event to the next);
* :func:`generate_farm` -- a random state with the ranges of [capannini2007]
  section 6;
* the seven heuristics of section 4.1 with the constants of its footnote 1
  (:class:`Constants`): :func:`eligible`, :func:`deadline_delta` (``f_1`` and
  equation 1), :func:`license_delta`, :func:`input_delta`,
  :func:`wait_delta`, :func:`overhead_delta`, :func:`aging_delta`, summed by
  :func:`preference_matrix`;
* :func:`mkp_profit` -- the knapsack profit ``c-bar_i`` of section 4.2.

Choices the seed leaves open (each a parameter):

* "Deadline [25 - 150]" next to "Estimated [500 - 3000]" cannot be absolute
  (every job would be late), so a deadline is a slack in percent of the
  estimate: ``deadline = submit + estimate * (1 + D / 100)``, D uniform in
  [25, 150] (``deadline_slack``).
* "License ratio ... percentage of the number of machines on which a license
  can be used": copies of license l = ``round(ratio_l * #machines where l is
  usable)``, at least 1.
* "License needed by a job 20%": each (job, license) pair independently.
* The link bandwidth ``b`` of the Input heuristic has no range in the seed:
  uniform in ``bandwidth`` (default 10..100) per machine pair, symmetric;
  the input of a job sits on one machine (``input_location``).
* Submission times follow exponential inter-arrival times (mean
  ``interarrival``, section 6 "negative exponential distribution") going back
  from ``now``; a share ``busy`` of the machines runs a job of the previous
  plan (``running_on``), with progress uniform in [0, 0.9).
* Minimal requirements (CPUs and the license types usable on the machine)
  decide eligibility; an eligible entry starts at ``Constants.base`` (> 0), so
  ``P[i, m] == 0`` means "not eligible", the convention of section 5.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .core import InstanceError

#: [capannini2007] section 6 ranges (uniform)
ESTIMATE = (500.0, 3000.0)
DEADLINE_SLACK = (25.0, 150.0)  # percent of the estimate (see module docstring)
CPUS = (1, 8)
BENCHMARK = (200.0, 600.0)
INPUT = (100.0, 800.0)
LICENSE_RATIO = (0.55, 0.65)
SUITABILITY = 0.9
NEED = 0.2
NO_DEADLINE = 0.3
#: license ratio ranges of [capannini2007] table 1 (the MKP evaluation)
TABLE1_RATIOS = ((0.40, 0.45), (0.45, 0.50), (0.50, 0.55), (0.55, 0.60))


#: the largest heuristic constant: footnote 1's are 0.02 to 10 (800 for a
#: non-preemptive run); 1e308 overflowed the matrix's sums into inf and NaN,
#: which the matching then refused as a bad instance
CONSTANT_MAX = 1e9


@dataclass(frozen=True)
class Constants:
    """Heuristic constants; defaults are [capannini2007] footnote 1 for the
    preemptive CS versions (``overhead = 800`` simulates non-preemptable
    jobs: :meth:`non_preemptive`).  ``base`` is the value an eligible entry
    starts from (the Minimal requirements heuristic), ours."""

    max: float = 10.0       # Deadline MAX
    min: float = 0.1        # Deadline MIN
    k: float = 1.3          # Deadline k (overestimate of Nxtime)
    input: float = 3.0      # IN
    overhead: float = 8.0   # Overhead minimization Delta
    aging: float = 0.02     # AA
    licenses: float = 2.5   # LI
    wait: float = 4.0       # WM
    base: float = 0.1       # eligible entries start here (P == 0: not eligible)
    literal_fbar: bool = False  # f-bar_1 = Max - f_1 also where the job would be late (see deadline_delta)

    def __post_init__(self):
        for name, f in self.__dataclass_fields__.items():
            v = getattr(self, name)
            if f.type not in (bool, "bool") and not (isinstance(v, (int, float)) and not isinstance(v, bool)
                                                      and math.isfinite(v) and 0 <= v <= CONSTANT_MAX):
                raise ValueError(f"constant {name}={v!r}: a finite number in [0, {CONSTANT_MAX:g}]")
        if not self.base > 0:     # with aging and wait 0 too, eligible entries read 0, "not eligible": a crash
            raise ValueError(f"constant base={self.base!r}: a number in (0, {CONSTANT_MAX:g}], the value an "
                             "eligible entry starts from (0 marks an entry that is not eligible)")
        if self.min > self.max:
            raise ValueError(f"constants min={self.min!r} and max={self.max!r}: min must not exceed max")

    @classmethod
    def non_preemptive(cls, **kw) -> "Constants":
        """Footnote 1's constants of a CS version without preemption
        (``overhead`` 800 where the preemptive versions have 8), with ``kw``
        over them, ``overhead`` included."""
        return cls(**{"overhead": 800.0, **kw})

    @classmethod
    def parse(cls, items, preemptive: bool = True) -> "Constants":
        """Footnote-1 constants of a preemptive (or non-preemptive) CS version
        with ``KEY=VALUE`` overrides (``items``: one string or a list of
        them, each holding one or more, comma-separated), e.g.
        ``["aging=0.002", "literal_fbar=1"]`` or ``"aging=0.002,literal_fbar=1"``
        (as repeated ``--cs-constant`` options, or one with commas).  A key
        given twice is refused: which value was meant cannot be told."""
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
            raise ValueError(f"cs_constant: KEY=VALUE strings, one or a list of them, got {items!r}")
        types = {name: f.type for name, f in cls.__dataclass_fields__.items()}
        kw = {}
        for item in filter(None, (i.strip() for text in items for i in text.split(","))):
            key, sep, val = item.partition("=")
            key = key.strip()
            if key not in types or not sep:
                raise ValueError(f"constant {item!r}: expected KEY=VALUE with KEY one of {', '.join(types)}")
            if key in kw:
                raise ValueError(f"constant {key} given twice")
            val = val.strip()
            if types[key] in (bool, "bool"):
                if val not in ("0", "1", "true", "false", "True", "False"):
                    raise ValueError(f"constant {key} is a flag: 0/1 or true/false, got {val!r}")
                kw[key] = val in ("1", "true", "True")
            else:
                try:
                    kw[key] = float(val)
                except ValueError:
                    raise ValueError(f"constant {key}={val!r}: a finite number >= 0") from None
        return cls(**kw) if preemptive else cls.non_preemptive(**kw)


def _frozen(a, dtype) -> np.ndarray:
    arr = np.array(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Machines:
    """``cpus`` (M,), benchmark score ``bench`` (M,) = BM_m, and
    ``license_ok`` (M, L): license l can run on machine m."""

    cpus: np.ndarray
    bench: np.ndarray
    license_ok: np.ndarray

    @property
    def m(self) -> int:
        return self.cpus.shape[0]


@dataclass(frozen=True, eq=False)
class Jobs:
    """Jobs in the system (queued and running), one entry per job.

    ``estimate`` Estimated_i (time on a machine of benchmark ``bench``, i.e.
    BM_m-bar), ``cpus``, ``licenses`` (N, L) bool, ``input_size`` and
    ``input_location`` (machine index), absolute ``deadline`` (NaN: none),
    ``submit``, ``progress`` (fraction done) and ``running_on`` (machine of
    the previous plan, -1 if none); ``ids`` name jobs across events.
    """

    estimate: np.ndarray
    bench: np.ndarray
    cpus: np.ndarray
    licenses: np.ndarray
    input_size: np.ndarray
    input_location: np.ndarray
    deadline: np.ndarray
    submit: np.ndarray
    progress: np.ndarray
    running_on: np.ndarray
    ids: np.ndarray

    @property
    def n(self) -> int:
        return self.estimate.shape[0]

    def take(self, idx) -> "Jobs":
        """The jobs at positions ``idx`` (in that order)."""
        idx = np.asarray(idx, dtype=np.int64)
        return Jobs(**{f: _frozen(getattr(self, f)[idx], getattr(self, f).dtype) for f in _JOB_FIELDS})

    def concat(self, other: "Jobs") -> "Jobs":
        """These jobs followed by ``other``'s."""
        return Jobs(**{f: _frozen(np.concatenate([getattr(self, f), getattr(other, f)]), getattr(self, f).dtype)
                       for f in _JOB_FIELDS})


_JOB_FIELDS = tuple(Jobs.__dataclass_fields__)


class _FarmShape:
    """``n`` jobs, ``m`` machines and ``n_licenses`` of a class with
    ``jobs``, ``machines`` and ``copies`` (:class:`FarmState`, the
    simulator's ``FarmStream``)."""

    @property
    def n(self) -> int:
        return self.jobs.n

    @property
    def m(self) -> int:
        return self.machines.m

    @property
    def n_licenses(self) -> int:
        return self.copies.shape[0]


@dataclass(frozen=True, eq=False)
class FarmState(_FarmShape):
    """The farm at time ``now``: machines, license ``copies`` (L,) usable at
    once, the jobs, and ``bandwidth`` (M, M) between machines."""

    machines: Machines
    copies: np.ndarray
    jobs: Jobs
    bandwidth: np.ndarray
    now: float = 0.0
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        m, n, nl = self.machines.m, self.jobs.n, self.copies.shape[0]
        shapes = {"machines.bench": (self.machines.bench.shape, (m,)),
                  "machines.license_ok": (self.machines.license_ok.shape, (m, nl)),
                  "bandwidth": (self.bandwidth.shape, (m, m))}
        shapes.update({f"jobs.{f}": (getattr(self.jobs, f).shape, (n, nl) if f == "licenses" else (n,))
                       for f in _JOB_FIELDS})
        for name, (got, want) in shapes.items():
            if got != want:
                raise InstanceError(f"farm state: field '{name}' has shape {got}, expected {want}")
        if nl and self.copies.min() < 1:
            raise InstanceError(f"farm state: field 'copies' needs >= 1 copy per license, got {self.copies.min()}")
        run = self.jobs.running_on
        busy = run[run >= 0]
        if busy.size and (busy.max() >= m or np.unique(busy).size != busy.size):
            raise InstanceError("farm state: field 'jobs.running_on' must name distinct machines in 0..M-1")

    def with_jobs(self, jobs: Jobs, now: float | None = None) -> "FarmState":
        return replace(self, jobs=jobs, now=self.now if now is None else float(now))

    def advance(self, now: float, plan: dict[int, int] | None = None) -> "FarmState":
        """The state at ``now``: every job of the current ``running_on`` has
        progressed by ``(now - self.now) * BM_m / (BM_m-bar * Estimated)``
        (capped at 1); ``plan`` (job position -> machine), if given, becomes the
        new ``running_on``.  O(N)."""
        dt = float(now) - self.now
        if dt < 0:
            raise ValueError(f"cannot go back in time ({now} < {self.now})")
        j = self.jobs
        run = j.running_on >= 0
        rate = np.zeros(j.n)
        rate[run] = self.machines.bench[j.running_on[run]] / (j.bench[run] * j.estimate[run])
        progress = np.minimum(j.progress + dt * rate, 1.0)
        running = j.running_on if plan is None else np.array([plan.get(i, -1) for i in range(j.n)])
        jobs = replace(j, progress=_frozen(progress, float), running_on=_frozen(running, np.int64))
        return replace(self, jobs=jobs, now=float(now))


# ---- generator ([capannini2007] section 6) ---------------------------------------------------------
def generate_farm(rng: np.random.Generator, *, jobs: int = 150, machines: int = 150, licenses: int = 20,
                  ratio: tuple[float, float] = LICENSE_RATIO, suitability: float = SUITABILITY,
                  need: float = NEED, no_deadline: float = NO_DEADLINE,
                  deadline_slack: tuple[float, float] = DEADLINE_SLACK, interarrival: float = 10.0,
                  busy: float = 0.5, bandwidth: tuple[float, float] = (10.0, 100.0),
                  now: float = 0.0) -> FarmState:
    """A random farm state with the ranges of [capannini2007] section 6 (see the
    module docstring for the readings): machines with CPUs [1-8], benchmark
    [200-600], each license usable with probability ``suitability``; license
    copies ``ratio`` x usable machines; jobs with estimate [500-3000],
    benchmark, CPUs, each license needed with probability ``need``, input
    [100-800] on a random machine, a deadline (none for a share
    ``no_deadline``).  The previous plan puts ``busy`` x M jobs on distinct
    eligible machines.  Cost O(N M L)."""
    if jobs < 0 or machines < 1 or licenses < 0:
        raise ValueError(f"need jobs >= 0, machines >= 1, licenses >= 0; got {jobs}, {machines}, {licenses}")
    for name, (lo, hi) in (("ratio", ratio), ("deadline_slack", deadline_slack), ("bandwidth", bandwidth)):
        if not 0 <= lo <= hi:
            raise ValueError(f"{name} must be a range 0 <= lo <= hi, got {(lo, hi)}")
    for name, p in (("suitability", suitability), ("need", need), ("no_deadline", no_deadline), ("busy", busy)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must lie in [0, 1], got {p}")
    M, N, L = machines, jobs, licenses
    mach = Machines(cpus=_frozen(rng.integers(CPUS[0], CPUS[1] + 1, M), np.int64),
                    bench=_frozen(rng.uniform(*BENCHMARK, M), float),
                    license_ok=_frozen(rng.random((M, L)) < suitability, bool))
    usable = mach.license_ok.sum(axis=0)
    copies = _frozen(np.maximum(np.rint(rng.uniform(*ratio, L) * usable), 1), np.int64)
    estimate = rng.uniform(*ESTIMATE, N)
    submit = now - np.cumsum(rng.exponential(interarrival, N))[::-1]
    slack = rng.uniform(*deadline_slack, N) / 100.0
    deadline = np.where(rng.random(N) < no_deadline, np.nan, submit + estimate * (1.0 + slack))
    bw = rng.uniform(*bandwidth, (M, M))
    bw = np.triu(bw, 1) + np.triu(bw, 1).T
    np.fill_diagonal(bw, np.inf)
    jb = Jobs(estimate=_frozen(estimate, float), bench=_frozen(rng.uniform(*BENCHMARK, N), float),
              cpus=_frozen(rng.integers(CPUS[0], CPUS[1] + 1, N), np.int64),
              licenses=_frozen(rng.random((N, L)) < need, bool),
              input_size=_frozen(rng.uniform(*INPUT, N), float),
              input_location=_frozen(rng.integers(0, M, N), np.int64),
              deadline=_frozen(deadline, float), submit=_frozen(submit, float),
              progress=_frozen(np.zeros(N), float), running_on=_frozen(np.full(N, -1), np.int64),
              ids=_frozen(np.arange(N), np.int64))
    state = FarmState(mach, copies, jb, _frozen(bw, float), float(now),
                      {"generator": "[capannini2007] section 6", "ratio": list(ratio), "need": need,
                       "suitability": suitability, "busy": busy, "interarrival": interarrival})
    # previous plan: random jobs on random free eligible machines
    ok = eligible(state)
    target = int(round(busy * M))
    running = np.full(N, -1)
    free = np.ones(M, dtype=bool)
    for i in rng.permutation(N):
        if target == 0:
            break
        cand = np.nonzero(ok[i] & free)[0]
        if cand.size:
            m = int(rng.choice(cand))
            running[i], free[m] = m, False
            target -= 1
    progress = np.where(running >= 0, rng.uniform(0.0, 0.9, N), 0.0)
    return state.with_jobs(replace(jb, running_on=_frozen(running, np.int64), progress=_frozen(progress, float)))


# ---- the seven heuristics ([capannini2007] section 4.1) ------------------------------------------
def eligible(state: FarmState) -> np.ndarray:
    """Minimal requirements: ``E[i, m]`` iff machine m has at least the CPUs
    of job i and can run every license type job i needs (M_Aff_i).  O(N M L)."""
    j, mach = state.jobs, state.machines
    cpu_ok = mach.cpus[None, :] >= j.cpus[:, None]
    # job i needs a license machine m cannot run: licenses @ (not license_ok).T > 0
    lic_bad = j.licenses.astype(np.int32) @ (~mach.license_ok).T.astype(np.int32) > 0
    return cpu_ok & ~lic_bad


def work_left(state: FarmState) -> np.ndarray:
    """``Estimated_i (1 - Progress_i) BM_m-bar`` per job: the estimated work
    left, in benchmark-seconds.  O(N)."""
    j = state.jobs
    return j.estimate * (1.0 - j.progress) * j.bench


def nxtime(state: FarmState) -> np.ndarray:
    """``Nxtime[i, m] = Estimated_i (1 - Progress_i) BM_m-bar / BM_m`` ([capannini2007]
    4.1, Deadline; also Remaining of Wait minimization).  O(N M)."""
    return work_left(state)[:, None] / state.machines.bench[None, :]


def f1(extime, t, deadline, lo: float, hi: float) -> np.ndarray:
    """[capannini2007] section 4.1, the deadline function: ``Min`` while ``Extime <=
    t``, then the line through ``(t, Min)`` and ``(Deadline, Max)``, and
    ``Min`` again once ``Extime > Deadline`` (figure 2).  Elementwise."""
    extime, t, deadline = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (extime, t, deadline)))
    out = np.full(extime.shape, float(lo))
    mid = (extime > t) & (extime <= deadline)
    a = (hi - lo) / (deadline[mid] - t[mid])
    out[mid] = a * (extime[mid] - t[mid]) + lo
    return out


def deadline_delta(state: FarmState, c: Constants, ok: np.ndarray) -> np.ndarray:
    """Deadline heuristic, equation (1) of [capannini2007]: with ``Extime = Now +
    Nxtime``, ``t = Deadline - k Nxtime`` and ``f-bar_1 = Max - f_1``,
    ``Delta[i, m] = (sum_{k in M_Aff_i} f_1[i, k]) * f-bar_1[i, m] / d_i``,
    ``d_i = sum_{m in M_Aff_i} f-bar_1[i, m]``.  Jobs without deadline get 0,
    so do rows with ``d_i = 0``.  O(N M).

    The seed says the higher ``f-bar_1`` is on a machine, "the higher the
    probability that such machine will perform the associated job respecting
    its deadline".  Read literally (``Constants.literal_fbar``), the formula
    contradicts that on machines where the job would be late: there ``f_1 =
    Min`` (figure 2), so ``f-bar_1 = Max - Min`` is the largest share, and the
    job's urgency is pushed towards machines on which it cannot meet its
    deadline.  By default ``f-bar_1 = 0`` where ``Extime > Deadline``, the
    reading that agrees with the seed's stated intent (the ``f_1`` sum, the
    urgency term, is unchanged).  On the section 6 farm at inter-arrival 20
    the literal reading leaves about a quarter of the deadline jobs late
    against a few per cent (issue 8 note)."""
    nx = nxtime(state)
    dl = state.jobs.deadline[:, None]
    has = ~np.isnan(state.jobs.deadline)
    out = np.zeros(ok.shape)
    if not has.any():
        return out
    nx, dl, okh = nx[has], dl[has], ok[has]
    extime = state.now + nx
    f = f1(extime, dl - c.k * nx, np.broadcast_to(dl, nx.shape), c.min, c.max)
    f = np.where(okh, f, 0.0)
    fbar = np.where(okh & (c.literal_fbar | (extime <= dl)), c.max - f, 0.0)
    d = fbar.sum(axis=1, keepdims=True)
    out[has] = np.divide(f.sum(axis=1, keepdims=True) * fbar, d, out=np.zeros(f.shape), where=d > 0)
    return out


def license_rho(requests: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """``rho_l = sum_i s[i, l] / a_l`` ([capannini2007] 4.1, Licenses; with integer
    weights ``a[i, l]`` it is the demand-to-capacity ratio of the MKP; inf
    for a requested license without copies).  A license is critical iff
    ``rho_l > 1``.  O(N L)."""
    copies = np.asarray(copies, dtype=float)
    demand = np.asarray(requests, dtype=float).sum(axis=0)
    return np.divide(demand, copies, out=np.where(demand > 0, np.inf, 0.0), where=copies > 0)


def license_weight(licenses: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """``w(i) = |L| sum_{l in L_c} s[i,l] rho_l + sum_{l in L_nc} s[i,l] rho_l``
    ([capannini2007] 4.1, Licenses).  O(N L).

    The formula as printed, which Delta uses.  The paper also states the
    order it stands for (critical part w1 first, w2 on ties), and w follows
    that order only where |L| times the w1's difference outweighs the w2's (e.g. copies
    10, 20, 1: a job asking license 0 alone has w1 1.10 > 1.05 of a job
    asking licenses 1 and 2, yet w 3.30 < 4.15): the formula is kept."""
    s = np.asarray(licenses, dtype=float)
    rho = license_rho(s, copies)
    crit = rho > 1.0
    return s.shape[1] * (s[:, crit] @ rho[crit]) + s[:, ~crit] @ rho[~crit]


def license_score(state: FarmState, c: Constants) -> np.ndarray:
    """``LI w(i) / max_i w(i)`` per job (0 when no job needs a license).  O(N L)."""
    w = license_weight(state.jobs.licenses, state.copies) if state.n_licenses else np.zeros(state.n)
    top = w.max() if w.size else 0.0
    return c.licenses * w / top if top > 0 else np.zeros(state.n)


def license_delta(state: FarmState, c: Constants, ok: np.ndarray) -> np.ndarray:
    """Licenses heuristic: ``Delta[i, m] =`` :func:`license_score` on
    M_Aff_i.  O(N L + N M)."""
    return np.where(ok, license_score(state, c)[:, None], 0.0)


def transfer_time(state: FarmState) -> np.ndarray:
    """``Transf_i(m) = Input_i / b[loc_i, m]`` (0 on the machine holding the
    input).  O(N M)."""
    j = state.jobs
    return j.input_size[:, None] / state.bandwidth[j.input_location]


def input_delta(state: FarmState, c: Constants, ok: np.ndarray) -> np.ndarray:
    """Input heuristic: ``Delta[i, m] = IN (1 - Transf_i(m) / sum_{m' in
    M_Aff_i} Transf_i(m'))``; ``IN`` where no eligible machine needs a
    transfer.  O(N M)."""
    tr = np.where(ok, transfer_time(state), 0.0)
    tot = tr.sum(axis=1, keepdims=True)
    share = np.divide(tr, tot, out=np.zeros(tr.shape), where=tot > 0)
    return np.where(ok, c.input * (1.0 - share), 0.0)


def wait_delta(state: FarmState, c: Constants, ok: np.ndarray) -> np.ndarray:
    """Wait minimization: ``Delta[i, m] = WM (1 - Remaining[i, m] /
    SupRemaining)``, ``Remaining = Nxtime``, ``SupRemaining`` its maximum over
    eligible pairs.  O(N M)."""
    rem = np.where(ok, nxtime(state), 0.0)
    sup = rem.max() if rem.size else 0.0
    return np.where(ok, c.wait * (1.0 - rem / sup), 0.0) if sup > 0 else np.where(ok, c.wait, 0.0)


def overhead_delta(state: FarmState, c: Constants, ok: np.ndarray) -> np.ndarray:
    """Overhead minimization: ``+Delta`` on the pairs of the previous plan
    (``jobs.running_on``) that are still eligible.  O(N M)."""
    out = np.zeros(ok.shape)
    i = np.nonzero(state.jobs.running_on >= 0)[0]
    m = state.jobs.running_on[i]
    keep = ok[i, m]
    out[i[keep], m[keep]] = c.overhead
    return out


def aging_score(state: FarmState, c: Constants) -> np.ndarray:
    """``AA (Wallclock - Submit_i)`` per job (never negative).  O(N)."""
    return c.aging * np.maximum(state.now - state.jobs.submit, 0.0)


def aging_delta(state: FarmState, c: Constants, ok: np.ndarray) -> np.ndarray:
    """Anti-aging: ``Delta[i, m] =`` :func:`aging_score` on M_Aff_i.  O(N M)."""
    return np.where(ok, aging_score(state, c)[:, None], 0.0)


#: the heuristics after Minimal requirements, in [capannini2007] order
HEURISTICS = {"deadline": deadline_delta, "licenses": license_delta, "input": input_delta,
              "wait": wait_delta, "overhead": overhead_delta, "aging": aging_delta}


def preference_matrix(state: FarmState, constants: Constants | None = None, *,
                      heuristics=tuple(HEURISTICS), ok: np.ndarray | None = None) -> np.ndarray:
    """The Job-Machine matrix ``P`` (N, M) of [capannini2007] section 4: Minimal
    requirements fixes the eligible pairs (``Constants.base`` there, 0
    elsewhere) and each heuristic in ``heuristics`` adds its ``Delta``.
    Every eligible entry is > 0.  ``ok``: the eligibility (N, M) if already
    known (it does not change while a job is in the system), else computed
    here.  O(N M (L + 1))."""
    c = constants or Constants()
    unknown = set(heuristics) - set(HEURISTICS)
    if unknown:
        raise ValueError(f"unknown heuristic(s) {sorted(unknown)}; known: {list(HEURISTICS)}")
    if ok is None:
        ok = eligible(state)
    elif ok.shape != (state.n, state.m):
        raise ValueError(f"eligibility has shape {ok.shape}, expected {(state.n, state.m)}")
    if set(heuristics) == set(HEURISTICS):
        return _fused(state, c, ok)
    p = np.where(ok, c.base, 0.0)
    for name in heuristics:
        p += HEURISTICS[name](state, c, ok)
    return p


def _fused(state: FarmState, c: Constants, ok: np.ndarray) -> np.ndarray:
    """All seven heuristics in one compiled pass (:mod:`epochbench.instances._farm_matrix`);
    the same entries as summing the ``*_delta`` functions, to rounding."""
    from ._farm_matrix import fused_matrix
    from .lazy import readonly        # one compiled version whatever the arrays' read-only flags

    j = state.jobs
    arrays = (readonly(np.asarray(a)) for a in (np.ascontiguousarray(ok), work_left(state), j.deadline,
                                                aging_score(state, c), j.input_size, j.input_location,
                                                j.running_on, license_score(state, c), state.machines.bench,
                                                state.bandwidth))
    ok_, left, deadline, age, size, location, running, lic, bench, bw = arrays
    return fused_matrix(ok_, float(state.now), left, deadline, age, size, location, running, lic, bench, bw,
                        c.base, c.max, c.min, c.k, c.input, c.wait, c.overhead, c.literal_fbar,
                        np.empty((state.n, state.m)))


def mkp_profit(p: np.ndarray) -> np.ndarray:
    """[capannini2007] section 4.2: ``c-bar_i = sum_m p[i, m] / |{m : p[i, m] > 0}|``,
    the mean positive preference of each job (0 for a job no machine can
    run).  O(N M)."""
    p = np.asarray(p, dtype=float)
    pos = p > 0
    cnt = pos.sum(axis=1)
    return np.divide(np.add.reduce(p, axis=1, where=pos), cnt, out=np.zeros(p.shape[0]), where=cnt > 0)


def previous_pairs(state: FarmState, p: np.ndarray | None = None) -> list[list[int]]:
    """The previous plan as [job, machine] pairs (``running_on``), keeping
    only pairs still eligible (``p > 0`` when ``p`` is given)."""
    run = state.jobs.running_on
    pairs = [[int(i), int(run[i])] for i in np.nonzero(run >= 0)[0]]
    return pairs if p is None else [[i, m] for i, m in pairs if p[i, m] > 0]


__all__ = ["Constants", "Machines", "Jobs", "FarmState", "generate_farm", "eligible", "work_left", "nxtime",
           "f1", "deadline_delta", "license_rho", "license_weight", "license_score", "license_delta",
           "transfer_time", "input_delta", "wait_delta", "overhead_delta", "aging_score", "aging_delta",
           "HEURISTICS", "preference_matrix", "mkp_profit", "previous_pairs", "TABLE1_RATIOS"]
