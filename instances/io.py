"""Instance files and family folders.

A family is a folder of instance files (``NAME.json``) plus ``manifest.json``
listing them with the generator, its parameters and seed.  Each family module
registers its instance class and feasibility checker here.
"""
from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path

import numpy as np

from .checks import is_number as _is_number
from .core import DECISION_KEYS, InfeasibleSolution, InstanceError, json_file_text, read_json, write_json
from .files import write_text

FAMILIES: dict[str, type] = {}
CHECKERS: dict[str, object] = {}


def register_family(kind: str, cls: type, checker) -> None:
    FAMILIES[kind] = cls
    CHECKERS[kind] = checker
    DECISION_KEYS.setdefault(kind, "decision")     # a Result of that family is accepted


#: the modules of the built-in families, by name: each imports this module and
#: registers itself (:func:`register_family`), so this one imports none of
#: them but loads them on first use, as the catalogs load their sources
#: (:func:`epochbench.instances.catalog.modules_of`)
BUILT_IN = ("assignment", "knapsack", "mapping", "packing")


def families() -> dict[str, type]:
    """:data:`FAMILIES` with the built-in families registered: their modules
    (:data:`BUILT_IN`) register on import, done here on first use so that
    importing :mod:`epochbench.instances` stays light (once: every solve's
    check calls this)."""
    if not _LOADED:
        for name in BUILT_IN:
            importlib.import_module(f"{__package__}.{name}")
        _LOADED.append(True)
    return FAMILIES


#: non-empty once :func:`families` has imported the built-in family modules
_LOADED: list = []


def load_instance(path):
    """Read one instance file (a JSON object with a string ``kind``); one
    without ``meta.name`` is named after its file (``a.json``: ``a``)."""
    data = read_json(path)
    kind = data["kind"]
    if kind not in families():
        raise InstanceError(f"{path}: field 'kind' is {kind!r}; known kinds: {sorted(FAMILIES)}")
    meta = data.get("meta", {})
    if isinstance(meta, dict) and "name" not in meta:
        data = {**data, "meta": {**meta, "name": Path(path).stem}}
    return FAMILIES[kind].from_dict(data, source=str(path))


#: JSON type of each field type code of :func:`check_fields` (``bool`` is
#: not a number here, though Python says it is an ``int``)
_JSON_TYPES = {"number": "a number", "string": "a string", "object": "an object", "bool": "true or false",
               "array": "an array of numbers", "matrix": "an array of arrays of numbers",
               "flags": "an array of true / false"}
#: fields every family's ``meta`` may carry, with their type codes
META_FIELDS = {"name": "string", "optimum": "number", "best_known": "number", "lower_bound": "number",
               "upper_bound": "number", "lp_bound": "number", "dataset": "string"}


def _json_type_ok(value, code: str) -> bool:
    if isinstance(value, (np.ndarray, tuple)):     # from the API, not a file: the builder checks it
        return code in ("array", "matrix", "flags")
    if code == "number":
        return _is_number(value)
    if code == "string":
        return isinstance(value, str)
    if code == "object":
        return isinstance(value, dict)
    if code == "bool":
        return isinstance(value, bool)
    if code == "flags":
        return isinstance(value, list) and all(isinstance(v, (bool, np.bool_)) for v in value)
    if code == "array":
        return isinstance(value, list) and all(_is_number(v) for v in value)
    if code == "matrix":
        return isinstance(value, list) and all(isinstance(r, list) and all(_is_number(v) for v in r)
                                               for r in value)
    raise ValueError(f"unknown JSON type code {code!r}")


