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
import functools
import html
import json
import os
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import validate as v

# The record files (paths, names, reading, checking, writing) live one layer down, in
# ``gpuperf.store``; their names stay reachable here, where notebooks and tools look for them.
from .store import (  # noqa: F401
    DATA_DIR,
    ENV_HOME,
    ENV_RECORD,
    FORMAT,
    FORMATS,
    REFERENCE,
    NotRecorded,
    RecordError,
    _jsonable,
    _path_arg,
    available,
    load,
    record_path,
    save,
    slug,
    user_dir,
    user_records,
)

# GPUPERF_LIVE=0 on a GPU: every experiment shows its record instead of measuring (a class
# that runs a chapter for its exercises without spending GPU minutes on re-measuring).
ENV_LIVE = "GPUPERF_LIVE"


def live_by_default() -> bool:
    """Whether ``run(name)`` measures: on a GPU, unless ``GPUPERF_LIVE`` is 0/false/no/off."""
    from .mode import MODE

    raw = os.environ.get(ENV_LIVE, "").strip().lower()
    if raw in ("0", "false", "no", "off"):
        return False
    if raw not in ("", "1", "true", "yes", "on"):
        raise ValueError(f"{ENV_LIVE}={os.environ[ENV_LIVE]!r} is not understood: set it to 0 to "
                         "show the records instead of measuring, 1 (or leave it unset) to "
                         "measure on a GPU.")
    return MODE == "gpu"


class NoSingleRow(LookupError, ValueError):
    """``Result.one(...)``: the filters match no row, or several."""


@dataclass(frozen=True)
class Experiment:
    name: str
    fn: object
    chapter: str
    title: str
    units: dict = field(default_factory=dict)

    def __post_init__(self):
        v.string(self.name, "name")
        v.function(self.fn, "fn")
        v.string(self.chapter, "chapter")
        v.string(self.title, "title")
        v.mapping(self.units, "units")


_REGISTRY: dict[str, Experiment] = {}
_discovered = False
# Chapter modules that failed to import, with the error: reported, never hidden.
BROKEN: dict[str, str] = {}


def experiment(name: str, *, chapter: str, title: str, units: dict | None = None):
    """Register ``fn(progress) -> list[dict]`` as the experiment ``name``.

    The function returned checks that ``progress`` is callable before measuring.
    """
    v.string(name, "name")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"experiment name {name!r} must be lower_snake_case "
                         "(e.g. 'reduce_ladder').")
    v.string(chapter, "chapter")
    v.string(title, "title")
    if units is not None:
        v.mapping(units, "units")

    def register(fn):
        v.function(fn, "fn")
        previous = _REGISTRY.get(name)
        if previous is not None and previous.fn.__qualname__ != fn.__qualname__:
            raise ValueError(f"experiment {name!r} is registered twice "
                             f"({previous.fn.__module__} and {fn.__module__}).")

        @functools.wraps(fn)
        def experiment_fn(progress):
            from . import bench

            v.function(progress, "progress", what="a callable taking one status string "
                       "(e.g. print)")
            bench.require_gpu(f"experiment {name!r}")  # at once, not after a simulated sweep
            return fn(progress)

        _REGISTRY[name] = Experiment(name, experiment_fn, chapter, title, dict(units or {}))
        return experiment_fn

    return register


# Who imports the chapters so that their experiments register: the package facade
# (``gpuperf/__init__.py``, the top layer) adds that step here; the records, one layer below
# the chapters, never import them.
_DISCOVERERS: list = []


def add_discovery(step) -> None:
    """Run ``step(broken)`` before the first lookup of an experiment: it imports modules that
    register experiments, and records in the dict ``broken`` each that failed to import
    (``{name: "ErrorType: message"}``)."""
    global _discovered
    v.function(step, "step", what="a function step(broken) that imports chapter modules")
    if step not in _DISCOVERERS:
        _DISCOVERERS.append(step)
        _discovered = False


