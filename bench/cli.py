"""``epochbench``: generate, solve, score, list, validate, simulate, calibrate, experiment, bench,
compare, runs."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gzip
import inspect
import json
import math
import os
import re
import sys
import warnings
import zlib
from pathlib import Path

from epochbench.instances import InfeasibleSolution, InstanceError
from epochbench.instances.core import InputNote, RunStopped

from .checks import (OPTION_TYPES, check_params, check_required, nonnegative_float, nonnegative_int,  # noqa: F401
                     positive_float, positive_int, random_count)
from .cli_args import (Parser, RawDescriptionHelpFormatter, _strict_types, once, param_value,  # noqa: F401
                       parse_params, plain_text, stdout_to_stderr)
from .methods import called_with, check_on, method_params



def _add_generate(sub) -> None:
    from epochbench.instances.generators import GENERATOR_PARAMS, WRITERS, load_generators
    GENERATORS = load_generators()
    p = sub.add_parser("generate", help="write a family of instances to a folder",
                       description="Generate an instance family (deterministic by --seed) into --out: "
                                   "one JSON file per instance plus manifest.json (generate workload: one "
                                   "job stream file, with its sidecars where the model has them).")
    gens = p.add_subparsers(dest="generator", required=True, metavar="GENERATOR")
    from epochbench.instances.catalog import first_sentence
    for name, func in GENERATORS.items():
        doc = plain_text(inspect.getdoc(func), GENERATOR_PARAMS[name])
        g = gens.add_parser(name, help=first_sentence(doc), description=doc)
        out_help = getattr(WRITERS.get(name), "out_help", "output folder")     # a writer's own output
        g.add_argument("--out", required=True, type=Path, help=out_help)
        for pname, par in GENERATOR_PARAMS[name].items():
            opt = "--" + pname.replace("_", "-")
            said = "(default" in par.help                 # (the seed's "numpy.random.default_rng" says none)
            text = par.help if par.default is None or said else f"{par.help} (default {par.default})"
            if par.type is bool:
                g.add_argument(opt, dest=pname, action=argparse.BooleanOptionalAction, default=None, help=text)
            else:
                g.add_argument(opt, dest=pname, type=par.parse, choices=par.choices, default=None, help=text)


def cmd_generate(args) -> int:
    from epochbench.instances.generators import GENERATOR_PARAMS, write_generated
    params = {k: getattr(args, k) for k in GENERATOR_PARAMS[args.generator]}
    folder = write_generated(args.generator, args.out, **params)   # its notes on the input: _notes_as_lines
    manifest = folder / "manifest.json"
    if folder.is_dir() and manifest.exists():
        count = len(json.loads(manifest.read_text())["instances"])
        print(f"wrote {count} {args.generator} instance(s) to {folder}")
    else:
        extra = Path(f"{folder}.extra.csv")        # the per-job columns SWF has no field for (rajaei, hypererlang)
        print(f"wrote {args.generator} to {folder}" + (f" and its sidecar {extra}" if extra.is_file() else ""))
    return 0


def _all_methods() -> None:
    """Load every method, plug-ins included, before a command looks one up:
    a plug-in named like a built-in is refused with a warning when the
    plug-ins load, which a lookup that finds the built-in first never
    does (``score --methods ff`` ran the built-in without a word)."""
    from epochbench.instances.registry import methods
    methods()


def _say_no_effect(command: str, given: dict, found, budgets=None) -> None:
    """One note on stderr for ``--threads`` or ``--time-limit`` in ``given``
    (flag: value, None when not given) that no method of ``found`` (registry
    entries) uses: only exact methods take threads, and a time limit reaches
    exact methods and, where ``budgets(func)`` says so, a heuristic's own
    budget (``solve --method sa``).  The command runs as without them (a
    script may pass the same flags to every method); it said nothing
    (``solve --method ff --threads 8``)."""
    if not found:                 # no method known: the command's own error says so
        return
    names = ", ".join(dict.fromkeys(m.name for m in found))
    one = len({m.name for m in found}) == 1
    if given.get("--threads") is not None and not any(m.exact for m in found):
        print(f"epochbench {command}: note: --threads has no effect: it sets an exact method's solver threads, "
              f"and {names} {'is a heuristic' if one else 'are heuristics'}", file=sys.stderr)
    if given.get("--time-limit") is not None and not any(
            m.exact or (budgets is not None and budgets(m.func)) for m in found):
        budget = " and heuristics with a budget of their own (mapping: ga, sa, tabu)" if budgets is not None else ""
        print(f"epochbench {command}: note: --time-limit has no effect: it limits exact methods{budget}, and "
              f"{names} {'has' if one else 'have'} none", file=sys.stderr)


def cmd_solve(args) -> int:
    from epochbench.instances import load_instance
    from epochbench.instances.registry import get, solve
    _all_methods()
    inst = load_instance(args.file)
    m = get(inst.kind, args.method)
    from epochbench.instances.registry import takes_time_limit
    _say_no_effect("solve", {"--threads": args.threads, "--time-limit": args.time_limit}, [m], takes_time_limit)
    params = ({"time_limit": args.time_limit, "threads": 1 if args.threads is None else args.threads} if m.exact
              else {"time_limit": args.time_limit})
    given = check_params(m.func, parse_params(args.param), f"{inst.kind} method {args.method!r}")
    check_required(m.func, given, f"{inst.kind} method {args.method!r}",
                   given=called_with(m, args.time_limit is not None))
    check_on(inst.kind, args.method, given, [inst], cli=True)     # a value the method refuses on inst: exit 2
    params.update(given)
    with stdout_to_stderr(args.json):                        # a method's prints must not corrupt the JSON
        res = _solve_one(solve, inst, m, args.method, params, args.file)  # the family's checker has passed it
    out = res.to_dict()                                      # info["bound_kind"] "none" when nothing is proved
    out["instance"] = inst.name
    from .scoring import Reference, SolverDisagreement, Units, gap_fields, read_references, reference
    out["checked"] = not math.isnan(res.value)   # NaN: no decision (a timeout or infeasible status without one)
    refs = read_references(args.reference)
    _say_unused("solve", refs, [inst])
    clash = None
    try:
        known = reference(inst, [res], refs)
    except SolverDisagreement as exc:   # the checked solution refutes a claimed optimum or bound: show both
        known, clash = None, str(exc)
    # value and bound in the data set's units; on a disagreement no reference, as a score row has none
    g = gap_fields(inst, res, known if clash is None else Reference(None, "no bound", ""))
    out["reference"] = {k: g[k] for k in ("value", "bound", "gap", "gap_kind", "ref_source", "beats_reference",
                                          "units")}
    if clash is not None:
        out["reference"]["disagreement"] = clash
    if args.json:
        from epochbench.instances.core import json_text
        print(json_text(out))
    else:
        from epochbench.instances.core import DECISION_KEYS
        key = DECISION_KEYS.get(inst.kind, "decision")
        print(f"{inst.name}: {args.method} {res.status} value={'-' if res.value != res.value else f'{res.value:g}'} "
              f"bound={'-' if res.bound is None else f'{res.bound:g}'} {1000 * res.seconds:.3f} ms")
        print(f"{key}: {out[key]}")
        ref = out["reference"]
        if known is not None and ref["gap_kind"] != "no bound":
            own = "" if ref["units"] == "family" else f"value {ref['value']:g} in {ref['units']} units, "
            print(f"reference: {ref['gap_kind']} {ref['bound']:g} ({ref['ref_source']}), {own}"
                  f"gap {100 * ref['gap']:.4g} %"
                  + (f"; BEATS the best-known value {Units.of(inst).data(known.best_known):g} "
                     f"({known.best_known_source}): the checked "
                     "solution above can be published" if ref["beats_reference"] else ""))
    if known is None:
        print(f"epochbench solve: disagreement: {out['reference']['disagreement']}", file=sys.stderr)
        return 1
    return 0


def _solve_one(solve, inst, m, method: str, params: dict, file=None):
    """``solve(inst, method, **params)``; a built-in method's refusal of
    the instance (a ``ValueError``: weights too small to scale onto
    integers) names ``file`` and the method, as bad input does (exit 2;
    it named neither).  An exception a registered (not
    built-in) method raises becomes one line naming the method, status 1
    (:class:`~epochbench.instances.core.MethodFailed`), as a ``sys.exit`` in
    it does and as ``score`` and ``validate`` report it (it printed a
    traceback).  So does a decision of such a method that the checker
    refuses, named after the method (the checker's message named only the
    instance, status 2, read as bad input; the README counts a user's
    method that failed as status 1)."""
    from epochbench.instances.core import MethodFailed
    try:
        return solve(inst, method, **params)
    except InfeasibleSolution as exc:
        if m.origin == "builtin":
            raise
        text = " ".join(str(exc).split()).removeprefix(f"{inst.name}: ")
        raise MethodFailed(f"{inst.name}: method {method!r} ({m.origin}) returned a decision the checker "
                           f"refuses: {text}") from exc
    except RunStopped:
        raise
    except Exception as exc:
        if m.origin == "builtin":
            if file is not None and type(exc) is ValueError:
                raise ValueError(f"{file}: method {method!r} cannot solve this instance: {exc}") from exc
            raise
        text = " ".join(str(exc).split())
        raise MethodFailed(f"{inst.name}: method {method!r} ({m.origin}) raised {type(exc).__name__}"
                           + (f": {text}" if text else "")) from exc


def _say_unused(command: str, refs, insts) -> None:
    """One line on stderr for each thing a reference file or the instances'
    meta says that the instances do not use
    (:meth:`~epochbench.scoring.ReferenceFile.unused`,
    :func:`~epochbench.scoring.idle_meta_bounds`)."""
    from .scoring import idle_meta_bounds
    for line in [line for ref in refs for line in ref.unused(insts)] + idle_meta_bounds(insts):
        print(f"epochbench {command}: {line}", file=sys.stderr)


def _instances_from(path: Path):
    """The instances of a file or family folder; one line on stderr names the
    folder's ``*.json`` files that its manifest does not list (not read)."""
    from epochbench.instances import load_instance, read_family
    from epochbench.instances.io import unlisted_files
    if not path.exists():
        from epochbench.instances import InstanceError
        raise InstanceError(f"{path}: no such family folder or instance file")
    if not path.is_dir():
        return [load_instance(path)]
    insts, extra = read_family(path), unlisted_files(path)
    if extra:
        names = ", ".join(p.name for p in extra[:5]) + (", ..." if len(extra) > 5 else "")
        print(f"epochbench score: {path}: {len(extra)} .json file(s) not in manifest.json, not read ({names})",
              file=sys.stderr)
    return insts