def check_fields(d: dict, fields: dict[str, str], source: str, *, required=()) -> None:
    """Refuse wrong JSON types before any array is built.

    Parameters
    ----------
    d : dict
        The parsed instance object.
    fields : dict
        Field name -> type code: ``number`` (not a boolean), ``string``,
        ``object``, ``bool``, ``array`` (of numbers), ``matrix`` (array of
        arrays of numbers), ``flags`` (array of booleans).  ``null`` is
        accepted for fields not in ``required``.
    source : str
        Named in the error.
    required : iterable of str
        Fields that must be present and not null.

    Raises
    ------
    InstanceError
        One line naming ``source`` and the field: a wrong type, a missing
        required field, or a field that is none of ``fields``, ``kind`` and
        ``meta`` (a misspelt ``estimat`` would otherwise be dropped
        silently).  ``meta`` is checked too (:data:`META_FIELDS`).

    Notes
    -----
    Cost O(size of the arrays).
    """
    unknown = [key for key in d if key not in fields and key not in ("kind", "meta")]
    if unknown:
        raise InstanceError(f"{source}: unknown field {unknown[0]!r}; known: {', '.join(['kind', *fields, 'meta'])}")
    for key in required:
        if d.get(key) is None:
            raise InstanceError(f"{source}: field '{key}' missing")
    for key, code in {**fields, "meta": "object"}.items():
        value = d.get(key)
        if value is not None and not _json_type_ok(value, code):
            raise InstanceError(f"{source}: field '{key}' must be {_JSON_TYPES[code]}, got {_json_name(value)}")
    meta = d.get("meta") or {}
    for key, code in META_FIELDS.items():
        value = meta.get(key)
        if value is not None and not _json_type_ok(value, code):
            raise InstanceError(f"{source}: field 'meta.{key}' must be {_JSON_TYPES[code]}, "
                                f"got {_json_name(value)}")
    name = meta.get("name")
    if isinstance(name, str) and not name.strip():
        # an empty name was scored as an empty instance cell, which compare then refused ("has no instance")
        raise InstanceError(f"{source}: field 'meta.name' is {name!r}: set its meta['name'], or leave the field "
                            "out of its file (it is then named after the file)")
    if isinstance(name, str) and not name.isprintable():
        raise InstanceError(f"{source}: field 'meta.name' {name!r} holds a control or invisible character; "
                            "rename the instance")


def _json_name(value) -> str:
    """The JSON type of a parsed value, for messages (nested: the first odd entry)."""
    names = {bool: "a boolean", str: "a string", dict: "an object", type(None): "null",
             int: "a number", float: "a number"}
    if isinstance(value, list):
        odd = [v for v in value if not _is_number(v)]      # a list, not None: null may be the odd one
        if not odd:
            return "an array of numbers"
        worse = [v for v in odd if _json_name(v) != "an array of numbers"]   # in a matrix, the bad row
        if not worse and len(odd) < len(value):
            return "an array mixing numbers and arrays of numbers"
        return f"an array holding {_json_name((worse or odd)[0])}"
    return names.get(type(value), type(value).__name__)


def save_instance(inst, path) -> None:
    """Write ``inst`` to the file ``path``; a ``meta.name`` that reading
    refuses (blank, or with a control character: :func:`check_fields`) is
    refused here, before anything is written."""
    d = inst.to_dict()
    check_fields({"meta": d.get("meta")}, {}, f"instance {getattr(inst, 'name', '?')}")
    write_json(path, d)


def check(inst, decision):
    """Run the family's independent feasibility checker; returns the
    normalised decision or raises :class:`InfeasibleSolution`."""
    families()
    return CHECKERS[inst.kind](inst, decision)


def write_family(folder, instances, *, generator: str, params: dict, data_folder: str | None = None) -> Path:
    """Write ``instances`` as ``folder/NAME.json`` plus ``folder/manifest.json``.
    A folder that already holds a family (a ``manifest.json``) or one of
    these files is refused, and so are two instances of one name: nothing
    is overwritten.  ``data_folder``: the data folder a data set was read
    from (its ``root`` left to the default), recorded as such."""
    folder = Path(folder)
    instances = list(instances)
    if not instances:
        raise InstanceError(f"{folder}: no instances to write (a family folder needs at least one)")
    names = [inst.name for inst in instances]
    for name in names:                       # all checked before anything is written
        _check_file_name(name)
    twice = sorted(n for n, c in Counter(names).items() if c > 1)
    if twice:
        raise InstanceError(f"{folder}: instance name(s) {twice[:3]} given twice")
    if folder.exists() and not folder.is_dir():
        raise InstanceError(f"{folder}: is a file, not a folder; a list of instances is written as a family folder")
    taken = [f for f in ["manifest.json", *(f"{n}.json" for n in names)] if (folder / f).exists()]
    if taken:
        raise InstanceError(f"{folder}: already holds {taken[0]}; write into a new folder (nothing is overwritten)")
    texts = [json_file_text(folder / f"{inst.name}.json", inst.to_dict()) for inst in instances]   # all, first
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for inst, text in zip(instances, texts):
        name = inst.name
        write_text(folder / f"{name}.json", text)
        entries.append({"file": f"{name}.json", "kind": inst.kind, "n": inst.n, "k": inst.k,
                        **{k: v for k, v in inst.meta.items() if k in ("seed", "optimum")}})
    write_json(folder / "manifest.json", {"generator": generator, "params": params,
                                          **({"data_folder": data_folder} if data_folder else {}),
                                          "count": len(entries), "instances": entries})
    return folder