def _discover() -> None:
    """Run the discovery steps once (the facade's imports every chapter)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for step in list(_DISCOVERERS):
        step(BROKEN)


def experiments() -> dict[str, Experiment]:
    """All registered experiments, by name."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Experiment:
    v.string(name, "name")
    exps = experiments()
    if name not in exps:
        import difflib

        close = difflib.get_close_matches(name, list(exps), n=3, cutoff=0.6) or [
            n for n in exps if name.split("_")[0] in n][:8]
        hint = f" Did you mean one of: {', '.join(close)}?" if close else ""
        broken = "".join(f" (chapter module {m} failed to import: {e})" for m, e in BROKEN.items())
        raise ValueError(f"there is no experiment called {name!r}.{hint} "
                         f"gp.records.experiments() lists them all.{broken}")
    return exps[name]


def provenance() -> dict:
    """Who measured: GPU, driver, versions, date, device facts. GPU mode only."""
    import numba
    import numpy as np

    from . import bench, device

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
        "l2_flush": bench.DEFAULT_FLUSH,  # the flush kind time_kernel(flush=True) used
    }


# --------------------------------------------------------------------------- code fingerprints


def code_fingerprint(name: str) -> str:
    """A short hash of the code experiment ``name`` runs: its function and every kernel,
    function, class and constant of the chapters it reaches by name (``gpuperf.fingerprint``).
    Recorded with each experiment; a replay whose fingerprint differs from today's was measured
    with other code."""
    import inspect

    exp = get(name)
    return _fingerprint(inspect.unwrap(exp.fn))


@functools.lru_cache(maxsize=512, typed=True)
def _fingerprint(fn) -> str:
    from . import fingerprint

    return fingerprint.fingerprint(fn)


# --------------------------------------------------------------------------- results


