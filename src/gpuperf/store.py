"""Record files: where they live, how they are named, read, checked and written.

The lowest layer of the records (``gpuperf.records`` runs and replays experiments on top of
it; ``gpuperf.device`` reads the reference GPU's facts from it). Nothing here imports the
chapters or measures anything.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from . import validate as v

DATA_DIR = Path(__file__).parent / "data"
# Format 2: provenance (GPU, date, versions, driver, device facts, ceilings) lives with
# each experiment, so that re-recording one experiment never relabels the others.
# Format 1 (one file-level provenance) is migrated when it is loaded.
FORMAT = 2
FORMATS = (1, 2)
# The GPU whose record the book and the simulator replay when several are shipped.
REFERENCE = "nvidia-h200"
ENV_RECORD = "GPUPERF_RECORD"
ENV_HOME = "GPUPERF_HOME"

class RecordError(ValueError):
    """A record file is unreadable or not shaped like a record; the message names the file."""


class NotRecorded(LookupError):
    """An experiment has no recorded result in the record file in use."""



def slug(gpu_name: str) -> str:
    """File-name form of a GPU name: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    v.string(gpu_name, "gpu_name")
    if not re.search(r"[A-Za-z0-9]", gpu_name):
        raise ValueError(f"gpu_name={gpu_name!r} has no letters or digits to name a file by; "
                         "pass the GPU's name, e.g. 'NVIDIA H100 80GB HBM3'.")
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")


def available() -> list[Path]:
    """Record files shipped with the package (not the GPU self-check's ``selfcheck-*.json``
    nor its ``MEASURE = False`` run, ``replay-*.json``)."""
    return sorted(p for p in DATA_DIR.glob("*.json")
                  if not p.name.startswith(("selfcheck-", "replay-")))


def user_dir() -> Path:
    """Where ``python -m gpuperf.record`` writes by default: ``$GPUPERF_HOME/records``, else
    ``$XDG_DATA_HOME/gpuperf/records`` (``~/.local/share/gpuperf/records``)."""
    home = os.environ.get(ENV_HOME)
    if home:
        return Path(home).expanduser() / "records"
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base).expanduser() / "gpuperf" / "records"


def user_records() -> list[Path]:
    """Record files the student wrote with ``python -m gpuperf.record`` (in :func:`user_dir`)."""
    d = user_dir()
    return sorted(d.glob("*.json")) if d.is_dir() else []


def _looks_like_path(text: str) -> bool:
    return (os.sep in text or "/" in text or text.lower().endswith(".json")
            or text.startswith((".", "~")))


def record_path() -> Path:
    """The record file replayed: $GPUPERF_RECORD (a path or a GPU name), else the reference."""
    wanted = os.environ.get(ENV_RECORD, "").strip()
    if wanted:
        p = Path(wanted).expanduser()
        if p.is_dir():
            raise FileNotFoundError(f"{ENV_RECORD}={wanted} is a folder; point it at a record "
                                    "file (a .json written by python -m gpuperf.record).")
        if p.is_file():
            return p
        if _looks_like_path(wanted):
            raise FileNotFoundError(f"{ENV_RECORD}={wanted} does not exist. Point it at a record "
                                    "file, or at a GPU name such as nvidia-h200, or unset it.")
        for folder in (user_dir(), DATA_DIR):
            p = folder / f"{slug(wanted)}.json"
            if p.is_file():
                return p
        names = ", ".join(f.stem for f in user_records() + available()) or "none"
        raise FileNotFoundError(f"{ENV_RECORD}={wanted}: no record for that GPU "
                                f"(available: {names}). Unset it to replay the reference.")
    ref = DATA_DIR / f"{REFERENCE}.json"
    if ref.exists():
        return ref
    files = available()
    if not files:
        raise NotRecorded(
            "no recorded results are shipped with this copy of gpuperf (src/gpuperf/data is "
            "empty). Record them on a GPU with `python -m gpuperf.record`."
        )
    return files[0]


def _path_arg(path, name: str = "path") -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a file path (str or pathlib.Path), not "
                        f"{type(path).__name__} ({path!r}).")
    if isinstance(path, str) and not path.strip():
        raise ValueError(f"{name} is an empty string; pass the path of a record file.")
    return Path(path).expanduser()