def _check_file_name(name) -> None:
    """InstanceError unless instance name ``name`` makes a file ``NAME.json``
    of its own in a family folder: no path separator or control character, not ``.`` or ``..``,
    and not ``manifest`` (the family's own ``manifest.json``: an instance of
    that name was overwritten by it)."""
    if name == "<unnamed>" or not str(name).strip():     # "   .json" was written, and refused when read
        raise InstanceError("an instance has no name: set its meta['name'] (its file is NAME.json)")
    if "/" in name or "\\" in name or name in (".", ".."):
        raise InstanceError(f"instance name {name!r} is not a valid file name")
    if not name.isprintable():       # a newline or a tab made a file a shell and the CSV rows split
        raise InstanceError(f"instance name {name!r} holds a control or invisible character; rename the instance")
    if name == "manifest":
        raise InstanceError("instance name 'manifest' is taken by the family's manifest.json; rename the instance")


def read_family(folder):
    """Instances of a family folder, in manifest order (or sorted file order
    when the folder has no manifest).  Manifest entries must name files
    inside the folder (no absolute paths, no ``..``)."""
    folder = Path(folder)
    if not folder.exists():
        raise InstanceError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise InstanceError(f"{folder}: not a folder")
    manifest = folder / "manifest.json"
    if manifest.exists():
        files = _manifest_files(manifest, read_json(manifest, kind=False))
    else:
        files = sorted(p for p in folder.glob("*.json") if not p.name.endswith(".run.json"))   # not provenance
    if not files and manifest.exists():
        raise InstanceError(f"{manifest}: lists no instance (the folder's other files are read only through it)")
    if not files:
        raise InstanceError(f"{folder}: no instance files")
    return [load_instance(f) for f in files]


def unlisted_files(folder) -> list[Path]:
    """The instance-like ``*.json`` files of a family folder that its
    ``manifest.json`` does not list (so :func:`read_family` skips them); []
    without a manifest.  Provenance files (``*.run.json``) are not counted."""
    folder = Path(folder)
    manifest = folder / "manifest.json"
    if not (folder.is_dir() and manifest.exists()):
        return []
    listed = {p.resolve() for p in _manifest_files(manifest, read_json(manifest, kind=False))}
    return sorted(p for p in folder.glob("*.json")
                  if p.name != "manifest.json" and not p.name.endswith(".run.json") and p.resolve() not in listed)


def _manifest_files(manifest: Path, data) -> list[Path]:
    """The instance files a parsed ``manifest.json`` lists, each checked to lie
    inside the manifest's folder."""
    entries = data.get("instances") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise InstanceError(f"{manifest}: field 'instances' must be an array of objects with a 'file'")
    folder = manifest.parent
    root = folder.resolve()
    files = []
    for i, e in enumerate(entries):
        name = e.get("file") if isinstance(e, dict) else None
        if not isinstance(name, str) or not name:
            raise InstanceError(f"{manifest}: field 'instances[{i}].file' must be a file name")
        rel = Path(name)
        target = (folder / rel).resolve()
        if rel.is_absolute() or ".." in rel.parts or not target.is_relative_to(root):
            raise InstanceError(f"{manifest}: field 'instances[{i}].file' {name!r} points outside the folder")
        files.append(folder / rel)
    return files


__all__ = ["FAMILIES", "CHECKERS", "families", "register_family", "load_instance", "save_instance", "check",
           "write_family", "read_family", "unlisted_files", "check_fields", "META_FIELDS", "InfeasibleSolution"]