def _score_progress(total, verbose: bool):
    """``[i/total] instance (elapsed, ETA)`` on stderr: on a terminal always,
    elsewhere with ``-v``.  ``total``: a number, or a function giving it
    (called only when the progress is shown)."""
    from .sweep import Progress
    bar = Progress(0)
    bar.on = bar.on or verbose
    if not bar.on:
        return None
    bar.total = total() if callable(total) else total
    return lambda i, inst: bar.step({"instance": inst.name})


def _record_stopped(info: dict, path: Path, exc: BaseException) -> None:
    """The record of a ``score`` stopped mid-sweep (Ctrl-C, a lost
    scheduler), status ``interrupted``, under its own id beside the outputs
    (``PREFIX-RUNID.run.json``: the previous run's ``PREFIX.run.json`` stays
    with the files it describes, which this run did not replace)."""
    from epochbench import runs
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        said = str(exc).strip()                      # a Ctrl-C's KeyboardInterrupt says nothing
        status = runs.exit_status_of(exc)
        runs.finish(info, path, "interrupted", error=(f"{type(exc).__name__}: {said}" if said else
                                                      "stopped by Ctrl-C" if isinstance(exc, KeyboardInterrupt)
                                                      else type(exc).__name__)[:500], **status)


def table_disagreements(table) -> list[str]:
    """The distinct ``disagreement: ...`` errors of a score table, in order."""
    from .scoring import DISAGREEMENT
    errors = table.loc[table["error"].str.startswith(DISAGREEMENT), "error"]
    return list(dict.fromkeys(errors))


def _entries(insts, methods: list[str]) -> list:
    """The registry entries of ``methods`` in the families of ``insts`` (a
    name a family lacks is left to :func:`score` to refuse)."""
    from epochbench.instances.registry import get
    found = []
    for kind in dict.fromkeys(inst.kind for inst in insts):
        for name in methods:
            with contextlib.suppress(KeyError):
                found.append(get(kind, name))
    return found


def cmd_score(args) -> int:
    from .scoring import SolverDisagreement, format_table, read_references, score, summarize
    _all_methods()
    from epochbench.instances.checks import split_names
    methods = split_names(" ".join(args.methods), "--methods")     # "ff cpsat" quoted too, and "ff, bl" unquoted
    prefix = _score_prefix(args)
    from epochbench import runs
    runs.refuse_inputs_among({Path(f"{prefix}{suffix}"): f"--out {args.out}" if args.out else f"the default {prefix}"
                              for suffix in (".csv", ".parquet", ".run.json")},
                             [("--reference", ref) for ref in args.reference])
    refs = read_references(args.reference)
    insts = _instances_from(args.dir)
    _say_unused("score", refs, insts)
    from epochbench.sweep import SchedulerLost, check_scheduler, local_workers, workers_started
    scheduler = check_scheduler(args.scheduler)            # where it runs, as resolved (before any work)
    workers = local_workers(args.jobs, scheduler)
    _say_no_effect("score", {"--threads": args.threads, "--time-limit": args.time_limit}, _entries(insts, methods))
    args.time_limit = 10.0 if args.time_limit is None else args.time_limit
    args.threads = 1 if args.threads is None else args.threads
    info = runs.provenance("score", runs.stamp(), methods=methods, time_limit=args.time_limit,
                           threads=args.threads, instances=len(insts), params=list(args.param),
                           references=[str(r) for r in args.reference],
                           execution={"workers": workers, "scheduler": scheduler,     # one task per instance
                                      "workers_started": workers_started(workers, scheduler, len(insts))})
    clash = None
    kinds = dict.fromkeys(inst.kind for inst in insts)
    params = {kind: method_params(kind, methods, parse_params(args.param), insts) for kind in kinds}
    try:
        with stdout_to_stderr(True):                       # a method's prints: not in the summary on stdout
            table = score(insts, methods, time_limit=args.time_limit, threads=args.threads, references=refs,
                          params=params, workers=args.jobs, scheduler=args.scheduler,
                          progress=_score_progress(len(insts), args.verbose))
    except (KeyboardInterrupt, SchedulerLost) as exc:   # stopped mid-sweep: recorded (it left no record)
        _record_stopped(info, Path(f"{_score_prefix(args)}-{info['id']}.run.json"), exc)
        raise
    except SolverDisagreement as exc:
        if getattr(exc, "table", None) is None:
            print(f"epochbench score: disagreement: {exc}", file=sys.stderr)
            return 1
        table, clash = exc.table, table_disagreements(exc.table)    # the rows are written all the same
    out = _score_prefix(args)
    out.parent.mkdir(parents=True, exist_ok=True)
    from epochbench.instances.files import atomic_path
    prov = Path(f"{out}.run.json")
    kept = runs.keep_previous([Path(f"{out}.csv"), Path(f"{out}.parquet")], prov)
    with atomic_path(f"{out}.csv") as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(f"{out}.parquet") as tmp:
        table.to_parquet(tmp, index=False)
    failed = table[table["status"] == "error"]
    status = 1 if len(failed) or clash else 0
    lines = _failure_lines(failed)
    why = {"error": "; ".join([*([f"{len(failed)} failed solve(s), first: {lines[0]}"] if lines else []),
                               *([f"{len(clash)} disagreement(s), first: {clash[0]}"] if clash else [])])}
    runs.finish(info, prov, "finished" if status == 0 else "failed", exit_status=status, rows=len(table),
                failed=len(failed), disagreements=len(clash or ()),
                files=[f"{out.name}.csv", f"{out.name}.parquet"], **(why if status else {}))
    print(format_table(summarize(table)))
    print(f"wrote {out}.csv and {out}.parquet ({len(table)} rows), provenance {prov}")
    if kept:
        print(f"the previous run's files are kept as {', '.join(p.name for p in kept)}")
    for line in lines:
        print(f"epochbench score: {line}", file=sys.stderr)
    for message in clash or ():
        print(f"epochbench score: {message}", file=sys.stderr)
    return status


