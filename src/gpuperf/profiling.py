"""Chapter 9's tools, and what reads the whole course: the course layer above the chapters.

* The launches chapter 9 names by a short word (``launch_command("reduce", ...)``,
  ``profile``, ``try_profile``, ``sanitize``): each the ``"module:function"`` of the chapter that
  owns the kernel (``gpuperf.kernels.<chapter>.profiling``), run by ``gpuperf.nsight`` in a
  process of its own.
* Chapter 9's experiments on kernels of every chapter: compute-sanitizer on the planted bugs
  (``profiling_sanitizer``) and Nsight Compute's Speed of Light of eight kernels
  (``profiling_speed_of_light``).
* Chapter 10's roofline of every kernel of the course, read from one GPU's record
  (``course_roofline``, ``plot_course_roofline``, ``course_roofline_summary``,
  ``course_roofline_l2_rows``).

Each chapter's own profiling experiments live with its kernels (``profiling_stride`` in
``gpuperf.kernels.coalescing``, ``profiling_gdn`` in ``gpuperf.kernels.gdn``, ...), and the tools'
runners and parsers in ``gpuperf.nsight``; their names stay reachable here (``SHARED_METRICS``,
``parse_ncu_csv``, ``top_stalls``...), as chapter 9 shows them.
"""

from __future__ import annotations

from . import nsight, records, validate
from .kernels import dram as dram_chapter

# The tools' runners and parsers live in ``gpuperf.nsight``; their names stay reachable here.
from .nsight import (  # noqa: F401
    GLOBAL_METRICS,
    ISSUE_METRICS,
    SANITIZER_TOOLS,
    SHARED_METRICS,
    SOL_METRICS,
    STALL_METRICS,
    STALL_REASONS,
    TIME_METRICS,
    available,
    cupti_ops,
    fp32_lanes,
    issue_columns,
    metrics_by_kernel,
    ncu_command,
    overlap_ms,
    parse_cupti_trace,
    parse_ncu_csv,
    parse_racecheck,
    parse_sanitizer,
    per,
    print_result,
    speed_of_light,
    top_stalls,
    union_ms,
)

# --------------------------------------------------------------------------- experiments
# Each experiment runs a tool on a process of its own: ``python -c`` calling one of the launch
# functions below by name (``launch_command``). A launch function builds the chapter's data
# and launches the chapter's kernel twice; Nsight Compute profiles the second launch (the
# first may include loading the module) and flushes the caches before it.


