"""Safe output: atomic file writes and a lock on an output folder.

Every file the suite writes goes through :func:`atomic_path` (or its
shortcuts :func:`write_bytes` / :func:`write_text`): the data is written to
a temporary name in the same folder and renamed into place with
:func:`os.replace`, so a run killed at any point leaves either the old file
or the new one, never a torn one.  :func:`output_lock` holds an exclusive
``flock`` on ``FOLDER/.epochbench.lock`` for as long as a command writes
into ``FOLDER``; a second run on the same folder is refused with
:class:`OutputBusy`.  The kernel releases the lock when its holder dies, so
a ``kill -9`` leaves no stale lock behind.

This module sits in the lowest layer (``instances``) so that every layer may
import it.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

try:                                   # POSIX; elsewhere folders are not locked
    import fcntl
except ImportError:                    # pragma: no cover - Windows
    fcntl = None

LOCK_NAME = ".epochbench.lock"
TMP_PREFIX = ".tmp-"

#: folders this process holds, by resolved path: {path: [fd, depth]}
_HELD: dict[str, list[int]] = {}


class OutputError(ValueError):
    """The output folder cannot be used (bad input: exit status 2)."""


class OutputBusy(OutputError):
    """Another run holds the output folder."""


@contextlib.contextmanager
def atomic_path(path):
    """A temporary name next to ``path`` that becomes ``path`` on success.

    Yields ``Path`` ``FOLDER/.tmp-<token>-NAME`` (same folder, so the rename
    is atomic; same suffixes, so writers that choose the format by suffix,
    such as ``savefig``, still do).  When the block ends normally the
    temporary file replaces ``path`` (:func:`os.replace`); when it raises,
    the temporary file is removed and ``path`` is left as it was; an
    ``OSError`` about the temporary file (no such folder, no permission, a
    full disk) becomes an :class:`OutputError` naming ``path``.

    Parameters
    ----------
    path : str or Path
        Final file name.  Its folder must exist.

    Notes
    -----
    Safe against the process being killed (the rename is atomic); the data
    is not fsync'ed, so a power loss right after the rename may still lose
    it.  Cost: one rename.
    """
    path = Path(path)
    import secrets                      # here: its hmac and hashlib cost 3 ms a command
    tmp = path.with_name(f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}-{path.name}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and _names(exc, tmp):
            raise OutputError(f"{path}: cannot write ({exc.strerror or type(exc).__name__})") from None
        raise


def _names(exc: OSError, tmp: Path) -> bool:
    """``exc`` is about the temporary file (so the user is told of the
    path they asked for, not of a name they never gave)."""
    return str(tmp) in (str(exc.filename), str(exc.filename2)) or str(tmp) in str(exc)


def write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`); returns ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return path


def write_text(path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (:func:`atomic_path`); returns ``path``."""
    return write_bytes(path, text.encode(encoding))


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (whoever owns it).
    Only a positive integer names one: 0 and -1 would ask about a process
    group or every process, ``True`` about process 1 (a run record holding
    such a pid read as ``running``), one past the C long overflowed."""
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 2**31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:                                    # exists, owned by someone else
        return True
    return True


def remove_stale(folder) -> list[Path]:
    """Remove the temporary files of :func:`atomic_path` in ``folder`` whose
    writing process is gone (a run killed mid-write); returns them.

    Notes
    -----
    One listing of ``folder``; a temporary file of a live process is kept.
    """
    gone = []
    for p in Path(folder).glob(f"{TMP_PREFIX}*"):
        pid = p.name[len(TMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            with contextlib.suppress(OSError):
                p.unlink()
                gone.append(p)
    return gone


def _holder(fd: int) -> str:
    """What the lock file says about its holder (``pid N``), or ''."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


def not_a_folder(folder) -> str:
    """The one-line message for an output folder that is a file."""
    return f"{folder}: is a file, not a folder; choose an output folder"


