"""``epochbench simulate``, ``epochbench calibrate`` and ``epochbench list
--policies``: the command line of the simulator face
(:func:`epochbench.sim.runner`).  Every policy name, its rule and every
machine option come from the policy registry (:mod:`epochbench.sim.registry`);
nothing here lists them."""
from __future__ import annotations

import argparse
import contextlib
import gc
import math
import sys
from pathlib import Path

from .checks import check_params, positive_float
from .cli_args import _Progress, parse_params, plain_text, stdout_to_stderr

#: options of the command itself, not of a machine (their argparse dests)
COMMON = ("workload", "machine", "policy", "record_epochs", "epoch_gaps", "min_candidates", "nodes", "selector",
          "param", "time_limit",
          "no_kill", "small_threshold", "out", "json", "quiet")

#: ``--small-threshold``'s default (nodes)
SMALL_THRESHOLD = 32

_GROUPS = {"pool": "space-shared machine (--machine pool)",
           "gang": "gang scheduling (--machine gang; [zhang-comparative] sections 5-6)",
           "farm": "farm with licenses (--machine farm, [capannini2007])"}


def _policy_help() -> str:
    from epochbench.sim.registry import MACHINES, policy_names
    return "; ".join(f"{m}: {', '.join(policy_names(m))}" for m in MACHINES) + \
        " (epochbench list --policies describes them)"


def _add_option(group, opt) -> None:
    flag = "--" + opt.name.replace("_", "-")
    if opt.flag:
        group.add_argument(flag, dest=opt.name, action="store_true", default=opt.default, help=opt.help)
        return
    kw = {"type": opt.type, "default": [] if opt.repeat else opt.default, "help": opt.help}
    if opt.choices:
        kw["choices"] = opt.choices
    if opt.repeat:
        kw["action"] = "append"
    if opt.metavar:
        kw["metavar"] = opt.metavar
    group.add_argument(flag, dest=opt.name, **kw)


def add_simulate(sub) -> None:
    from epochbench.sim.registry import MACHINES, machine_options
    m = sub.add_parser("simulate", help="replay a job stream under a scheduling policy",
                       description="Event-driven simulation of a job stream (SWF, CSV or Parquet) on a "
                                   "space-shared machine, a gang-scheduled one or a farm; prints the metrics, "
                                   "writes DIR/jobs.csv and DIR/report.json with --out.")
    m.add_argument("--workload", type=Path, help=".swf, .swf.gz, .csv or .parquet (not with --machine farm)")
    m.add_argument("--machine", choices=list(MACHINES), default=None,
                   help="pool: space-shared K resources; gang: Ousterhout matrix; farm: [capannini2007] farm with "
                        "licenses (default: the first machine that has the policy)")
    m.add_argument("--policy", required=True, help=_policy_help())
    m.add_argument("--record-epochs", type=Path, metavar="DIR",
                   help="save every selection step as a packing instance with the policy's choice "
                        "(meta.choice) in DIR; score with 'epochbench score DIR --methods recorded,...' "
                        "(gang policies: every Schedule and FillMatrix row)")
    m.add_argument("--epoch-gaps", metavar="METHODS",
                   help="space-shared policies: at every selection step also solve the step with these packing "
                        "heuristics (comma-separated, e.g. ff,bl,bb) and record their per-epoch gap to the "
                        "policy's choice (the optimum with an exact --selector); summary in the report, one row "
                        "per step in DIR/epoch_gaps.csv with --out")
    m.add_argument("--min-candidates", type=int, default=1,
                   help="--record-epochs, --epoch-gaps: skip steps with fewer candidates (default 1)")
    m.add_argument("--nodes", type=int, help="machine size (overrides the SWF header)")
    m.add_argument("--selector", help="packing method choosing each start set (oracle policy), e.g. cpsat")
    m.add_argument("--time-limit", type=positive_float, metavar="S",
                   help="with an exact --selector: seconds per oracle step, the whole call (default: the method's, "
                        "10); a step not solved in time falls back to the policy's own rule, as does one whose "
                        "unproven answer is worse than that rule's")
    m.add_argument("--threads", type=int, metavar="N",
                   help="with an exact --selector: solver threads per oracle step (default 1)")
    m.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="option of the policy's packing selector (bl-easy, bb-easy, --selector) (repeatable; "
                        "int, float, true/false or text), e.g. --param window=2")
    m.add_argument("--no-kill", action="store_true", help="let jobs run past their estimate")
    m.add_argument("--small-threshold", type=int, default=SMALL_THRESHOLD,
                   help=f"nodes; small vs large jobs (default {SMALL_THRESHOLD})")
    m.add_argument("--out", type=Path, help="folder for jobs.csv and report.json (files an earlier run left there "
                                            "are renamed STEM-STAMP.*, never overwritten)")
    m.add_argument("--json", action="store_true", help="print the report as one JSON object")
    m.add_argument("--quiet", action="store_true", help="no progress line")
    seen = set(COMMON)
    for machine in MACHINES:
        group = m.add_argument_group(_GROUPS[machine])
        for opt in machine_options(machine):
            if opt.name not in seen:
                seen.add(opt.name)
                _add_option(group, opt)