@v.register_result_type
@dataclass
class Result:
    """Rows of one experiment and where they came from (``source``: live or recorded)."""

    name: str
    rows: list[dict]
    meta: dict
    source: str

    def __post_init__(self):
        v.string(self.name, "name")
        if not isinstance(self.rows, list) or not all(isinstance(r, dict) for r in self.rows):
            raise TypeError(f"rows must be a list of dicts (one per row), not "
                            f"{type(self.rows).__name__}.")
        v.mapping(self.meta, "meta")
        v.choice(self.source, "source", ("live", "recorded"))

    @property
    def gpu(self) -> str:
        return self.meta.get("gpu", "unknown GPU")

    @property
    def ceilings(self) -> dict:
        return self.meta.get("ceilings") or {}

    @property
    def code_status(self) -> str:
        """``"same"``: measured with today's code of the experiment (live, or a record whose
        fingerprint matches ``code_fingerprint``); ``"other"``: recorded with other code;
        ``"unknown"``: recorded before records carried a fingerprint. A result derived from a
        recorded one under another name (``"x (summary)"``, with its ``meta``) is judged by the
        experiment its meta names."""
        if self.source == "live":
            return "same"
        recorded_code = self.meta.get("code")
        if not recorded_code:
            return "unknown"
        try:
            now = code_fingerprint(self.meta.get("experiment") or self.name)
        except (KeyError, ValueError, OSError):  # an experiment no longer defined
            return "other"
        return "same" if now == recorded_code else "other"

    @property
    def label(self) -> str:
        from .device import SIMULATOR_NAME

        if self.source == "live" and self.meta.get("gpu") in (None, "", SIMULATOR_NAME):
            # Made here without a GPU: the emulator's traces (``co.trace``) and the simulator's runs.
            return "computed by the emulator (Numba's CUDA simulator), not measured on a GPU"
        versions = f"numba-cuda {self.meta.get('numba_cuda')}" if self.meta.get("numba_cuda") else ""
        when = self.meta.get("date", "")
        verb = "measured live on" if self.source == "live" else "recorded on"
        code = {"same": "", "other": "with earlier code than today's",
                "unknown": "code not fingerprinted"}[self.code_status]
        if (self.code_status == "unknown" and not self.meta.get("experiment")
                and self.name not in experiments()):
            code = ""  # a table typed from a source (the study notes'): no code of ours ran it
        return ", ".join(p for p in (f"{verb} {self.gpu}", when, versions, code) if p)

    def select(self, **filters) -> list[dict]:
        """Rows whose columns equal every given value (each filter must name a column)."""
        for k in filters:
            v.column(self, k, name=f"select({k}=...)")
        return [r for r in self.rows if all(r.get(k) == val for k, val in filters.items())]

    def where(self, **filters) -> "Result":
        """The same result restricted to the rows that match (for plots of a subset)."""
        return Result(self.name, self.select(**filters), self.meta, self.source)

    def one(self, **filters) -> dict:
        rows = self.select(**filters)
        if len(rows) != 1:
            raise NoSingleRow(f"{self.name}: {len(rows)} rows match {filters}, expected one. "
                              "Add filters until one row matches (see .values(column)).")
        return rows[0]

    def column(self, name: str, **filters) -> list:
        v.column(self, name, "name")
        rows = self.select(**filters) if filters else self.rows
        return [r.get(name) for r in rows]

    def values(self, name: str) -> list:
        """Distinct values of a column, in first-seen order."""
        v.column(self, name, "name")
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
        cols = self._columns_arg(columns)
        v.integer(max_rows, "max_rows", minimum=1)
        cells = [[_fmt(r.get(c)) for c in cols] for r in self.rows[:max_rows]]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
        lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
        lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
        if len(self.rows) > max_rows:
            lines.append(f"... {len(self.rows) - max_rows} more rows")
        lines.append(f"({self.label})")
        return "\n".join(lines)

    def _columns_arg(self, columns):
        if columns is None:
            return self.columns
        cols = v.sequence(columns, "columns")
        for i, c in enumerate(cols):
            v.column(self, c, f"columns[{i}]")
        return cols

    def _repr_html_(self, columns: list[str] | None = None, max_rows: int = 60,
                    headers: dict | None = None) -> str:
        cols = self._columns_arg(columns)
        v.integer(max_rows, "max_rows", minimum=1)
        own = self._headers_arg(headers, cols)
        names = {**{c: COLUMN_WORDS[c] for c in cols if c in COLUMN_WORDS}, **own}
        units = {c: UNIT_WORDS.get(u, u) for c, u in _units(self.name).items()}
        for c, u in DEFAULT_UNITS.items():  # the shared words' unit, where the record has none
            if c not in units and c not in own:
                units[c] = u
        head = "".join(f"<th>{_header(names.get(c, c), units.get(c))}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(_cell(_shown_value(c, r.get(c), names.get(c))) for c in cols)
            + "</tr>" for r in self.rows[:max_rows]
        )
        more = (f"<p>... {len(self.rows) - max_rows} more rows</p>"
                if len(self.rows) > max_rows else "")
        return (f"<table class='gp-table'><caption>{html.escape(self.label)}</caption>"
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}")

    def _headers_arg(self, headers, cols) -> dict:
        if headers is None:
            return {}
        if not isinstance(headers, dict):
            raise TypeError(f"headers must be a dict from column name to the words its header "
                            f"shows, not {type(headers).__name__}; e.g. {{'gbps': 'bandwidth'}}.")
        for c, words in headers.items():
            if c not in cols:
                raise ValueError(f"headers names column {c!r}, which the table does not show; "
                                 f"its columns are {cols}.")
            v.string(words, f"headers[{c!r}]")
        return headers

    def show(self, columns: list[str] | None = None, max_rows: int = 60, *, note: str = "",
             headers: dict | None = None, fold_rest: bool = True):
        """Display a chosen set of columns (HTML in Jupyter, text elsewhere), with ``note``
        (plain text) under the table. ``headers`` maps a column to the words its header shows
        (by default words from ``COLUMN_WORDS``, else the column's name with spaces for
        underscores). When ``columns`` leaves some out and ``fold_rest`` is true, the whole
        table follows, folded ("All N columns"), with the same ``headers`` (its other columns
        under ``COLUMN_WORDS``, else their names with spaces for underscores); ``headers`` may
        also name a column that only the full table shows.
        A note printed after ``show`` could land above the table in the book, whose pages
        merge a cell's printed text into one block."""
        cols = self._columns_arg(columns)
        v.integer(max_rows, "max_rows", minimum=1)
        v.string(note, "note", empty=True)
        folded = fold_rest and len(cols) < len(self.columns)
        self._headers_arg(headers, self.columns if folded else cols)
        shown = None if headers is None else {c: w for c, w in headers.items() if c in cols}
        if _in_a_notebook():
            from IPython.display import HTML, display

            under = f"<p class='gp-note'>{html.escape(note)}</p>" if note else ""
            rest = ""
            if folded:
                rest = (f"<details class='gp-full'><summary>{html.escape(self._full_summary())}"
                        f"</summary><div class='gp-wide'>"
                        f"{self._repr_html_(None, max_rows, headers)}</div></details>")
            display(HTML(self._repr_html_(columns, max_rows, shown) + under + rest))
        else:  # a script or a terminal: HTML would print as "<IPython...HTML object>"
            print(self.table(columns, max_rows) + (f"\n{note}" if note else ""))

    def _full_summary(self) -> str:
        """The folded full table's title, in words. Only an experiment's own rows are "this
        record"; a result derived from one is "this table", with its name where that is words
        (``Result("x against y", rows, y.meta, ...)``). An internal name (snake_case, such as
        an experiment's) is never shown: the reader sees the table right above."""
        n = len(self.columns)
        source = self.meta.get("experiment")
        if self.name in experiments() and source in (None, self.name):
            return f"All {n} columns of this record"
        named = "" if _INTERNAL_NAME.search(self.name) else f" ({self.name})"
        return f"All {n} columns of this table{named}"

    def __repr__(self) -> str:
        return f"Result({self.name!r}, {len(self.rows)} rows, {self.label})"