def _failure_lines(failed) -> list[str]:
    """One line per method and error: the instances that failed the same
    way share it (their name as the message's subject, ``NAME: ...``, is
    left out of the shared message: the line names them first; it printed
    a placeholder, ``<instance>``)."""
    import re
    groups: dict[tuple[str, str], list[str]] = {}
    for r in failed.itertuples():               # the name as a message's subject ("NAME: ..."), nowhere else
        error = re.sub(rf"(?<![\w.-]){re.escape(str(r.instance))}(?=:)", "<instance>", str(r.error))
        groups.setdefault((r.method, error), []).append(str(r.instance))
    lines = []
    for (method, error), names in groups.items():
        if len(names) == 1:
            lines.append(f"{method} failed on {names[0]}: {error.replace('<instance>', names[0])}")
        else:
            shown = ", ".join(names[:3]) + (f", ... ({len(names) - 3} more)" if len(names) > 3 else "")
            said = error.replace("<instance>: ", "").replace("<instance>", "each instance")  # named before it
            lines.append(f"{method} failed on {len(names)} instances ({shown}): {said}")
    return lines


def cmd_list(args) -> int:
    if getattr(args, "policies", False):
        from .cli_simulate import list_policies
        return list_policies()
    from epochbench.instances.registry import methods
    fams: dict[str, list] = {}
    for m in methods():
        fams.setdefault(m.family, []).append(m)
    for fam, ms in fams.items():
        print(f"{fam}:")
        for m in ms:
            doc = _summary(plain_text(inspect.getdoc(m.func)))
            print(f"  {m.name:<12} {m.kind:<9} {doc}" + ("" if m.origin == "builtin" else f" [{m.origin}]"))
    return 0


def _summary(doc: str, width: int = 100) -> str:
    """A docstring's first paragraph on one line, cut at a word before
    ``width`` characters with `` ...`` (never in the middle of a line of
    the docstring without saying so)."""
    text = " ".join(doc.split("\n\n")[0].split())
    if len(text) <= width:
        return text
    return text[:width].rsplit(" ", 1)[0] + " ..."


def _validate_count(args) -> int:
    """How many instances ``validate`` checks (edge cases and random ones)."""
    from .validation import CASES
    return len(CASES[args.family](args.count, args.seed)) if args.family in CASES else args.count


def cmd_validate(args) -> int:
    from .methods import candidate_function
    from .scoring import SolverDisagreement
    from .validation import validate, verdict_table
    _all_methods()
    func = candidate_function(args.function, args.family)
    params = check_params(func, parse_params(args.param), args.function, exact_only=True)
    check_required(func, params, args.function)
    if params:
        import functools
        func = functools.wraps(func)(functools.partial(func, **params))
    try:
        with stdout_to_stderr(True):                       # the heuristic's prints: not in the verdict on stdout
            v = validate(func, args.family, count=args.count, seed=args.seed, label=args.function,
                         time_limit=args.time_limit, exact=args.exact, workers=args.jobs, scheduler=args.scheduler,
                         progress=_score_progress(lambda: _validate_count(args), getattr(args, "verbose", False)))
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
    HERE = Path(__file__).resolve().parent / "benchmarks"        # not imported here: pytest loads it as a plug-in
    # no configuration file or conftest from the folders above (a project's pyproject.toml, with a .venv
    # inside it, applied its own addopts and conftest files to the suite): pytest reads none but ours
    # (nor hypothesis's plug-in: the suite has no property tests, and loading it took 1.5 s of a 6.7 s
    # `bench --quick -k` run of one heuristic)
    argv = ["--benchmark", "-q", "-c", os.devnull, "--confcutdir", str(HERE), "-p", "no:cacheprovider",
            "-p", "no:xdist", "-p", "no:hypothesispytest",
            "-p", "epochbench.benchmarks.plugin", "-o", "python_files=bench_*.py", "--rootdir", str(HERE), str(HERE)]
    if args.quick:
        argv.append("--quick")
    # ``--name`` after a pytest argument lands among them: it is the plug-in's ``--run-name``
    rest = ["--run-name" + a[len("--name"):] if a == "--name" or a.startswith("--name=") else a
            for a in args.pytest_args]
    results = _check_bench_name(args.name, rest)
    _check_pytest_args(rest)
    _check_benchmark_json(rest)
    if args.name:
        argv += ["--run-name", args.name]
    from .sweep import probe_scheduler
    probe_scheduler(None)      # $EPOCHBENCH_SCHEDULER, where the reference solves go: one line before the suite
    #                            starts (a bad address failed every test that solved one, 1,257 lines)
    from epochbench.instances.files import output_lock
    # --results DIR held here, so that a run holding it already is refused in one line with status 2 (the
    # plug-in holds the folder it writes, this one included, and a run folder of its own under ./results)
    # made at start: pytest-benchmark's default storage, and the run folders' root (a run that wrote
    # nothing, --collect-only say, left it empty)
    made = [p for p in (Path(".benchmarks"), Path("results")) if not p.exists()]
    from epochbench.benchmarks import plugin           # the module pytest loads (-p), imported first here
    late = any(a == "--name" or a.startswith("--name=") for a in args.pytest_args)    # after a pytest argument
    plugin.NAME_OPTION[0] = "--name" if args.name or late else "--run-name"        # as the user gave it
    plugin.COMMAND[0] = True                           # a stop's record: this command's status, not pytest's
    try:
        with output_lock(results, option="--results") if results else contextlib.nullcontext(), _no_addopts():
            status = int(pytest.main(argv + rest))
    finally:
        plugin.NAME_OPTION[0] = "--run-name"
        plugin.COMMAND[0] = False
        for folder in made:                             # left empty unless something was written there
            with contextlib.suppress(OSError):
                folder.rmdir()
    if status == int(pytest.ExitCode.USAGE_ERROR) and plugin.refused():
        return 2                                        # the run folder refused (pytest printed why, above)
    if status == int(pytest.ExitCode.USAGE_ERROR):      # pytest printed why, above; the commands' status for it
        raise ValueError("pytest refused the arguments passed on to it (above); 'epochbench bench --help' "
                         "lists bench's own options")
    if status == int(pytest.ExitCode.NO_TESTS_COLLECTED):
        raise ValueError("no benchmark selected: the -k expression or the paths given match none "
                         "('epochbench bench --collect-only -q' lists them)")
    if status == int(pytest.ExitCode.INTERRUPTED) and plugin.interrupted():   # pytest's 2 is the commands'
        raise KeyboardInterrupt("interrupted; the run's record says so ('epochbench runs')")   # bad usage
    return status


