"""``epochbench``: generate, solve, score, list, validate, bench, simulate, experiment."""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from pathlib import Path

from instances import InfeasibleSolution, InstanceError

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _add_generate(sub) -> None:
    from instances.generators import GENERATOR_PARAMS, load_generators
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
                g.add_argument(opt, dest=pname, type=par.type, choices=par.choices, default=None,
                               help=f"{par.help} (default {par.default})")


def cmd_generate(args) -> int:
    from instances.generators import GENERATOR_PARAMS, write_generated
    params = {k: getattr(args, k) for k in GENERATOR_PARAMS[args.generator]}
    folder = write_generated(args.generator, args.out, **params)
    manifest = folder / "manifest.json"
    if folder.is_dir() and manifest.exists():
        count = len(json.loads(manifest.read_text())["instances"])
        print(f"wrote {count} {args.generator} instance(s) to {folder}")
    else:
        print(f"wrote {args.generator} to {folder}")
    return 0


def cmd_solve(args) -> int:
    from instances import load_instance
    from instances.registry import get, solve
    inst = load_instance(args.file)
    m = get(inst.kind, args.method)
    params = {"time_limit": args.time_limit, "threads": args.threads} if m.exact else {}
    res = solve(inst, args.method, **params)
    out = res.to_dict()
    out["instance"] = inst.name
    if args.json:
        print(json.dumps(out))
    else:
        from instances.core import DECISION_KEYS
        key = DECISION_KEYS.get(inst.kind, "decision")
        print(f"{inst.name}: {args.method} {res.status} value={res.value:g} "
              f"bound={'-' if res.bound is None else f'{res.bound:g}'} {1000 * res.seconds:.3f} ms")
        print(f"{key}: {out[key]}")
    return 0


def _instances_from(path: Path):
    from instances import load_instance, read_family
    return read_family(path) if path.is_dir() else [load_instance(path)]


def cmd_score(args) -> int:
    from .score import format_table, score, summarize
    methods = [m for part in args.methods for m in part.split(",") if m]
    insts = _instances_from(args.dir)
    table = score(insts, methods, time_limit=args.time_limit, threads=args.threads,
                  progress=(lambda i, inst: print(f"  [{i}/{len(insts)}] {inst.name}", file=sys.stderr))
                  if args.verbose else None)
    out = args.out or (args.dir if args.dir.is_dir() else args.dir.parent) / "scores"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(f"{out}.csv", index=False)
    table.to_parquet(f"{out}.parquet", index=False)
    print(format_table(summarize(table)))
    print(f"wrote {out}.csv and {out}.parquet ({len(table)} rows)")
    return 0


def cmd_list(args) -> int:
    from instances.registry import methods
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
    from .validate import validate, verdict_table
    func = import_function(args.function)
    v = validate(func, args.family, count=args.count, seed=args.seed, label=args.function,
                 time_limit=args.time_limit)
    print(verdict_table(v))
    for f in v.failures:
        print(f"FAIL {f}")
    print("verdict: " + ("PASS" if v.ok else f"FAIL ({len(v.failures)} failing instance(s))"))
    return 0 if v.ok else 1


def cmd_bench(args) -> int:
    import pytest
    argv = ["--benchmark", "-q", "-p", "no:cacheprovider", str(PROJECT_ROOT / "bench")]
    if args.quick:
        argv.append("--quick")
    argv += args.pytest_args
    os.chdir(PROJECT_ROOT)
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
    from sim.farm import run_farm_from_args
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
    from sim.jobs import load_workload
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
        from sim.metrics import per_job
        args.out.mkdir(parents=True, exist_ok=True)
        extra = per_job(res.jobs, workload)
        jobs = res.jobs.join(extra[[c for c in extra.columns if c not in res.jobs.columns]])
        jobs.to_csv(args.out / "jobs.csv", index=False)
        (args.out / "report.json").write_text(json.dumps(report, indent=1, default=_json_default))
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
    from sim.engine import simulate
    from sim.metrics import summarize
    options = {"starvation_limit": args.starvation_limit} if args.policy == "nonfcfs" else {}
    progress = _Progress(len(workload.jobs), sys.stderr.isatty() and not args.quiet)
    policy, recorder, kw = args.policy, None, {"selector": args.selector, **options}
    if args.record_epochs:
        from sim.policies import make
        from sim.record import EpochRecorder
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


