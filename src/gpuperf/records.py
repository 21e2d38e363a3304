"""Experiments: defined once, measured live on a GPU, replayed from records elsewhere.

An *experiment* is a function registered with ``@experiment(...)`` in a chapter
module. It takes one argument, ``progress`` (a callable for status lines), and
returns a list of rows (dicts of plain scalars). ``run(name)`` calls it on a GPU,
or replays the rows recorded in ``src/gpuperf/data/<gpu>.json`` under the
simulator, and wraps them in a ``Result`` that carries where they came from.

``python -m gpuperf.record`` runs every experiment on a GPU and writes the file.
"""

from __future__ import annotations

import datetime as _dt
import html
import importlib
import json
import os
import pkgutil
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import SIMULATOR

DATA_DIR = Path(__file__).parent / "data"
FORMAT = 1
# The GPU whose record the book and the simulator replay when several are shipped.
REFERENCE = "nvidia-h200"
ENV_RECORD = "GPUPERF_RECORD"


class NotRecorded(LookupError):
    """An experiment has no recorded result in the record file in use."""


@dataclass(frozen=True)
class Experiment:
    name: str
    fn: object
    chapter: str
    title: str
    units: dict = field(default_factory=dict)


_REGISTRY: dict[str, Experiment] = {}
_discovered = False
# Chapter modules that failed to import, with the error: reported, never hidden.
BROKEN: dict[str, str] = {}


def experiment(name: str, *, chapter: str, title: str, units: dict | None = None):
    """Register ``fn(progress) -> list[dict]`` as the experiment ``name``."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"experiment name {name!r} must be lower_snake_case.")

    def register(fn):
        previous = _REGISTRY.get(name)
        if previous is not None and previous.fn.__qualname__ != fn.__qualname__:
            raise ValueError(f"experiment {name!r} is registered twice "
                             f"({previous.fn.__module__} and {fn.__module__}).")
        _REGISTRY[name] = Experiment(name, fn, chapter, title, dict(units or {}))
        return fn

    return register


def _discover() -> None:
    """Import every chapter module so that its experiments register themselves."""
    global _discovered
    if _discovered:
        return
    from . import kernels

    for mod in pkgutil.iter_modules(kernels.__path__):
        if not mod.name.startswith("_"):
            try:
                importlib.import_module(f"{kernels.__name__}.{mod.name}")
            except Exception as err:  # one broken chapter must not hide the others
                BROKEN[mod.name] = f"{type(err).__name__}: {err}"
    _discovered = True


def experiments() -> dict[str, Experiment]:
    """All registered experiments, by name."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Experiment:
    exps = experiments()
    if name not in exps:
        close = [n for n in exps if name.split("_")[0] in n][:8]
        hint = f" Did you mean one of: {', '.join(close)}?" if close else ""
        broken = "".join(f" (chapter module {m} failed to import: {e})" for m, e in BROKEN.items())
        raise ValueError(f"there is no experiment called {name!r}.{hint} "
                         f"gp.records.experiments() lists them all.{broken}")
    return exps[name]


# --------------------------------------------------------------------------- files


