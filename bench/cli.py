"""``epochbench``: generate, solve, score, list, validate, bench, simulate, experiment."""
from __future__ import annotations

import argparse
import contextlib
import gzip
import inspect
import json
import os
import sys
import zlib
from pathlib import Path

from epochbench.instances import InfeasibleSolution, InstanceError



class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line on stderr and exit
    status 2: ``epochbench solve: error: argument --time-limit: ...``
    (argparse's own prints the usage first).  Subparsers inherit it."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def _number(text: str, kind: type, ok, what: str):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"{what}, got {text}")
    return value


def _finite(x: float) -> bool:
    return x == x and abs(x) != float("inf")


def positive_float(text: str) -> float:
    """argparse ``type``: a finite number > 0 (seconds, rates)."""
    return _number(text, float, lambda x: _finite(x) and x > 0, "must be a positive finite number")


def nonnegative_float(text: str) -> float:
    """argparse ``type``: a finite number >= 0."""
    return _number(text, float, lambda x: _finite(x) and x >= 0, "must be a finite number >= 0")


def positive_int(text: str) -> int:
    """argparse ``type``: an integer >= 1."""
    return _number(text, int, lambda x: x >= 1, "must be an integer >= 1")


def nonnegative_int(text: str) -> int:
    """argparse ``type``: an integer >= 0."""
    return _number(text, int, lambda x: x >= 0, "must be an integer >= 0")


#: option dest -> its argparse ``type`` in every command but ``generate``
#: (whose parameters check themselves, :func:`epochbench.instances.generators.Param.parse`);
#: applied by :func:`_strict_types`, so options that other modules add
#: (``epochbench.sim.gang``, ``epochbench.sim.farm``) are covered too
OPTION_TYPES = {
    "time_limit": positive_float, "threads": positive_int, "count": positive_int, "seeds": positive_int,
    "jobs": positive_int, "nodes": positive_int, "min_candidates": positive_int,
    "starvation_limit": nonnegative_float, "small_threshold": nonnegative_int, "seed": nonnegative_int,
    "farm_jobs": positive_int, "machines": positive_int, "licenses": positive_int,
    "interarrival": positive_float, "exact_time_limit": positive_float, "oracle_every": nonnegative_int,
    "mpl": positive_int, "slice": positive_float, "switch_overhead": nonnegative_float,
    "migration_cost": nonnegative_float, "migration_limit": nonnegative_int,
}


def _strict_types(parser: argparse.ArgumentParser, skip=("generate",)) -> None:
    """Give every plain ``int`` / ``float`` option named in :data:`OPTION_TYPES`
    its validator, in ``parser`` and its subcommands (not those in ``skip``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                if name not in skip:
                    _strict_types(subparser, skip)
        elif action.dest in OPTION_TYPES and action.type in (int, float):
            action.type = OPTION_TYPES[action.dest]


def _add_generate(sub) -> None:
    from epochbench.instances.generators import GENERATOR_PARAMS, load_generators
    GENERATORS = load_generators()
    p = sub.add_parser("generate", help="write a family of instances to a folder",
                       description="Generate an instance family (deterministic by --seed) into --out: "
                                   "one JSON file per instance plus manifest.json.")
    gens = p.add_subparsers(dest="generator", required=True, metavar="GENERATOR")
    for name, func in GENERATORS.items():
        doc = inspect.getdoc(func) or ""
        g = gens.add_parser(name, help=doc.split("\n")[0], description=doc)
        g.add_argument("--out", required=True, type=Path, help="output folder")
        for pname, par in GENERATOR_PARAMS[name].items():
            opt = "--" + pname.replace("_", "-")
            if par.type is bool:
                g.add_argument(opt, dest=pname, action=argparse.BooleanOptionalAction, default=None,
                               help=f"{par.help} (default {par.default})")
            else:
                g.add_argument(opt, dest=pname, type=par.parse, choices=par.choices, default=None,
                               help=f"{par.help} (default {par.default})")


def cmd_generate(args) -> int:
    from epochbench.instances.generators import GENERATOR_PARAMS, write_generated
    params = {k: getattr(args, k) for k in GENERATOR_PARAMS[args.generator]}
    folder = write_generated(args.generator, args.out, **params)
    manifest = folder / "manifest.json"
    if folder.is_dir() and manifest.exists():
        count = len(json.loads(manifest.read_text())["instances"])
        print(f"wrote {count} {args.generator} instance(s) to {folder}")
    else:
        print(f"wrote {args.generator} to {folder}")
    return 0


#: keyword arguments set by their own options, never by --param
_OWN_OPTIONS = ("time_limit", "threads")


def param_value(text: str):
    """A ``--param`` value: int, then float, then bool (true / false), else
    the string itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_params(items) -> dict:
    """``--param NAME=VALUE`` options (repeatable) as a dict; ValueError on a
    malformed or repeated one."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name.isidentifier():
            raise ValueError(f"--param {item!r}: expected NAME=VALUE")
        if name in out:
            raise ValueError(f"--param {name} given twice")
        out[name] = param_value(value)
    return out


def accepted_params(func) -> tuple[list[str], bool]:
    """The keyword parameters ``func`` takes after the instance (those set
    by their own options left out), and whether it takes ``**kwargs``."""
    sig = inspect.signature(func).parameters.values()
    named = [p.name for p in list(sig)[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
             and p.name not in _OWN_OPTIONS]
    return named, any(p.kind is p.VAR_KEYWORD for p in sig)


def check_params(func, params: dict, label: str) -> dict:
    """``params`` if ``func`` accepts every one (:func:`inspect.signature`),
    else ValueError naming the first unknown one and those it accepts."""
    named, var = accepted_params(func)
    for name in params:
        if name in _OWN_OPTIONS:
            raise ValueError(f"--param {name}: set it with --{name.replace('_', '-')}")
        if name not in named and not var:
            raise ValueError(f"--param {name}: {label} has no parameter {name!r}; it accepts: "
                             + (", ".join(named) or "none"))
    return params


def method_params(kind: str, methods, params: dict) -> dict:
    """Per method, the ``params`` it accepts; ValueError for a parameter no
    method of ``methods`` accepts."""
    from epochbench.instances.registry import get
    if not params:
        return {}
    out, takes = {}, {}
    for name in methods:
        named, var = accepted_params(get(kind, name).func)
        out[name] = {p: v for p, v in params.items() if var or p in named}
        takes[name] = named
    for p in params:
        if p in _OWN_OPTIONS:
            raise ValueError(f"--param {p}: set it with --{p.replace('_', '-')}")
        if not any(p in got for got in out.values()):
            raise ValueError(f"--param {p}: no method of {', '.join(methods)} has a parameter {p!r}; accepted: "
                             + "; ".join(f"{m}: {', '.join(a) or 'none'}" for m, a in takes.items()))
    return out


def cmd_solve(args) -> int:
    from epochbench.instances import load_instance
    from epochbench.instances.registry import get, solve
    inst = load_instance(args.file)
    m = get(inst.kind, args.method)
    params = {"time_limit": args.time_limit, "threads": args.threads} if m.exact else {}
    params.update(check_params(m.func, parse_params(args.param), f"{inst.kind} method {args.method!r}"))
    res = solve(inst, args.method, **params)
    out = res.to_dict()
    out["instance"] = inst.name
    if args.json:
        print(json.dumps(out))
    else:
        from epochbench.instances.core import DECISION_KEYS
        key = DECISION_KEYS.get(inst.kind, "decision")
        print(f"{inst.name}: {args.method} {res.status} value={res.value:g} "
              f"bound={'-' if res.bound is None else f'{res.bound:g}'} {1000 * res.seconds:.3f} ms")
        print(f"{key}: {out[key]}")
    return 0


def _instances_from(path: Path):
    from epochbench.instances import load_instance, read_family
    return read_family(path) if path.is_dir() else [load_instance(path)]


def cmd_score(args) -> int:
    from .score import SolverDisagreement, format_table, read_references, score, summarize
    methods = [m for part in args.methods for m in part.split(",") if m]
    refs = read_references(args.reference)
    insts = _instances_from(args.dir)
    try:
        kinds = {inst.kind for inst in insts}
        params = {kind: method_params(kind, methods, parse_params(args.param)) for kind in kinds}
        table = score(insts, methods, time_limit=args.time_limit, threads=args.threads, references=refs,
                      params=params,
                      progress=(lambda i, inst: print(f"  [{i}/{len(insts)}] {inst.name}", file=sys.stderr))
                      if args.verbose else None)
    except SolverDisagreement as exc:
        print(f"epochbench score: disagreement: {exc}", file=sys.stderr)
        return 1
    out = args.out or (args.dir if args.dir.is_dir() else args.dir.parent) / "scores"
    out.parent.mkdir(parents=True, exist_ok=True)
    from epochbench.instances.files import atomic_path
    with atomic_path(f"{out}.csv") as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(f"{out}.parquet") as tmp:
        table.to_parquet(tmp, index=False)
    print(format_table(summarize(table)))
    print(f"wrote {out}.csv and {out}.parquet ({len(table)} rows)")
    return 0


def cmd_list(args) -> int:
    from epochbench.instances.registry import methods
    fams: dict[str, list] = {}
    for m in methods():
        fams.setdefault(m.family, []).append(m)
    for fam, ms in fams.items():
        print(f"{fam}:")
        for m in ms:
            doc = (inspect.getdoc(m.func) or "").split("\n")[0]
            print(f"  {m.name:<12} {m.kind:<9} {doc}" + ("" if m.origin == "builtin" else f" [{m.origin}]"))
    return 0


def cmd_validate(args) -> int:
    from .methods import import_function
    from .score import SolverDisagreement
    from .validate import validate, verdict_table
    func = import_function(args.function)
    params = check_params(func, parse_params(args.param), args.function)
    if params:
        import functools
        func = functools.wraps(func)(functools.partial(func, **params))
    try:
        v = validate(func, args.family, count=args.count, seed=args.seed, label=args.function,
                     time_limit=args.time_limit)
    except SolverDisagreement as exc:
        print(f"epochbench validate: disagreement: {exc}", file=sys.stderr)
        return 1
    print(verdict_table(v))
    for f in v.failures:
        print(f"FAIL {f}")
    print("verdict: " + ("PASS" if v.ok else f"FAIL ({len(v.failures)} failing instance(s))"))
    return 0 if v.ok else 1


def cmd_bench(args) -> int:
    import pytest
    from .benchmarks.plugin import HERE
    argv = ["--benchmark", "-q", "-p", "no:cacheprovider", "-p", "epochbench.benchmarks.plugin",
            "-o", "python_files=bench_*.py", "--rootdir", str(HERE), "--results", str(Path("results").resolve()),
            str(HERE)]
    if args.quick:
        argv.append("--quick")
    argv += args.pytest_args
    return int(pytest.main(argv))


def cmd_experiment(args) -> int:
    from .experiments import Options, load_experiments, run_experiment
    if args.name == "list":
        for name, exp in sorted(load_experiments().items()):
            print(f"  {name:<18} {exp.help}")
        return 0
    opts = Options(quick=args.quick, jobs=args.jobs, seeds=args.seeds, out=args.out,
                   progress=not args.quiet)
    df, table = run_experiment(args.name, opts)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    png = args.out / f"{args.name}.png"
    print(f"wrote {args.out / (args.name + '.csv')} ({len(df)} rows)"
          + (f" and {png}" if png.exists() else ""))
    return 0


class _Progress:
    """Progress line on stderr for long simulations: shown only on a
    terminal, after 2 s, refreshed by the engine about twice a second; off
    with ``--quiet``."""

    def __init__(self, total: int, enabled: bool):
        import time
        self.total, self.enabled, self.clock = total, enabled, time.perf_counter
        self.t0 = self.clock()
        self.shown = False

    def __call__(self, arrived: int, now: float) -> None:
        if self.enabled and self.clock() - self.t0 > 2:
            self.shown = True
            pct = 100 * arrived / max(self.total, 1)
            print(f"\r  {arrived:,}/{self.total:,} jobs arrived ({pct:.0f}%), t = {now:,.0f} s",
                  end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.shown:
            print(file=sys.stderr)


def _simulate_farm(args) -> int:
    """``simulate --machine farm``: seed 003's farm, generated (sim/farm.py)."""
    if args.workload:
        raise ValueError("--machine farm generates its own stream (seed 003 section 6); drop --workload")
    from epochbench.sim.farm import run_farm_from_args
    report = run_farm_from_args(args)
    if args.json:
        print(json.dumps(report, default=_json_default))
    else:
        print(f"farm: policy {report['policy']} {report['options']}, {report['seconds']:.1f} s")
        for key, val in report["metrics"].items():
            print(f"  {key:<16} {val:.6g}" if isinstance(val, float) else f"  {key:<16} {val}")
    return 0


GANG_POLICIES = ("gs", "bgs", "mgs", "mbgs")


def cmd_simulate(args) -> int:
    if args.machine == "farm":
        return _simulate_farm(args)
    if not args.workload:
        raise ValueError("--workload is required (except with --machine farm)")
    from epochbench.instances.jobs import load_workload
    kw = {"nodes": args.nodes} if args.nodes else {}
    if args.no_kill:
        kw["kill_at_estimate"] = False
    workload = load_workload(args.workload, **kw)
    gang = args.machine == "gang" or args.policy in GANG_POLICIES
    res, metrics = (_run_gang if gang else _run_pool)(args, workload)
    report = {"workload": str(args.workload), "policy": res.policy, "options": res.options,
              "engine": res.engine, "capacity": workload.capacity.tolist(), "jobs": len(workload.jobs),
              "dropped": workload.dropped, "kill_at_estimate": workload.kill_at_estimate,
              "seconds": res.seconds, "jobs_per_second": res.jobs_per_second, "passes": res.passes,
              "metrics": metrics}
    if args.out:
        from epochbench.sim.metrics import per_job
        args.out.mkdir(parents=True, exist_ok=True)
        extra = per_job(res.jobs, workload)
        jobs = res.jobs.join(extra[[c for c in extra.columns if c not in res.jobs.columns]])
        from epochbench.instances.files import atomic_path, write_text
        with atomic_path(args.out / "jobs.csv") as tmp:
            jobs.to_csv(tmp, index=False)
        write_text(args.out / "report.json", json.dumps(report, indent=1, default=_json_default))
    if args.json:
        print(json.dumps(report, default=_json_default))
    else:
        print(f"{args.workload}: {len(workload.jobs)} jobs on {workload.capacity.tolist()}, policy "
              f"{res.policy} ({res.engine} engine), {res.seconds:.3f} s, {res.jobs_per_second:,.0f} jobs/s")
        if workload.dropped:
            print("dropped: " + ", ".join(f"{k} {v}" for k, v in workload.dropped.items()))
        width = max(map(len, metrics))
        for key, val in metrics.items():
            print(f"  {key:<{width}}  {val:.6g}" if isinstance(val, float) else f"  {key:<{width}}  {val}")
    return 0


def _run_pool(args, workload):
    """The space-shared policies (sim.policies, sim.backfill)."""
    from epochbench.sim.engine import simulate
    from epochbench.sim.metrics import summarize
    from epochbench.sim.variants import variant_options
    options = {"starvation_limit": args.starvation_limit} if args.policy == "nonfcfs" else {}
    options.update(variant_options(args))
    progress = _Progress(len(workload.jobs), sys.stderr.isatty() and not args.quiet)
    policy, recorder, kw = args.policy, None, {"selector": args.selector, **options}
    params = parse_params(args.param)
    if params:
        kw["selector_options"] = _selector_params(args.policy, kw, params)
    if args.record_epochs:
        from epochbench.sim.policies import make
        from epochbench.sim.record import EpochRecorder
        policy, kw = make(args.policy, **kw), {}
        recorder = EpochRecorder(policy, min_candidates=args.min_candidates)
    res = simulate(workload.jobs, workload.capacity, policy, on_pass=recorder,
                   progress=progress if progress.enabled else None, **kw)
    progress.close()
    if recorder is not None:
        recorder.write(args.record_epochs, workload=str(args.workload))
        print(f"recorded {len(recorder.instances)} selection step(s) of {res.passes} pass(es) in "
              f"{args.record_epochs}; score them with: epochbench score {args.record_epochs} "
              f"--methods recorded,cpsat", file=sys.stderr)
    return res, summarize(res.jobs, workload, small_threshold=args.small_threshold)


def _selector_params(policy: str, kw: dict, params: dict) -> dict:
    """``--param`` of ``simulate``: options of the policy's packing selector
    (bl-easy's BL, bb-easy's BB, ``--selector``'s), checked against it."""
    from epochbench.instances.registry import get
    from epochbench.sim.policies import make
    selector = getattr(make(policy, **kw), "selector", None)
    if selector is None:
        raise ValueError(f"--param: policy {policy!r} has no packing selector to pass it to "
                         "(use bl-easy, bb-easy, los or --selector)")
    return check_params(get("packing", selector).func, params, f"selector {selector!r} of {policy}")


def _run_gang(args, workload):
    """Gang scheduling on the Ousterhout matrix (sim.gang, seed 004 sections 5-6)."""
    from epochbench.sim.gang import gang_options_from_args, simulate_gang, summarize_gang
    if args.policy not in GANG_POLICIES:
        raise ValueError(f"--machine gang takes the policies {', '.join(GANG_POLICIES)}, not {args.policy!r}")
    if args.selector:
        raise ValueError("--selector applies to the space-shared policies only")
    recorder = None
    if args.record_epochs:
        from epochbench.sim.record import GangRecorder
        recorder = GangRecorder(min_candidates=args.min_candidates)
    res = simulate_gang(workload.jobs, workload.capacity, args.policy, recorder=recorder,
                        **gang_options_from_args(args))
    if recorder is not None:
        recorder.write(args.record_epochs, workload=str(args.workload))
        print(f"recorded {len(recorder.instances)} row-filling step(s) of {res.passes} pass(es) in "
              f"{args.record_epochs}; score them with: epochbench score {args.record_epochs} "
              f"--methods recorded,cpsat", file=sys.stderr)
    return res, summarize_gang(res, workload, small_threshold=args.small_threshold)


def _json_default(obj):
    import numpy as np
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="epochbench", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    _add_generate(sub)

    s = sub.add_parser("solve", help="solve one instance file with one method")
    s.add_argument("file", type=Path)
    s.add_argument("--method", required=True)
    s.add_argument("--time-limit", type=float, default=10.0, help="seconds, exact methods (default 10)")
    s.add_argument("--threads", type=int, default=1, help="solver threads, exact methods (default 1)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="keyword argument of the method (repeatable; int, float, true/false or text), e.g. --param window=2")

    c = sub.add_parser("score", help="score methods on a family folder: CSV, Parquet, summary",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Run METHODS on every instance of DIR, check every answer and measure "
                                   "each gap |ref - value| / |ref|\nagainst the strongest reference: a "
                                   "proven optimum, a best-known value, a valid bound, else 'no bound'\n"
                                   "(gap_kind and ref_source say which).",
                       epilog="--reference FILE (repeatable): CSV with a column 'instance', an optional "
                              "column 'dataset'\n(matched against the instance's meta 'dataset'; without "
                              "it the instance name alone matches)\nand one or more of 'optimum', "
                              "'best_known', 'lower_bound', 'upper_bound', in the data set's\nunits (as "
                              "score prints them); empty cells mean unknown.  Example:\n"
                              "    dataset,instance,optimum,best_known\n"
                              "    orlib-mknapcb,5.100-00,24381,\n"
                              "    ,my-instance-3,,1250")
    c.add_argument("dir", type=Path, help="family folder (or one instance file)")
    c.add_argument("--methods", nargs="+", required=True, help="comma- or space-separated method names")
    c.add_argument("--time-limit", type=float, default=10.0)
    c.add_argument("--threads", type=int, default=1)
    c.add_argument("--out", type=Path, help="output prefix (default DIR/scores)")
    c.add_argument("--reference", type=Path, action="append", default=[], metavar="FILE",
                   help="results file of reference values (CSV: instance[, dataset], optimum / best_known / "
                        "lower_bound / upper_bound); repeatable; see below")
    c.add_argument("-v", "--verbose", action="store_true")
    c.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="keyword argument of the methods that take it (repeatable; int, float, true/false or text), e.g. --param window=2")

    sub.add_parser("list", help="registered methods per family")

    v = sub.add_parser("validate", help="check a user's heuristic for feasibility, gap and time")
    v.add_argument("function", help="MODULE:FUNCTION taking an instance, returning job indices")
    v.add_argument("--family", default="packing", choices=["packing", "epochs"])
    v.add_argument("--count", type=int, default=30, help="random instances besides the edge cases")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--time-limit", type=float, default=10.0)
    v.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="keyword argument of FUNCTION (repeatable; int, float, true/false or text), e.g. --param window=2")

    m = sub.add_parser("simulate", help="replay a job stream under a scheduling policy",
                       description="Event-driven simulation of a job stream (SWF, CSV or Parquet) on a "
                                   "space-shared machine; prints the metrics, writes DIR/jobs.csv and "
                                   "DIR/report.json with --out.")
    m.add_argument("--workload", type=Path, help=".swf, .swf.gz, .csv or .parquet (not with --machine farm)")
    m.add_argument("--machine", choices=["pool", "gang", "farm"], default="pool",
                   help="pool: space-shared K resources (default); gang: Ousterhout matrix (seed 004, "
                        "implied by the gs/bgs/mgs/mbgs policies); farm: seed 003 farm with licenses")
    m.add_argument("--policy", required=True,
                   help="fcfs, nonfcfs, easy, conservative, ff-easy, bl-easy, bb-easy, los, ff-cons, "
                        "fcfs-bf, sjf-bf, bfit-bf, wfit-bf, easy-sjf, easy-xfactor, slack-bf, threshold-bf, "
                        "multi-queue; gang: gs, bgs, mgs, mbgs; farm: cs-i-p, "
                        "cs-i-np, cs-ni-p, cs-ni-np, edf, easy, bf-rm, bf-unrm")
    m.add_argument("--record-epochs", type=Path, metavar="DIR",
                   help="save every selection step as a packing instance with the policy's choice "
                        "(meta.choice) in DIR; score with 'epochbench score DIR --methods recorded,...' "
                        "(gang policies: every Schedule and FillMatrix row, sim.record.GangRecorder)")
    m.add_argument("--min-candidates", type=int, default=1,
                   help="--record-epochs: skip steps with fewer candidates (default 1)")
    m.add_argument("--nodes", type=int, help="machine size (overrides the SWF header)")
    m.add_argument("--selector", help="packing method choosing each start set (oracle policy), e.g. cpsat")
    m.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="option of the policy's packing selector (bl-easy, bb-easy, --selector) (repeatable; int, float, true/false or text), e.g. --param window=2")
    m.add_argument("--starvation-limit", type=float, default=86400.0, help="nonfcfs: seconds (default 24 h)")
    m.add_argument("--no-kill", action="store_true", help="let jobs run past their estimate")
    m.add_argument("--small-threshold", type=int, default=32, help="nodes; small vs large jobs (default 32)")
    m.add_argument("--out", type=Path, help="folder for jobs.csv and report.json")
    m.add_argument("--json", action="store_true", help="print the report as one JSON object")
    m.add_argument("--quiet", action="store_true", help="no progress line")
    from epochbench.sim.farm import add_farm_arguments
    from epochbench.sim.gang import add_gang_arguments
    from epochbench.sim.variants import add_variant_arguments
    add_variant_arguments(m)
    add_gang_arguments(m)
    add_farm_arguments(m)

    e = sub.add_parser("experiment", help="rerun a seed paper's experiment: CSV, PNG and table",
                       description="Run experiment NAME (`epochbench experiment list` lists them): "
                                   "independent runs in parallel processes, one tidy row per run in "
                                   "OUT/NAME.csv, a figure in OUT/NAME.png, the summary table printed.")
    e.add_argument("name", help="experiment name, or 'list'")
    e.add_argument("--quick", action="store_true", help="the small version (under 2 minutes)")
    e.add_argument("--jobs", type=int, help="worker processes (default: all cores; 1 for timing runs)")
    e.add_argument("--seeds", type=int, help="repetitions per point (default: the experiment's)")
    e.add_argument("--out", type=Path, default=Path("results"), help="output folder (default results/)")
    e.add_argument("--quiet", action="store_true", help="no progress lines")

    b = sub.add_parser("bench", help="run the benchmark suite (pytest --benchmark) and print its table")
    b.add_argument("--quick", action="store_true", help="small sizes and short time limits")
    b.add_argument("pytest_args", nargs=argparse.REMAINDER, help="more pytest arguments")
    _strict_types(p)
    return p


