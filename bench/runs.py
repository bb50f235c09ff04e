"""Results with history: run folders, ``run.json`` provenance, ``epochbench runs``.

Every ``bench`` and ``experiment`` run writes into a folder of its own
(:func:`run_folder`: ``ROOT/NAME`` with ``--name``, else
``ROOT/COMMAND-YYYYMMDD-HHMMSS``) holding a ``run.json``; ``score`` writes
its files where it always did, with ``PREFIX.run.json`` beside them.  Before
a command writes a file that an earlier run left, :func:`keep_previous`
renames the earlier run's files to ``STEM-RUNID.SUFFIX`` (its run id read
from its provenance file), so nothing is overwritten silently.  A run id is
unique among the provenance files of its folder (:func:`unique_id`: two
runs in the same second get ``ID`` and ``ID-2``).

``run.json`` (:func:`provenance`) holds the run's id, command, command line,
working directory, start and end times and status, epochbench's version and
git commit (when run from a checkout), the versions of Python, numpy,
pandas, OR-Tools, HiGHS, PuLP and CBC, the machine (host, CPU, cores,
platform) and what the command says about itself (seeds, time limits, ...).
Versions are read from the installed distributions' metadata: nothing heavy
is imported.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from epochbench.instances.core import json_text
from epochbench.instances.files import not_a_folder, pid_alive, write_text

#: the provenance file of a run folder
RUN_JSON = "run.json"
#: distributions whose versions a run records (PyPI names)
PACKAGES = ("numpy", "pandas", "scipy", "ortools", "highspy", "pulp", "numba", "dask", "distributed",
            "pytest-benchmark")
#: a run id: ASCII letters, digits, ``.``, ``_``, ``-`` (it becomes a folder or file name)
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")      # \Z: "$" would let a final newline in


def stamp(when: float | None = None) -> str:
    """``YYYYMMDD-HHMMSS`` (local time) of ``when`` (default: now)."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if when is None else when))


def check_name(name: str) -> str:
    """``name`` if it can name a run folder; ``ValueError`` naming ``--name`` otherwise."""
    if not _ID.match(name or ""):
        raise ValueError(f"--name: {name!r} is not a run name (ASCII letters, digits, '.', '_', '-'; "
                         "a letter or digit first; at most 100 characters)")
    return name


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _git(where: Path, *args: str, timeout: float = 5) -> subprocess.CompletedProcess:
    """``git -C where ARGS`` without optional locks (a status must not take
    the index lock of a checkout someone is working in)."""
    return subprocess.run(["git", "-C", str(where), *args], capture_output=True, timeout=timeout,
                          env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})