def _run_gang(args, workload):
    """Gang scheduling on the Ousterhout matrix (sim.gang, seed 004 sections 5-6)."""
    from sim.gang import gang_options_from_args, simulate_gang, summarize_gang
    if args.policy not in GANG_POLICIES:
        raise ValueError(f"--machine gang takes the policies {', '.join(GANG_POLICIES)}, not {args.policy!r}")
    if args.selector or args.record_epochs:
        raise ValueError("--selector and --record-epochs apply to the space-shared policies only")
    res = simulate_gang(workload.jobs, workload.capacity, args.policy, **gang_options_from_args(args))
    return res, summarize_gang(res, workload, small_threshold=args.small_threshold)


def _json_default(obj):
    import numpy as np
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="epochbench", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    _add_generate(sub)

    s = sub.add_parser("solve", help="solve one instance file with one method")
    s.add_argument("file", type=Path)
    s.add_argument("--method", required=True)
    s.add_argument("--time-limit", type=float, default=10.0, help="seconds, exact methods (default 10)")
    s.add_argument("--threads", type=int, default=1, help="solver threads, exact methods (default 1)")
    s.add_argument("--json", action="store_true", help="print one JSON object")

    c = sub.add_parser("score", help="score methods on a family folder: CSV, Parquet, summary")
    c.add_argument("dir", type=Path, help="family folder (or one instance file)")
    c.add_argument("--methods", nargs="+", required=True, help="comma- or space-separated method names")
    c.add_argument("--time-limit", type=float, default=10.0)
    c.add_argument("--threads", type=int, default=1)
    c.add_argument("--out", type=Path, help="output prefix (default DIR/scores)")
    c.add_argument("-v", "--verbose", action="store_true")

    sub.add_parser("list", help="registered methods per family")

    v = sub.add_parser("validate", help="check a user's heuristic for feasibility, gap and time")
    v.add_argument("function", help="MODULE:FUNCTION taking an instance, returning job indices")
    v.add_argument("--family", default="packing", choices=["packing", "epochs"])
    v.add_argument("--count", type=int, default=30, help="random instances besides the edge cases")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--time-limit", type=float, default=10.0)

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
                        "fcfs-bf, sjf-bf, bfit-bf, wfit-bf; gang: gs, bgs, mgs, mbgs; farm: cs-i-p, "
                        "cs-i-np, cs-ni-p, cs-ni-np, edf, easy, bf-rm, bf-unrm")
    m.add_argument("--record-epochs", type=Path, metavar="DIR",
                   help="save every selection step as a packing instance with the policy's choice "
                        "(meta.choice) in DIR; score with 'epochbench score DIR --methods recorded,...'")
    m.add_argument("--min-candidates", type=int, default=1,
                   help="--record-epochs: skip steps with fewer candidates (default 1)")
    m.add_argument("--nodes", type=int, help="machine size (overrides the SWF header)")
    m.add_argument("--selector", help="packing method choosing each start set (oracle policy), e.g. cpsat")
    m.add_argument("--starvation-limit", type=float, default=86400.0, help="nonfcfs: seconds (default 24 h)")
    m.add_argument("--no-kill", action="store_true", help="let jobs run past their estimate")
    m.add_argument("--small-threshold", type=int, default=32, help="nodes; small vs large jobs (default 32)")
    m.add_argument("--out", type=Path, help="folder for jobs.csv and report.json")
    m.add_argument("--json", action="store_true", help="print the report as one JSON object")
    m.add_argument("--quiet", action="store_true", help="no progress line")
    from sim.farm import add_farm_arguments
    from sim.gang import add_gang_arguments
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
    return p


COMMANDS = {"generate": cmd_generate, "solve": cmd_solve, "score": cmd_score, "list": cmd_list,
            "validate": cmd_validate, "bench": cmd_bench, "simulate": cmd_simulate,
            "experiment": cmd_experiment}


#: exceptions that mean bad input: one line on stderr, exit status 2
USER_ERRORS = (InstanceError, InfeasibleSolution, KeyError, ValueError)


def _error_line(command: str, exc: BaseException) -> str:
    msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    return f"epochbench {command}: error: {msg}"


def run_command(args) -> int:
    """Run the parsed command; bad input becomes one line and status 2."""
    try:
        return COMMANDS[args.command](args)
    except USER_ERRORS as exc:
        print(_error_line(args.command, exc), file=sys.stderr)
        return 2


def main(argv=None) -> int:
    from .methods import load_all
    load_all()
    args = build_parser().parse_args(argv)
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