def _machine_options(args, machine: str) -> dict:
    """The chosen machine's options from ``args``; an option only another
    machine declares, set to other than its default, is refused (one line
    naming it) rather than dropped."""
    from epochbench.sim.registry import MACHINES, machine_options
    own = {o.name for o in machine_options(machine)}
    for other in MACHINES:
        for o in machine_options(other):
            val = getattr(args, o.name, None)
            if o.name in own or o.name in COMMON or val is None or val == ([] if o.repeat else o.default):
                continue
            raise ValueError(f"--{o.name.replace('_', '-')} is an option of the {other} machine, not of policy "
                             f"{args.policy!r} ({machine})")
    return {o.name: getattr(args, o.name) for o in machine_options(machine) if hasattr(args, o.name)}


def _selector_params(policy: str, kw: dict, params: dict, k: int = 1) -> dict:
    """``--param`` options checked against the policy's packing selector
    (bl-easy's BL, bb-easy's BB, ``--selector``'s): names by its signature,
    values by a dry run on a one-job epoch of ``k`` resources (so a bad value
    fails now, not at the first backfill, or never)."""
    from epochbench.instances.packing import PackingInstance
    from epochbench.instances.registry import get, solve
    from epochbench.sim.policies import make
    selector = getattr(make(policy, **kw), "selector", None)
    if selector is None:
        raise ValueError(f"--param: policy {policy!r} has no packing selector to pass it to "
                         "(use bl-easy, bb-easy, los or --selector)")
    method = get("packing", selector)
    params = check_params(method.func, params, f"selector {selector!r} of {policy}")
    dry = {"time_limit": 1.0, "threads": 1, **params} if method.exact else params
    try:
        solve(PackingInstance.build([2] * k, [[1] * k]), selector, describe=False, **dry)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--param: selector {selector!r} of {policy}: {exc}") from None
    return params


def _pool_options(args, options: dict, workload) -> tuple[dict, object]:
    progress = _Progress(len(workload), sys.stderr.isatty() and not args.quiet)
    kw = {"selector": args.selector, **{k: v for k, v in options.items() if v is not None}}
    params = parse_params(args.param)
    if params:
        kw["selector_options"] = _selector_params(args.policy, kw, params, len(workload.capacity))
    if args.time_limit is not None:
        _exact_selector("--time-limit", args.selector)
        kw["selector_options"] = {**kw.get("selector_options", {}), "time_limit": args.time_limit}
    if args.threads is not None:
        _exact_selector("--threads", args.selector)
        kw["selector_options"] = {**kw.get("selector_options", {}), "threads": args.threads}
        if args.selector == "milp-cbc" and args.threads != 1:      # the report said threads=4 without a word
            print(f"epochbench simulate: note: --threads {args.threads} has no effect: milp-cbc runs serially (the "
                  "bundled CBC with -threads stalls now and then past its limit)", file=sys.stderr)
    recorder = None
    from epochbench.instances.checks import first_repeat, split_names
    methods = split_names(args.epoch_gaps or "", "--epoch-gaps")
    if args.epoch_gaps is not None and not methods:
        raise ValueError("--epoch-gaps: name at least one packing heuristic, e.g. ff,bl,bb")
    twice = first_repeat(methods)
    if twice is not None:                          # as score --methods: its columns would be written twice
        raise ValueError(f"method {twice!r} appears twice (--epoch-gaps)")
    if args.record_epochs or methods:
        from epochbench.sim.record import EpochGaps, EpochRecorder, both
        holder = {}

        def record(policy):
            if args.record_epochs:
                holder["r"] = EpochRecorder(policy, min_candidates=args.min_candidates)
            if methods:
                holder["gaps"] = EpochGaps(policy, methods, min_candidates=args.min_candidates)
            return both(holder.get("r"), holder.get("gaps"))
        kw["record"] = record
        recorder = holder
    if progress.enabled:
        kw["progress"] = progress
    return kw, (progress, recorder)