@contextlib.contextmanager
def _no_addopts():
    """Run the suite without ``$PYTEST_ADDOPTS``: pytest prepends it to the
    arguments, so a user's setting for their own project (``-x``, ``-k
    ...``, an option of a plug-in the suite lacks) changed or stopped the
    benchmark run without a word, as the configuration files of the folders
    above it did.  One line says it is ignored; pytest arguments go after
    ``bench``."""
    value = os.environ.pop("PYTEST_ADDOPTS", None)
    if value and value.strip():
        print(f"epochbench bench: $PYTEST_ADDOPTS ({value.strip()!r}) is ignored; pass pytest arguments "
              "after 'bench'", file=sys.stderr)
    try:
        yield
    finally:
        if value is not None:
            os.environ["PYTEST_ADDOPTS"] = value


#: pytest options that would leave a bench run without its measurements: pytest-xdist's (its
#: workers disable pytest-benchmark's timing, and each wrote the run's record) and blocking the
#: suite's plug-ins (-p no:...); pytest-benchmark's own (--benchmark-skip too) pass through
_XDIST = ("-n", "--numprocesses", "--maxprocesses", "--dist", "-d", "--tx", "--looponfail", "-f")
_SUITE_PLUGINS = ("benchmark", "epochbench.benchmarks.plugin")


def _check_pytest_args(rest: list[str]) -> None:
    """Refuse, in one line before the suite runs, a pytest argument that
    would run it without its measurements (:data:`_XDIST`, ``-p no:`` one
    of :data:`_SUITE_PLUGINS`): with ``-n 2`` the workers printed ten
    tracebacks, or the run was recorded finished with no timing.
    (pytest-xdist is also blocked for the run, so that a form not matched
    here is a usage error.)"""
    for i, a in enumerate(rest):
        if i and rest[i - 1] in ("-k", "-m"):     # an expression, not an option ("-k -n" is none of xdist's)
            continue
        opt = a.split("=", 1)[0]
        if opt in _XDIST or (a[:2] in ("-n", "-d") and len(a) > 2 and not a.startswith("--")):
            raise ValueError(f"{a}: the benchmarks run in one process (pytest-xdist's workers would turn "
                             "pytest-benchmark's timing off); leave it out")
        if a == "--noconftest":        # the suite's conftest measures and records: a run 'finished' with no table
            raise ValueError("--noconftest: the suite's conftest.py measures and records its runs; leave it out")
        blocked = rest[i + 1] if a == "-p" and i + 1 < len(rest) else (a[2:] if a.startswith("-p") else "")
        if blocked.startswith("no:") and blocked[3:] in _SUITE_PLUGINS:
            raise ValueError(f"-p {blocked}: the suite needs that plug-in to measure and record its runs")


def _check_benchmark_json(rest: list[str]) -> None:
    """Refuse, before the suite runs and in one line, a ``--benchmark-json``
    file (passed on to pytest-benchmark) that exists or whose folder cannot
    be written (:func:`epochbench.benchmarks.plugin.json_refusal`; the
    plug-in refuses it too, for ``pytest --benchmark``), or the option given
    twice (pytest-benchmark kept the last and ignored the first without a
    word)."""
    from epochbench.benchmarks.plugin import json_refusal
    if rest and rest[-1] == "--benchmark-json":        # no file after it: pytest's usage error said it
        raise ValueError("--benchmark-json needs a file name")
    paths = [rest[i + 1] if a == "--benchmark-json" else a.split("=", 1)[1]
             for i, a in enumerate(rest) if a == "--benchmark-json" or a.startswith("--benchmark-json=")]
    if len(paths) > 1:
        raise ValueError(f"--benchmark-json is given {len(paths)} times ({', '.join(map(repr, paths))}); "
                         "the run writes one file")
    for path in paths:
        problem = json_refusal(path)
        if problem:
            raise ValueError(problem)


def _check_bench_name(name: str | None, rest: list[str]) -> Path | None:
    """Refuse, as a usage error naming ``--name`` (exit status 2), a run
    name that is malformed or taken, or given with ``--results``, before
    pytest starts (the plug-in would refuse it too, naming its own
    ``--run-name``, with pytest's status 4); so is ``--name`` or
    ``--results`` given twice.  ``rest``: the arguments
    passed on to pytest.  Returns the ``--results`` folder given (the
    last, as pytest reads them), resolved, or None."""
    from . import runs
    names = [name] if name is not None else []
    results, given = None, 0
    for i, a in enumerate(rest):
        if a == "--run-name" and i + 1 < len(rest):
            names.append(rest[i + 1])
        elif a.startswith("--run-name="):
            names.append(a.split("=", 1)[1])
        folder = rest[i + 1] if a == "--results" and i + 1 < len(rest) else (
            a.split("=", 1)[1] if a.startswith("--results=") else None)
        if folder is not None:
            given += 1
            if given > 1:                               # pytest would take the last, silently
                raise ValueError("--results: given twice; give it once")
            results = Path(folder).resolve()
            problem = runs.unwritable(results)
            if problem:
                raise ValueError(f"--results {problem}")
    if not names:
        return results
    if len(names) > 1:
        raise ValueError(f"--name: given twice ({', '.join(map(repr, names))}); give one")
    if results:
        raise ValueError("--name names a run folder under results/; with --results the folder is DIR itself, "
                         "give one of them")
    runs.run_folder(Path("results"), "bench", names[0])      # ValueError naming --name when taken
    return None


