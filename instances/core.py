"""Shared pieces of every problem family: errors, the result type, JSON helpers.

An instance is a frozen dataclass over numpy arrays plus a ``meta`` dict
(family, generator, parameters, seed, name).  A solver, heuristic or exact,
returns a :class:`Result`; the family decides what its ``decision`` holds
(``selected`` job indices for packing, ``bins`` for epochs).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

STATUSES = ("optimal", "feasible", "infeasible", "timeout")


class InstanceError(ValueError):
    """Malformed instance or instance file; the message names file and field."""


class InfeasibleSolution(AssertionError):
    """A solution that fails its family's independent feasibility check."""


@dataclass(frozen=True)
class Result:
    """What a method decided on one instance.

    ``decision`` is the family's decision: a tuple of job indices in pick
    order (packing) or a tuple of bins, each a tuple of job indices (epochs).
    ``value`` is the objective of that decision, recomputed by the family,
    ``bound`` the best bound the method proved (``None`` for heuristics),
    ``status`` one of :data:`STATUSES`, ``seconds`` the wall time.
    """

    family: str
    method: str
    decision: tuple
    value: float
    status: str
    seconds: float
    bound: float | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def proven(self) -> bool:
        return self.status == "optimal"

    def to_dict(self) -> dict:
        key = DECISION_KEYS.get(self.family, "decision")
        return {
            "family": self.family,
            "method": self.method,
            "status": self.status,
            "value": _num(self.value),
            "bound": _num(self.bound),
            "seconds": self.seconds,
            key: _plain(self.decision),
            **({"info": _plain(self.info)} if self.info else {}),
        }


#: the JSON key of each family's decision (``solve --json``)
DECISION_KEYS = {"packing": "selected", "epochs": "bins", "knapsack": "selected",
                 "assignment": "pairs", "mapping": "assignment"}


def _num(x):
    if x is None:
        return None
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _plain(obj: Any):
    """numpy-free copy of ``obj`` fit for ``json.dumps``."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def int_matrix(value, name: str, source: str, *, ndim: int, allow_negative=False) -> np.ndarray:
    """Validate ``value`` as an integer array of ``ndim`` dimensions.

    Raises :class:`InstanceError` naming ``source`` and ``name``; never clips.
    """
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists
        raise InstanceError(f"{source}: field '{name}' is not a rectangular array ({exc})") from None
    if arr.size == 0 and ndim == 2:
        arr = arr.reshape(0, 0) if arr.ndim < 2 else arr
    if arr.ndim != ndim:
        raise InstanceError(f"{source}: field '{name}' must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        elif arr.dtype.kind == "b":
            arr = arr.astype(np.int64)
        else:
            raise InstanceError(f"{source}: field '{name}' must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if not allow_negative and arr.size and arr.min() < 0:
        idx = np.unravel_index(int(np.argmin(arr)), arr.shape)
        raise InstanceError(f"{source}: field '{name}' has a negative entry {arr[idx]} at {list(map(int, idx))}")
    arr.setflags(write=False)
    return arr


def float_vector(value, name: str, source: str, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (n,):
        raise InstanceError(f"{source}: field '{name}' must have length {n}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InstanceError(f"{source}: field '{name}' has a non-finite entry")
    arr.setflags(write=False)
    return arr


def read_json(path: str | Path) -> dict:
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or "kind" not in data:
        raise InstanceError(f"{path}: field 'kind' missing (expected a JSON object with 'kind')")
    return data


def write_json(path: str | Path, data: dict) -> None:
    Path(path).write_text(json.dumps(_plain(data), separators=(",", ":")))


def gap(value: float, bound: float | None, eps: float = 1e-9) -> float:
    """Relative gap ``|bound - value| / max(|bound|, eps)`` (ARCHITECTURE.md)."""
    if bound is None or value is None or math.isnan(bound):
        return math.nan
    return abs(bound - value) / max(abs(bound), eps)