def _exact_selector(flag: str, selector: str | None) -> None:
    """``flag`` needs an exact ``--selector`` (one-line ``ValueError`` otherwise)."""
    from epochbench.instances.registry import get
    if selector is None or not get("packing", selector).exact:
        what = ("the policy's own steps (no --selector)" if selector is None
                else f"--selector {selector} (a heuristic, not an exact method)")
        raise ValueError(f"{flag} applies to an exact --selector's oracle steps (e.g. --selector cpsat), not to "
                         f"{what}")


def _gang_options(args, options: dict, workload) -> tuple[dict, object]:
    if args.param:
        raise ValueError("--param applies to the space-shared policies' selectors only")
    for flag, value in (("--time-limit", args.time_limit), ("--threads", args.threads)):
        if value is not None:
            raise ValueError(f"{flag} applies to the space-shared policies' exact selectors only")
    if args.epoch_gaps:
        raise ValueError("--epoch-gaps applies to the space-shared policies only")
    kw = dict(options, selector=args.selector)
    progress = _Progress(len(workload), sys.stderr.isatty() and not args.quiet)
    if progress.enabled:
        kw["progress"] = progress
    holder = {}
    if args.record_epochs:
        from epochbench.sim.record import GangRecorder
        holder["r"] = kw["recorder"] = GangRecorder(min_candidates=args.min_candidates)
    return kw, (progress, holder)


def _farm_options(args, options: dict, workload) -> tuple[dict, object]:
    if args.workload:
        raise ValueError("--machine farm generates its own stream ([capannini2007] section 6); drop --workload")
    if args.epoch_gaps:
        raise ValueError("--epoch-gaps applies to the space-shared policies only")
    if args.record_epochs:
        raise ValueError("--record-epochs records space-shared and gang steps; the farm records its per-epoch "
                         "gaps with --oracle-every instead")
    for flag, value, default in (("--nodes", args.nodes, None), ("--selector", args.selector, None),
                                 ("--time-limit", args.time_limit, None), ("--threads", args.threads, None),
                                 ("--param", args.param, []), ("--no-kill", args.no_kill, False),
                                 ("--small-threshold", args.small_threshold, SMALL_THRESHOLD)):
        if value != default:
            raise ValueError(f"{flag} does not apply to the farm machine ([capannini2007]: its stream, machines "
                             "and licenses come from --farm-jobs, --machines, --licenses, ...)")
    progress = _Progress(0, sys.stderr.isatty() and not args.quiet, what="done")
    if progress.enabled:
        options = dict(options, progress=progress)
    return options, (progress, {})


#: per machine: the run's keyword options from the parsed arguments
MACHINE_ARGS = {"pool": _pool_options, "gang": _gang_options, "farm": _farm_options}
#: per machine: what "steps" a recorder recorded
RECORDED = {"pool": "selection step(s)", "gang": "row-filling step(s)"}


@contextlib.contextmanager
def _ordinary_pages():
    """New numpy arrays on ordinary pages while the block runs (numpy's
    setting as it was after), unless ``NUMPY_MADVISE_HUGEPAGE`` says otherwise.

    numpy asks the kernel for transparent huge pages (``madvise``) for every
    array of 4 MB or more.  Where THP defrag is ``madvise`` (the kernel's
    default), the first touch of such an array waits for a zeroed 2 MB page,
    which may need synchronous compaction (numpy issue 31590) or, in a
    virtual machine, host faults; a simulation streams through each column a
    few times, so it gains little from fewer TLB misses.  Measured on 5
    million jobs (2-core VM): system time 1.9 s -> 0.3 s, the simulation's
    own time unchanged.
    """
    import os
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:              # another numpy layout: leave its default
        _set_madvise_hugepage = None
    if _set_madvise_hugepage is None or "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        yield
        return
    was = _set_madvise_hugepage(False)
    try:
        yield
    finally:
        _set_madvise_hugepage(was)