@contextlib.contextmanager
def output_lock(folder, option: str = "--out"):
    """Hold the output folder ``folder`` (created if missing) for this run.

    Takes an exclusive, non-blocking ``flock`` on ``FOLDER/.epochbench.lock``
    and writes this process's id into it, then removes what killed runs
    left half-written (:func:`remove_stale`).  Nested uses in one process
    share the lock.

    Raises
    ------
    OutputBusy
        Another process holds the folder; the message names ``option``,
        the command's option that chooses the folder (``bench`` has
        ``--results``, not ``--out``).
    OutputError
        The folder cannot be created or written.

    Notes
    -----
    The kernel drops the lock when the holding process exits or is killed,
    so no stale lock survives a crash (a killed run leaves the lock file,
    unlocked: the next run takes it).  A run that ends, normally or by an
    exception, removes the lock file while it still holds it, and the
    folder too when this call made it and nothing was written into it (a
    run that failed on its input), with the parents it made; a run that opened the old file just
    before takes the lock again on the new one (:func:`_take`), so two runs
    never hold one folder.  Without ``fcntl`` (Windows) nothing is locked.
    """
    folder = Path(folder)
    made = [p for p in (folder, *folder.parents) if not p.exists()]    # deepest first
    if folder.exists() and not folder.is_dir():
        raise OutputError(not_a_folder(folder))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{folder}: cannot create the output folder ({exc.strerror or exc})") from None
    if fcntl is None:                                  # pragma: no cover
        yield folder
        return
    key = os.path.realpath(folder)
    held = _HELD.get(key)
    if held is not None:
        held[1] += 1
        try:
            yield folder
        finally:
            held[1] -= 1
        return
    lock = folder / LOCK_NAME
    fd = _take(lock, folder, option)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD[key] = [fd, 1]
        remove_stale(folder)
        yield folder
    finally:
        _HELD.pop(key, None)
        with contextlib.suppress(OSError):
            lock.unlink()                              # while still held: see _take
        os.close(fd)                                   # releases the flock
        for p in made:                                 # a run that wrote nothing leaves nothing: the folder
            try:                                       # and the parents this call made (results/ of a run
                p.rmdir()                              # folder), each only when empty
            except OSError:
                break


def in_use(folder) -> bool:
    """Whether a run holds ``folder`` now (:func:`output_lock`): its lock
    file is locked.  O(1)."""
    if fcntl is None:
        return False                                   # nothing is locked there
    lock = Path(folder) / LOCK_NAME
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False                                   # no lock file: nobody holds it
    try:                         # a shared lock held for microseconds: a run taking the folder at that
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)   # instant is refused "in use" (two runs starting at once)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)                                   # a shared lock taken is let go with it
    return False


def _take(lock: Path, folder: Path, option: str = "--out") -> int:
    """An open descriptor of ``lock`` holding its exclusive ``flock``.

    The holder removes the lock file as it ends, before it lets go; so a
    lock taken on a file that is no longer ``lock`` (opened just before the
    holder removed it) is worth nothing: it is let go and taken again on
    the file now there.  O(1) tries but for such races."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise OutputError(f"{option}: cannot write in the output folder {folder} ({exc.strerror or exc}; "
                              f"its lock file {lock.name} could not be made there)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = _holder(fd)
            os.close(fd)
            raise OutputBusy(f"{folder}: output folder in use by another epochbench run{who} (one run "
                             "writes into a folder at a time, whatever its file names); wait for it to finish "
                             f"or give {option} another folder") from None
        if _same_file(fd, lock):
            return fd
        os.close(fd)                                   # an old holder's file, removed: try the new one


def _same_file(fd: int, path: Path) -> bool:
    """The open file ``fd`` is the file now at ``path``."""
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


__all__ = ["OutputError", "OutputBusy", "atomic_path", "write_bytes", "write_text", "output_lock",
           "remove_stale", "LOCK_NAME"]