# A snake_case word (an experiment's or a column's name): not shown to readers as words.
_INTERNAL_NAME = re.compile(r"[A-Za-z0-9]+_[A-Za-z0-9_]+")

# Words for columns many experiments share, where a table's caller names no header (the folded
# full tables, a record displayed as it is): a header is words, not a column's internal name.
COLUMN_WORDS = {"gbps": "bandwidth", "ms": "time", "ms_min": "fastest run (ms)",
                "spread": "spread of the repeats (%)", "pct_copy": "share of the copy ceiling",
                "pct_peak": "share of the theoretical peak", "blocks_per_sm": "blocks per SM",
                "block": "threads per block", "n_ch": "channels N", "allocated_mb": "allocated",
                "moved_mb": "moved", "rel_err": "relative error", "pct_of_ideal": "reached",
                "us_per_launch": "µs per launch", "floor_us_per_launch": "floor, µs per launch",
                "dram_gbps": "DRAM (GB/s)", "achieved_occupancy_pct": "achieved occupancy",
                "theoretical_occupancy_pct": "theoretical occupancy",
                "extra_ms": "extra with a kernel pending (ms)", "kernel_ms": "kernel (ms)",
                "h2d_ms": "host to device (ms)", "d2h_ms": "device to host (ms)", "mib": "MiB",
                "extra_pct": "extra, % of the kernel's time",
                "ilp": "loads in flight per thread",
                "elem_bytes": "element size (bytes)", "dtype": "element type",
                "moved_gbps": "moved by the sector model", "dram_pct": "DRAM throughput",
                "dram_read_per_useful": "DRAM bytes read per useful byte",
                "dram_write_per_useful": "DRAM bytes written per useful byte",
                "l2_write_sectors_per_useful_sector": "L2 sectors written per useful sector",
                "count_gbps": "fixed count: useful bandwidth (GB/s)",
                "span_gbps": "fixed span: useful bandwidth (GB/s)",
                "dram_read_bytes": "DRAM bytes read", "dram_write_bytes": "DRAM bytes written",
                "model_sectors_per_request": "sectors per request (sector model)",
                "model_lines_per_request": "128-byte lines per request (sector model)",
                "load_sectors_per_request": "sectors per load request",
                "store_sectors_per_request": "sectors per store request",
                "load_wavefronts_per_request": "load wavefronts per request",
                "store_wavefronts_per_request": "store wavefronts per request",
                "sectors_per_load_request": "sectors per load request",
                "load_requests_per_kib": "load requests per KiB",
                "instructions_per_kib": "instructions per KiB",
                "bytes_per_thread_in_flight": "bytes in flight per thread",
                "occupancy_pct": "achieved occupancy",
                "model_pct": "useful share", "offset_bytes": "offset (bytes)",
                "elements_per_thread": "elements per thread", "access_bytes": "bytes per access",
                "ms_launch_counted": "time, launch counted",
                "gbps_launch_counted": "bandwidth, launch counted",
                # the matmul chapters' records (their folded full tables)
                "tflops": "rate", "pct_cublas": "share of cuBLAS", "ai": "intensity",
                "bound_tflops": "bound: copy rate × intensity, at most cuBLAS",
                "pct_of_bound": "share of that bound (%)",
                "traffic_gb": "traffic by the model (GB)",
                "model_gbps": "traffic rate by the model (GB/s)", "model": "traffic model",
                "regs": "registers per thread", "registers": "registers per thread",
                "smem_bytes": "shared memory per block", "local_bytes": "local memory per thread",
                "threads": "threads per block", "factor": "coarsening factor",
                "cap": "register cap (0: none)", "k_steps": "steps of k per loop body",
                "bm": "block rows", "bn": "block columns", "bk": "BK", "tm": "thread tile rows",
                "tn": "thread tile columns", "barriers_per_tile": "barriers per tile",
                "grid_blocks": "blocks in the grid", "nan": "NaN outputs",
                "rel_error": "relative error", "dram_bytes": "bytes DRAM moved",
                "model_bytes": "bytes by the traffic model", "duration_ns": "kernel duration",
                "blocks_limit_registers": "blocks per SM the registers allow",
                # Nsight Compute counts it at the shared-memory carveout configured for the launch
                # (the driver's choice), not at the SM's whole shared memory
                "blocks_limit_shared": "blocks per SM the shared memory allows at the launch's "
                                       "carveout",
                "stall_long_scoreboard": "stall: long scoreboard",
                "stall_short_scoreboard": "stall: short scoreboard",
                "stall_mio_throttle": "stall: MIO throttle", "stall_barrier": "stall: barrier",
                "stall_math_pipe_throttle": "stall: math pipe throttle",
                "stall_wait": "stall: fixed wait", "stall_not_selected": "stall: not selected",
                "stall_dispatch_stall": "stall: dispatch",
                "bank_roof_gbps": "SM read roof", "sm_clock_khz": "SM clock",
                "pipe_pct": "data pipe busy", "shared_pipe_pct": "shared-memory pipe busy",
                "shared_load_wavefronts_per_load": "passes per shared load",
                "shared_store_wavefronts_per_store": "passes per shared store", "l1_hit_pct": "L1 hit rate",
                "inst_per_load": "instructions per load", "bytes_read": "bytes read",
                "reads_per_thread": "reads per thread",
                # chapter 6's records (their folded full tables)
                "v100_us": "V100 time", "v100_gbps": "V100 bandwidth",
                "v100_pct_peak": "V100 share of peak (%)", "v100_speedup": "V100 speedup over v0",
                "speedup_vs_v0": "speedup over v0", "host_spread": "spread of host time (%)",
                "integer_sum_error": "error on an integer sum", "best": "best rung?",
                "ptx_v4_loads": "16-byte loads in PTX", "ptx_scalar_loads": "scalar loads in PTX",
                "ptx_adds": "adds in PTX", "ld_global_v4_f32": "16-byte global loads in PTX",
                "ld_global_f32": "4-byte global loads in PTX", "ptx_lines": "telling PTX lines",
                "warps_active_pct": "warps active", "active_pct": "SM active",
                "l2_atomic_requests": "L2 atomic requests",
                "gpu_ops": "GPU operations per call", "packed": "one driver call per kernel?",
                "addresses": "addresses the atomics hit", "empties_l1": "empties L1?",
                "ftz_atomic_add": "float atomic flushes subnormals?",
                "pct_cupy": "share of cupy.sum (%)", "pct_v8": "bandwidth",
                "pct_two_pass": "bandwidth", "pct_sum": "bandwidth", "gpu_ms": "GPU busy",
                "post_ms": "the post", "atomic_inst": "atomic instructions",
                "bar_sync": "barriers (bar.sync)", "shfl_sync": "shuffles (shfl.sync)",
                "atom_add": "atomic adds", "rem": "remainders (rem)",
                "bar_warp_sync": "warp barriers (bar.warp.sync)",
                "edge_failures": "edge cases failed (the first 4)"}