@contextlib.contextmanager
def _no_cycle_collection():
    """The cyclic garbage collector paused while the block runs (as it was after).

    A simulation's data are numpy arrays, which the collector does not
    track; but importing numba and loading its compiled kernels creates some
    10^5 tracked objects, and the collections that this triggers walk them
    again and again: 0.09 s of a 5-million-job run (about 250 collections)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def cmd_simulate(args) -> int:
    """``epochbench simulate`` (:func:`_simulate`) on ordinary pages, the
    cyclic collector paused (numba, when a kernel needs it, is loaded without
    its BLAS probe: :func:`epochbench.instances.lazy.load_kernels`)."""
    with _ordinary_pages(), _no_cycle_collection():
        return _simulate(args)


@contextlib.contextmanager
def _notes(command: str):
    """Print each :class:`~epochbench.sim.runner.NoEffect` warning of the
    block at once as one line on stderr, ``epochbench COMMAND: note: ...``;
    other warnings are shown as ever, when they happen (a first version
    recorded them all and, showing them again into the same record, never
    ended)."""
    import warnings
    from epochbench.sim.runner import NoEffect
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, NoEffect):
            print(f"epochbench {command}: note: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)
    with warnings.catch_warnings():          # restores showwarning and the filters after the block
        warnings.simplefilter("always", NoEffect)
        warnings.showwarning = show
        yield


def _reading(args) -> dict:
    """The keywords of ``load_workload`` that ``--nodes`` and ``--no-kill``
    give (``simulate``, ``calibrate``)."""
    kw = {"nodes": args.nodes} if args.nodes is not None else {}
    if args.no_kill:
        kw["kill_at_estimate"] = False
    return kw


def _simulate(args) -> int:
    from epochbench.sim import registry, report, simulate, write_run
    from epochbench.sim.runner import to_json
    machine = registry.machine_of(args.policy, args.machine)
    registry.get_policy(machine, args.policy)
    if args.min_candidates != 1 and not (args.record_epochs or args.epoch_gaps):
        raise ValueError("--min-candidates applies with --record-epochs or --epoch-gaps only")
    if args.record_epochs:
        _check_recording_folder(Path(args.record_epochs))
    if args.out:
        from .runs import refuse_inputs_among
        refuse_inputs_among({Path(args.out) / name: f"--out {args.out}" for name in RUN_FILES},
                            [("--workload", args.workload)])
    workload = None
    if machine != "farm":
        if not args.workload:
            raise ValueError("--workload is required (except with --machine farm)")
        from epochbench.instances.jobs import load_workload
        kw = _reading(args)
        if str(args.workload).lower().endswith((".swf", ".swf.gz")):
            kw["fields"] = ()          # the raw SWF fields no simulation reads: not kept in memory
        workload = load_workload(args.workload, **kw)
    options, (progress, recorder) = MACHINE_ARGS[machine](args, _machine_options(args, machine), workload)
    try:
        with stdout_to_stderr(args.json), _notes("simulate"):   # a selector's prints must not corrupt the JSON
            res = simulate(workload, args.policy, machine=machine, **options)
    finally:
        if progress is not None:
            progress.close()              # its line ended (an error's line starts on a fresh one), its timer off
    rec = (recorder or {}).get("r")
    idle = rec.nothing_fits if rec is not None else 0          # steps where no candidate fit: not recorded
    idle = f" ({idle} where no candidate fit left out)" if idle else ""
    if rec is not None and rec.instances:
        rec.write(args.record_epochs, workload=str(args.workload))
        print(f"recorded {len(rec.instances)} {RECORDED[machine]} of {res.passes} pass(es){idle} in "
              f"{args.record_epochs}; score them with: epochbench score {args.record_epochs} "
              f"--methods recorded,cpsat", file=sys.stderr)
    elif rec is not None:                   # a valid run (a light load, one job): its report and --out stand
        print(f"recorded no {RECORDED[machine]} of {res.passes} pass(es): none had >= {args.min_candidates} "
              f"candidate(s){idle}; {args.record_epochs} is not written", file=sys.stderr)
    rep = report(res, workload, source=str(args.workload) if args.workload else None,
                 small_threshold=args.small_threshold)
    gaps = (recorder or {}).get("gaps")
    if gaps is not None:
        rep.setdefault("extras", {})["epoch_gaps"] = gaps.summary()
        if gaps.contradicted:           # said, not only counted: the run is no oracle's (a lying plug-in)
            print(f"epochbench simulate: note: selector {args.selector!r} called {gaps.contradicted} step(s) "
                  f"optimal where an --epoch-gaps method did better: those claims are false (counted as "
                  f"unproven; epoch_gaps.contradicted)", file=sys.stderr)
    if args.out:
        kept = _keep_previous_run(Path(args.out))
        write_run(args.out, res, rep, workload)
        if gaps is not None:
            gaps.write(Path(args.out) / "epoch_gaps.csv")
        if kept:
            print(f"the previous run's files in {args.out} are kept as {', '.join(p.name for p in kept)}",
                  file=sys.stderr)
    if args.json:
        print(to_json(rep))
    else:
        HEADERS.get(machine, _header)(rep, workload)
        metrics = {f"{k}{_unit(k)}": v for k, v in rep["metrics"].items()}
        width = max(map(len, metrics)) if metrics else 0
        for key, val in metrics.items():        # NaN (no job to average over; JSON's null): "-"
            text = ("-" if math.isnan(val) else f"{val:.6g}") if isinstance(val, float) else val
            print(f"  {key:<{width}}  {text}")
        _print_extras(rep.get("extras") or {}, shown=rep["metrics"])
    return 0


def _check_recording_folder(folder: Path) -> None:
    """The recording is written at the end of the run: a folder it could not
    be written into is refused now, not after the whole run (a file; a
    folder that already holds instance files or a manifest)."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--record-epochs {folder}: is a file, not a folder; record into a new folder")
    taken = sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []
    if taken:
        raise ValueError(f"--record-epochs {folder}: already holds {taken[0]}"
                         + (f" and {len(taken) - 1} more .json file(s)" if len(taken) > 1 else "")
                         + "; record into a new folder (nothing is overwritten)")


