"""pytest plug-in of the benchmark suite: ``--benchmark`` runs the suite in
this folder instead of the correctness tests, ``--quick`` its small version.

The checkout's root ``conftest.py`` loads it (plain ``pytest`` runs
``tests/``, ``pytest --benchmark`` runs this folder); ``epochbench bench``
loads it with ``-p`` and points pytest at this folder wherever the package
is installed.

PYTEST_DONT_REWRITE: ``epochbench bench`` imports this module before
pytest loads it (it holds no assert for pytest to rewrite), and pytest
warned on every run that it could not rewrite it.
"""
from pathlib import Path

#: the folder of the benchmark suite (inside the installed package)
HERE = Path(__file__).resolve().parent


def pytest_addoption(parser):
    group = parser.getgroup("epochbench")
    group.addoption("--benchmark", action="store_true", default=False,
                    help="run the benchmark suite (gap and speed of every method) instead of the tests")
    group.addoption("--quick", action="store_true", default=False,
                    help="with --benchmark: small sizes, few instances, short time limits")
    group.addoption("--results", default=None, metavar="DIR",
                    help="with --benchmark: folder of the result tables, used as it is (a finished earlier "
                         "run's files there are renamed FILE-RUNID.*); default: a run folder of its own, "
                         "./results/bench-YYYYMMDD-HHMMSS")
    group.addoption("--run-name", default=None, metavar="NAME",
                    help="with --benchmark: name of the run folder under ./results (it must not exist)")


#: non-empty once the session was stopped by Ctrl-C (:func:`pytest_keyboard_interrupt`):
#: pytest ends it with status 2, as it ends one whose collection failed
_CTRL_C: list = []


def pytest_keyboard_interrupt(excinfo):
    """pytest calls this for a Ctrl-C and for its own subclasses of
    ``KeyboardInterrupt`` (a failed collection, ``-x`` under xdist): a
    plain one is a Ctrl-C, and one that says it came from a signal (the
    command line's SIGTERM, ``signal_name``) is a stop too."""
    value = getattr(excinfo, "value", None)
    if type(value) is KeyboardInterrupt or (isinstance(value, KeyboardInterrupt)
                                            and getattr(value, "signal_name", None)):
        _CTRL_C.append(value)


def interrupted() -> bool:
    """Whether the last session was stopped by Ctrl-C (not by a collection error)."""
    return bool(_CTRL_C)


#: true while ``epochbench bench`` runs the suite: the command, not pytest,
#: gives the process its exit status (130 or 143 for a stop, pytest's 2)
COMMAND = [False]


def recorded_status(exitstatus: int) -> int:
    """The ``exit_status`` a run record keeps: the process's.  pytest's own,
    except for a stop under ``epochbench bench``, which exits 130 (Ctrl-C)
    or 143 (SIGTERM: :func:`epochbench.runs.stop_status`) where pytest
    would exit 2."""
    if COMMAND[0] and end_status(exitstatus) == "interrupted":
        from epochbench import runs
        return runs.stop_status(_CTRL_C[-1])
    return int(exitstatus)


#: the option that named the run folder, as the user typed it: ``epochbench
#: bench`` passes its ``--name`` on as ``--run-name`` and sets this, so that
#: a refusal names the option the user gave
NAME_OPTION = ["--run-name"]
#: the usage errors of this plug-in's last session (:func:`refused`)
_REFUSED: list = []


def refused() -> bool:
    """Whether the plug-in itself refused the last session's options (pytest
    printed why; its status 4 is then no bad pytest argument)."""
    return bool(_REFUSED)


def pytest_configure(config):
    _CTRL_C.clear()
    _REFUSED.clear()
    if config.getoption("--benchmark") and not config.args_source.name == "ARGS":
        config.args[:] = [str(HERE)]
    if config.getoption("--benchmark"):
        import pytest
        try:
            if not hasattr(config, "workerinput"):      # the controller: xdist workers write no JSON file
                problem = json_refusal(config.getoption("benchmark_json", None))
                if problem:
                    raise pytest.UsageError(problem)
            _start_run(config)
        except pytest.UsageError as exc:
            _REFUSED.append(str(exc))
            raise


def json_refusal(path) -> str | None:
    """Why a ``--benchmark-json`` file (pytest-benchmark's option) may not be
    written, or None: it exists (pytest-benchmark wrote over it without a
    word, a baseline kept as before.json lost by a rerun), or its folder
    does not exist or cannot be written (the finished run then failed, and
    its tables were lost)."""
    if path is None:
        return None
    from epochbench import runs
    if not str(path).strip():
        return f"--benchmark-json {path!r}: needs a file name"
    file = Path(path)
    if file.is_dir():
        return f"--benchmark-json {path}: is a folder; give a file name"
    if file.exists() or file.is_symlink():
        return f"--benchmark-json {path}: exists, and would be written over; remove it or give another file"
    if not file.parent.is_dir():
        return f"--benchmark-json {path}: no folder {file.parent} to write it in"
    problem = runs.unwritable(file.parent)
    return f"--benchmark-json {problem}" if problem else None