def _smooth_launch(racy: int, n: int) -> None:
    """Chapter "Profiling, sanitizing and debugging": the smoothing kernel, with its barrier
    missing (``racy``) or not, on ``n`` random float32, launched once."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import debugging as dbg

    x = ex.random_array(n, 1)
    d_out = cuda.device_array(n, x.dtype)
    kernel = dbg.smooth_racy if racy else dbg.smooth
    kernel[dbg.smooth_grid(n), dbg.SMOOTH_BLOCK](cuda.to_device(x), d_out)
    print_result(d_out.copy_to_host(), dbg.smooth_reference(x))


def _copy_unguarded_launch(n: int) -> None:
    """The copy with no bounds test, on whole blocks of 256 past ``n`` elements."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import debugging as dbg

    x = ex.random_array(n, 2)
    d_out = cuda.device_array(n, x.dtype)
    dbg.copy_unguarded[-(-n // 256), 256](cuda.to_device(x), d_out)
    print_result(d_out.copy_to_host(), x)


def _matmul_early_return_launch(n: int) -> None:
    """Chapter 4's tiled matmul that returns before its barriers (tile 16), n x n x n."""
    from numba import cuda

    from . import exercises as ex
    from .kernels import matmul as mm

    A, B = ex.random_array((n, n), 3), ex.random_array((n, n), 4)
    C = cuda.device_array((n, n), A.dtype)
    mm.variant("tiled_early_return", tile=16).launch(cuda.to_device(A), cuda.to_device(B), C)
    print_result(C.copy_to_host(), mm.reference(A, B))


# The launches chapter 9 names (``launch_command("reduce", ...)``): each the ``"module:function"``
# of the chapter module that owns the kernel, run by ``gpuperf.nsight`` in a process of its own.
_CH = "gpuperf.kernels"
_LAUNCHES = {
    "stride": f"{_CH}.coalescing.profiling:_stride_launch",
    "stride_part": f"{_CH}.coalescing.profiling:_stride_part_launch",
    "transpose": f"{_CH}.coalescing.profiling:_transpose_launch",
    "sum_loads": f"{_CH}.dram.profiling:_sum_loads_launch",
    "l2_read": f"{_CH}.dram.profiling:_l2_read_launch",
    "onchip_read": f"{_CH}.dram.profiling:_onchip_read_launch",
    "matmul": f"{_CH}.coarsening.profiling:_matmul_launch",
    "matmul_ladder": f"{_CH}.coarsening.profiling:_matmul_ladder_launch",
    "cublas": f"{_CH}.coarsening.profiling:_cublas_launch",
    "reduce": f"{_CH}.reduce.profiling:_reduce_launch",
    "reduce_atomics": f"{_CH}.reduce.profiling:_reduce_atomics_launch",
    "gdn": f"{_CH}.gdn.profiling:_gdn_launch",
    # chapter 9's planted bugs, launched from here
    "smooth": f"{__name__}:_smooth_launch",
    "copy_unguarded": f"{__name__}:_copy_unguarded_launch",
    "matmul_early_return": f"{__name__}:_matmul_early_return_launch",
}


def launch(name: str) -> str:
    """The ``"module:function"`` of the launch called ``name`` here (``nsight`` runs it)."""
    validate.choice(name, "name", tuple(_LAUNCHES))
    return _LAUNCHES[name]


def launch_command(name: str, *args, python: str = "python3") -> list[str]:
    """The command line of a process that runs launch ``name`` with ``args``, as one would
    type it (see ``nsight.launch_command``)."""
    return nsight.launch_command(launch(name), *args, python=python)


def profile(name: str, *args, kernel: str, metrics, launch_count: int = 1,
            library: bool = False) -> dict:
    """``nsight.profile`` of launch ``name`` with ``args``."""
    return nsight.profile(launch(name), *args, kernel=kernel, metrics=metrics,
                          launch_count=launch_count, library=library)


def try_profile(name: str, *args, kernel: str, metrics, launch_count: int = 1) -> dict | None:
    """``nsight.try_profile`` of launch ``name`` with ``args``."""
    return nsight.try_profile(launch(name), *args, kernel=kernel, metrics=metrics,
                              launch_count=launch_count)


def sanitize(tool: str, name: str, *args) -> dict:
    """``nsight.sanitize`` of launch ``name`` with ``args``."""
    return nsight.sanitize(tool, launch(name), *args)


# --------------------------------------------------------------------------- compute-sanitizer


# --------------------------------------------------------------------------- Speed of Light


# --------------------------------------------------------------------------- CUPTI timeline


# ---------------------------------------------------------------- chapter 9: tools on planted bugs

# (label, tool, launch, args): each a process of its own under compute-sanitizer.
SANITIZED = (
    ("smooth_racy", "racecheck", "smooth", (1, 1000)),
    ("smooth", "racecheck", "smooth", (0, 1000)),
    ("copy_unguarded", "memcheck", "copy_unguarded", (1000,)),
    ("tiled_early_return", "synccheck", "matmul_early_return", (33,)),
    ("tiled_early_return", "racecheck", "matmul_early_return", (33,)),
)


@records.experiment("profiling_sanitizer", chapter="profiling",
            title="compute-sanitizer on planted bugs: a missing barrier, an unguarded tail, "
                  "an early return before a barrier")
def sanitizer_experiment(progress) -> list[dict]:
    rows = []
    for label, tool, launch, args in SANITIZED:
        progress(f"compute-sanitizer --tool {tool} on {label}")
        found = sanitize(tool, launch, *args)
        rows.append({"kernel": label, "tool": tool, "n": args[-1], **found})
        progress(f"   {found['errors']} error(s), {found['warnings']} warning(s); result "
                 f"{'right' if found['correct'] else 'WRONG'}")
    return rows


# (label, launch, args, kernel name): kernels of chapters 2 to 6, each a process of its own.
SPEED_OF_LIGHT_KERNELS = (
    ("copy, stride 1", "stride", (1, 1 << 26), "copy_strided"),
    ("copy, stride 32", "stride", (32, 1 << 23), "copy_strided"),
    ("naive transpose", "transpose", (-1, 4096), "transpose_naive"),
    ("sum, 1 load per thread, 8 warps per SM", "sum_loads", (1, 8), "sum_loads"),
    ("reduce v1", "reduce", ("v1", 256, 1 << 24), "reduce_v1"),
    ("reduce v8", "reduce", ("v8", 256, 1 << 26), "reduce_v8"),
    ("tiled matmul, tile 32", "matmul", ("tiled", 32, 1, 4096), "tiled"),
    ("register-tiled matmul", "matmul", ("regtile_pipelined", 0, 0, 4096), "regtile"),
)


@records.experiment("profiling_speed_of_light", chapter="profiling",
            title="Speed of Light and stall reasons of eight course kernels (Nsight Compute)",
            units={"sm_pct": "% of peak", "memory_pct": "% of peak", "dram_pct": "% of peak",
                   "l1_pct": "% of peak", "l2_pct": "% of peak", "fma_pct": "% of peak",
                   "occupancy_pct": "%", "duration_ns": "ns"})
def speed_of_light_experiment(progress) -> list[dict]:
    rows = []
    for label, launch, args, kernel in SPEED_OF_LIGHT_KERNELS:
        progress(f"ncu on {label}")
        m = profile(launch, *args, kernel=kernel, metrics=SOL_METRICS,
                              launch_count=3)  # the longest: a reduction's first stage
        rows.append({"kernel": label, **speed_of_light(m)})
    return rows


# The course's kernels on one roofline (chapter 10): every point, roof and label from one GPU's
# record, the one that has the matmuls' measured DRAM bytes.
def _course_roofline_record(path=None):
    if path is not None:
        return records._path_arg(path)
    here = records.record_path()
    ordered = [here] + [p for p in records.available() if p != here]
    return next((p for p in ordered if "profiling_matmul_roofline" in records.load(p)["experiments"]),
                here)


def _course_matmuls(rows) -> list[dict]:
    """The matmuls a course-wide roofline shows: chapter 4's versions, and of chapter 5's ladder
    the coarsened step, the first register tile and the fastest 2D register tile (its other
    2D steps sit at the same intensity, between these)."""
    rows = list(rows)
    ladder = [r for r in rows if r.get("chapter") == "coarsening"]
    two_d = [r for r in ladder if "regtile" in r["version"] and "1d" not in r["version"]]
    keep = [r for r in ladder if r not in two_d] + ([max(two_d, key=lambda r: r["tflops"])]
                                                    if two_d else [])
    return [r for r in rows if r not in ladder or r in keep]


def course_roofline(path=None) -> dict:
    """Every kernel of the course that does floating-point arithmetic, placed on the roofline
    of one recorded GPU: ``{"gpu", "label", "points", "copy_gbps", "cublas_tflops",
    "fp32_peak_tflops", "l2_gbps", "matmul", "missing"}``. ``path``: a record; by default the
    replayed record if it has ``profiling_matmul_roofline`` (the matmuls' intensity from the
    bytes DRAM moved), else a shipped record that has it, so that no point or roof comes from
    another GPU. Other kernels' intensities count the bytes they must move (read once, written
    once): DRAM moves at least that, so they are upper bounds. ``matmul``: the matmul rows, with the L2's
    bytes for reading them against an L2 roof; the points show chapter 4's versions and three
    steps of chapter 5's ladder (``_course_matmuls``). ``l2_points``: those matmuls again at
    their FLOP per byte the SMs moved through the L2 (with an L2 roof only), where the L2 roof
    is a roof and not only an upper envelope."""
    from .kernels import gdn, streams

    where = _course_roofline_record(path)
    record = records.load(where)
    have = record["experiments"]
    points, missing = [], []

    def get(name, what="not on this roofline"):
        if name not in have:
            missing.append((name, f"{what}: not in this GPU's record"))
            return None
        return records.recorded(name, path=where)

    def add(name, intensity, tflops):
        if intensity and tflops:
            points.append({"name": name, "intensity": intensity, "tflops": tflops})

    mm = get("profiling_matmul_roofline")
    l2_points = []
    for r in _course_matmuls(mm.rows) if mm else ():
        add(f"matmul {r['version']}", r["ai_measured"], r["tflops"])
        if r["ai_measured"] and r["tflops"] and _l2_served(r):
            # the same kernel at its FLOP per byte through the L2, to read against the L2 roof
            l2_points.append({"name": f"matmul {r['version']}", "intensity": _l2_intensity(r),
                              "tflops": r["tflops"]})
    res = get("reduce_ladder")
    for version in ("v0", "v2", "v8"):   # one addition per 4-byte element read
        for r in res.select(version=version) if res else ():
            add(f"reduce {version}", 0.25, r["gbps"] * 0.25 / 1e3)
    res = get("matmul_vecadd_coarsen")
    if res:   # one addition per 12 bytes: two reads, one write
        for r in res.select(factor=1)[:1]:
            add("vector add", 1 / 12, r["gbps"] / 12 / 1e3)
    res = get("streams_pipeline")
    if res:   # the compute-heavy relaxation kernel alone (reads a and b, writes out)
        r = next((r for r in res.rows if r["iters"] > 0), None)
        if r is not None:
            flops = streams.N_PIPE * streams.flops_per_element(r["iters"])
            add(f"streams relaxation ({r['iters']} steps)", streams.arithmetic_intensity(r["iters"]),
                flops / (r["kernel_ms"] * 1e-3) / 1e12)
    res = get("gdn_algorithms")
    for r in res.select(n_ch=gdn.HEADLINE["n_ch"], side=gdn.HEADLINE["side"]) if res else ():
        if r.get("total_ms"):   # 2 N^2 S multiply-adds for dgamma, whatever the organization
            flops = 2 * r["n_ch"] ** 2 * r["samples"]
            moved = gdn.moved_bytes(r["method"], r["n_ch"], r["samples"])
            if r.get("reduce_ms") is not None:
                moved += gdn.moved_bytes("reduce", r["n_ch"], r["samples"])
            add(f"GDN, {gdn.METHOD_WORDS.get(r['method'], r['method'])}", flops / moved,
                flops / (r["total_ms"] * 1e-3) / 1e12)
    # The roofs: the ceilings measured with the matmuls (else with another of these results).
    source = mm or next((records.recorded(n, path=where) for n in
                         ("reduce_ladder", "gdn_algorithms", "streams_pipeline") if n in have), None)
    ceilings = source.ceilings if source else {}
    def roof_gbps(name, what, read):
        res = get(name, what)
        try:
            return read(res) if res is not None else None
        except ValueError as err:
            missing.append((name, f"{what}: {err}"))
            return None

    l2_gbps = roof_gbps("profiling_l2_bandwidth", "no L2 roof", dram_chapter.l2_read_gbps)
    sm_read_gbps = roof_gbps("profiling_onchip_roofs", "no SM read roof", dram_chapter.onchip_roof_gbps)
    first = mm.rows[0] if mm is not None and mm.rows else {}
    return {"gpu": record.get("gpu"), "sm_read_gbps": sm_read_gbps,
            "label": source.label if source else f"nothing recorded in {where.name}",
            "points": points, "copy_gbps": ceilings.get("copy_gbps"),
            "cublas_tflops": ceilings.get("matmul_tflops"),
            "fp32_peak_tflops": first.get("fp32_peak_tflops"),
            "l2_gbps": l2_gbps, "l2_points": l2_points if l2_gbps else [],
            "matmul": list(mm.rows) if mm else [], "missing": missing}


def matmul_words(version: str, *, short: bool = False) -> str:
    """A ``profiling_matmul_roofline`` version in words, for a table or (``short``) a figure's
    label: "regtile double-buffered 128x128x8 8x8 unroll2" is "register tile 8x8 per thread
    (double-buffered), 128x128 block, k-tiles of 8, 2 steps of k per loop pass"; short,
    "register tile, 8x8 per thread, double-buffered". Chapter 5 names the forms; a version of
    another form (the naive kernels', "tiled 32" in a figure) comes back as it is."""
    import re

    validate.string(version, "version")
    validate.boolean(short, "short")
    if (m := re.fullmatch(r"tiled (\d+)", version)) and not short:
        return f"tiled, {m[1]}-wide tiles"
    if m := re.fullmatch(r"coarsened (\d+)x(\d+)(?: cap(\d+))?", version):
        cap = f", registers capped at {m[3]}" if m[3] else ""
        return f"coarsened x{m[2]}, {m[1]}-wide tiles" + ("" if short else cap)
    m = re.fullmatch(r"regtile (1d|scalar|vectorized|pipelined|double-buffered) (\d+)x(\d+)x(\d+) "
                     r"(\d+)x(\d+)(?: warp(\d+)x(\d+))?(?: unroll(\d+))?(?: cap(\d+))?", version)
    if not m:
        return version
    kind, bm, bn, bk, tm, tn, wm, wn, steps, cap = m.groups()
    how = {"1d": "one column", "scalar": "4-byte loads", "vectorized": "16-byte loads",
           "pipelined": "pipelined", "double-buffered": "double-buffered"}[kind]
    if short:
        return f"register tile, {tm}x{tn} per thread, {how}"
    parts = [f"register tile {tm}x{tn} per thread ({how})", f"{bm}x{bn} block",
             f"k-tiles of {bk}"]
    if wm:
        parts.append(f"warp tiles of {wm}x{wn}")
    if steps:
        parts.append(f"{steps} steps of k per loop pass")
    if cap:
        parts.append(f"registers capped at {cap}")
    return ", ".join(parts)


def plot_course_roofline(roof: dict, *, title: str = "Every kernel of the course against the "
                                                     "roofs of one GPU"):
    """``course_roofline``'s points under the measured copy bandwidth and cuBLAS's FP32 rate
    (solid), with the theoretical FP32 peak and the L2's measured read bandwidth where
    recorded; with the L2 roof, each profiled matmul also as an open marker at its
    intensity in L2 bytes (a hierarchical roofline: the filled marker against the DRAM roof,
    the open one against the L2 roof), and the SMs' L1/shared read roof where
    ``profiling_onchip_roofs`` is recorded: on this axis of DRAM intensity, like the L2 roof,
    only an upper envelope. (The roofs beyond the two measured ones are drawn as broken lines,
    one style each.)"""
    from . import plots

    if not isinstance(roof, dict) or "points" not in roof:
        raise TypeError("roof: give the dict gp.profiling.course_roofline() returns.")
    validate.string(title, "title")
    if not roof["points"] or not roof["copy_gbps"] or not roof["cublas_tflops"]:
        raise ValueError("roof has no points or no recorded ceilings: record the chapters' "
                         "experiments on a GPU (python -m gpuperf.record).")
    more = []
    if roof["fp32_peak_tflops"]:
        more.append(("FP32 peak (theoretical)", roof["fp32_peak_tflops"], "TFLOP/s"))
    if roof["l2_gbps"]:
        # the rate of one buffer size, not the L2's maximum: name the size
        share = {1 / 2: "half", 1 / 4: "a quarter"}.get(
            dram_chapter.profiling.L2_ROOF_FRACTION, f"{dram_chapter.profiling.L2_ROOF_FRACTION:g} of")
        more.append((f"L2 read, a buffer {share} the L2 (measured)", roof["l2_gbps"], "GB/s"))
    if roof.get("sm_read_gbps"):
        more.append(("SMs' L1/shared read (128 B/clock/SM)", roof["sm_read_gbps"], "GB/s"))
    def worded(points):   # the matmuls' versions in words, as chapter 5 names them
        return [{**p, "name": "matmul " + matmul_words(p["name"].removeprefix("matmul "), short=True)}
                if p["name"].startswith("matmul ") else p for p in points]

    second = None
    if roof["l2_gbps"] and roof.get("l2_points"):
        second = ("the matmul at its FLOP per byte through the L2 (read against the L2 roof)",
                  worded(roof["l2_points"]))
    return plots.roofline(worded(roof["points"]), bw_gbps=roof["copy_gbps"],
                          peak_tflops=roof["cublas_tflops"], label=roof["label"], title=title,
                          xlim=(1 / 32, 512), height=7.5, more_roofs=more,
                          second_intensity=second)


def _l2_served(row: dict):
    """The bytes the SMs read from and wrote to the L2 in a ``profiling_matmul_roofline`` row
    (``lts__t_bytes`` in a record made before that was counted, which also holds the L2's fills
    from DRAM: more bytes, so a lower intensity, a lower roof and a higher percentage); None
    if neither was recorded."""
    return row.get("l2_sm_bytes") or row.get("l2_bytes") or None


def _l2_intensity(row: dict) -> float:
    """FLOP per byte the SMs moved through the L2, for an n^3 matmul row with ``_l2_served``."""
    return 2 * row["n"] ** 3 / _l2_served(row)


def course_roofline_l2_rows(roof: dict) -> list[dict]:
    """Each matmul of ``course_roofline`` against the L2 roof at its intensity in L2 bytes:
    ``kernel``, ``flop_per_l2_byte``, ``tflops``, ``roof_tflops`` (the lower of the L2 roof
    there and the FP32 peak), ``roof`` (which of the two) and ``pct_of_roof``. Empty without
    an L2 roof."""
    if not isinstance(roof, dict) or "matmul" not in roof:
        raise TypeError("roof: give the dict gp.profiling.course_roofline() returns.")
    l2, peak, cublas = roof.get("l2_gbps"), roof.get("fp32_peak_tflops"), roof.get("cublas_tflops")
    if not l2:
        return []
    out = []
    for r in roof["matmul"]:
        if not _l2_served(r):
            continue
        ai_l2 = _l2_intensity(r)
        top = peak or cublas or float("inf")
        bound = min(l2 * ai_l2 / 1e3, top)
        out.append({"kernel": r["version"], "flop_per_l2_byte": ai_l2, "tflops": r["tflops"],
                    "roof_tflops": bound,
                    "roof": "L2" if l2 * ai_l2 / 1e3 < top else "FP32 peak",
                    "pct_of_roof": 100 * r["tflops"] / bound})
    return out


def course_roofline_summary(roof: dict) -> list[str]:
    """What ``course_roofline`` says, printed and returned: what is missing, the ridge points,
    any point above the memory roof (its bytes overcounted, or the copy not quite the memory's
    limit), and, with an L2 roof, each matmul's rate against the L2 at its intensity in L2 bytes."""
    if not isinstance(roof, dict) or "points" not in roof:
        raise TypeError("roof: give the dict gp.profiling.course_roofline() returns.")
    lines = [f"{name}: {why}" for name, why in roof["missing"]]
    copy, cublas, peak, l2 = (roof["copy_gbps"], roof["cublas_tflops"], roof["fp32_peak_tflops"],
                              roof["l2_gbps"])
    if not (roof["points"] and copy and cublas):
        lines.append("No recorded points or ceilings yet: record the chapters' experiments on a "
                     "GPU (python -m gpuperf.record).")
    else:
        lines.append(f"{roof['gpu']}: ridge at {cublas * 1e3 / copy:.1f} FLOP/B for cuBLAS's "
                     f"FP32 rate ({cublas:.1f} TFLOP/s) over the copy ({copy:,.0f} GB/s)"
                     + (f"; at {peak * 1e3 / copy:.1f} FLOP/B for the theoretical FP32 peak "
                        f"({peak:.1f} TFLOP/s)" if peak else "") + ".")
        ridge = cublas * 1e3 / copy
        right = [p["name"] for p in roof["points"] if p["intensity"] > ridge]
        lines.append("right of that ridge: " + (", ".join(right) or "none"))
        ratio = {p["name"]: p["tflops"] / (p["intensity"] * copy / 1e3) for p in roof["points"]}
        over = [f"{k} ({v:.0%} of the roof)" for k, v in ratio.items() if v > 1.1]
        at = [f"{k} ({v:.0%})" for k, v in ratio.items() if 1.0 < v <= 1.1]
        lines.append("far above the memory roof, so their bytes are overcounted: "
                     + (", ".join(over) or "none"))
        lines.append("just above it (the measured copy is not quite the memory's limit): "
                     + (", ".join(at) or "none"))
    l2_rows = course_roofline_l2_rows(roof)
    if l2_rows:
        top = max(l2_rows, key=lambda r: r["pct_of_roof"])
        lines.append(f"Against the L2 ({l2:,.0f} GB/s read, measured), each matmul at its "
                     "intensity in the bytes the SMs moved through the L2 "
                     f"(course_roofline_l2_rows): the closest to its lower roof, {top['kernel']}, "
                     f"reaches {top['pct_of_roof']:.0f}% of it.")
    if roof.get("sm_read_gbps"):
        sm = roof["sm_read_gbps"]
        against = [f"{sm / gbps:.1f}x {what}" for gbps, what in ((l2, "the L2's read"),
                                                                  (copy, "the copy")) if gbps]
        lines.append(f"The SMs' read roof (L1 and shared memory, 128 bytes per clock per SM): "
                     f"{sm:,.0f} GB/s" + (", " + " and ".join(against) if against else "")
                     + "; chapter 4 reads the matmuls against it at their FLOP per data-pipe byte.")
    for line in lines:
        print(line)
    return lines