#: what ``simulate --out DIR`` writes into DIR
RUN_FILES = ("jobs.csv", "report.json", "epoch_gaps.csv")


def _keep_previous_run(out: Path) -> list[Path]:
    """Rename the files an earlier ``simulate --out`` left in ``out`` to
    ``STEM-RUNID.*`` (:func:`epochbench.bench.runs.keep_previous`), so that
    nothing is overwritten silently.  The run id of an earlier simulation is
    the stamp of its ``report.json`` (the time it was written); files that
    no simulation wrote (no such report beside them, or an ``epoch_gaps.csv``
    beside a report of a run without epoch gaps: a user's own, which took
    that run's stamp) are kept as ``STEM-unrecorded-STAMP.*``.  Returns the
    new paths."""
    from .runs import keep_previous
    if not out.is_dir():
        return []
    rid, wrote = _previous_run(out)
    foreign = [out / name for name in RUN_FILES if rid is not None and name not in wrote]
    return keep_previous([out / name for name in RUN_FILES], out / ".simulate.run.json", rid, foreign)


def _previous_run(out: Path) -> tuple[str | None, tuple[str, ...]]:
    """The stamp of ``out/report.json`` when a simulation wrote it (a JSON
    object with its ``policy`` and ``metrics``), else None; and the files of
    :data:`RUN_FILES` that simulation wrote (``epoch_gaps.csv`` where its
    report has their summary)."""
    from .runs import read, stamp
    rep = out / "report.json"
    data = read(rep)                      # a JSON object, or None
    if data is None or "policy" not in data or "metrics" not in data:
        return None, ()
    extras = data.get("extras")
    gaps = isinstance(extras, dict) and "epoch_gaps" in extras
    return stamp(rep.stat().st_mtime), ("jobs.csv", "report.json", *(("epoch_gaps.csv",) if gaps else ()))


def _print_extras(extras: dict, shown: dict | None = None) -> None:
    """The machine's own results in text (what ``--json`` has under
    ``extras``, the stream's settings left out, and the figures ``shown``
    among the metrics already: the gang's capacity loss): counters as
    numbers, and per-epoch gap summaries (``{count, mean, max}``,
    fractions) as ``N epochs, mean X %, median M %, max Y %`` (the median
    where the summary has one: one step can swamp the mean)."""
    flat = {}
    shown = shown or {}
    for group, vals in extras.items():
        if group == "stream" or not isinstance(vals, dict):
            continue
        for key, val in vals.items():
            if key in shown and shown[key] == val:
                continue
            if isinstance(val, dict) and {"count", "mean", "max"} <= set(val):
                if "gap" in key:
                    flat[f"{key} (per epoch)"] = (
                        f"{val['count']} epochs" + ("" if not val["count"] or val["mean"] is None else
                                                    f", mean {100 * val['mean']:.3g} %"
                                                    + (f", median {100 * val['median']:.3g} %"
                                                       if val.get("median") is not None else "")
                                                    + f", max {100 * val['max']:.3g} %")
                        + (f"; {val['undefined']} undefined (the policy started nothing)"
                           if val.get("undefined") else ""))
                else:
                    flat[key] = f"{val['count']} values, mean {val['mean']}, max {val['max']}"
            elif isinstance(val, (int, float)) and not isinstance(val, bool):
                flat[key] = f"{val:.6g}" if isinstance(val, float) else str(val)
    if flat:
        width = max(map(len, flat))
        print("  " + "-" * width)
        for key, val in flat.items():
            print(f"  {key:<{width}}  {val}")