# Units for the shared words above where an experiment declares none: every record's
# pct_copy and pct_peak are percentages (48.9 is 48.9%, not 48.9 times).
DEFAULT_UNITS = {"pct_copy": "% of copy", "pct_peak": "% of peak"}
# Internal values of a record's text columns, in words, by (column, value): tables, explorer
# controls and titles show these, not the record's names.
VALUE_WORDS = {("kernel", "grid_stride"): "grid-stride loop",
               # chapter 2's copy tuning records "as many blocks as the data needs" as 0
               ("blocks_per_sm", 0): "as many as the data needs",
               ("method", "grid_stride"): "grid-stride loop",
               ("kernel", "one_per_thread"): "one element per thread",
               ("method", "one_per_thread"): "one element per thread",
               ("kernel", "vec4"): "16-byte loads",
               ("kernel", "ilp"): "4-byte loads, several in flight",
               ("mode", "rowmajor"): "B row-major",
               ("mode", "uncoalesced"): "B column-major, plain loads",
               ("mode", "corner"): "B column-major, corner turning",
               ("misaligned", "both"): "load and store",
               ("misaligned", "source"): "load only",
               ("version", "global"): "global atomics, one thread per byte",
               ("version", "global_stride"): "global atomics, grid-stride loop",
               ("version", "private"): "per-block private copies",
               # chapter 7's relaxation: the kernel is the busiest stage, far from the FP32 roof
               ("work", "compute-bound (relaxation)"): "kernel-heavy (relaxation)",
               ("work", "compute-bound"): "kernel-heavy",
               ("model", "naive"): "naive (a row and a column per output)",
               ("model", "tiled"): "shared-memory tiles", ("model", "coarsened"): "coarsened tiles",
               ("model", "block"): "block tile in registers",
               # chapter 3's stride sweep: rows of a power-of-two stride, or padded by a chunk
               ("padded", False): "power-of-two stride", ("padded", True): "stride + 128 B"}