def cmd_experiment(args) -> int:
    from .experiments import Options, extra_files, load_experiments, run_experiment
    if args.experiment_name == "list":
        given = [flag for flag, on in (("--quick", args.quick), ("--seeds", args.seeds is not None),
                                       ("--out", args.out is not None), ("--name", args.name is not None),
                                       ("--fresh", args.fresh), ("--resume", args.resume),
                                       ("--workers", args.jobs is not None), ("--scheduler", args.scheduler),
                                       ("--tasks", args.tasks is not None), ("--where", bool(args.where))) if on]
        if given:                                   # they were ignored without a word
            raise ValueError(f"{', '.join(given)}: options of a run; 'experiment list' runs nothing")
        for name, exp in sorted(load_experiments().items()):
            print(f"  {name:<18} {exp.help}")
        return 0
    from . import runs
    from .experiments import run_options
    from .sweep import SweepFailed
    if args.out is not None and args.name is not None:
        raise ValueError("--name names a run folder under results/; with --out the folder is OUT itself, "
                         "give one of them")
    opts = Options(quick=args.quick, jobs=args.jobs, seeds=args.seeds, out=args.out or Path("results"),
                   progress=not args.quiet, scheduler=args.scheduler, tasks=args.tasks,
                   where=tuple(args.where), fresh=args.fresh, resume=args.resume)
    provenance = None
    if args.out is None:
        want = run_options(args.experiment_name, opts, 0)["options"]

        def resumable(folder: Path) -> bool:
            info = runs.read(folder / runs.RUN_JSON) or {}
            return (info.get("experiment") == args.experiment_name and info.get("options") == want
                    and (folder / f"{args.experiment_name}.partial.jsonl").exists())

        folder, held = runs.claim_run_folder(Path("results"), args.experiment_name, args.name,
                                             None if args.fresh else resumable)     # --fresh: a new run folder
        opts = dataclasses.replace(opts, out=folder)
        provenance = folder / runs.RUN_JSON
    else:
        held = contextlib.ExitStack()
    try:
        with held:          # a run folder of its own, held from its choice on: two runs never pick one
            df, table = run_experiment(args.experiment_name, opts, provenance=provenance, argv=sys.argv)
    except SweepFailed as exc:
        status = runs.exit_status_of(exc)["exit_status"]
        if status == 2:       # every failure bad input (a malformed data file): said once per error
            print(f"epochbench experiment: error: {exc}", file=sys.stderr)
            return status
        again = "run it again without --fresh" if args.fresh else "run the same command"   # --fresh drops them
        then = (f"the other {exc.done} runs are saved; {again} to rerun the failed ones" if exc.done
                else "no run finished; fix the error and run the same command again")
        print(f"epochbench experiment: {exc.report()}\n{then}", file=sys.stderr)
        return status
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    out, name = opts.out, args.experiment_name
    extra = extra_files(name)
    if extra:
        import pandas as pd
    for file in extra:                                     # the experiment's other tables, as written
        print(f"\n{file[:-4]}:")
        try:
            extra_table = pd.read_csv(out / file)
        except pd.errors.EmptyDataError:                   # a plug-in's table with no column
            extra_table = pd.DataFrame()
        print(extra_table.to_string(index=False, float_format=lambda x: f"{x:.4g}") if len(extra_table)
              else "(no rows for the tasks run)")
    record = runs.read(provenance or out / f"{name}.run.json") or {}
    written = record.get("files") if isinstance(record.get("files"), list) else None
    figures = (sorted(f for f in written if str(f).endswith(".png")) if written is not None else   # what it wrote
               sorted(p.name for p in out.glob(f"{name}*.png") if p.name == f"{name}.png" or
                      p.name.startswith(f"{name}-") and not p.name[len(name) + 1:len(name) + 2].isdigit()))
    table_csv = out / f"{name}-table.csv"
    print(f"wrote {out / (name + '.csv')} ({len(df)} rows)"
          + (f", {table_csv.name}" if table_csv.exists() else "") + "".join(f", {f}" for f in extra + figures)
          + f" in {out}; provenance in {provenance or out / (name + '.run.json')}")
    return 0


def _add_solve(sub) -> None:
    s = sub.add_parser("solve", help="solve one instance file with one method",
                       description="Solve one instance file (as generate writes them) with one method, check "
                                   "the answer and print its value, status, bound and time (--json: one JSON "
                                   "object).")
    s.add_argument("file", type=Path, help="instance file (JSON, as generate writes them)")
    s.add_argument("--method", required=True,
                   help="a method of the instance's family ('epochbench list' lists them)")
    s.add_argument("--time-limit", type=float, default=None,
                   help="seconds: the whole call of an exact method (default 10), or the budget of a heuristic "
                        "that has one (mapping: ga, sa, tabu)")
    s.add_argument("--threads", type=int, default=None, help="solver threads, exact methods (default 1)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--reference", action="append", default=[], type=Path, metavar="FILE",
                   help="results file of reference values, as for score (repeatable); the output's "
                        "'reference' says the gap and whether the checked solution beats it")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="keyword argument of the method (repeatable; int, float, true/false or text), e.g. --param window=2")


def _add_score(sub) -> None:
    c = sub.add_parser("score", help="score methods on a family folder: CSV, Parquet, summary",
                       formatter_class=RawDescriptionHelpFormatter,
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
    c.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="seconds: the whole call of each exact method (default 10); heuristics run without it")
    c.add_argument("--threads", type=int, default=None, help="solver threads, exact methods (default 1)")
    c.add_argument("--out", type=str, metavar="OUT",
                   help="where to write: OUT.csv, OUT.parquet and OUT.run.json; when OUT is an existing folder or "
                        "ends with '/', OUT/scores.csv, ... inside it; OUT.csv is read as OUT (default DIR/scores)")
    c.add_argument("--reference", type=Path, action="append", default=[], metavar="FILE",
                   help="results file of reference values (CSV: instance[, dataset], optimum / best_known / "
                        "lower_bound / upper_bound); repeatable; see below")
    c.add_argument("-v", "--verbose", action="store_true",
                   help="show the progress line on stderr also when it is not a terminal")
    c.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="keyword argument of the methods that take it (repeatable; int, float, true/false or text), e.g. --param window=2")
    _add_sweep_options(c, "$EPOCHBENCH_WORKERS or all cores, one instance per worker at a time")


def _add_validate(sub) -> None:
    v = sub.add_parser("validate", help="check a user's heuristic for feasibility, gap and time")
    v.add_argument("function", help="MODULE:FUNCTION (or a plug-in heuristic's registered name) taking an "
                        "instance, returning the family's decision (packing, knapsack: "
                        "job indices; epochs: bins of job indices; assignment: (job, machine) pairs; "
                        "mapping: a machine per task) or a Result")
    v.add_argument("--family", default="packing", choices=["packing", "epochs", "knapsack", "assignment", "mapping"],
                   help="the family FUNCTION decides (default packing)")
    v.add_argument("--count", type=random_count, default=30,
                   help="random instances besides the edge cases (0: the edge cases alone; default 30)")
    v.add_argument("--seed", type=int, default=0, help="seed of the random instances (default 0)")
    v.add_argument("--time-limit", type=float, default=10.0, metavar="S",
                   help="seconds per instance for the exact reference (default 10); FUNCTION itself runs "
                        "without a limit, so a call that never returns holds the run up until Ctrl-C")
    v.add_argument("--exact", default="cpsat", metavar="METHOD",
                   help="the exact method whose proofs are the reference (default cpsat)")
    v.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="keyword argument of FUNCTION (repeatable; int, float, true/false or text), e.g. --param window=2")
    _add_sweep_options(v, "$EPOCHBENCH_WORKERS or all cores, one instance per worker at a time")