#: the unit a metric's name does not say (text output only; JSON keys stay as they are)
_UNITS = (("weighted_response_norm", " (s)"), ("weighted_response", " (node s^2)"), ("makespan", " (s)"),
          ("wait", " (s)"), ("response", " (s)"), ("utilization", " (share)"), ("capacity_loss", " (share)"),
          ("capacity_lost", " (share)"),
          ("_share", " (share)"), ("_usage", " (share)"), ("_jobs", " (jobs)"), ("passes", " (passes)"))


#: units (or the jobs a mean is over) of metrics named in full (a part of another name would match too much);
#: the farm's slowdown_mean is [capannini2007] fig. 5's, over the jobs without a deadline
_NAMED_UNITS = {"late": " (jobs)", "slowdown_mean": " (jobs without deadline)"}


def _unit(name: str) -> str:
    if name in _NAMED_UNITS:
        return _NAMED_UNITS[name]
    if name.endswith(("_ms_mean", "_ms_max")) or name.startswith(("bsld", "slowdown")) or "bsld" in name:
        return ""                                         # ms in the name; slowdowns have no unit
    return next((unit for key, unit in _UNITS if key in name), "")


def _header(rep: dict, workload) -> None:
    print(f"{rep['workload']}: {rep['jobs']} jobs on {rep['capacity']}, policy {rep['policy']} "
          f"({rep['engine']} engine), {rep['seconds']:.3f} s, {rep['jobs_per_second']:,.0f} jobs/s")
    if rep["dropped"]:
        print("dropped: " + ", ".join(f"{k} {v}" for k, v in rep["dropped"].items()))
    for line in _input_notes(rep):
        print(line)


def _input_notes(rep: dict) -> list[str]:
    """What the text report would otherwise hide and the numbers depend on
    (``--json`` has it all): a machine size taken from the widest job,
    estimates the workload changed, jobs killed at their estimate."""
    notes = []
    source = str(rep.get("capacity_from") or "")
    if source.startswith("largest_job"):
        notes.append(f"capacity from: {source} (the file does not give the machine's size; --nodes sets the "
                     f"processors)")
    elif "largest_job" in source:
        notes.append(f"capacity from: {source} (the file does not give the extra resources' capacity)")
    if rep.get("adjusted"):
        notes.append("estimates changed: " + ", ".join(f"{k} {v}" for k, v in rep["adjusted"].items()))
    moved = (rep.get("extras") or {}).get("queued_elsewhere")
    if moved:
        notes.append(f"queued elsewhere: {moved} job(s) wider than their queue's partition (partitions of "
                     f"{', '.join(map(str, rep['extras']['partition_sizes']))} processors) ran in another "
                     "queue's (--lend keeps them in their own)")
    if rep.get("killed_at_estimate"):
        notes.append(f"killed at their estimate: {rep['killed_at_estimate']} job(s) whose runtime exceeds it "
                     f"(--no-kill runs them to the end)")
    if rep.get("unused"):
        notes.append("not read: " + ", ".join(f"{k} (given on {v} job(s))" for k, v in rep["unused"].items())
                     + f" (the {rep['machine']} machine's policies use neither deadlines nor licenses)")
    selector = _selector_note(rep)
    if selector:
        notes.append(selector)
    return notes


def _selector_note(rep: dict) -> str:
    """The packing selector that took the policy's decisions, its options,
    and the steps it left to the policy's own rule (an exact one out of
    time with no answer): without it the text reads like the policy's own
    run.  "" without a selector."""
    opts = rep.get("options") or {}
    if not isinstance(opts, dict) or not opts.get("selector"):
        return ""
    given = opts.get("selector_options") or {}
    line = f"selector: {opts['selector']}" + (" " + ", ".join(f"{k}={v}" for k, v in given.items()) if given else "")
    stats = opts.get("selector_stats") or {}
    if "steps" in stats:
        line += f"; {stats['steps']} step(s) given to it"
        if stats.get("unproven"):
            line += f", {stats['unproven']} without a proven optimum"
        if stats.get("fallback"):
            worse = int(stats.get("rule_better", 0))
            why = [f"{stats['fallback'] - worse} with no answer in time"] if stats["fallback"] > worse else []
            why += [f"{worse} where the rule did better than the unproven answer"] if worse else []
            line += f", of which {stats['fallback']} fell back to {rep['policy']}'s own rule ({'; '.join(why)})"
    return line