COMMANDS = {"generate": cmd_generate, "solve": cmd_solve, "score": cmd_score, "list": cmd_list,
            "validate": cmd_validate, "bench": cmd_bench, "simulate": cmd_simulate,
            "experiment": cmd_experiment}


#: exceptions that mean bad input: one line on stderr, exit status 2
USER_ERRORS = (InstanceError, InfeasibleSolution, KeyError, ValueError,   # ValueError: UnicodeDecodeError,
               FileNotFoundError, FileExistsError, NotADirectoryError,        # pyarrow's ArrowInvalid
               IsADirectoryError, PermissionError, EOFError, zlib.error, gzip.BadGzipFile)


def _error_line(command: str, exc: BaseException) -> str:
    """``epochbench COMMAND: error: MESSAGE`` on one line; an ``OSError``
    names its file."""
    if isinstance(exc, KeyError) and exc.args:
        msg = exc.args[0]
    elif isinstance(exc, OSError) and exc.filename is not None:
        msg = f"{exc.filename}: {exc.strerror or exc}"
    else:
        msg = exc
    return f"epochbench {command}: error: {' '.join(str(msg).split())}"


def run_command(args) -> int:
    """Run the parsed command; bad input becomes one line and status 2."""
    try:
        with _output_locks(args):
            return COMMANDS[args.command](args)
    except USER_ERRORS as exc:
        print(_error_line(args.command, exc), file=sys.stderr)
        return 2