def _start_run(config) -> None:
    """Fix this run's results folder, hold it (:func:`_claim`) and prepare
    its provenance record (:mod:`epochbench.runs`), written when the
    benchmarks are collected (:func:`pytest_collection_finish`); a bad or
    taken ``--run-name`` is a usage error."""
    import sys

    import pytest

    from epochbench import runs
    given, name = config.getoption("--results"), config.getoption("--run-name")
    if given and name:
        raise pytest.UsageError(f"{NAME_OPTION[0]} names a folder under ./results; with --results the folder is DIR "
                                "itself, give one of them")
    folder, held = _claim(config, given, name)
    rid = f"bench-{runs.stamp()}" if given else folder.name        # DIR given: it may hold several runs
    from epochbench.sweep import scheduler_of
    quick = bool(config.getoption("--quick"))
    info = runs.provenance("bench", rid, argv=sys.argv, quick=quick, pytest_args=list(config.invocation_params.args),
                           execution={"scheduler": scheduler_of(None)},   # the reference solves' (score's field)
                           **_settings(quick))
    config.stash[RUN] = (folder, info)
    config.stash[HELD] = held


def _settings(quick: bool) -> dict:
    """The seeds and exact time limits of the packing and epochs
    configurations (:func:`epochbench.suite.configs`), for ``run.json``: the
    README's "the command's seeds, time limits and options"; the other
    families' modules declare theirs (:func:`_module_settings`,
    ``module_settings`` in run.json)."""
    from epochbench.suite import configs
    cfgs = configs(quick)
    return {"seeds": sorted({dict(c.params)["seed"] for c in cfgs if "seed" in dict(c.params)}),
            "time_limit": sorted({c.time_limit for c in cfgs}),
            "configs": [{"config": c.id, "family": c.family, "generator": c.generator, "params": dict(c.params),
                         "time_limit": c.time_limit} for c in cfgs]}


def _claim(config, given: str | None, name: str | None):
    """This run's results folder and the :class:`contextlib.ExitStack` that
    holds its lock (:func:`epochbench.instances.files.output_lock`) until
    :func:`pytest_unconfigure`: two runs never write into one folder.  A
    run folder of its own under ``./results`` that another run took first
    (two started in the same second) gives way to the next name
    (:func:`epochbench.runs.claim_run_folder`); a ``--results DIR`` or
    ``--run-name`` that another run holds is a usage error naming the
    option.  An xdist worker holds nothing (its controller does)."""
    import contextlib

    import pytest

    from epochbench import runs
    from epochbench.instances.files import OutputError, output_lock
    if hasattr(config, "workerinput"):
        return (Path(given).resolve() if given else runs.run_folder(Path("results").resolve(), "bench", name),
                contextlib.ExitStack())
    try:
        if not given:
            return runs.claim_run_folder(Path("results").resolve(), "bench", name, option=NAME_OPTION[0])
        folder = Path(given).resolve()
        problem = runs.unwritable(folder)
        if problem:
            raise pytest.UsageError(f"--results {problem}")
        held = contextlib.ExitStack()
        held.enter_context(output_lock(folder, option="--results"))
        return folder, held
    except (ValueError, OutputError) as exc:          # OutputBusy is an OutputError
        raise pytest.UsageError(str(exc).replace("--name", NAME_OPTION[0])) from None


def end_status(exitstatus: int) -> str:
    """A run record's final status for pytest's exit status: ``finished``
    (all passed), ``interrupted`` (Ctrl-C: pytest's status 2, which a
    failed collection gets too, :func:`interrupted` tells them apart),
    ``failed`` (anything else)."""
    import pytest
    if int(exitstatus) == int(pytest.ExitCode.OK):
        return "finished"
    return "interrupted" if int(exitstatus) == int(pytest.ExitCode.INTERRUPTED) and interrupted() else "failed"