def _add_experiment(sub) -> None:
    e = sub.add_parser("experiment", help="rerun a seed paper's experiment: CSV, PNG and table",
                       description="Run experiment NAME (`epochbench experiment list` lists them): "
                                   "independent runs in parallel processes, one tidy row per run in "
                                   "OUT/NAME.csv, a figure in OUT/NAME.png, the summary table printed. "
                                   "Without --out, each run gets a folder of its own under results/ "
                                   "(results/NAME-YYYYMMDD-HHMMSS, or results/RUN with --name RUN) with "
                                   "a run.json of provenance; an unfinished run of the same command is "
                                   "resumed there.")
    e.add_argument("experiment_name", metavar="name", help="experiment name, or 'list'")
    e.add_argument("--quick", action="store_true",
                   help="the small version (about 2 minutes or less on an idle 2-core machine; a first run "
                        "after installing also compiles the kernels)")
    e.add_argument("--seeds", type=int, help="repetitions per point (default: the experiment's)")
    e.add_argument("--out", type=Path, default=None,
                   help="output folder, used as it is (NAME.csv, NAME.run.json, ...; a finished earlier run's "
                        "files there are renamed NAME-RUNID.*); default: a new run folder under results/")
    e.add_argument("--name", help="name of the run folder under results/ (default NAME-YYYYMMDD-HHMMSS)")
    e.add_argument("--quiet", action="store_true",
                   help="no progress lines (rows reused from NAME.partial.jsonl are still said, in one line)")
    again = e.add_mutually_exclusive_group()
    again.add_argument("--fresh", action="store_true",
                       help="recompute every chosen task: reuse no rows stored in NAME.partial.jsonl "
                            "(default: reuse those this commit computed, saying so on stderr and in run.json)")
    again.add_argument("--resume", action="store_true",
                       help="reuse stored rows even where another commit or version of epochbench computed "
                            "them (refused without it); run.json records it")
    _add_sweep_options(e, "$EPOCHBENCH_WORKERS or all cores; timing runs one per worker", subsets=True)


def _add_sweep_options(p, default: str, subsets: bool = False) -> None:
    """``--workers``/``--scheduler`` (and ``--tasks``/``--where``) of a command
    whose work is a sweep of independent tasks (:mod:`epochbench.sweep`)."""
    p.add_argument("--workers", "--jobs", dest="jobs", type=int, metavar="N",
                   help=f"local worker processes (default: {default}); 1 runs in this process; "
                        "not with a scheduler")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler to run on, e.g. tcp://head:8786 (default: $EPOCHBENCH_SCHEDULER, "
                        "else a local cluster)")
    if subsets:
        p.add_argument("--tasks", metavar="RANGES", help="only these task indices, e.g. 0:10,20")
        p.add_argument("--where", action="append", default=[], metavar="FIELD=VALUE",
                       help="only tasks whose FIELD equals VALUE (repeatable), e.g. --where ta=4")


def _add_bench(sub) -> None:
    b = sub.add_parser("bench", help="run the benchmark suite (pytest --benchmark) and print its table")
    b.add_argument("--quick", action="store_true", help="small sizes and short time limits")
    b.add_argument("--name", help="name of this run's folder under results/ (default bench-YYYYMMDD-HHMMSS; "
                                  "--results DIR writes into DIR instead)")
    b.add_argument("pytest_args", nargs=argparse.REMAINDER, help="more pytest arguments")


def _add_compare(sub) -> None:
    c = sub.add_parser("compare", help="compare two saved runs (bench results, score tables): gap and time per method",
                       description="Compare two saved runs (an 'epochbench bench' results folder, a "
                                   "'score' CSV, or a pytest-benchmark JSON file): per family and method the "
                                   "change in mean and "
                                   "max gap and in median decision time, flagged beyond the noise (time: "
                                   "a ratio beyond 1.25 either way). A and B must be of one kind, solves (a "
                                   "results folder or a CSV: they compare on the instances both hold; a folder "
                                   "against a CSV compares gaps, not times, as a CSV's time is one cold call) or "
                                   "JSON files: a folder and a JSON file measure time differently (a median "
                                   "over solves; a median of the benchmarks' medians) and name their solves differently, so one "
                                   "against the other is refused.")
    c.add_argument("a", type=Path, help="the run before (results folder, score CSV or JSON)")
    c.add_argument("b", type=Path, help="the run after")
    c.add_argument("--fail-on", action="append", default=[], metavar="WHAT:X%",
                   help="exit 1 if a method's mean gap grows by more than X percentage points (gap:0.5%%) or "
                        "its median time by more than X %% (time:20%%; a row beyond it is flagged slower even "
                        "within the noise), if a method of A is gone from B, or if no method was measured "
                        "by both runs on a common instance (compare runs of the same selection); repeatable")


def cmd_compare(args) -> int:
    from .compare import TIME_NOISE, Threshold, compare_runs, format_comparison
    thresholds = [Threshold.parse(t) for t in args.fail_on]
    for t in thresholds:
        if t.note:
            print(f"epochbench compare: {t.note}", file=sys.stderr)
    table = compare_runs(args.a, args.b, slower=min([TIME_NOISE, *(t.slower() for t in thresholds)]))
    timed = [t for t in thresholds if t.what != "gap"]
    if timed and table.attrs["untimed"]:
        raise ValueError(f"--fail-on {timed[0].what}: A and B measure time differently ({table.attrs['untimed']}); "
                         "compare two results folders, or two score CSVs, for time")
    for note in table.attrs["notes"]:
        print(f"epochbench compare: {note}", file=sys.stderr)
    same = table.attrs["same"]
    if same:
        print("note: A and B are the same run" if same == "file" else
              "note: A and B hold the same measurements (a copy of one run)")
    print(format_comparison(table))
    broken = [(t, t.broken_by(table)) for t in thresholds]
    for t, rows in broken:
        for r in rows.itertuples():
            what = ("gone: measured in A, not in B" if r.gone else
                    "no time in B: every solve failed" if t.what != "gap" and getattr(r, "lost_time", False) else
                    f"time x{_past(r.time_ratio, 1 + t.limit / 100, '')}" if t.what != "gap" else
                    f"gaps on {r.gapped_b:g} of {r.solves_b:g} solves (A: {r.gapped_a:g} of {r.solves_a:g})"
                    if r.lost_gaps else f"mean gap {_past(r.d_mean, t.limit, '+')} pp")
            where = f" on {r.set}" if getattr(r, "set", "") else ""
            print(f"FAIL {r.family} {r.method}{where}: {what} (limit {t.what}:{t.limit:g}%)")
    compared = ~table["flag"].isin(["disjoint", "new", "gone"])     # measured in both, on common instances
    nothing = bool(thresholds) and not compared.any()
    if nothing:                                  # a guard that compared nothing must not pass
        print("FAIL nothing compared: no method was measured by A and B on a common instance "
              "(compare runs of the same selection)")
    return 1 if nothing or any(len(rows) for _, rows in broken) else 0


def _add_runs(sub) -> None:
    r = sub.add_parser("runs", help="list saved runs (bench, experiment, score) and their provenance",
                       description="List the runs whose provenance files (run.json, NAME.run.json) lie under "
                                   "the folders given (default: the current folder, four levels down), "
                                   "newest first.")
    r.add_argument("folders", nargs="*", type=Path, default=[Path(".")], metavar="DIR",
                   help="folders to look in, four levels down (default: the current folder)")
    r.add_argument("--json", action="store_true", help="print the provenance records as one JSON array")


def cmd_runs(args) -> int:
    from epochbench.instances.core import json_text

    from . import runs
    for folder in args.folders:
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{folder}: a file, not a folder (give the folder that holds the runs)")
        if not folder.is_dir():
            raise ValueError(f"{folder}: no such folder")
    found = {}                       # by file: runs DIR DIR/ (or DIR DIR/RUN) lists each run once
    for f in args.folders:
        for r in runs.find_runs(f):
            found.setdefault(Path(r["path"]).resolve(), r)
    found = sorted(found.values(), key=lambda r: str(r.get("started", "")), reverse=True)
    print(json_text(found, indent=2) if args.json else runs.format_runs(found))
    return 0