def value_words(column: str, value):
    """A record's value in words where ``VALUE_WORDS`` has them, else the value itself."""
    v.string(column, "column")
    try:
        return VALUE_WORDS.get((column, value), value)
    except TypeError:  # an unhashable value has no words
        return value

# Columns that hold a fraction (0.01 = 1%): tables show them in percent, as their words say.
PERCENT_COLUMNS = ("spread", "host_spread")

# Words for a unit where a record's own unit string would mislead in a header: a share the
# other way round than "% of" reads ("pct_floor" is the floor's time as a % of the measured).
UNIT_WORDS = {"% of floor": "floor as % of time",
              "grid blocks / (SMs x blocks per SM)": "grid blocks ÷ (SMs × blocks per SM)"}


def _in_a_notebook() -> bool:
    """Whether output goes to a Jupyter (or Colab) kernel, which renders HTML."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _header(column: str, unit: str | None) -> str:
    """A column's header cell: its words (underscores read as spaces, so a header breaks
    between words, never inside one), the unit below it."""
    words = column.replace("_", " ")
    if unit and unit != column and words.endswith(" " + unit):
        words = words[: -len(unit) - 1]   # "serial_ms" in ms: "serial (ms)", not "serial ms (ms)"
    name = html.escape(words)
    # "ms (ms)", "ms per call (ms)", "GPU busy (ms) (ms)": a unit the words already say, once;
    # "host (µs)" says "us", and "hazard errors" says "hazards"
    forms = {unit} | ({"µs"} if unit == "us" else set()) | (
        {unit[:-1]} if unit and len(unit) > 3 and unit.endswith("s") else set())
    if not unit or unit == column or any(
            re.search(rf"(?<![\w/]){re.escape(f)}(?![\w/])", words) for f in forms):
        return name
    # a unit with its own note, "% (sector model)": "(%, sector model)", one pair of brackets;
    # not a formula, "a ÷ (b × c)", whose brackets group
    shown = re.sub(r"^(.*[\w%]) \((.*)\)$", r"\1, \2", unit)
    return f"{name}<br><small>({html.escape(shown)})</small>"


def _shown_value(column: str, value, words: str | None):
    """A value as a table shows it: a fraction in percent where the header says so
    (``PERCENT_COLUMNS``), a record's internal value in words (``value_words``)."""
    if (column in PERCENT_COLUMNS and isinstance(value, float) and words
            and words.endswith("(%)")):
        return 100 * value
    if isinstance(value, str):
        return value_words(column, value)
    return value