def slug(gpu_name: str) -> str:
    """File-name form of a GPU name: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")


def available() -> list[Path]:
    """Record files shipped with the package (and any added by the student)."""
    return sorted(DATA_DIR.glob("*.json"))


def record_path() -> Path:
    """The record file replayed: $GPUPERF_RECORD (a path or a GPU slug), else the reference."""
    wanted = os.environ.get(ENV_RECORD)
    if wanted:
        p = Path(wanted)
        if p.suffix == ".json":
            if not p.exists():
                raise FileNotFoundError(f"{ENV_RECORD}={wanted} does not exist.")
            return p
        p = DATA_DIR / f"{slug(wanted)}.json"
        if not p.exists():
            names = ", ".join(f.stem for f in available()) or "none"
            raise FileNotFoundError(f"{ENV_RECORD}={wanted}: no record for that GPU "
                                    f"(available: {names}).")
        return p
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


def load(path: Path | str | None = None) -> dict:
    path = Path(path) if path else record_path()
    data = json.loads(path.read_text())
    if data.get("format") != FORMAT:
        raise ValueError(f"{path} has record format {data.get('format')}, expected {FORMAT}; "
                         "re-record it with `python -m gpuperf.record`.")
    return data


def save(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False, default=_jsonable) + "\n")
    tmp.replace(path)


def _jsonable(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot store {type(value).__name__} in a record: {value!r}")


def provenance() -> dict:
    """Who measured: GPU, driver, versions, date, device facts. GPU mode only."""
    import numba
    import numpy as np

    from . import device

    try:
        from importlib.metadata import version

        numba_cuda = version("numba-cuda")
    except Exception:
        numba_cuda = None
    try:
        import cupy

        cupy_version = cupy.__version__
    except Exception:
        cupy_version = None
    driver = None
    try:
        from numba import cuda

        v = cuda.cudadrv.driver.driver.get_version()
        driver = f"{v[0]}.{v[1]}"
    except Exception:
        pass
    info = device.info()
    return {
        "gpu": info.name,
        "date": _dt.date.today().isoformat(),
        "cuda_driver_api": driver,
        "numba": numba.__version__,
        "numba_cuda": numba_cuda,
        "numpy": np.__version__,
        "cupy": cupy_version,
        "python": platform.python_version(),
        "device": info.as_dict(),
    }


# --------------------------------------------------------------------------- results


@dataclass
class Result:
    """Rows of one experiment and where they came from (``source``: live or recorded)."""

    name: str
    rows: list[dict]
    meta: dict
    source: str

    @property
    def gpu(self) -> str:
        return self.meta.get("gpu", "unknown GPU")

    @property
    def ceilings(self) -> dict:
        return self.meta.get("ceilings") or {}

    @property
    def label(self) -> str:
        versions = f"numba-cuda {self.meta.get('numba_cuda')}" if self.meta.get("numba_cuda") else ""
        when = self.meta.get("date", "")
        verb = "measured live on" if self.source == "live" else "recorded on"
        return ", ".join(p for p in (f"{verb} {self.gpu}", when, versions) if p)

    def select(self, **filters) -> list[dict]:
        """Rows whose columns equal every given value."""
        return [r for r in self.rows if all(r.get(k) == v for k, v in filters.items())]

    def where(self, **filters) -> "Result":
        """The same result restricted to the rows that match (for plots of a subset)."""
        return Result(self.name, self.select(**filters), self.meta, self.source)

    def one(self, **filters) -> dict:
        rows = self.select(**filters)
        if len(rows) != 1:
            raise LookupError(f"{self.name}: {len(rows)} rows match {filters}, expected one.")
        return rows[0]

    def column(self, name: str, **filters) -> list:
        rows = self.select(**filters) if filters else self.rows
        missing = [r for r in rows if name not in r]
        if missing:
            cols = ", ".join(self.columns)
            raise KeyError(f"{self.name} has no column {name!r} (columns: {cols}).")
        return [r[name] for r in rows]

    def values(self, name: str) -> list:
        """Distinct values of a column, in first-seen order."""
        seen = []
        for r in self.rows:
            if r.get(name) not in seen:
                seen.append(r.get(name))
        return seen

    @property
    def columns(self) -> list[str]:
        cols: list[str] = []
        for r in self.rows:
            cols += [k for k in r if k not in cols]
        return cols

    def table(self, columns: list[str] | None = None, max_rows: int = 60) -> str:
        """A plain-text table (for terminals and logs)."""
        cols = columns or self.columns
        cells = [[_fmt(r.get(c)) for c in cols] for r in self.rows[:max_rows]]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
        lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
        lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
        if len(self.rows) > max_rows:
            lines.append(f"... {len(self.rows) - max_rows} more rows")
        lines.append(f"({self.label})")
        return "\n".join(lines)

    def _repr_html_(self, columns: list[str] | None = None, max_rows: int = 60) -> str:
        cols = columns or self.columns
        units = _units(self.name)
        head = "".join(
            f"<th>{html.escape(c)}{' (' + html.escape(units[c]) + ')' if c in units else ''}</th>"
            for c in cols
        )
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c)))}</td>" for c in cols) + "</tr>"
            for r in self.rows[:max_rows]
        )
        more = (f"<p>... {len(self.rows) - max_rows} more rows</p>"
                if len(self.rows) > max_rows else "")
        return (f"<table><caption style='caption-side:bottom'>{html.escape(self.name)}: "
                f"{html.escape(self.label)}</caption><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>{more}")

    def show(self, columns: list[str] | None = None, max_rows: int = 60):
        """Display a chosen set of columns (HTML in Jupyter, text elsewhere)."""
        try:
            from IPython.display import HTML, display

            display(HTML(self._repr_html_(columns, max_rows)))
        except ImportError:
            print(self.table(columns, max_rows))

    def __repr__(self) -> str:
        return f"Result({self.name!r}, {len(self.rows)} rows, {self.label})"


def _units(name: str) -> dict:
    try:
        return get(name).units
    except ValueError:
        return {}


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v != v:
            return "nan"
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1000:
            return f"{v:,.0f}"
        if a >= 100:
            return f"{v:.1f}"
        if a >= 1:
            return f"{v:.2f}"
        return f"{v:.3g}"
    return str(v)


def recorded(name: str, path: Path | str | None = None) -> Result:
    """The recorded result of ``name`` (from the reference record unless ``path`` is given)."""
    get(name)
    data = load(path)
    entry = data.get("experiments", {}).get(name)
    if entry is None:
        raise NotRecorded(
            f"experiment {name!r} is not in the record {record_path().name if not path else path}."
            " Record it on a GPU with `python -m gpuperf.record --only " + name + "`."
        )
    meta = {**data.get("provenance", {}), **entry.get("meta", {})}
    return Result(name, entry["rows"], meta, "recorded")


def measure(name: str, progress=None) -> Result:
    """Run experiment ``name`` now, on the GPU."""
    from . import bench

    bench._require_gpu(f"experiment {name!r}")
    exp = get(name)
    rows = exp.fn(progress or bench._default_progress)
    _check_rows(name, rows)
    meta = {**provenance(), "ceilings": bench.ceilings()}
    return Result(name, rows, meta, "live")


def _check_rows(name, rows) -> None:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"experiment {name!r} must return a non-empty list of dicts.")
    json.dumps(rows, default=_jsonable)


def run(name: str, *, live: bool | None = None, progress=None) -> Result:
    """The result of experiment ``name``: measured now on a GPU, replayed from records otherwise.

    ``live=False`` replays the record even on a GPU (to compare with the reference);
    ``live=True`` insists on measuring.
    """
    if live is None:
        live = not SIMULATOR
    return measure(name, progress) if live else recorded(name)


def devices() -> list[dict]:
    """One row per shipped record file: the GPU, when, versions, ceilings, experiments."""
    rows = []
    for path in available():
        data = load(path)
        p = data.get("provenance", {})
        c = p.get("ceilings", {})
        d = p.get("device", {})
        rows.append({
            "gpu": p.get("gpu"), "file": path.name, "date": p.get("date"),
            "SMs": d.get("sm_count"), "L2 (MiB)": (d.get("l2_bytes") or 0) / 2**20,
            "theoretical peak (GB/s)": c.get("peak_gbps"),
            "device-to-device copy (GB/s)": c.get("copy_gbps"),
            "copy / peak (%)": 100 * c["copy_gbps"] / c["peak_gbps"]
            if c.get("copy_gbps") and c.get("peak_gbps") else None,
            "cuBLAS SGEMM (TFLOP/s)": c.get("matmul_tflops"),
            "numba-cuda": p.get("numba_cuda"), "driver API": p.get("cuda_driver_api"),
            "experiments": len(data.get("experiments", {})),
            "reference": path.stem == REFERENCE,
        })
    return rows


def show_devices() -> None:
    """Display the table of recorded devices (HTML in Jupyter, text elsewhere)."""
    rows = devices()
    if not rows:
        print("No record files are shipped yet: run `python -m gpuperf.record` on a GPU.")
        return
    table = Result("recorded_devices", rows, {"gpu": "all recorded GPUs"}, "recorded")
    try:
        from IPython.display import HTML, display

        cols = table.columns
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c)))}</td>" for c in cols)
                       + "</tr>" for r in rows)
        display(HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"))
    except ImportError:
        print(table.table())