def _add_list(sub) -> None:
    ls = sub.add_parser("list", help="registered methods per family (--policies: the simulator's policies)")
    ls.add_argument("--policies", action="store_true",
                    help="the simulator's policies per machine, their rules and options")


def _lazy(module: str, name: str):
    """``module.name``, imported when called (the simulator's command line
    loads the policy registry only for its own commands)."""
    def call(*args):
        import importlib
        return getattr(importlib.import_module(module, __package__), name)(*args)
    return call


#: command -> (one-line help, add its subparser, run it); the parser of a
#: command is built only when that command runs (or for ``--help``)
COMMAND_TABLE = {
    "generate": ("generate an instance family (deterministic by --seed)", _add_generate, "cmd_generate"),
    "solve": ("solve one instance file with one method", _add_solve, "cmd_solve"),
    "score": ("score methods on a family folder: CSV, Parquet, summary", _add_score, "cmd_score"),
    "list": ("registered methods per family (--policies: the simulator's policies)", _add_list, "cmd_list"),
    "validate": ("check a user's heuristic for feasibility, gap and time", _add_validate, "cmd_validate"),
    "simulate": ("replay a job stream under a scheduling policy", _lazy(".cli_simulate", "add_simulate"),
                 _lazy(".cli_simulate", "cmd_simulate")),
    "calibrate": ("scale a job stream's arrivals to a target mean queue length",
                  _lazy(".cli_simulate", "add_calibrate"), _lazy(".cli_simulate", "cmd_calibrate")),
    "experiment": ("rerun a seed paper's experiment: CSV, PNG and table", _add_experiment, "cmd_experiment"),
    "bench": ("run the benchmark suite (pytest --benchmark) and print its table", _add_bench, "cmd_bench"),
    "compare": ("compare two saved runs (bench results, score tables): gap and time per method", _add_compare,
                "cmd_compare"),
    "runs": ("list saved runs and their provenance (run.json)", _add_runs, "cmd_runs"),
}


#: commands whose unknown options are passed on (to pytest), by the argument that collects them
PASS_THROUGH = {"bench": "pytest_args"}

#: options of ``epochbench`` itself that take a value
GLOBAL_VALUED = ("--data",)


def _command_in(argv) -> str | None:
    """The command named in ``argv`` (its first word that is not an option of
    ``epochbench`` itself), or None."""
    it = iter(argv)
    for a in it:
        if a in GLOBAL_VALUED:
            next(it, None)
        elif not a.startswith("-"):
            return a if a in COMMAND_TABLE else None
    return None


def build_parser(command: str | None = "") -> argparse.ArgumentParser:
    """The ``epochbench`` parser.  ``command``: build that command's options
    only (the others are named with their help), ``None`` for none (``--help``),
    ``""`` for all."""
    p = Parser(prog="epochbench", description=plain_text(__doc__))
    p.add_argument("--version", action=_Version)
    p.add_argument("--data", type=Path, metavar="DIR",
                   help="folder of the reference data (VBP, SWF, OR-Library, Braun); default $EPOCHBENCH_DATA, "
                        "or ../shared/data beside a source checkout")
    sub = p.add_subparsers(dest="command", required=True)
    for name, (help_, add, _) in COMMAND_TABLE.items():
        if command == "" or command == name:
            add(sub)
        else:
            sub.add_parser(name, help=help_)
    _strict_types(p)
    once(p)
    return p


def _version() -> str:
    from epochbench import __version__
    return __version__


class _Version(argparse.Action):
    """``--version``: argparse's version action, the version looked up only
    when asked for (reading the installed metadata costs 30 ms a command)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"epochbench {_version()}\n", sys.stdout)
        parser.exit()


def _runner(name: str):
    run = COMMAND_TABLE[name][2]
    return globals()[run] if isinstance(run, str) else run


#: command -> the function running it
COMMANDS = {name: _runner(name) for name in COMMAND_TABLE}


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


def _command_name(args) -> str:
    """The command as its argument errors name it (``generate workload``:
    argparse's subcommand of a subcommand), for its other errors too."""
    generator = getattr(args, "generator", None) if args.command == "generate" else None
    return f"{args.command} {generator}" if generator else args.command


def run_command(args) -> int:
    """Run the parsed command; bad input becomes one line and status 2, a
    run that stopped for another reason (:class:`RunStopped`: a user's
    method failed mid-run, the scheduler went away) one line and status 1."""
    name = _command_name(args)
    try:
        _check_sweep_options(args)
        with _output_locks(args), _notes_as_lines(name):
            return COMMANDS[args.command](args)
    except (*USER_ERRORS, RunStopped, MemoryError) as exc:   # RunStopped: a user's method failed, a scheduler
        from . import runs                                    # (here: 19 ms of imports a run needs no more)
        if isinstance(exc, MemoryError):                      # went away; MemoryError: sizes past this machine
            print(f"epochbench {name}: error: not enough memory for the sizes asked for "   # (numpy: "Unable to
                  f"({' '.join(str(exc).split()) or 'MemoryError'})", file=sys.stderr)     # allocate 745. GiB")
        else:
            print(_error_line(name, exc), file=sys.stderr)
        return runs.exit_status_of(exc)["exit_status"]          # the statuses run records keep, from one table


@contextlib.contextmanager
def _notes_as_lines(name: str):
    """While a command runs, each :class:`InputNote` (a note on its input:
    names numbered, jobs a fit left out) is one line on stderr, ``epochbench
    NAME: ...``, once (a sweep's tasks that read the same file in this
    process say it once); other warnings show as before.  Tasks on worker
    processes send theirs back with their outcomes, and they are said here
    (:func:`epochbench.sweep._on_worker`)."""
    said: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("always", InputNote)
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, InputNote):
                if str(message) not in said:
                    said.add(str(message))
                    print(f"epochbench {name}: {message}", file=sys.stderr, flush=True)
            else:
                shown(message, category, filename, lineno, file, line)
        warnings.showwarning = show
        yield


def _past(value: float, limit: float, sign: str) -> str:
    """``value`` with two decimals, or more where two would not show it past
    ``limit`` (+0.1705 pp against a limit of 0.17 read "+0.17")."""
    for digits in (2, 4, 6):
        text = f"{value:{sign}.{digits}f}"
        if abs(float(text)) > limit:
            return text
    return f"{value:{sign}.10g}"


def _check_sweep_options(args) -> None:
    """``--workers`` sizes a local cluster (or, at 1, keeps the sweep in
    this process); with a scheduler the scheduler's workers run the sweep,
    so the two together are refused rather than one ignored."""
    if not hasattr(args, "scheduler") or getattr(args, "jobs", None) is None:   # a sweep's options only
        return                                                                 # (generate's --jobs is a count)
    if getattr(args, "experiment_name", None) == "list":    # runs nothing: refused as such by the command
        return
    from epochbench.sweep import SCHEDULER_ENV, scheduler_of
    address = scheduler_of(getattr(args, "scheduler", None))
    if address is None:
        return
    if (getattr(args, "scheduler", None) or "").strip():
        raise ValueError(f"--workers {args.jobs} and --scheduler {address}: the scheduler's workers run the "
                         f"sweep and --workers sizes a local one; give one of them")
    raise ValueError(f"--workers {args.jobs} and ${SCHEDULER_ENV} ({address}): the scheduler's workers run the "
                     f"sweep and --workers sizes a local one; unset {SCHEDULER_ENV} to run on local workers")


