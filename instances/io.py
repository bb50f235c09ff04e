"""Instance files and family folders.

A family is a folder of instance files (``NAME.json``) plus ``manifest.json``
listing them with the generator, its parameters and seed.  Each family module
registers its instance class and feasibility checker here.
"""
from __future__ import annotations

import json
from pathlib import Path

from .core import InfeasibleSolution, InstanceError, read_json, write_json

FAMILIES: dict[str, type] = {}
CHECKERS: dict[str, object] = {}


def register_family(kind: str, cls: type, checker) -> None:
    FAMILIES[kind] = cls
    CHECKERS[kind] = checker


def load_instance(path):
    """Read one instance file (a JSON object with a ``kind``)."""
    data = read_json(path)
    kind = data["kind"]
    if kind not in FAMILIES:
        raise InstanceError(f"{path}: field 'kind' is {kind!r}; known kinds: {sorted(FAMILIES)}")
    return FAMILIES[kind].from_dict(data, source=str(path))


def save_instance(inst, path) -> None:
    write_json(path, inst.to_dict())


def check(inst, decision):
    """Run the family's independent feasibility checker; returns the
    normalised decision or raises :class:`InfeasibleSolution`."""
    return CHECKERS[inst.kind](inst, decision)


def write_family(folder, instances, *, generator: str, params: dict) -> Path:
    """Write ``instances`` as ``folder/NAME.json`` plus ``folder/manifest.json``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for inst in instances:
        name = inst.name
        if not name or name == "<unnamed>" or "/" in name:
            raise InstanceError(f"instance name {name!r} is not a valid file name")
        save_instance(inst, folder / f"{name}.json")
        entries.append({"file": f"{name}.json", "kind": inst.kind, "n": inst.n, "k": inst.k,
                        **{k: v for k, v in inst.meta.items() if k in ("seed", "optimum")}})
    write_json(folder / "manifest.json", {"generator": generator, "params": params,
                                          "count": len(entries), "instances": entries})
    return folder


def read_family(folder):
    """Instances of a family folder, in manifest order (or sorted file order
    when the folder has no manifest)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InstanceError(f"{folder}: not a folder")
    manifest = folder / "manifest.json"
    if manifest.exists():
        try:
            files = [folder / e["file"] for e in json.loads(manifest.read_text())["instances"]]
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise InstanceError(f"{manifest}: field 'instances' malformed ({exc})") from None
    else:
        files = sorted(p for p in folder.glob("*.json"))
    if not files:
        raise InstanceError(f"{folder}: no instance files")
    return [load_instance(f) for f in files]


__all__ = ["FAMILIES", "CHECKERS", "register_family", "load_instance", "save_instance", "check",
           "write_family", "read_family", "InfeasibleSolution"]