def git_commit(where: Path | None = None) -> str | None:
    """The commit of the git checkout holding ``where`` (default: this
    package), with ``+dirty`` when it has uncommitted changes; None outside
    a checkout, without git, or when ``where`` is not part of the checkout
    that holds it (a package installed into a virtual environment inside
    another project's repository is that project's untracked file)."""
    where = Path(where or Path(__file__).resolve().parent)
    try:
        head = _git(where, "rev-parse", "HEAD")
        if head.returncode != 0 or _git(where, "ls-files", "--error-unmatch", "__init__.py").returncode != 0:
            return None
        dirty = _git(where, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.decode().strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def git_diff(where: Path | None = None) -> str | None:
    """A short hash (sha256, 12 hex digits) of the uncommitted changes to
    tracked files of the checkout holding ``where`` (default: this package),
    so that two dirty working trees of one commit are told apart; None when
    there are none, outside a checkout or without git.  The diff is written
    the same whatever the user's git settings (full object names, fixed
    prefixes, no renames or text conversion), so equal changes on two hosts
    hash alike."""
    where = Path(where or Path(__file__).resolve().parent)
    try:
        diff = _git(where, "diff", "HEAD", "--no-ext-diff", "--no-textconv", "--no-color", "--binary",
                    "--full-index", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if diff.returncode != 0 or not diff.stdout.strip():
        return None
    return hashlib.sha256(diff.stdout).hexdigest()[:12]


def _cbc_version() -> str | None:
    """CBC as bundled with PuLP: its version is PuLP's bundle (the binary is
    not started to ask); None without PuLP."""
    pulp = _version("pulp")
    return f"bundled with PuLP {pulp}" if pulp else None


def cpu_name() -> str:
    """The CPU model (``/proc/cpuinfo``'s model name, else what ``platform`` says)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """Host, CPU model, logical cores, platform."""
    return {"host": socket.gethostname(), "cpu": cpu_name(), "cores": os.cpu_count(),
            "platform": platform.platform(), "machine": platform.machine()}


def current_code() -> dict:
    """The code this process runs now: epochbench's ``version``, the
    checkout's ``commit`` (:func:`git_commit`, with ``+dirty``; None outside
    one) and ``diff`` (:func:`git_diff` of a ``+dirty`` commit, else None)."""
    commit = git_commit()
    return {"version": _version("epochbench"), "commit": commit,
            "diff": git_diff() if commit and commit.endswith("+dirty") else None}


def commit_info() -> dict:
    """pytest-benchmark's ``commit_info`` for this package's code (the
    benchmark JSON's ``commit_info``): ``id`` the checkout's commit without
    ``+dirty`` (:func:`git_commit`), else ``epochbench VERSION`` outside a
    checkout; ``dirty``, ``diff`` (:func:`git_diff`), ``time`` and
    ``author_time`` (the commit's, ISO 8601), ``branch`` (None outside a
    checkout), ``project``.  pytest-benchmark's own reads the git checkout
    of the working directory: ``unversioned`` outside one, and another
    project's commit inside it."""
    code = current_code()
    sha, plus, _ = (code["commit"] or "").partition("+")
    info = {"id": sha or f"epochbench {code['version']}", "dirty": bool(plus), "diff": code["diff"],
            "time": None, "author_time": None, "branch": None, "project": "epochbench"}
    if sha:
        where = Path(__file__).resolve().parent
        try:
            times = _git(where, "show", "-s", "--format=%cI%n%aI", sha)
            branch = _git(where, "rev-parse", "--abbrev-ref", "HEAD")
        except (OSError, subprocess.SubprocessError):
            return info
        if times.returncode == 0:
            info["time"], _, info["author_time"] = times.stdout.decode().strip().partition("\n")
        if branch.returncode == 0:
            name = branch.stdout.decode().strip()
            info["branch"] = "(detached head)" if name == "HEAD" else name
    return info


def provenance(command: str, run_id: str, *, argv: list[str] | None = None, **about) -> dict:
    """The provenance record of a run that starts now (status ``running``).

    Parameters
    ----------
    command : ``bench``, ``experiment``, ``score``, ...
    run_id : the run's id (its folder name, or the stamp of a ``score`` run)
    argv : the command line (default ``sys.argv``)
    about : what the command adds: ``seeds``, ``time_limit``, ``quick``, ...

    Returns
    -------
    dict
        JSON-ready (``git_diff``: :func:`git_diff`, with a ``+dirty``
        commit only; ``plugins``: :func:`installed_plugins`); :func:`finish`
        adds ``finished``, ``seconds`` and the final ``status``.
    """
    code = current_code()
    commit = code["commit"]
    if code["diff"]:
        about = {"git_diff": code["diff"], **about}
    versions = {"epochbench": code["version"], "python": platform.python_version(),
                **{p: _version(p) for p in PACKAGES}, "cbc": _cbc_version()}
    return {"id": run_id, "command": command, "argv": list(sys.argv if argv is None else argv),
            "cwd": str(Path.cwd()), "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "status": "running", "pid": os.getpid(), "git_commit": commit, "versions": versions,
            "plugins": installed_plugins(), "machine": machine(), **about, "_t0": time.time()}


#: the entry-point groups epochbench reads plug-ins from
PLUGIN_GROUPS = ("epochbench.heuristics", "epochbench.generators", "epochbench.experiments", "epochbench.policies")


def installed_plugins() -> list[dict]:
    """Every installed plug-in entry point (``group``, ``name``, ``value``,
    and the ``package`` and ``version`` that ship it), sorted; read from
    the packages' metadata, nothing imported.  A run's results can be
    traced to the plug-ins that were there (its methods, generators,
    experiments and policies may be theirs; nothing said so)."""
    from importlib.metadata import entry_points
    out = []
    for group in PLUGIN_GROUPS:
        for ep in entry_points(group=group):
            dist = getattr(ep, "dist", None)
            out.append({"group": group, "name": ep.name, "value": ep.value,
                        "package": getattr(dist, "name", None), "version": getattr(dist, "version", None)})
    return sorted(out, key=lambda e: (e["group"], e["name"], e["value"]))


def write(info: dict, path: Path) -> Path:
    """``info`` to ``path`` as strict JSON, atomically.

    On the first write of a record its ``id`` is made unique among the
    provenance files of ``path``'s folder (:func:`unique_id`: two runs
    started in the same second get ``ID`` and ``ID-2``); later writes of
    the same record keep it."""
    path = Path(path)
    if not info.get("_id_fixed"):
        info["id"] = unique_id(str(info.get("id", stamp())), path)
        info["_id_fixed"] = True
    return write_text(path, json_text({k: v for k, v in info.items() if not k.startswith("_")}, indent=2) + "\n")


def _is_provenance(name: str) -> bool:
    """A provenance file's name: ``run.json``, ``*.run.json``, or ``run-RUNID.json``
    (a ``run.json`` that a later run into the same folder kept aside)."""
    return name == RUN_JSON or name.endswith(".run.json") or (name.startswith("run-") and name.endswith(".json"))


def unique_id(rid: str, path: Path) -> str:
    """``rid``, or ``rid-2``, ``rid-3``, ... when another provenance file in
    ``path``'s folder (not ``path`` itself, which the run replaces) holds
    that id.  O(provenance files in the folder)."""
    path = Path(path)
    try:
        others = [p for p in path.parent.iterdir() if _is_provenance(p.name) and p.name != path.name]
    except OSError:
        return rid
    taken = {str(info.get("id")) for info in map(read, others) if info}
    new, k = rid, 1
    while new in taken:
        k += 1
        new = f"{rid}-{k}"
    return new


def finish(info: dict, path: Path, status: str = "finished", **more) -> Path:
    """Mark the run ended (``finished``, ``failed``, ``interrupted``) and write it."""
    info.update(more, status=status, finished=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                seconds=round(time.time() - info.get("_t0", time.time()), 3))
    return write(info, path)


def stop_status(exc: BaseException) -> int:
    """The exit status of a command stopped by ``exc``, as its record keeps
    it (``exit_status``): 143 (128 + SIGTERM) for the command line's
    SIGTERM, 130 (128 + SIGINT) for Ctrl-C and any other stop."""
    return 143 if getattr(exc, "signal_name", None) == "SIGTERM" else 130


def exit_status_of(exc: BaseException) -> dict:
    """``{"exit_status": N}`` for a run that ``exc`` ended, with the status
    the command line exits with (its one table: ``run_command`` and
    ``experiment`` exit with it): :func:`stop_status` for a stop; 2 for a
    sweep whose every failure was bad input, for bad input and for sizes
    past the machine (``MemoryError``); 1 for another failed sweep, a run
    stopped for a reason not its input (a lost scheduler, a user's method)
    and any other error; ``{}`` for anything else (``SystemExit``)."""
    if isinstance(exc, KeyboardInterrupt):
        return {"exit_status": stop_status(exc)}
    from epochbench.cli import USER_ERRORS
    from epochbench.instances.core import RunStopped
    from epochbench.sweep import SweepFailed
    if isinstance(exc, SweepFailed):
        return {"exit_status": 2 if all(f.bad_input for f in exc.failures) else 1}
    if isinstance(exc, RunStopped):
        return {"exit_status": 1}
    if isinstance(exc, (*USER_ERRORS, MemoryError)):
        return {"exit_status": 2}
    return {"exit_status": 1} if isinstance(exc, Exception) else {}


def read(path: Path) -> dict | None:
    """A provenance file, or None when it is missing or unreadable (why: :func:`_read_why`)."""
    return _read_why(path)[0]


def unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot take the run's files, or None: it is made (with
    its missing parents) and a file is written in it, then what this made
    is removed again, so that a run learns it before it runs, not after."""
    made = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        if folder.exists() and not folder.is_dir():
            return not_a_folder(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"{folder}: cannot be written ({exc.strerror or exc})"
    finally:
        for p in made:                       # deepest first
            try:
                p.rmdir()
            except OSError:
                break
    return None


def run_folder(root: Path, command: str, name: str | None = None, resumable=None) -> Path:
    """The folder of a new run of ``command`` (the folder names' prefix: the
    command, or the experiment) under ``root``.

    ``name``: ``ROOT/NAME``; it may exist only as an unfinished run that
    ``resumable(folder)`` accepts (then the run continues there), otherwise
    ``ValueError`` (choose another name: nothing is overwritten; an
    unfinished run of other options is named with its command line, which
    resumes it).  Without a name: the newest unfinished run folder of
    ``command`` that ``resumable`` accepts and no run holds now (one still
    running is not resumed: a second identical command started while the
    first runs gets a folder of its own), else a new
    ``ROOT/COMMAND-YYYYMMDD-HHMMSS`` (``-2``, ``-3``, ... when taken)."""
    from epochbench.instances.files import in_use
    root = Path(root)
    if name is not None:
        folder = root / check_name(name)
        if folder.exists():
            info = read(folder / RUN_JSON)
            unfinished = bool(info) and info.get("status") != "finished"
            if not (unfinished and resumable and resumable(folder)):
                if unfinished and resumable and isinstance(info.get("argv"), list):
                    raise ValueError(f"--name: run folder {folder} holds an unfinished run of other options: "
                                     f"resume it with its own command ({' '.join(map(str, info['argv']))}) "
                                     "or choose another name (runs are never overwritten)")
                raise ValueError(f"--name: run folder {folder} exists; choose another name "
                                 "(runs are never overwritten)")
        return folder
    if resumable is not None and root.is_dir():
        for folder in sorted(root.glob(f"{command}-*"), key=lambda p: p.name, reverse=True):
            info = read(folder / RUN_JSON)
            if info and info.get("status") != "finished" and not in_use(folder) and resumable(folder):
                return folder
    base = f"{command}-{stamp()}"
    folder, k = root / base, 1
    while folder.exists():
        k += 1
        folder = root / f"{base}-{k}"
    return folder


def claim_run_folder(root: Path, command: str, name: str | None = None, resumable=None,
                     option: str = "--name") -> tuple[Path, contextlib.ExitStack]:
    """The folder of a new run (:func:`run_folder`), held for it:
    ``(folder, stack)``, ``stack`` holding its output lock
    (:func:`~epochbench.instances.files.output_lock`) until it is closed.

    Two runs started in the same second pick one new name: the one that
    locks it second gives way to the next name (``-2``), as does one that
    finds the new folder written by a run that has ended (a folder is never
    shared).  ``option`` names the folder's option in messages.

    Raises
    ------
    ValueError
        ``name`` taken (before or meanwhile), the folder cannot be written
        (:func:`unwritable`), or no free name.
    OutputBusy
        ``name`` held by a running run.
    """
    from epochbench.instances.files import LOCK_NAME, OutputBusy, output_lock
    for _ in range(100):
        folder = run_folder(root, command, name, resumable)
        resumed = resumable is not None and folder.exists() and resumable(folder)
        problem = unwritable(folder)
        if problem:
            raise ValueError(f"run folder {problem}")
        held = contextlib.ExitStack()
        try:
            held.enter_context(output_lock(folder, option=option))
        except OutputBusy:
            if name is not None:
                raise
            continue                             # a run started in the same second holds it: the next name
        if resumed and resumable(folder):        # asked again, held: another run may have ended it meanwhile
            return folder, held
        if not resumed and not any(p.name != LOCK_NAME for p in folder.iterdir()):
            return folder, held
        held.close()                             # another run made it and is done with it: never shared
        if name is not None:
            raise ValueError(f"{option}: run folder {folder} exists; choose another name (runs are never overwritten)")
    raise ValueError(f"no free run folder under {Path(root).resolve()}")


def previous_id(provenance_file: Path, files) -> str:
    """The run id of the run that wrote ``files`` (its provenance file's
    ``id``), else ``unrecorded-`` and the stamp of the newest file's
    modification time: files no recorded run wrote (a user's own) never
    take a run's id, which a new run started in the same second would have."""
    info = read(provenance_file)
    if info and isinstance(info.get("id"), str) and _ID.match(info["id"]):
        return info["id"]
    return _unrecorded_id(files)


def _unrecorded_id(files) -> str:
    """``unrecorded-`` and the stamp of the newest of ``files``' modification times."""
    times = [Path(f).stat().st_mtime for f in files if Path(f).exists()]
    return "unrecorded-" + (stamp(max(times)) if times else stamp())


def keep_previous(files, provenance_file: Path, run_id: str | None = None, foreign=()) -> list[Path]:
    """Rename the files of an earlier run that a new run is about to write:
    ``STEM.SUFFIX`` becomes ``STEM-RUNID.SUFFIX`` (the provenance file too;
    ``run_id``: the earlier run's id when the caller knows it without a
    provenance file, else :func:`previous_id`); those of ``foreign`` (files
    the caller knows that run did not write: a user's own) take their own
    ``unrecorded-STAMP``, never that run's id.  The earlier provenance
    file is kept aside even when none of ``files`` is there: the record of
    a run that was interrupted, killed or failed before it wrote anything
    is history too, never overwritten.  All or none: when one rename fails
    (an immutable file), those done are undone before the error goes on, so
    the earlier run's files are never left half renamed.  Returns the new
    paths (empty when nothing was there)."""
    files = [Path(f) for f in files]
    there = [f for f in files + [Path(provenance_file)] if f.exists()]
    if not there:
        return []
    foreign = {Path(f) for f in foreign}
    rid = run_id or previous_id(provenance_file, [f for f in there if f not in foreign])
    moved: list[tuple[Path, Path]] = []
    try:
        for f in there:
            target = _renamed(f, _unrecorded_id([f]) if f in foreign else rid)
            os.replace(f, target)
            moved.append((f, target))
    except OSError:
        for f, target in reversed(moved):
            os.replace(target, f)
        raise
    _renamed_in_record(moved, Path(provenance_file))
    return [target for _, target in moved]


def refuse_inputs_among(outputs: dict, inputs) -> None:
    """Refuse a run that would write over one of its own inputs.

    ``outputs``: {path: what writes it (``--out dd``)}; ``inputs``:
    (option, path given) pairs, a path None where not given.
    :func:`keep_previous` moves an output's earlier file aside before the
    run writes its own, so an input there would be
    renamed under the run (``simulate --workload dd/jobs.csv --out dd`` took
    its own workload for an earlier run's table), and the same command run
    again would read the first run's output as its input.  Raises
    ``ValueError``, one line, before any work."""
    for option, given in inputs:
        if given is None:
            continue
        for out, by in outputs.items():
            if same_file(Path(given), Path(out)):
                raise ValueError(f"{option} {given}: is the file this run writes as {Path(out).name} "
                                 f"({by}); choose another --out (the input is left as it is)")


def same_file(a: Path, b: Path) -> bool:
    """Both name one file: the same file on disk (links too), or the same
    absolute path."""
    try:
        return os.path.samefile(a, b)
    except OSError:                     # one is missing
        return a.resolve() == b.resolve()


def _renamed_in_record(moved: list[tuple[Path, Path]], provenance_file: Path) -> None:
    """The kept record's ``files`` under their new names: it listed the old
    ones, which belong to the new run from then on.  A record that cannot be
    read or written back is left as it is (its run's files are kept all the
    same)."""
    record = next((target for f, target in moved if f == provenance_file), None)
    info = read(record) if record is not None else None
    if not info or not isinstance(info.get("files"), list):
        return
    names = {f.name: target.name for f, target in moved}
    files = [names.get(f, f) if isinstance(f, str) else f for f in info["files"]]
    if files != info["files"]:
        with contextlib.suppress(OSError):
            write_text(record, json_text({**info, "files": files}, indent=2) + "\n")


def _renamed(path: Path, rid: str) -> Path:
    """``STEM-RID.SUFFIX`` (``.run.json`` and ``.partial.jsonl`` kept whole),
    with ``-2``, ... when that name is taken."""
    name = path.name
    for suffix in (".run.json", ".partial.jsonl"):
        if name.endswith(suffix):
            stem, ext = name[: -len(suffix)], suffix
            break
    else:
        stem, ext = path.stem, path.suffix
    target, k = path.with_name(f"{stem}-{rid}{ext}"), 1
    while target.exists():
        k += 1
        target = path.with_name(f"{stem}-{rid}-{k}{ext}")
    return target


def find_runs(root: Path, depth: int = 4) -> list[dict]:
    """Every provenance file under ``root`` (``run.json``, ``*.run.json``
    and the ``run-RUNID.json`` a later run kept aside, ``depth`` levels
    down), newest first; each record gets ``path`` (its folder or file).  A
    ``run.json`` or ``*.run.json`` that is not a JSON object is listed too,
    with status ``unreadable`` (never skipped silently); a ``run-*.json``
    without a ``command`` is some other file (a pytest-benchmark JSON)."""
    root = Path(root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        if len(rel.parts) >= depth:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in filter(_is_provenance, filenames):
            info = _record(Path(dirpath) / fn)
            if info is not None:
                found.append(info)
    return sorted(found, key=lambda r: str(r.get("started", "")), reverse=True)


#: fields of a provenance record that :func:`find_runs` reads, all text
LISTED = ("id", "command", "status", "started")


def _record(path: Path) -> dict | None:
    """The provenance record of ``path`` for :func:`find_runs`, with its
    ``path``; None for a ``run-*.json`` that is no provenance record.  One
    that cannot be read, or whose listed fields are not text, has status
    ``unreadable`` and an ``error`` saying why; a ``running`` one whose
    process on this host is gone has status ``dead`` (killed: it never
    wrote its end)."""
    info, error = _read_why(path)
    kept = path.name != RUN_JSON and not path.name.endswith(".run.json")
    if kept and "command" not in (info or {}):
        return None
    if info is not None:
        wrong = [k for k in LISTED if not isinstance(info.get(k), str)]
        if wrong:
            info, error = None, f"field '{wrong[0]}' is {info.get(wrong[0])!r}, not text"
        elif not _iso_time(info["started"]):     # "yesterday" sorted as the newest run of all
            info, error = None, f"field 'started' is {info['started']!r}, not an ISO 8601 time"
    if info is None:
        info = {"id": "?", "command": "?", "status": "unreadable", "error": error}
    elif info["status"] == "running" and _gone(info):
        info["status"] = "dead"
    info["path"] = str(path.parent if path.name == RUN_JSON else path)
    return info


def _iso_time(text: str) -> bool:
    """Whether ``text`` reads as an ISO 8601 time (as :func:`provenance`
    writes ``started``): the runs are listed in its order."""
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _read_why(path: Path) -> tuple[dict | None, str]:
    """A provenance file and "", or None and why it cannot be read."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read it ({getattr(exc, 'strerror', None) or exc})"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON ({exc})"
    except RecursionError:                     # arrays or objects nested thousands deep
        return None, "not a run record (JSON nested too deep to read)"
    return (data, "") if isinstance(data, dict) else (None, f"a JSON {type(data).__name__}, not an object")


def _gone(info: dict) -> bool:
    """A running record's process was on this host and is no more: no
    process has its pid, or the one that has it started after the run did
    (the pid was reused: after a container's restart a ``sleep`` held it,
    and the record read ``running``).  A record whose ``machine`` is no
    object (hand-edited) names no host: not known to be gone."""
    machine = info.get("machine")
    pid, host = info.get("pid"), machine.get("host") if isinstance(machine, dict) else None
    if not (isinstance(pid, int) and host == socket.gethostname()):
        return False
    return not pid_alive(pid) or _started_after(pid, info.get("started"))


def _started_after(pid: int, started) -> bool:
    """Whether process ``pid`` started more than 2 s after ``started`` (an
    ISO 8601 time, as :func:`provenance` writes it); False when either
    cannot be read."""
    try:
        import psutil
        began = psutil.Process(pid).create_time()
        return began > datetime.fromisoformat(str(started)).timestamp() + 2.0
    except Exception:      # noqa: BLE001 - no psutil, no such process, an unreadable time: not known
        return False


def _commit_text(commit) -> str:
    """A record's ``git_commit`` as listed: the hash's first 8 characters
    and what follows it (``+dirty``: the run's code had uncommitted
    changes, which must show); ``-`` when there is none."""
    if not commit:
        return "-"
    sha, plus, rest = _one_line(commit).partition("+")
    return sha[:8] + plus + rest


def _one_line(text) -> str:
    """``text`` with its line breaks and runs of spaces as one space (a
    table keeps one line per run)."""
    return " ".join(str(text).split())


def format_runs(runs: list[dict]) -> str:
    """One line per run: id, command, status, start, seconds, commit (with
    ``+dirty``), path and the run's error or why its record is unreadable,
    on the same line (the id and commit columns as wide as their longest)."""
    if not runs:
        return "no runs"
    w = max(8, *(len(str(r.get("id", "?"))) for r in runs))
    commits = [_commit_text(r.get("git_commit")) for r in runs]
    c = max(8, *map(len, commits))
    lines = [f"{'id':<{w}} {'command':<10} {'status':<11} {'started (UTC)':<20} {'seconds':>8}  {'commit':<{c}}  path"]
    for r, commit in zip(runs, commits):
        secs = r.get("seconds")
        lines.append(f"{_one_line(r.get('id', '?')):<{w}} {_one_line(r.get('command', '?'))[:10]:<10} "
                     f"{_one_line(r.get('status', '?'))[:11]:<11} {_one_line(r.get('started', ''))[:19]:<20} "
                     f"{(f'{secs:.1f}' if isinstance(secs, (int, float)) else '-'):>8}  {commit:<{c}}  "
                     f"{_one_line(r['path'])}" + (f"  ({_one_line(r['error'])})" if r.get("error") else ""))
    return "\n".join(lines)


__all__ = ["RUN_JSON", "provenance", "write", "finish", "stop_status", "exit_status_of", "read", "run_folder", "same_file",
           "keep_previous", "refuse_inputs_among",
           "find_runs", "format_runs", "check_name", "git_commit", "machine", "stamp", "unique_id"]