def failure(config) -> dict:
    """``{"error": ...}`` naming what failed in this session (how many
    benchmarks failed or erred, the first of them and the last line of its
    report), for a failed run's record (``epochbench runs`` shows it);
    ``{}`` when nothing did.  Read from the terminal reporter's tallies."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", {}) or {}
    bad = [r for key in ("failed", "error") for r in stats.get(key, []) if hasattr(r, "nodeid")]
    if not bad:
        return {}
    counts = ", ".join(f"{len(stats[k])} " + ("failed" if k == "failed" else "error" if len(stats[k]) == 1
                                              else "errors") for k in ("failed", "error") if stats.get(k))
    first = bad[0]
    crash = getattr(getattr(first, "longrepr", None), "reprcrash", None)     # "RuntimeError: why"
    text = (getattr(crash, "message", None) or str(getattr(first, "longrepr", "") or "")).strip().splitlines()
    why = f": {text[0].strip()[:200]}" if crash and text else f": {text[-1].strip()[:200]}" if text else ""
    return {"error": f"{counts}; first: {first.nodeid or 'collection'}{why}"}


#: the files a run writes into its folder besides the leaderboards and the modules' tables
RUN_FILES = ("bench-scores.csv", "bench-summary.csv", "bench-by-k.csv", "bench-ms-by-n.csv", "bench-solves.csv",
             "leaderboard.png")


def _earlier_files(folder: Path) -> list[Path]:
    """The files of an earlier run in ``folder`` that this run may write
    over: the suite's own names (with a leaderboard and a module table per
    registered family) and whatever the earlier run's record lists."""
    from epochbench import runs
    from epochbench.instances.registry import methods
    families = sorted({m.family for m in methods()})
    names = [*RUN_FILES, *(f"leaderboard-{f}.csv" for f in families), *(f"bench-{f}.csv" for f in families)]
    listed = (runs.read(folder / runs.RUN_JSON) or {}).get("files", [])
    names += [f for f in listed if isinstance(f, str) and "/" not in f]
    return sorted({folder / n for n in names})


def pytest_collection_finish(session):
    """The run starts: an earlier run's record and files in its folder are
    renamed ``STEM-RUNID.*`` (said in one line) and its own record is
    written, status ``running``, so that ``epochbench runs`` lists it while
    it runs and after it is killed (``dead``).  A run that selected nothing
    or only collects (``--collect-only``) records nothing."""
    config = session.config
    if RUN not in config.stash or hasattr(config, "workerinput") or config.option.collectonly or not session.items:
        return
    from epochbench import runs
    folder, info = config.stash[RUN]
    info["module_settings"] = _module_settings(session.items)
    kept = runs.keep_previous(_earlier_files(folder), folder / runs.RUN_JSON)
    if kept:
        info["kept_previous"] = [p.name for p in kept]
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        line = f"epochbench: the previous run's files in {folder} are kept as {', '.join(info['kept_previous'])}"
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)
    runs.write(info, folder / runs.RUN_JSON)
    info["_recorded"] = True


def _module_settings(items) -> dict:
    """``{module: SETTINGS}`` of the benchmark modules with selected items
    that declare the seeds and time limits of their benchmarks
    (``SETTINGS``, built from the constants they run with): the
    configurations of :func:`_settings` cover packing and epochs only, and
    run.json left out the other families' seeds and limits (mapping's exact
    solves at 30 s, assignment's at 60 s, its dense matrices' seed 2)."""
    out = {}
    for item in items:
        module = getattr(item, "module", None)
        settings = getattr(module, "SETTINGS", None)
        if isinstance(settings, dict):
            out[module.__name__.rpartition(".")[2]] = settings
    return dict(sorted(out.items()))


def pytest_sessionfinish(session, exitstatus):
    if RUN in session.config.stash:
        session.config.stash[EXIT] = int(exitstatus)


def pytest_unconfigure(config):
    """End the run: a record still ``running`` (no table was written: the
    leaderboards' hook finishes the others) gets its end and status; the
    folder's lock is let go."""
    held = config.stash.get(HELD, None)
    try:
        folder, info = config.stash.get(RUN, (None, None))
        if info is not None and info.get("_recorded") and info.get("status") == "running":
            from epochbench import runs
            status = config.stash.get(EXIT, 1)
            status_text = end_status(status)
            runs.finish(info, folder / runs.RUN_JSON, status_text, exit_status=recorded_status(status), files=[],
                        **(failure(config) if status_text == "failed" else {}))
    finally:
        if held is not None:
            held.close()


#: this run's results folder and provenance record (set by ``pytest_configure``)
import pytest as _pytest  # noqa: E402  (the stash key needs pytest, the plug-in's host)

RUN = _pytest.StashKey[tuple]()
#: the lock on the run's folder (released by ``pytest_unconfigure``) and pytest's exit status
HELD = _pytest.StashKey[object]()
EXIT = _pytest.StashKey[int]()


@_pytest.hookimpl(optionalhook=True)  # pytest-benchmark's hook: absent with -p no:benchmark
def pytest_benchmark_update_commit_info(config, commit_info):
    """The benchmark JSON's ``commit_info`` names the benchmarked code
    (:func:`epochbench.runs.commit_info`), not the checkout of the
    directory the run was started in."""
    from epochbench import runs
    commit_info.clear()
    commit_info.update(runs.commit_info())


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def pytest_ignore_collect(collection_path, config):
    path = Path(collection_path)
    if _inside(path, HERE):
        return None if config.getoption("--benchmark") else True
    return True if config.getoption("--benchmark") else None
