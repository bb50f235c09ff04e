"""Where the reference data lives (``../shared/data`` by default; see its README)."""
from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def data_root() -> Path:
    """``$EPOCHBENCH_DATA`` if set (and non-empty), else ``<project root>/../shared/data``.

    The folder is not checked for existence; callers say what they miss.
    """
    env = os.environ.get("EPOCHBENCH_DATA")
    return Path(env) if env else PROJECT_ROOT.parent / "shared" / "data"
