"""Hyper-Erlang distributions of common order and the workload model built
on them ([zhang-comparative] section 2.1, after [jann1997]).

A hyper-Erlang distribution of common order ``n`` with two branches is the
mixture ``p Erlang(n, lambda_1) + (1 - p) Erlang(n, lambda_2)``: with
probability p_i the value is the sum of ``n`` exponentials of rate
lambda_i.  Its k-th moment is ``(n)_k sum_i p_i / lambda_i**k`` with the
rising factorial ``(n)_k = n (n + 1) .. (n + k - 1)``.  [zhang-comparative] section 2.1
fits one to the first three moments of each quantity ("we select the Hyper
Erlang Distribution of Common Order that fits these 3 observed moments"),
the method of its reference [12], [jann1997]:

1. jobs are grouped into classes by size, each class a bin whose upper bound
   is a power of two (1, 2, 3-4, 5-8, ...);
2. per class, the interarrival times (of the class's own jobs) and the
   service times (runtimes) are each fitted by :func:`fit_moments`;
3. a stream is the superposition of the classes' renewal processes, each job
   taking a runtime from its class's fit and a size from its class's sizes
   (their frequencies in the trace: the model gives only the class).

Load is changed by multiplying the interarrival rate and the service time by
separate factors (:func:`epochbench.instances.workloads.scale_arrivals`,
:func:`~epochbench.instances.workloads.scale_runtimes`).  The model is
``epochbench generate workload --model hypererlang --fit TRACE.swf`` or
``--he-params FILE.json`` (the JSON of :func:`fit_trace`, written by
``--he-out``), by default the fit to KTH SP2 built in here
(:data:`KTH_PARAMS`); see :func:`epochbench.instances.workloads.workload`.

References
----------
.. [1] J. Jann, P. Pattnaik, H. Franke, F. Wang, J. Skovira and J. Riordan,
   "Modeling of workload in MPPs", in *Job Scheduling Strategies for
   Parallel Processing (IPPS'97 workshop)*, LNCS 1291, Springer, 1997,
   pp. 95-116.  ([zhang-comparative] reference [12].)
.. [2] Y. Zhang, H. Franke, J. Moreira and A. Sivasubramaniam, [zhang-comparative],
   section 2.1.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from epochbench.instances.checks import is_whole
from epochbench.instances.core import note
from epochbench.instances.lazy import lazy_module

from .generators import _int
from .streams import Stream, _children, _frame, _positive, _round_times, set_load

pd = lazy_module("pandas")   # loaded on first use: listing the generators does not import it

__all__ = ["HyperErlang", "fit_moments", "fit_sample", "size_classes", "fit_trace", "sample_stream",
           "load_params", "hypererlang", "KTH_PARAMS", "MAX_ORDER"]

MAX_ORDER = 1000        # largest common order tried before falling back to two moments
_TOL = 1e-9


def _rising(n: int, k: int) -> float:
    """(n)_k = n (n + 1) .. (n + k - 1)."""
    return float(math.prod(range(n, n + k)))


@dataclass(frozen=True)
class HyperErlang:
    """Two-branch hyper-Erlang of common order ``order``: branch i (prob.
    ``probs[i]``) is Erlang(``order``, ``rates[i]``), i.e. a sum of ``order``
    exponentials of rate ``rates[i]`` (per second).  ``matched``: how many
    moments of the data it reproduces (3, or 2 / 1 for the fallbacks of
    :func:`fit_moments`)."""

    order: int
    probs: tuple
    rates: tuple
    matched: int = 3

    def moment(self, k: int) -> float:
        """E[X**k] = (n)_k sum_i p_i / lambda_i**k."""
        p, lam = np.asarray(self.probs, float), np.asarray(self.rates, float)
        return _rising(self.order, k) * float((p / lam ** k).sum())

    @property
    def mean(self) -> float:
        return self.moment(1)

    @property
    def cv(self) -> float:
        m1 = self.mean
        return math.sqrt(max(self.moment(2) - m1 * m1, 0.0)) / m1 if m1 > 0 else float("nan")

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` draws: a branch by ``probs``, then gamma(order, 1 / rate).
        Vectorised, O(size)."""
        branch = rng.choice(len(self.probs), size=int(size), p=np.asarray(self.probs, float))
        scale = 1.0 / np.asarray(self.rates, float)[branch]
        return rng.gamma(float(self.order), scale)

    def scaled(self, factor: float) -> "HyperErlang":
        """The distribution of ``factor x X`` (rates divided by ``factor``)."""
        return HyperErlang(self.order, self.probs, tuple(float(r) / factor for r in self.rates), self.matched)

    def to_dict(self) -> dict:
        return {"order": int(self.order), "probs": [float(p) for p in self.probs],
                "rates": [float(r) for r in self.rates], "matched": int(self.matched),
                "mean": self.mean, "cv": self.cv}

    @classmethod
    def from_dict(cls, d: dict, source: str = "<dict>") -> "HyperErlang":
        try:
            order, probs, rates = int(d["order"]), tuple(map(float, d["probs"])), tuple(map(float, d["rates"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{source}: a hyper-Erlang needs 'order', 'probs' and 'rates' ({exc})") from None
        if order < 1 or len(probs) != len(rates) or not probs:
            raise ValueError(f"{source}: 'order' must be >= 1 and 'probs' / 'rates' of equal, non-zero length")
        if min(probs) < 0 or abs(sum(probs) - 1) > 1e-6 or not all(r > 0 and math.isfinite(r) for r in rates):
            raise ValueError(f"{source}: 'probs' must be >= 0 summing to 1 and 'rates' positive")
        return cls(order, probs, rates, int(d.get("matched", 3)))


def fit_moments(m1: float, m2: float, m3: float, *, max_order: int = MAX_ORDER) -> HyperErlang:
    """The two-branch hyper-Erlang of common order that has the raw moments
    ``m1, m2, m3`` ([zhang-comparative] section 2.1; [jann1997]'s three-moment fit).

    For an order n, write mu_k = m_k / (n)_k: the branch means a_i = 1 /
    lambda_i and weights p_i form a two-point distribution with moments mu_1,
    mu_2, mu_3.  Such a distribution on positive points exists iff mu_2 >
    mu_1**2 (i.e. CV**2 > 1 / n) and mu_1 mu_3 > mu_2**2 (i.e. m1 m3 / m2**2
    > (n + 2) / (n + 1)); its points are the roots of x**2 - s x + q with s =
    (mu_3 - mu_1 mu_2) / sigma**2 and q = (mu_1 mu_3 - mu_2**2) / sigma**2,
    sigma**2 = mu_2 - mu_1**2, and p_1 = (mu_1 - a_2) / (a_1 - a_2).  The
    order taken is the smallest n <= ``max_order`` for which both hold (our
    reading: the paper fixes no order; the smallest keeps the model
    closest to the hyperexponential of over-dispersive data, n = 1 when CV >
    1 and the third moment is large enough).  If none does (CV near 0, or a
    third moment at the bound m1 m3 = m2**2), the fallback is one Erlang of
    order round(1 / CV**2) (capped) with the mean matched (``matched`` = 2
    when its CV is within 1 % of the data's, else 1).  A fit is taken only
    when its second and third moments are the data's (to 0.1 %): just above
    CV**2 = 1 / n the closed form loses its digits to cancellation (a fit
    of order 90 had a third moment of 8.76 for the data's 1.17), and the
    next order is tried.

    Parameters
    ----------
    m1, m2, m3 : float
        Raw moments E[X], E[X**2], E[X**3] (m1 > 0).
    max_order : int
        Largest order tried.

    Returns
    -------
    HyperErlang

    Notes
    -----
    Cost O(n) for the order found (closed form per order).

    References
    ----------
    .. [1] J. Jann, P. Pattnaik, H. Franke, F. Wang, J. Skovira and J. Riordan,
       "Modeling of workload in MPPs", IPPS'97 workshop on Job Scheduling
       Strategies for Parallel Processing, LNCS 1291, Springer, 1997, pp. 95-116.
    """
    m1, m2, m3 = float(m1), float(m2), float(m3)
    if not (m1 > 0 and m2 > 0 and m3 > 0 and all(map(math.isfinite, (m1, m2, m3)))):
        raise ValueError(f"moments must be positive and finite, got m1={m1!r}, m2={m2!r}, m3={m3!r}")
    # work in units of the mean so that the conditions are scale-free
    r2, r3 = m2 / m1 ** 2, m3 / m1 ** 3
    cv2 = r2 - 1.0
    ratio = r3 / r2 ** 2                                  # m1 m3 / m2^2 >= 1 for any positive variable
    for n in range(1, int(max_order) + 1):
        if not (cv2 > (1.0 + _TOL) / n and ratio > (n + 2) / (n + 1) * (1 + _TOL)):
            continue
        mu1, mu2, mu3 = 1.0 / n, r2 / _rising(n, 2), r3 / _rising(n, 3)
        var = mu2 - mu1 * mu1
        s, q = (mu3 - mu1 * mu2) / var, (mu1 * mu3 - mu2 * mu2) / var
        disc = math.sqrt(max(s * s - 4 * q, 0.0))
        a1, a2 = (s + disc) / 2, (s - disc) / 2
        if not (a2 > 0 and a1 > a2):
            continue
        p1 = min(max((mu1 - a2) / (a1 - a2), 0.0), 1.0)
        if not _reproduces(n, p1, a1, a2, r2, r3):
            continue          # sigma**2 lost its digits to cancellation (CV**2 just above 1 / n)
        return HyperErlang(n, (p1, 1.0 - p1), (1.0 / (a1 * m1), 1.0 / (a2 * m1)), 3)
    n = int(min(max(round(1.0 / cv2), 1), max_order)) if cv2 > 0 else int(max_order)
    ok = cv2 > 0 and abs(math.sqrt(1.0 / n) / math.sqrt(cv2) - 1) <= 0.01   # Erlang(n): CV = 1 / sqrt(n)
    return HyperErlang(n, (1.0,), (n / m1,), 2 if ok else 1)


#: relative error up to which a fit of order n is taken to reproduce the second and third moments
_MOMENT_RTOL = 1e-3


def _reproduces(n: int, p1: float, a1: float, a2: float, r2: float, r3: float) -> bool:
    """The hyper-Erlang of order n with branch means a1, a2 (units of the
    data's mean) and weight p1 has the data's moments r2 = m2 / m1**2 and
    r3 = m3 / m1**3, to :data:`_MOMENT_RTOL`: E[X**k] = (n)_k sum p_i a_i**k."""
    def moment(k):
        return _rising(n, k) * (p1 * a1 ** k + (1.0 - p1) * a2 ** k)
    return abs(moment(2) / r2 - 1) <= _MOMENT_RTOL and abs(moment(3) / r3 - 1) <= _MOMENT_RTOL


def fit_sample(x, *, max_order: int = MAX_ORDER) -> HyperErlang:
    """:func:`fit_moments` on the first three sample moments of ``x`` (values
    >= 0).  Fewer than 3 values, or a zero second moment, give the
    exponential with the sample mean (``matched`` = 1; mean 1 s if that is
    0).  O(len(x))."""
    x = np.asarray(x, dtype=np.float64)
    if x.size and (not np.isfinite(x).all() or x.min() < 0):
        raise ValueError("fit_sample: values must be finite and >= 0")
    m1 = float(x.mean()) if x.size else 0.0
    if x.size < 3 or m1 <= 0 or not (x != x[0]).any():
        return HyperErlang(1, (1.0,), (1.0 / (m1 if m1 > 0 else 1.0),), 1)
    return fit_moments(m1, float((x ** 2).mean()), float((x ** 3).mean()), max_order=max_order)


def size_classes(procs) -> np.ndarray:
    """Class of each job size ([zhang-comparative] section 2.1: "each class is a bin in
    which the upper boundary is a power of 2"): class c holds sizes in
    (2**(c-1), 2**c], class 0 size 1.  O(n)."""
    p = np.asarray(procs, dtype=np.int64)
    if p.size and p.min() < 1:
        raise ValueError("size_classes: sizes must be >= 1")
    return np.ceil(np.log2(p) - 1e-12).astype(np.int64).clip(0)


def fit_trace(jobs: pd.DataFrame, processors: int, *, source: str = "trace",
              max_order: int = MAX_ORDER) -> dict:
    """Fit the hyper-Erlang workload model (module docstring) to a job table
    with ``submit``, ``runtime`` and ``procs`` (jobs with runtime < 0 are
    left out).  Returns a JSON-able dict: ``processors``, ``source``, ``jobs``,
    ``span`` and per class ``cls`` (class number), ``bin`` (smallest and
    largest size), ``jobs``, ``sizes`` / ``probs`` (the sizes of the class
    and their frequencies), ``interarrival`` and ``runtime`` (the fits, as
    :meth:`HyperErlang.to_dict`) and ``moments`` (the trace's first three
    raw moments of both).  A class with one job has no interarrival time: its
    gap is the trace span (the class appears once per span on average).
    O(n log n)."""
    for col in ("submit", "runtime", "procs"):
        if col not in jobs.columns:
            raise ValueError(f"{source}: job table lacks column {col!r}")
    df = jobs[jobs["runtime"].to_numpy(dtype=np.float64) >= 0]
    if len(df) < 2:
        raise ValueError(f"{source}: a hyper-Erlang fit needs at least 2 jobs with known runtimes, got {len(df)}")
    submit = df["submit"].to_numpy(dtype=np.float64)
    runtime = df["runtime"].to_numpy(dtype=np.float64)
    procs = df["procs"].to_numpy(dtype=np.int64)
    cls = size_classes(procs)
    span = float(submit.max() - submit.min())
    out = []
    for c in np.unique(cls):
        sel = cls == c
        t = np.sort(submit[sel])
        gaps = np.diff(t) if t.size > 1 else np.array([max(span, 1.0)])
        sizes, counts = np.unique(procs[sel], return_counts=True)
        run = runtime[sel]
        out.append({"cls": int(c), "bin": [int(sizes.min()), int(sizes.max())], "jobs": int(sel.sum()),
                    "sizes": sizes.tolist(), "probs": (counts / counts.sum()).tolist(),
                    "interarrival": fit_sample(gaps, max_order=max_order).to_dict(),
                    "runtime": fit_sample(run, max_order=max_order).to_dict(),
                    "moments": {"interarrival": [float((gaps ** k).mean()) for k in (1, 2, 3)],
                                "runtime": [float((run ** k).mean()) for k in (1, 2, 3)]}})
    return {"model": "hypererlang", "processors": int(processors), "source": str(source), "jobs": int(len(df)),
            "span": span, "classes": out}


def _json_but_no_object(text: str) -> bool:
    """Whether ``text`` is JSON other than an object (``[1,2]``, ``5``,
    ``null``): read as a file name, it said "cannot read [1,2]"."""
    try:
        return not isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def load_params(spec) -> dict:
    """Model parameters from a dict, a JSON string or a JSON file (as written
    by :func:`fit_trace`); checks every class.  Errors name the source and
    the field."""
    source = "he_params"
    if isinstance(spec, dict):
        d = spec
    else:
        text = str(spec).strip()
        if not text.startswith("{") and not Path(text).exists() and _json_but_no_object(text):
            raise ValueError(f"he_params: {text[:40]!r} is JSON but not an object (the parameters fit_trace "
                             "writes: processors, classes)")
        if not text.startswith("{"):
            source = text
            try:
                text = Path(text).read_text()
            except OSError as exc:
                raise ValueError(f"he_params: cannot read {source}: {exc.strerror}") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: not JSON ({exc.msg})") from None
        except RecursionError:
            raise ValueError(f"{source}: not the parameters fit_trace writes (JSON nested too deep)") from None
    if not isinstance(d, dict) or not d.get("classes"):
        raise ValueError(f"{source}: field 'classes' missing or empty")
    processors = d.get("processors")
    if not is_whole(processors) or processors < 1:      # 4.7 was kept as 4.7, True read as 1
        raise ValueError(f"{source}: field 'processors' missing or not a whole number >= 1, got {processors!r}")
    for i, c in enumerate(d["classes"]):
        where = f"{source}: classes[{i}]"
        for key in ("cls", "interarrival", "runtime", "sizes", "probs"):
            if key not in c:
                raise ValueError(f"{where}: field {key!r} missing")
        if not is_whole(c["cls"]):
            raise ValueError(f"{where}: 'cls' (the class number, the jobs' job_class) must be an integer, "
                             f"got {c['cls']!r}")
        HyperErlang.from_dict(c["interarrival"], f"{where}.interarrival")
        HyperErlang.from_dict(c["runtime"], f"{where}.runtime")
        sizes, probs = np.asarray(c["sizes"]), np.asarray(c["probs"], dtype=float)
        if sizes.shape != probs.shape or not sizes.size or not all(map(is_whole, sizes.tolist())) \
                or sizes.min() < 1 or sizes.max() > processors:
            raise ValueError(f"{where}: 'sizes' must lie in 1..{processors} (whole numbers of processors), "
                             "one 'probs' entry each")
        if probs.min() < 0 or abs(probs.sum() - 1) > 1e-6:
            raise ValueError(f"{where}: 'probs' must be >= 0 and sum to 1")
    return d


def sample_stream(params: dict, n: int, rng: np.random.Generator):
    """``n`` jobs of the fitted model: (submit, runtime, procs, class), in
    submit order, the first arrival at time 0 (times not rounded).

    Each class is a renewal process with its interarrival fit (its first
    arrival one gap after 0); the stream is the first ``n`` arrivals of their
    superposition, shifted so that the first is at 0.  Every class draws ``n x share`` arrivals plus a margin
    (share = its rate over the total); if a class runs out before the n-th
    arrival, all draw twice as many, from the same child generators.
    Runtimes come from the class's runtime fit, sizes from its size
    frequencies.  Vectorised; O(n log n)."""
    p = load_params(params)
    classes = p["classes"]
    gaps = [HyperErlang.from_dict(c["interarrival"]) for c in classes]
    rates = np.array([1.0 / g.mean for g in gaps])
    share = rates / rates.sum()
    kids = rng.spawn(len(classes))
    count = np.ceil(n * share * 1.2).astype(np.int64) + 16
    while True:
        seeds = [np.random.default_rng(k.bit_generator.seed_seq) for k in kids]
        times = [np.cumsum(g.sample(r, int(m))) for g, r, m in zip(gaps, seeds, count)]
        t = np.concatenate(times)
        cls = np.repeat(np.arange(len(classes)), count)
        order = np.argsort(t, kind="stable")[:n]
        if len(order) == n and t[order[-1]] <= min(x[-1] for x in times):
            break
        count = count * 2
    t, cls = t[order], cls[order]
    runtime = np.empty(n)
    procs = np.empty(n, dtype=np.int64)
    for i, c in enumerate(classes):
        sel = np.nonzero(cls == i)[0]
        r = seeds[i]
        runtime[sel] = HyperErlang.from_dict(c["runtime"]).sample(r, sel.size)
        procs[sel] = r.choice(np.asarray(c["sizes"], dtype=np.int64), size=sel.size,
                              p=np.asarray(c["probs"], dtype=float) / np.sum(c["probs"]))
    return t - t[0] if n else t, runtime, procs, np.array([c["cls"] for c in classes], dtype=np.int64)[cls]


# ---- the fit to KTH SP2 (the default model) ------------------------------------------------
#: :func:`fit_trace` of the KTH SP2 trace (Parallel Workloads Archive,
#: KTH-SP2-1996-2.1-cln.swf, 27,992 jobs read by :func:`epochbench.instances.jobs.read_swf`, 100
#: nodes; tests/test_hypererlang.py checks it against a fresh fit): per size
#: class (class, sizes, job counts, interarrival fit, runtime fit), each fit
#: (order, branch probabilities, branch rates per second).  Every fit is of
#: order 1 (hyperexponential): KTH's interarrival times and runtimes have CV
#: 1.1 - 3.3 and heavy third moments.
KTH_CLASSES = (
    (0, [1],
     [9119],
     (1, (0.10543985082247474, 0.8945601491775252),
      (4.6569405878694357e-05, 0.0010052804618656814)),
     (1, (0.11144527098073727, 0.8885547290192627),
      (2.0756004919776554e-05, 0.0002106574269728147))),
    (1, [2],
     [3734],
     (1, (0.17388801921133876, 0.8261119807886612),
      (2.6996445466541262e-05, 0.0006654809881012457)),
     (1, (0.08468009447556613, 0.9153199055244339),
      (2.2116301539520217e-05, 0.0005587452288783321))),
    (2, [3, 4],
     [1350, 2926],
     (1, (0.10877318698128856, 0.8912268130187114),
      (2.4180040239593052e-05, 0.00040157404834601884)),
     (1, (0.0858019670486831, 0.9141980329513169),
      (2.719234450165876e-05, 0.0006985721163451686))),
    (3, [5, 6, 7, 8],
     [1098, 671, 297, 2658],
     (1, (0.31407020236243044, 0.6859297976375696),
      (5.5087413416391496e-05, 0.0017697864102253693)),
     (1, (0.1899200169777686, 0.8100799830222314),
      (2.7178701835520523e-05, 0.00022262597658734623))),
    (4, [9, 10, 11, 12, 13, 14, 15, 16],
     [885, 597, 46, 298, 41, 33, 287, 1374],
     (1, (0.3240246145859741, 0.6759753854140259),
      (4.328661045519669e-05, 0.0011432446509468323)),
     (1, (0.1667146629771194, 0.8332853370228805),
      (2.3938967381999996e-05, 0.0001895668888323287))),
    (5, [17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32],
     [149, 25, 3, 191, 10, 13, 2, 152, 144, 3, 3, 21, 1, 65, 3, 653],
     (1, (0.31501831933584157, 0.6849816806641584),
      (1.872753161373853e-05, 0.0002147733684328221)),
     (1, (0.16359295219550607, 0.8364070478044939),
      (2.3302653475270367e-05, 0.00028218290047756753))),
    (6, list(range(33, 65)),
     [50, 7, 20, 70, 3, 28, 3, 137, 4, 6, 4, 2, 27, 4, 2, 50, 24, 55, 1, 3, 4, 3, 3, 6, 1, 2, 1, 38, 1, 5, 1, 259],
     (1, (0.0653203238849836, 0.9346796761150165),
      (4.311576231917845e-06, 4.726184435421941e-05)),
     (1, (0.1208755079672621, 0.8791244920327379),
      (2.5280798604393907e-05, 0.0003986079565043751))),
    (7, list(range(65, 91)) + [93, 94, 96, 97, 98, 99, 100],
     [16, 4, 1, 1, 1, 13, 1, 5, 1, 3, 3, 2, 1, 2, 2, 161, 2, 7, 1, 30, 4, 1, 2, 4, 1, 12, 1, 15, 6, 1, 9, 2, 1],
     (1, (0.06358284246386217, 0.9364171575361379),
      (1.3446972189935683e-06, 2.3887925765429353e-05)),
     (1, (0.6526217852292867, 0.3473782147707133),
      (0.00011155307890392191, 0.0002531495180590084))),
)
KTH_SOURCE, KTH_NODES, KTH_JOBS, KTH_SPAN = "KTH-SP2-1996-2.1-cln.swf (built in)", 100, 27992, 28763768.0


def _builtin(classes, processors: int, source: str, jobs: int, span: float) -> dict:
    """Parameters in the form of :func:`fit_trace` from a compact table."""
    out = []
    for cls, sizes, counts, ia, rt in classes:
        total = sum(counts)
        out.append({"cls": cls, "bin": [min(sizes), max(sizes)], "jobs": total, "sizes": list(sizes),
                    "probs": [c / total for c in counts],
                    "interarrival": HyperErlang(ia[0], ia[1], ia[2]).to_dict(),
                    "runtime": HyperErlang(rt[0], rt[1], rt[2]).to_dict()})
    return {"model": "hypererlang", "processors": processors, "source": source, "jobs": jobs, "span": span,
            "classes": out}


#: The default parameters of :func:`hypererlang`: the fit to KTH SP2.
KTH_PARAMS = _builtin(KTH_CLASSES, KTH_NODES, KTH_SOURCE, KTH_JOBS, KTH_SPAN)


def hypererlang(n: int = 1000, *, seed=0, fit: str | None = None, params=None, processors: int | None = None,
                load: float | None = None):
    """Hyper-Erlang job stream ([zhang-comparative] section 2.1): the model of
    :func:`fit_trace` fitted to the SWF / CSV / Parquet trace ``fit``, or
    given as ``params`` (dict, JSON string or JSON file; at most one of the
    two; neither: :data:`KTH_PARAMS`, the fit to KTH SP2), sampled by
    :func:`sample_stream`.

    Times are whole seconds (runtimes rounded up, at least 1 s); estimates
    are exact (the model has none: see
    :func:`epochbench.instances.workloads.with_estimates`).  ``processors``: the
    machine (default: the trace's / the parameters'); it must hold the
    largest size.  ``load``: if given, arrivals are rescaled to that
    :func:`~epochbench.instances.workloads.offered_load` (otherwise the fitted rates).
    ``meta["fit"]`` holds the parameters, and ``dropped`` there the jobs of
    ``fit`` that the reader dropped by reason (a job wider than the trace's
    machine, a negative runtime: the fit is of the others).  Cost O(n log n)
    plus the fit."""
    n = _int("n", n, 1)
    if fit is not None and params is not None:
        raise ValueError("hypererlang: give one of fit (a trace) or he_params (fitted parameters), not both")
    if fit is not None:
        from epochbench.instances.jobs import load_workload   # lazy: instances does not depend on sim at import time

        path = Path(fit)
        if not path.exists():
            raise ValueError(f"fit: trace {path} does not exist")
        w = load_workload(path)
        p = fit_trace(w.jobs, int(w.capacity[0]), source=path.name)
        if w.dropped:         # the reader's drops (too wide, negative runtime): the fit is of the rest, said so
            p["dropped"] = {str(k): int(v) for k, v in w.dropped.items()}
            note(f"fit: {path}: the model is fitted to {len(w.jobs)} of its jobs; its reader dropped "
                 + ", ".join(f"{k} {v}" for k, v in p["dropped"].items()))
    else:
        p = load_params(KTH_PARAMS if params is None else params)
    nodes = int(p["processors"]) if processors is None else _int("processors", processors, 1)
    largest = max(max(c["sizes"]) for c in p["classes"])
    if largest > nodes:
        raise ValueError(f"processors: the model has jobs of {largest} processors, more than processors={nodes}")
    rng_jobs, *_ = _children(seed)
    submit, runtime, procs, cls = sample_stream(p, n, rng_jobs)
    runtime = np.maximum(np.ceil(runtime), 1.0)
    df = _frame(np.arange(1, n + 1), submit, runtime, runtime, procs, size_class=cls)
    cap = np.array([nodes], dtype=np.int64)
    if load is not None:
        df = set_load(df, cap, _positive("load", load))
    return Stream(_round_times(df), cap, dict(model="hypererlang", params=dict(
        n=n, processors=nodes, fit=None if fit is None else str(fit), load=load), fit=p))