def _folder_of(path: Path) -> Path:
    """The folder an ``--out`` writes into: itself, or its parent when it
    names a file (has a suffix, or is a name like ``.swf`` that pathlib
    gives none, and is not an existing folder: ``--out .swf`` made a folder
    ``.swf`` to lock, then refused to write the file there, "already exists")."""
    dotted = path.name.startswith(".") and path.name not in (".", "..")
    return path.parent if (path.suffix or dotted) and not path.is_dir() else path


def _score_prefix(args) -> Path:
    """Where ``score`` writes (``PREFIX.csv``, ``PREFIX.parquet``,
    ``PREFIX.run.json``): ``--out`` as a prefix, or ``OUT/scores`` when
    ``--out`` names an existing folder or ends with a path separator;
    without ``--out``, ``DIR/scores`` (beside an instance file).  A prefix
    ending in one of the files' suffixes (``o.csv``) is the prefix without
    it: ``o.csv.csv`` and ``o.csv.parquet`` were written."""
    if args.out is None:
        return (args.dir if args.dir.is_dir() else args.dir.parent) / "scores"
    text = str(args.out)
    if text.endswith(("/", os.sep)) or Path(text).is_dir():
        return Path(text) / "scores"
    for suffix in (".csv", ".parquet", ".run.json"):
        if text.lower().endswith(suffix) and len(Path(text).name) > len(suffix):
            return Path(text[:-len(suffix)])
    return Path(text)


def _score_folder(args) -> Path:
    return _score_prefix(args).parent


#: command -> the output folders it writes (locked while it runs; see instances.files)
OUTPUT_FOLDERS = {
    "generate": lambda a: [_folder_of(a.out)],
    "score": lambda a: [_score_folder(a)],
    "simulate": lambda a: [p for p in (a.out, a.record_epochs) if p],
    "experiment": lambda a: [a.out] if a.experiment_name != "list" and a.out is not None else [],
    # bench: cmd_bench holds --results DIR, the plug-in the run folder it writes (known once it is chosen)
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


def _freeze_at_exit() -> None:
    """At interpreter exit, move every object the garbage collector tracks
    to its permanent generation (:func:`gc.freeze`), once per process.

    The collections of the interpreter's teardown would otherwise walk every
    object of numba, llvmlite and scipy that a command imported, to free
    what the process's exit frees anyway: 0.2-0.3 s of every ``epochbench
    simulate``, 0.03-0.07 s with the objects frozen.  Files are closed by
    then (every writer uses ``with``) and exit handlers do not depend on the
    collector."""
    global _FREEZE_REGISTERED
    if not _FREEZE_REGISTERED:
        import atexit
        import gc
        atexit.register(gc.freeze)
        _FREEZE_REGISTERED = True


_FREEZE_REGISTERED = False


def _subparser(parser, command):
    """The parser of subcommand ``command`` (``parser`` itself without one)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser


def main(argv=None) -> int:
    """The ``epochbench`` entry point; returns the exit status.

    Bad input: one line, status 2 (:func:`run_command`).  Ctrl-C: one line
    (``interrupted``, or what the command says it saved), status 130.
    Output into a closed pipe: quiet, status 141 (128 + SIGPIPE, as a
    shell reports a tool that SIGPIPE ended)."""
    command = "epochbench"
    _freeze_at_exit()
    term = _TermAsInterrupt()
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(_command_in(argv))
        if _command_in(argv) in PASS_THROUGH:           # its unknown options go to the tool it runs
            args, rest = parser.parse_known_args(argv)
            setattr(args, PASS_THROUGH[args.command], rest + getattr(args, PASS_THROUGH[args.command]))
        else:
            args, rest = parser.parse_known_args(argv)
            if rest:                                # said by the command's own parser: "epochbench list: error"
                _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(rest)}")
        if args.data is not None:                   # workers and the benchmark suite inherit it
            os.environ["EPOCHBENCH_DATA"] = str(args.data.resolve())
        command = f"epochbench {args.command}"
        from epochbench.instances.arguments import command_line
        with command_line():                        # messages name --flags (arguments.named)
            status = run_command(args)
        sys.stdout.flush()
        return status
    except KeyboardInterrupt as exc:
        said = exc.args[0] if exc.args else "interrupted"
        print(f"{command}: {said}{' (SIGTERM)' if term.seen and 'SIGTERM' not in said else ''}", file=sys.stderr)
        return 143 if term.seen else 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    finally:
        term.restore()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's ``KeyboardInterrupt`` would be, so that
    a run stopped by ``timeout``, a batch system's cancel or systemd ends as
    one stopped by Ctrl-C does: its record says ``interrupted``, a local
    cluster and the solvers its workers started are stopped (a ``score``
    given SIGTERM left its CBC processes running to their time limit and
    recorded nothing).  ``signal_name`` tells the benchmark suite's plug-in
    that it is a stop, not one of pytest's own ``KeyboardInterrupt``
    subclasses (a failed collection)."""

    signal_name = "SIGTERM"


class _TermAsInterrupt:
    """While :func:`main` runs in the main thread, SIGTERM raises
    :class:`Terminated` (``seen`` records it: exit status 143, 128 +
    SIGTERM); :meth:`restore` puts the previous handler back.

    A signal handler's exception that lands in code Python cannot raise
    from (a garbage-collection callback, ``__del__``: "Exception ignored
    in ...") is lost: once in ten SIGTERMs to a Dask experiment the run
    went on to the end and was recorded ``finished`` with status 0.  Such a
    lost :class:`Terminated` (or Ctrl-C's ``KeyboardInterrupt``) reaches
    :data:`sys.unraisablehook`, which has its signal sent to the main
    thread again 10 ms later, from another thread
    (:func:`signal.pthread_kill`), so that the handler raises at the next
    point that can, a blocking wait included."""

    def __init__(self):
        import signal
        import threading
        self.seen, self.installed, self.previous, self.hook = False, False, None, None
        if threading.current_thread() is threading.main_thread():
            self.previous, self.installed = signal.signal(signal.SIGTERM, self._raise), True
            self.hook, sys.unraisablehook = sys.unraisablehook, self._unraisable

    def _raise(self, signum, frame):
        self.seen = True
        raise Terminated("stopped by SIGTERM")

    def _unraisable(self, unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and self.installed:     # Ctrl-C's too
            import signal
            import threading
            sig = signal.SIGTERM if isinstance(unraisable.exc_value, Terminated) else signal.SIGINT
            main = threading.main_thread().ident
            # a real signal to the main thread, from another thread, a moment later: sent from here, the
            # handler ran at once, inside this hook, and its exception was lost again; and
            # _thread.interrupt_main only sets a flag, which a main thread blocked in a wait (a Dask
            # result) reads when the wait ends (3 s later in a test, where a signal took 0.06 s)
            again = threading.Timer(0.01, lambda: self.installed and signal.pthread_kill(main, sig))
            again.daemon = True
            again.start()
            return
        (self.hook or sys.__unraisablehook__)(unraisable)

    def restore(self) -> None:
        import signal
        if self.installed:            # None: a handler not set from Python, which reads as the default
            signal.signal(signal.SIGTERM, signal.SIG_DFL if self.previous is None else self.previous)
            if sys.unraisablehook == self._unraisable:
                sys.unraisablehook = self.hook
            self.installed = False


if __name__ == "__main__":
    sys.exit(main())