def _folder_of(path: Path) -> Path:
    """The folder an ``--out`` writes into: itself, or its parent when it
    names a file (has a suffix and is not an existing folder)."""
    return path.parent if path.suffix and not path.is_dir() else path


def _score_folder(args) -> Path:
    if args.out:
        return args.out.parent
    return args.dir if args.dir.is_dir() else args.dir.parent


#: command -> the output folders it writes (locked while it runs; see instances.files)
OUTPUT_FOLDERS = {
    "generate": lambda a: [_folder_of(a.out)],
    "score": lambda a: [_score_folder(a)],
    "simulate": lambda a: [p for p in (a.out, a.record_epochs) if p],
    "experiment": lambda a: [] if a.name == "list" else [a.out],
    "bench": lambda a: [Path("results")],
}


@contextlib.contextmanager
def _output_locks(args):
    """Hold every output folder of ``args.command`` while it runs (a second
    run on the same folder fails with one line, status 2)."""
    from epochbench.instances.files import output_lock
    with contextlib.ExitStack() as stack:
        for folder in OUTPUT_FOLDERS.get(args.command, lambda a: [])(args):
            stack.enter_context(output_lock(folder))
        yield


def _quiet_stdout() -> None:
    """After a write into a closed pipe (``epochbench list | head -1``):
    point stdout at /dev/null so that the flush at exit raises nothing
    (the recipe of the Python docs, signal module, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)


def main(argv=None) -> int:
    """The ``epochbench`` entry point; returns the exit status.

    Bad input: one line, status 2 (:func:`run_command`).  Ctrl-C: one line
    (``interrupted``, or what the command says it saved), status 130.
    Output into a closed pipe: quiet, status 141 (128 + SIGPIPE, as a
    shell reports a tool that SIGPIPE ended)."""
    command = "epochbench"
    try:
        args = build_parser().parse_args(argv)
        command = f"epochbench {args.command}"
        status = run_command(args)
        sys.stdout.flush()
        return status
    except KeyboardInterrupt as exc:
        print(f"{command}: {exc.args[0] if exc.args else 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141


if __name__ == "__main__":
    sys.exit(main())