def _cell(value) -> str:
    """A table cell: numbers right-aligned, text left-aligned and breakable."""
    text = html.escape(_fmt(value))
    return f"<td class='t'>{text}</td>" if isinstance(value, str) else f"<td>{text}</td>"


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
        short = f"{v:.3g}"
        # 0.9995 rounds to "1" at three figures: show it as the numbers from 1 up are ("1.00")
        return f"{v:.2f}" if abs(float(short)) >= 1 else short
    if isinstance(v, int) and abs(v) >= 10_000:  # 16,384; byte counts: 1,214,927,872
        return f"{v:,}"
    return str(v)


def recorded(name: str, path: Path | str | None = None) -> Result:
    """The recorded result of ``name`` (from the reference record unless ``path`` is given).

    Without ``path`` or ``$GPUPERF_RECORD``, an experiment missing from the reference
    record is replayed from another shipped record that has it. Its label comes from the
    experiment's own provenance (GPU, date, versions).
    """
    get(name)
    where = record_path() if path is None else _path_arg(path)
    data = load(where)
    entry = data["experiments"].get(name)
    if entry is None and path is None and not os.environ.get(ENV_RECORD, "").strip():
        # An experiment only some GPUs could record (one that needs a profiler, say) is
        # replayed from the shipped record that has it; its label names that GPU.
        for other in available():
            if other != where and name in load(other)["experiments"]:
                where, data = other, load(other)
                entry = data["experiments"][name]
                break
    if entry is None:
        raise NotRecorded(
            f"experiment {name!r} is not in the record {where}."
            " Record it on a GPU with `python -m gpuperf.record --only " + name + "`."
        )
    # "experiment" names the experiment the rows came from, so that a result derived from
    # them under another name (a summary table) still knows whose code it was measured with.
    meta = {**entry["provenance"], **entry.get("meta", {}), "experiment": name}
    if entry.get("failed"):
        import warnings

        f = entry["failed"]
        warnings.warn(f"{name}: re-recording it on {f.get('gpu')} ({f.get('date')}) failed "
                      f"({f.get('error')}); these rows are the older ones, {entry['provenance']['gpu']}, "
                      f"{entry['provenance'].get('date')}.", RuntimeWarning, stacklevel=2)
    return Result(name, entry["rows"], meta, "recorded")


