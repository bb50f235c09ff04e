"""Where the reference data lives (VBP, SWF, OR-Library, Braun; see
``../shared/data/README.md`` in a checkout).

Resolution: ``$EPOCHBENCH_DATA`` (``epochbench --data DIR`` sets it), else,
in a source checkout, ``<checkout>/../shared/data``; an installed package
has no default, and :func:`data_root` then returns :data:`NOT_SET`, a path
that names the remedy in every "absent" message built from it.
"""
from __future__ import annotations

import os
from pathlib import Path

#: the folder holding the package's source folders (a checkout's root, or site-packages)
PROJECT_ROOT = Path(__file__).resolve().parents[1]
#: what :func:`data_root` returns when nothing says where the data is
NOT_SET = Path("<no data folder: set EPOCHBENCH_DATA or pass epochbench --data DIR>")


def _checkout_default() -> Path | None:
    """``../shared/data`` beside a source checkout (one with this project's
    ``pyproject.toml``), else None."""
    pyproject = PROJECT_ROOT / "pyproject.toml"
    if pyproject.is_file() and 'name = "epochbench"' in pyproject.read_text(errors="replace"):
        return PROJECT_ROOT.parent / "shared" / "data"
    return None


def data_root() -> Path:
    """``$EPOCHBENCH_DATA`` if set (and non-empty), else the checkout's
    ``../shared/data``, else :data:`NOT_SET`.

    The folder is not checked for existence; callers say what they miss
    (tests that need data skip, commands fail with one line).
    """
    env = os.environ.get("EPOCHBENCH_DATA")
    if env:
        return Path(env)
    return _checkout_default() or NOT_SET


def data_state() -> dict:
    """Where the reference data is looked for (``root``; None: no folder is
    set) and whether a data set is there (``present``): what a run's record
    keeps, since without it the runs measure other instances."""
    root = data_root()
    if root == NOT_SET:
        return {"root": None, "present": False}
    try:                                   # an empty folder holds no data set
        present = root.is_dir() and any(p.is_dir() for p in root.iterdir())
    except OSError:                        # not readable: none that a run could read either
        present = False
    return {"root": str(root), "present": present}


def data_hint(path) -> str:
    """The remedy to append to a "no such file" message about ``path``:
    where to set the data folder when ``path`` lies under :func:`data_root`
    (the default was used), else nothing (the caller named the path, so the
    data folder is not the cause)."""
    root = data_root()
    if root == NOT_SET:
        return ""                      # the path itself says what to set
    try:
        Path(path).relative_to(root)
    except ValueError:
        return ""
    env = os.environ.get("EPOCHBENCH_DATA")
    if env:                            # the user named the folder: this data set is not in it
        missing = "" if Path(env).is_dir() else (", a file, not a folder" if Path(env).exists()
                                                 else ", and there is no such folder")
        return (f" (the data folder {env} is what EPOCHBENCH_DATA or epochbench --data says{missing}; this data "
                "set is not in it)")
    return " (set EPOCHBENCH_DATA or pass epochbench --data DIR to the data folder)"


def absent(path, what: str) -> str:
    """The one-line message for data that is not at ``path``: ``PATH:
    WHAT`` with :func:`data_hint`'s remedy, or, where no data folder is set
    (``path`` under :data:`NOT_SET`), the remedy alone with the place the
    data set takes in it (``<no data folder: ...>/vbp: no VBP data folder``
    glued a placeholder into a path)."""
    path = Path(path)
    try:
        inside = path.relative_to(NOT_SET)
    except ValueError:
        return f"{path}: {what}{data_hint(path)}"
    return f"no data folder: set EPOCHBENCH_DATA or pass epochbench --data DIR (the folder that holds {inside})"