def _farm_header(rep: dict, workload) -> None:
    print(f"farm: policy {rep['policy']} {rep['options']}, {rep['seconds']:.1f} s")


HEADERS = {"farm": _farm_header}


# ---- list --policies -------------------------------------------------------------------
def list_policies() -> int:
    """Print machine, name, rule and the options of every registered policy."""
    from epochbench.sim.registry import MACHINES, machine_options, policies
    for machine in MACHINES:
        print(f"{machine}:")
        for spec in policies(machine):
            print(f"  {spec.name:<13} {plain_text(spec.rule)}")
        opts = machine_options(machine)
        if opts:
            print("  options: " + ", ".join(
                "--" + o.name.replace("_", "-") + (f" ({', '.join(o.applies)})" if o.applies else "")
                for o in opts))
    return 0


# ---- calibrate --------------------------------------------------------------------------
def add_calibrate(sub) -> None:
    c = sub.add_parser("calibrate", help="scale a job stream's arrivals to a target mean queue length",
                       description="Scale the arrival times of WORKLOAD so that POLICY's mean queue length "
                                   "is TARGET jobs ([leinberger1999] section 3.1); prints the calibration as JSON, "
                                   "--out writes the scaled stream (SWF, CSV or Parquet by suffix).")
    c.add_argument("workload", type=Path, help=".swf, .swf.gz, .csv or .parquet")
    c.add_argument("--target", type=float, required=True, help="target mean queue length (jobs)")
    c.add_argument("--policy", default="easy", help="pool policy (default easy)")
    c.add_argument("--rtol", type=float, default=0.05, help="relative tolerance (default 0.05)")
    c.add_argument("--warmup", type=float, default=0.1, help="share of arrivals before the window (default 0.1)")
    c.add_argument("--nodes", type=int, help="machine size (overrides the SWF header), as in simulate")
    c.add_argument("--no-kill", action="store_true", help="let jobs run past their estimate, as in simulate")
    c.add_argument("--out", type=Path, help="write the scaled stream here (a new .swf, .swf.gz, .csv or .parquet)")
    from epochbench.sim.registry import machine_options
    group = c.add_argument_group("options of the pool policies (as in simulate)")
    for opt in machine_options("pool"):
        _add_option(group, opt)


def cmd_calibrate(args) -> int:
    """Exit status 0 when the calibration converged, 1 otherwise."""
    from epochbench.instances.jobs import check_new_workload, load_workload, save_workload
    from epochbench.sim.calibrate import calibrate_rate
    for flag, value, ok, what in (("--target", args.target, lambda v: 0 < v < math.inf, "a number > 0"),
                                  ("--rtol", args.rtol, lambda v: 0 < v < 1, "a relative tolerance in (0, 1)"),
                                  ("--warmup", args.warmup, lambda v: 0 <= v < 1, "a share in [0, 1)")):
        if not ok(value):
            raise ValueError(f"{flag} = {value}: expected {what}")
    if args.out is not None:            # checked before the simulations, not after them
        from epochbench.runs import unwritable
        check_new_workload(args.out)
        problem = unwritable(args.out.parent.resolve())
        if problem:
            raise ValueError(f"--out {problem}")
    w = load_workload(args.workload, **_reading(args))
    if args.out is not None and check_new_workload(args.out) == "swf" and not w.kill_at_estimate:
        why = "--no-kill runs" if args.no_kill else f"{args.workload} runs"
        raise ValueError(f"--out {args.out}: SWF keeps no kill rule, and {why} jobs past their "
                         "estimate (kill_at_estimate false): read back with the default, the calibrated stream "
                         "would miss its target; write .csv or .parquet, which keep the rule")
    dropped = f"{args.workload}: dropped on reading: " + ", ".join(f"{k} {v}" for k, v in w.dropped.items())
    from epochbench.sim.registry import machine_options
    own = [o.name for o in machine_options("pool")]
    options = {name: getattr(args, name) for name in own if getattr(args, name, None) not in (None, [])}
    from epochbench.sim.policies import make
    # every option of calibrate's as the policy runs it, defaults too (not los' inner selector: no option here)
    with stdout_to_stderr(True):
        ran = {k: v for k, v in make(args.policy, **options).options().items() if k in own}
    try:
        with stdout_to_stderr(True):    # a policy's prints must not corrupt the JSON on stdout
            cal = calibrate_rate(w.jobs, w.capacity, args.target, args.policy, rtol=args.rtol, warmup=args.warmup,
                                 **options)
    except ValueError as exc:
        if not w.dropped:
            raise
        raise ValueError(f"{exc} ({dropped})") from None
    if w.dropped:
        print(f"epochbench calibrate: {dropped}", file=sys.stderr)
    from epochbench.instances.core import json_text
    print(json_text({**cal.to_dict(), "options": ran, "capacity": w.capacity.tolist(),
                     "kill_at_estimate": bool(w.kill_at_estimate), "dropped": dict(w.dropped)}))
    if not cal.converged:
        print(f"epochbench calibrate: did not converge: {cal.note}"
              + (f"; nothing written to {args.out}" if args.out else ""), file=sys.stderr)
        return 1
    if args.out:                        # its folder made only now: a run that wrote nothing leaves none
        args.out.parent.mkdir(parents=True, exist_ok=True)
        save_workload(_calibrated(w, cal, args.target, ran), args.out)
    return 0