def load(path: Path | str | None = None) -> dict:
    """Read and check a record file; migrate format 1 (file-level provenance) to format 2.

    Every problem is a :class:`RecordError` (a ``ValueError``) naming the file.
    """
    path = record_path() if path is None else _path_arg(path)
    if not path.is_file():
        raise FileNotFoundError(f"record file {path} does not exist"
                                + (" (it is a folder)" if path.is_dir() else "") + ".")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise RecordError(f"cannot read the record file {path}: {err}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        what = "is empty" if not text.strip() else f"is not valid JSON ({err}; truncated?)"
        raise RecordError(f"the record file {path} {what}. Re-record it with "
                          "`python -m gpuperf.record`, or point GPUPERF_RECORD elsewhere.") from None
    return _check_record(data, path)


def _check_record(data, path) -> dict:
    def bad(msg):
        return RecordError(f"the record file {path} {msg}. Re-record it with "
                           "`python -m gpuperf.record` (or unset GPUPERF_RECORD).")

    if not isinstance(data, dict):
        raise bad(f"holds a JSON {type(data).__name__}, not a record (an object with "
                  "'format' and 'experiments')")
    if data.get("format") not in FORMATS:
        raise bad(f"has record format {data.get('format')!r}; this gpuperf reads formats "
                  f"{', '.join(map(str, FORMATS))}")
    exps = data.get("experiments")
    if not isinstance(exps, dict):
        raise bad("has no 'experiments' object")
    if data["format"] == 1:
        data = _migrate_v1(data)
        exps = data["experiments"]
    for name, entry in exps.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("rows"), list):
            raise bad(f"has an entry {name!r} without a 'rows' list")
        if not entry["rows"] or not all(isinstance(r, dict) for r in entry["rows"]):
            raise bad(f"has an entry {name!r} whose rows are not a non-empty list of objects")
        prov = entry.get("provenance")
        if not isinstance(prov, dict) or not isinstance(prov.get("gpu"), str):
            raise bad(f"has an entry {name!r} with no provenance (the GPU, date and versions "
                      "that measured it), so it cannot be labelled")
        if not isinstance(prov.get("ceilings"), dict):
            raise bad(f"has an entry {name!r} with no ceilings in its provenance, so its "
                      "figures would lose their ceiling lines")
    gpus = {e["provenance"]["gpu"] for e in exps.values()}
    data.setdefault("gpu", gpus.pop() if len(gpus) == 1 else None)
    return data


def _migrate_v1(data: dict) -> dict:
    """Format 1 kept one provenance for the whole file: give each experiment its copy."""
    top = data.get("provenance")
    out = {"format": FORMAT, "gpu": top.get("gpu") if isinstance(top, dict) else None,
           "experiments": {}}
    for name, entry in data["experiments"].items():
        if not isinstance(entry, dict):
            out["experiments"][name] = entry
            continue
        meta = dict(entry.get("meta") or {})
        prov = None
        if isinstance(top, dict):
            prov = dict(top)
            if meta.get("date"):
                prov["date"] = meta.pop("date")
            if isinstance(meta.get("ceilings"), dict):
                prov["ceilings"] = meta.pop("ceilings")
        new = {k: val for k, val in entry.items() if k != "meta"}
        new["provenance"] = prov
        new["meta"] = meta
        out["experiments"][name] = new
    return out


def save(data: dict, path: Path | str) -> None:
    """Write ``data`` to ``path`` atomically (a unique temporary file, then a rename)."""
    import tempfile

    path = _path_arg(path)
    v.mapping(data, "data")
    if data.get("format") in FORMATS and isinstance(data.get("experiments"), dict):
        data = _check_record(data, path)  # never write a record load() would refuse
    else:
        raise ValueError(f"data must be a record: a dict with 'format' ({FORMAT}) and "
                         f"'experiments'; got keys {sorted(data)}.")
    text = json.dumps(data, indent=1, sort_keys=False, default=_jsonable) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _jsonable(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot store {type(value).__name__} in a record: {value!r}")