def references(name: str, *, besides: str | None = None) -> list[Result]:
    """The recorded results of experiment ``name`` in every shipped record (one per GPU),
    leaving out the GPU named ``besides`` (e.g. the GPU of a result already shown)."""
    get(name)
    if besides is not None:
        v.string(besides, "besides")
    out = []
    for path in available():
        try:
            res = recorded(name, path=path)
        except NotRecorded:  # this GPU's record lacks the experiment
            continue
        if res.gpu != besides:  # its label says whether it ran today's code
            out.append(res)
    return out


def measure(name: str, progress=None) -> Result:
    """Run experiment ``name`` now, on the GPU."""
    from . import bench

    exp = get(name)
    if progress is not None:
        v.function(progress, "progress", what="a callable taking one status string")
    bench.require_gpu(f"experiment {name!r}")
    rows = exp.fn(progress or bench._default_progress)
    _check_rows(name, rows)
    meta = {**provenance(), "ceilings": bench.ceilings(), "code": code_fingerprint(name),
            "experiment": name}
    return Result(name, rows, meta, "live")


def _check_rows(name, rows) -> None:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"experiment {name!r} must return a non-empty list of dicts.")
    json.dumps(rows, default=_jsonable)


def run(name: str, *, live: bool | None = None, progress=None, like: Result | None = None) -> Result:
    """The result of experiment ``name``: measured now on a GPU, replayed from records otherwise.

    ``live=False`` replays the record even on a GPU (to compare with the reference);
    ``live=True`` insists on measuring. ``GPUPERF_LIVE=0`` in the environment makes every
    ``run`` without ``live=`` replay (see :func:`live_by_default`). ``like``: a recorded
    result whose GPU this one should come from when replaying, so that two tables read
    side by side are of one GPU (when that GPU's record has ``name``; the usual record
    otherwise).
    """
    get(name)
    if live is not None:
        v.boolean(live, "live")
    if progress is not None:
        v.function(progress, "progress", what="a callable taking one status string")
    if like is not None:
        v.result(like, "like")
    if live is None:
        live = live_by_default()  # the simulator and compile mode (no GPU) replay
    if live:
        return measure(name, progress)
    if like is not None and like.source == "recorded" and not os.environ.get(ENV_RECORD, "").strip():
        for path in available():
            data = load(path)
            if data.get("gpu") == like.meta.get("gpu") and name in data["experiments"]:
                return recorded(name, path=path)
    return recorded(name)


def _same_code(entries: dict) -> int:
    """How many of a record's experiments were measured with today's code (fingerprints)."""
    known = experiments()
    return sum(1 for name, e in entries.items()
               if name in known and e["provenance"].get("code")
               and e["provenance"]["code"] == code_fingerprint(name))


def devices() -> list[dict]:
    """One row per shipped record file: the GPU, when, versions, ceilings, experiments."""
    rows = []
    for path in available():
        data = load(path)
        provs = [e["provenance"] for e in data["experiments"].values()]
        p = max(provs, key=lambda q: str(q.get("date") or "")) if provs else {}
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
            "with today's code": _same_code(data["experiments"]),
            "reference": path.stem == REFERENCE,
        })
    return rows


def show_devices() -> None:
    """Display the table of recorded devices (HTML in Jupyter, text elsewhere)."""
    # The reference GPU first, as in the devices page's headline table.
    rows = sorted(devices(), key=lambda r: not r["reference"])
    if not rows:
        print("No record files are shipped yet: run `python -m gpuperf.record` on a GPU.")
        return
    table = Result("recorded_devices", rows, {"gpu": "all recorded GPUs"}, "recorded")
    try:
        from IPython.display import HTML, display

        # One column per GPU, one row per property: two or three GPUs fit the page this way.
        head = "<th></th>" + "".join(f"<th>{html.escape(str(r['gpu']))}</th>" for r in rows)
        body = "".join(f"<tr><th>{html.escape(c)}</th>" + "".join(_cell(r.get(c)) for r in rows)
                       + "</tr>" for c in table.columns if c != "gpu")
        display(HTML(f"<table class='gp-table gp-devices'><thead><tr>{head}</tr></thead>"
                     f"<tbody>{body}</tbody></table>"))
    except ImportError:
        print(table.table())