#: SWF header fields of the input that a calibrated stream no longer has
#: (its time span and record counts)
STALE_HEADER = ("StartTime", "EndTime", "MaxJobs", "MaxRecords")
#: job fields of the input that rescaled arrivals make wrong (the log's
#: own wait, and its think time after the preceding job): written as unknown
STALE_FIELDS = ("wait", "think_time")


#: prefix of the input's notes in a calibrated stream's header: they describe the stream before its
#: arrivals were rescaled (a generator's "load 0.7" no longer holds)
BEFORE = "before calibration: "


#: the input's own notes that saving writes again from the workload (SWF header) or keeps in its
#: metadata (CSV, Parquet): a calibrated stream does not repeat them
REWRITTEN = "epochbench: dropped on reading:"


def _before_calibration(notes: str) -> list[str]:
    """The input's note lines as a calibrated stream's header keeps them:
    marked as describing the stream before calibration (:data:`BEFORE`;
    ``epochbench: written from ...`` too: the calibrated stream was written
    from another source), without :data:`REWRITTEN`."""
    return [n if n.startswith(BEFORE) else BEFORE + n for n in notes.split("\n")
            if n and not n.startswith(REWRITTEN)]


def _options_text(options: dict) -> str:
    """The policy options of a calibration as its note says them."""
    def one(x):
        return f"{x:g}" if isinstance(x, float) else str(x)

    def value(v):
        v = v.tolist() if hasattr(v, "tolist") else v
        return ",".join(map(one, v)) if isinstance(v, (list, tuple)) else one(v)
    return "".join(f", --{k.replace('_', '-')}" + ("" if v is True else f" {value(v)}")
                   for k, v in sorted(options.items()) if v is not None and v is not False)   # as typed


def _calibrated(w, cal, target: float, options: dict | None = None):
    """The stream of ``cal`` (arrivals rescaled) as a workload to save:
    the input's header without its time span and counts, its notes
    marked as describing the stream before calibration (:data:`BEFORE`),
    a note of the factor, the input's dropped counts, and no field that the rescaling
    made wrong (:data:`STALE_FIELDS`: unknown, -1 in SWF)."""
    from epochbench.instances.jobs import make_workload
    header = {k: v for k, v in (w.meta.get("header") or {"Version": "2.2"}).items() if k not in STALE_HEADER}
    note = (f"arrival rate x {cal.factor!r} by epochbench calibrate (policy {cal.policy}"
            f"{_options_text(options or {})}{', --no-kill' if not w.kill_at_estimate else ''}, mean queue "
            f"{cal.mean_queue:.4g} for target {target:g}); submit times are the scaled arrivals, in "
            "fractional seconds")
    header["Note"] = "\n".join(_before_calibration(header.get("Note", "")) + [note])
    jobs = cal.jobs.drop(columns=[c for c in STALE_FIELDS if c in cal.jobs.columns])
    return make_workload(jobs, w.capacity, resources=w.resources, source=f"{w.source} x{cal.factor!r}",
                         kill_at_estimate=w.kill_at_estimate, meta={"header": header}, dropped=dict(w.dropped))

