"""The chapter's experiments (all prefixed ``coalescing_``), the helpers they use and the
tables computed from their results (``stride_footprint``, ``vec4_transpose_summary``)."""

from __future__ import annotations

import numbers

import numpy as np
from numba import cuda  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from gpuperf import bench, device, validate
from gpuperf.records import experiment

from .ablations import make_transpose_unchecked
from .copies import _DTYPES, copy_launch, make_copy_ilp, make_copy_strided
from .host import matmul
from .kernels import (
    AOS_FIELDS,
    AOS_LAYOUTS,
    VEC_TILE,
    WARP,
    make_copy_vec4,
    make_matmul_bcol,
    make_sum_fields,
    make_transpose,
    make_transpose_vec4,
    matmul_naive,
    matmul_naive_bcol,
    transpose_naive,
)
from .models import aos_model_bytes, stride_efficiency


@cuda.jit
def fill_pseudorandom(x, seed):
    """Fill ``x`` with values in [-1, 2) from a cheap integer hash of the index: data on
    the device without a slow host-side random generator and transfer."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        h = (i * 2654435761 + seed * 40503) % 1000003
        x[i] = h * (3.0 / 1000003.0) - 1.0
        i += stride


def device_data(n: int, dtype=np.float32, seed: int = 1):
    """``n`` values of ``dtype`` (float32 or float64) made on the device by
    ``fill_pseudorandom``: the experiments' and checkers' data."""
    n = validate.positive_int(n, "n")
    try:
        kind = np.dtype(dtype).name
    except TypeError:  # not a dtype at all: say so by name below
        kind = dtype
    validate.choice(kind, "dtype", ("float32", "float64"))
    seed = validate.integer(seed, "seed")
    x = cuda.device_array(n, dtype)
    fill_pseudorandom[4 * device.sm_count(default=2), 256](x, seed)
    return x




def _time_launch(kernel, grid, block, *args, **options) -> bench.Timing:
    """Time ``kernel[grid, block](*args)`` with the bench protocol."""
    return bench.time_kernel(lambda: kernel[grid, block](*args), **options)


def _copy_row(nbytes, timing, **extra):
    return {**extra, **bench.bandwidth_row(nbytes, timing)}


_BW_UNITS = {"ms": "ms", "gbps": "GB/s", "pct_copy": "% of copy", "pct_peak": "% of peak"}


N_STRIDE = 2**23  # elements each strided copy moves
STRIDES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
# The span of the arrays the strided copies read: the fixed-count sweep's widest, at stride 32.
STRIDE_SPAN = N_STRIDE * max(STRIDES)


@experiment("coalescing_stride", chapter="coalescing",
            title="Copying every s-th element (2^23 of them): useful GB/s against stride",
            units={**_BW_UNITS, "model_pct": "% (sector model)", "moved_gbps": "GB/s"})
def stride_experiment(progress):
    rows = []
    for dtype in ("float32", "float64"):
        rows += _stride_sweep(dtype, progress)
    return rows


@experiment("coalescing_stride_span", chapter="coalescing",
            title="Copying every s-th element of one span (2^28 elements): useful GB/s "
                  "against stride, the footprint fixed",
            units={**_BW_UNITS, "model_pct": "% (sector model)", "moved_gbps": "GB/s",
                   "span_bytes": "B"})
def stride_span_experiment(progress):
    """``coalescing_stride`` with the footprint held: every stride's copy walks the same
    STRIDE_SPAN elements and copies STRIDE_SPAN / stride of them (the fixed-count sweep's
    footprint grows with the stride, from 2^23 elements to STRIDE_SPAN). At stride 32 the two
    sweeps run the same copy."""
    rows = []
    for dtype in ("float32", "float64"):
        rows += _stride_sweep(dtype, progress, fixed_span=True)
    return rows


def _stride_sweep(dtype, progress, *, fixed_span: bool = False):
    np_type, _ = _DTYPES[dtype]
    size = np.dtype(np_type).itemsize
    src = device_data(STRIDE_SPAN, np_type)
    dst = cuda.device_array_like(src)
    kernel = make_copy_strided(4, dtype)

    def measure(stride):
        count = STRIDE_SPAN // stride if fixed_span else N_STRIDE
        grid, block = copy_launch(count, version="ilp", ilp=4)
        # (Strided views src[::stride] would do the same, but Numba launches kernels on
        # non-contiguous device arrays through a slow path: milliseconds per launch.)
        t = _time_launch(kernel, grid, block, src, dst, count, stride, min_time=0.1)
        for first in (0, count - 4096):  # spot-check the head and the tail
            span = slice(first * stride, (first + 4096) * stride)
            if not np.array_equal(dst[span].copy_to_host()[::stride],
                                  src[span].copy_to_host()[::stride]):
                raise AssertionError(f"the strided copy (stride {stride}) is wrong")
        eff = stride_efficiency(stride, size)
        row = _copy_row(2 * size * count, t, dtype=dtype, elem_bytes=size)
        row.update(model_pct=100 * eff, moved_gbps=row["gbps"] / eff)
        if fixed_span:
            row.update(count=count, span_bytes=size * count * stride)
        return row

    return bench.sweep(measure, {"stride": list(STRIDES)}, label=dtype, progress=progress)


def stride_footprint(count_res, span_res) -> list[dict]:
    """``coalescing_stride`` (a fixed count of elements, the footprint growing with the
    stride) beside ``coalescing_stride_span`` (a fixed footprint, the count falling with the
    stride), same GPU: per element type and stride, the useful GB/s of each and each one's
    ratio to its own stride 1, with the sector model. Shown as a table; rows returned."""
    from gpuperf.records import Result

    for res, name in ((count_res, "coalescing_stride"), (span_res, "coalescing_stride_span")):
        if getattr(res, "name", None) != name:
            raise ValueError(f"pass the Result of {name!r} (gp.records.run({name!r})), not "
                             f"{getattr(res, 'name', type(res).__name__)!r}.")
    if count_res.gpu != span_res.gpu:
        raise ValueError(f"coalescing_stride is from {count_res.gpu}, coalescing_stride_span from "
                         f"{span_res.gpu}: compare the two sweeps of one GPU.")
    rows = []
    for dtype in count_res.values("dtype"):
        fixed = {r["stride"]: r for r in count_res.select(dtype=dtype)}
        span = {r["stride"]: r for r in span_res.select(dtype=dtype)}
        strides = sorted(set(fixed) & set(span))
        if not strides:
            continue
        one_c, one_s = fixed[strides[0]]["gbps"], span[strides[0]]["gbps"]
        for s in strides:
            c, w = fixed[s], span[s]
            rows.append({"dtype": dtype, "stride": s, "count_us": 1e3 * c["ms"],
                         "span_us": 1e3 * w["ms"], "count_gbps": c["gbps"],
                         "span_gbps": w["gbps"], "span_over_count": w["gbps"] / c["gbps"],
                         "count_ratio": c["gbps"] / one_c, "span_ratio": w["gbps"] / one_s,
                         "model": c["model_pct"] / 100})
    Result("the strided copy: fixed count against fixed span", rows, span_res.meta,
           span_res.source).show(
        ["dtype", "stride", "count_us", "span_us", "span_over_count", "count_ratio",
         "span_ratio", "model"],
        headers={"dtype": "element", "count_us": "fixed count: time (µs)",
                 "span_us": "fixed span: time (µs)",
                 "span_over_count": "useful GB/s, fixed span / fixed count",
                 "count_ratio": "fixed count: share of its stride 1",
                 "span_ratio": "fixed span: share of its stride 1",
                 "model": "sector model: useful share"},
        note="Fixed count: 2^23 elements copied, the footprint growing with the stride; fixed "
             "span: one span, every stride-th element of it copied. A share of stride 1 is the "
             "useful GB/s over the same sweep's stride 1.")
    return rows


N_OFFSET = 2**26
OFFSETS = tuple(range(0, 33))


@experiment("coalescing_offset", chapter="coalescing",
            title="Copying 2^26 float32 starting `offset` elements into the arrays",
            units=_BW_UNITS)
def offset_experiment(progress):
    src = device_data(N_OFFSET + max(OFFSETS))
    dst = cuda.device_array_like(src)
    kernel = make_copy_ilp(4)
    grid, block = copy_launch(N_OFFSET, version="ilp", ilp=4)

    def measure(misaligned, offset):
        xs = src[offset:offset + N_OFFSET]
        ys = dst[offset:offset + N_OFFSET] if misaligned == "both" else dst[:N_OFFSET]
        t = _time_launch(kernel, grid, block, xs, ys, min_time=0.05)
        return _copy_row(8 * N_OFFSET, t, offset_bytes=4 * offset)

    return bench.sweep(measure, {"misaligned": ["both", "source"], "offset": list(OFFSETS)},
                       label="offset", progress=progress)


AOS_USED = (1, 2, 4, 8)  # fields a kernel reads
N_AOS = 2**24  # particles


@cuda.jit
def _aos_to_soa(aos, soa):
    """soa[f, i] = aos[i, f], one grid-stride pass over the particles (set-up, not timed)."""
    i = cuda.grid(1)
    while i < aos.shape[0]:
        for f in range(aos.shape[1]):
            soa[f, i] = aos[i, f]
        i += cuda.gridsize(1)


@experiment("coalescing_aos_soa", chapter="coalescing",
            title="Reading some fields of 2^24 particles of eight float32 fields: AoS against SoA",
            units={**_BW_UNITS, "model_gbps": "GB/s", "moved_gbps": "GB/s"})
def aos_soa_experiment(progress):
    """Each layout, each number of fields read: the useful GB/s (bytes of the fields read
    and of the output, over the time), the bytes the sector model says moved per particle,
    and the GB/s the model says the memory system carried (``moved_gbps``)."""
    data = device_data(N_AOS * AOS_FIELDS, seed=3)
    aos = data.reshape(N_AOS, AOS_FIELDS)
    soa = cuda.device_array((AOS_FIELDS, N_AOS), np.float32)
    _aos_to_soa[4 * device.sm_count(default=2), 256](aos, soa)  # the same particles
    head = aos[:4096].copy_to_host().astype(np.float64)
    tail = aos[-4096:].copy_to_host().astype(np.float64)
    out = cuda.device_array(N_AOS, np.float32)
    block = 256
    grid = -(-N_AOS // block)

    def measure(layout, used):
        kernel = make_sum_fields(layout, used)
        t = _time_launch(kernel, grid, block, aos if layout == "AoS" else soa, out,
                         min_time=0.05)
        if not (np.allclose(out[:4096].copy_to_host(), head[:, :used].sum(axis=1), rtol=1e-5)
                and np.allclose(out[-4096:].copy_to_host(), tail[:, :used].sum(axis=1),
                                rtol=1e-5)):
            raise AssertionError(f"the {layout} kernel reading {used} fields is wrong")
        useful = N_AOS * (4 * used + 4)
        row = _copy_row(useful, t)
        moved = N_AOS * aos_model_bytes(layout, used)
        row.update(model_bytes=aos_model_bytes(layout, used),
                   moved_gbps=row["gbps"] * moved / useful)
        return row

    return bench.sweep(measure, {"layout": list(AOS_LAYOUTS), "used": list(AOS_USED)},
                       label="fields", progress=progress)


@experiment("coalescing_traversal", chapter="coalescing",
            title="Naive matmul: B read as B[k, col] (row-major) or B[col, k] (column-major)",
            units={"ms": "ms", "tflops": "TFLOP/s", "slowdown": "x"})
def traversal_experiment(progress):
    rows = []
    for n in (512, 1024, 2048):
        A = device_data(n * n, seed=1).reshape(n, n)
        B = device_data(n * n, seed=2).reshape(n, n)
        C = cuda.device_array((n, n), np.float32)
        grid, block = (-(-n // 16), -(-n // 16)), (16, 16)
        base = None
        for layout, kernel in (("row-major B[k, col]", matmul_naive),
                               ("column-major B[col, k]", matmul_naive_bcol)):
            t = _time_launch(kernel, grid, block, A, B, C, min_repeat=5, min_time=0.1)
            base = base or t.median_ms
            rows.append({"layout": layout, "n": n, "ms": t.median_ms,
                         "tflops": bench.tflops(2 * n**3, t.median_ms),
                         "slowdown": t.median_ms / base})
            progress(f"traversal n={n} {layout}: {t.median_ms:.2f} ms")
    return rows


MATMUL_VARIANTS = (
    # label, mode, pad
    ("B row-major (chapter 4)", "rowmajor", 0),
    ("B column-major, uncoalesced", "uncoalesced", 0),
    ("corner turning", "corner", 0),
    ("corner turning + padding", "corner", 1),
)


@experiment("coalescing_matmul_bcol", chapter="coalescing",
            title="Tiled matmul with B column-major: uncoalesced against corner turning",
            units={"ms": "ms", "tflops": "TFLOP/s"})
def matmul_experiment(progress):
    rows = []
    for n in (2048, 4096):
        A = device_data(n * n, seed=1).reshape(n, n)
        B = device_data(n * n, seed=2).reshape(n, n)
        C = cuda.device_array((n, n), np.float32)
        for tile in (16, 32):
            grid, block = (-(-n // tile), -(-n // tile)), (tile, tile)
            for label, mode, pad in MATMUL_VARIANTS:
                kernel = make_matmul_bcol(tile, mode, pad)
                t = _time_launch(kernel, grid, block, A, B, C, min_repeat=5, min_time=0.1)
                rows.append({"version": label, "mode": mode, "pad": pad, "tile": tile, "n": n,
                             "ms": t.median_ms, "tflops": bench.tflops(2 * n**3, t.median_ms)})
                progress(f"matmul n={n} tile={tile} {label}: {rows[-1]['tflops']:.2f} TFLOP/s")
    # Spot check: corner turning computes A @ B for column-major B (= A @ Bt.T).
    n = 256
    A = device_data(n * n, seed=3).reshape(n, n)
    Bt = device_data(n * n, seed=4).reshape(n, n)
    got = matmul(A, Bt, layout="col", version="corner").copy_to_host()
    ref = A.copy_to_host().astype(np.float64) @ Bt.copy_to_host().T
    if not np.allclose(got, ref, rtol=1e-3, atol=1e-3):
        raise AssertionError("corner-turning matmul produced a wrong result")
    return rows


# 16384^2 float32 is 1 GiB, the size the copy ceiling is measured at: transposes and the
# ceiling then move the same bytes. (At 8192^2 the best transpose measured 74% of the
# ceiling on an H200 and a copy of the same 256 MiB only 84%; at 16384^2, 86%.)
N_TRANSPOSE = 16384
UNCHECKED = "tiled + padding, 4 per thread, one at a time, no bounds tests inside"
TRANSPOSE_SWEEP = (
    # label, tile, block_rows, pad, staged (tile None: the naive kernel)
    ("naive", None, None, None, None),
    ("tiled", 32, 32, 0, True),
    ("tiled + padding", 32, 32, 1, True),
    ("tiled + padding, 4 per thread, loads one at a time", 32, 8, 1, False),
    # the ablation between the two rungs around it: one at a time, but without the bounds
    # test per element inside the tiles away from the edges (make_transpose_unchecked)
    (UNCHECKED, 32, 8, 1, "unchecked"),
    ("tiled + padding, 4 per thread", 32, 8, 1, True),
    ("tiled + padding, 8 per thread", 32, 4, 1, True),
    ("64x64 tiles + padding, 8 per thread", 64, 16, 1, True),
    ("64x64 tiles + padding, 16 per thread", 64, 8, 1, True),
    ("64x64 tiles + padding, 32 per thread", 64, 4, 1, True),
)


# The same 64 x 64 tiles and 128-thread blocks, 32 per thread, moved with 16-byte global
# accesses (make_transpose_vec4): label, block_rows, flip (flip=False: padding alone, 2-way
# bank conflicts, the ablation).
TRANSPOSE_VEC4_SWEEP = (
    ("64x64 tiles, 16-byte accesses, padding only", 8, False),
    ("64x64 tiles, 16-byte accesses, padding + flip", 8, True),
)


@experiment("coalescing_transpose", chapter="coalescing",
            title="Transposing a 16384 x 16384 float32 matrix (1 GiB), against copying the same bytes",
            units=_BW_UNITS)
def transpose_experiment(progress):
    n = N_TRANSPOSE
    a = device_data(n * n).reshape(n, n)
    out = cuda.device_array((n, n), np.float32)
    nbytes = 2 * 4 * n * n
    host = a.copy_to_host()
    # Rows of out to verify after each variant: the edges and every tile boundary of a
    # 64-wide tile, plus random rows. out[r] must equal column r of a. (Comparing all of the
    # 1 GiB result against a host transpose took most of this experiment's time.)
    check_rows = sorted({0, n - 1, *range(31, n, 4096), *range(32, n, 4096),
                         *np.random.default_rng(1).integers(0, n, 24).tolist()})
    expected = {r: host[:, r].copy() for r in check_rows}
    rows = []
    flat_out = out.reshape(n * n)
    sweep = [(label, tile, block_rows, pad, staged, None)
             for label, tile, block_rows, pad, staged in TRANSPOSE_SWEEP]
    sweep += [(label, VEC_TILE, block_rows, 1, True, flip)
              for label, block_rows, flip in TRANSPOSE_VEC4_SWEEP]
    for label, tile, block_rows, pad, staged, flip in sweep:
        # Other values in out first, so that a variant that skips some elements is caught.
        fill_pseudorandom[4 * device.sm_count(default=2), 256](flat_out, 99)
        if tile is None:
            kernel, grid, block = transpose_naive, (n // 32, n // 8), (32, 8)
        elif staged == "unchecked":
            kernel = make_transpose_unchecked(tile, block_rows, pad)
            grid, block = (-(-n // tile), -(-n // tile)), (min(tile, WARP), block_rows)
        elif flip is None:
            kernel = make_transpose(tile, block_rows, pad, staged)
            grid, block = (-(-n // tile), -(-n // tile)), (min(tile, WARP), block_rows)
        else:
            kernel = make_transpose_vec4(block_rows, flip)
            grid, block = (-(-n // tile), -(-n // tile)), (16, block_rows)
        t = _time_launch(kernel, grid, block, a, out, min_time=0.1)
        rows.append(_copy_row(nbytes, t, version=label, kind="transpose",
                              elements_per_thread=1 if tile is None else
                              tile * tile // (block[0] * block[1]),
                              tile=tile, pad=pad or 0, staged=staged,
                              access_bytes=4 if flip is None else 16))
        progress(f"transpose {label}: {rows[-1]['gbps']:.0f} GB/s "
                 f"({rows[-1]['pct_copy']:.0f}% of copy)")
        bad = [r for r in check_rows if not np.array_equal(out[r].copy_to_host(), expected[r])]
        if bad:
            raise AssertionError(f"transpose {label!r} produced a wrong result (row {bad[0]} "
                                 "of out is not the matching column of a)")
    flat_a = a.reshape(n * n)
    grid, block = copy_launch(n * n, version="vec4", ilp=1, blocks_per_sm=None)
    t = _time_launch(make_copy_vec4(1), grid, block, flat_a, flat_out, min_time=0.1)
    rows.append(_copy_row(nbytes, t, version="copy of the same bytes (16-byte loads)",
                          kind="copy", elements_per_thread=4, tile=None, pad=None, staged=None,
                          access_bytes=16))
    return rows


VEC4_ONLY, VEC4_FLIP = (label for label, _, _ in TRANSPOSE_VEC4_SWEEP)
BEST_SCALAR = TRANSPOSE_SWEEP[-1][0]  # the last 4-byte rung: same tiles, blocks and work


def vec4_transpose_summary(tp, hw=None) -> str:
    """What the 16-byte rungs of ``coalescing_transpose`` (``tp``) say, printed from its rows:
    each against the last 4-byte rung and the copy ceiling, and the flip against padding alone
    (within the run's spread or not). ``hw``: ``profiling_transpose``, for the shared-memory
    passes per access and the store requests Nsight Compute counted. Prints and returns it."""
    validate.result(tp, "tp")
    if tp.name != "coalescing_transpose":
        raise ValueError(f"tp: give gp.records.run(\"coalescing_transpose\"), not {tp.name!r}.")
    if hw is not None:
        validate.result(hw, "hw")
        if hw.name != "profiling_transpose":
            raise ValueError(f"hw: give gp.records.run(\"profiling_transpose\"), not "
                             f"{hw.name!r}.")
    rows = {r.get("version"): r for r in tp.rows}
    gpu = getattr(tp, "gpu", None) or "this GPU"
    for label in (BEST_SCALAR, VEC4_ONLY, VEC4_FLIP):
        g = rows.get(label, {}).get("gbps", 1.0)
        if not isinstance(g, numbers.Real) or not g > 0 or g == float("inf"):
            raise ValueError(f"tp: the row {label!r} has gbps={g!r}, not a positive number: "
                             "record coalescing_transpose again.")
    if VEC4_FLIP not in rows or VEC4_ONLY not in rows or BEST_SCALAR not in rows:
        text = (f"The record of {gpu} has no 16-byte rows (recorded before they existed): "
                "run coalescing_transpose again on that GPU to see them.")
        print(text)
        return text
    copy = tp.ceilings.get("copy_gbps") if isinstance(tp.ceilings, dict) else None
    copy = copy if isinstance(copy, numbers.Real) and copy > 0 else None
    base, only, flip = rows[BEST_SCALAR], rows[VEC4_ONLY], rows[VEC4_FLIP]
    pct = (lambda r: f" = {100 * r['gbps'] / copy:.1f}% of the copy ceiling") if copy else (lambda r: "")
    lines = [f"On {gpu}, 16384 x 16384 float32:",
             f"  4-byte accesses ({BEST_SCALAR}): {base['gbps']:,.0f} GB/s{pct(base)}",
             f"  16-byte accesses, padding only: {only['gbps']:,.0f} GB/s{pct(only)} "
             f"({only['gbps'] / base['gbps']:.2f}x)",
             f"  16-byte accesses, padding + flip: {flip['gbps']:,.0f} GB/s{pct(flip)} "
             f"({flip['gbps'] / base['gbps']:.2f}x)"]
    diff = flip["gbps"] / only["gbps"] - 1
    spreads = [r.get("spread") for r in (only, flip)]
    if all(isinstance(x, numbers.Real) and x > 0 for x in spreads):
        noise = max(spreads)
        verdict = ("no change beyond the run's spread" if abs(diff) <= noise else
                   "faster" if diff > 0 else "slower")
        lines.append(f"  flip against padding only: {diff:+.1%} (spread {noise:.1%}): {verdict}")
    else:  # without the spread a small difference cannot be told from noise
        lines.append(f"  flip against padding only: {diff:+.1%} (the run's spread is not "
                     "recorded: repeat the measurement before reading a small difference)")
    if hw is not None:
        h = {r.get("version"): r for r in hw.rows}
        scalar = BEST_SCALAR if BEST_SCALAR in h else "tiled + padding"
        needed = ("n", "shared_load_wavefronts_per_load", "shared_store_wavefronts_per_store",
                  "global_store_requests", "store_sectors_per_request")
        if all(v in h and all(isinstance(h[v].get(k), numbers.Real) for k in needed)
               for v in (VEC4_ONLY, VEC4_FLIP, scalar)):
            lines.append(
                f"  Nsight Compute ({hw.gpu}, {h[VEC4_FLIP]['n']} x {h[VEC4_FLIP]['n']}): passes "
                "per shared load / store: padding only "
                f"{h[VEC4_ONLY]['shared_load_wavefronts_per_load']:.2f} / "
                f"{h[VEC4_ONLY]['shared_store_wavefronts_per_store']:.2f}, with the flip "
                f"{h[VEC4_FLIP]['shared_load_wavefronts_per_load']:.2f} / "
                f"{h[VEC4_FLIP]['shared_store_wavefronts_per_store']:.2f}; global store "
                f"requests {h[VEC4_FLIP]['global_store_requests']:,.0f} against "
                f"{h[scalar]['global_store_requests']:,.0f} for {scalar!r} "
                f"({h[VEC4_FLIP]['store_sectors_per_request']:.0f} sectors each against "
                f"{h[scalar]['store_sectors_per_request']:.0f})")
            if all(isinstance(h[v].get(k), numbers.Real) for v in (VEC4_ONLY, VEC4_FLIP)
                   for k in ("shared_pipe_pct", "dram_pct")):
                lines.append("  busy, % of peak over the kernel's time: shared memory's data pipe "
                             + ", ".join(f"{name} {h[v]['shared_pipe_pct']:.0f}%" for name, v in
                                         (("padding only", VEC4_ONLY), ("flip", VEC4_FLIP)))
                             + "; DRAM " + ", ".join(f"{name} {h[v]['dram_pct']:.0f}%" for name, v in
                                                     (("padding only", VEC4_ONLY), ("flip", VEC4_FLIP))))
                pipe, dram = h[VEC4_ONLY]["shared_pipe_pct"], h[VEC4_ONLY]["dram_pct"]
                # read from the conflicted layout: if DRAM is the busier unit even there, the
                # conflicts were not the bound, and removing them can only free shared memory
                size = f"{h[VEC4_ONLY]['n']} x {h[VEC4_ONLY]['n']}, the profiled size"
                lines.append(
                    f"  with the conflicts (padding only) DRAM was the busier unit at {size} "
                    f"({dram:.0f}% against {pipe:.0f}%)"
                    if dram > pipe else
                    f"  with the conflicts (padding only) shared memory's data pipe was the "
                    f"busier unit at {size} ({pipe:.0f}% against DRAM's {dram:.0f}%)")
        else:
            lines.append(f"  The Nsight Compute record of {hw.gpu} has no complete 16-byte rows "
                         "(record profiling_transpose again on that GPU).")
    text = "\n".join(lines)
    print(text)
    return text


N_COPY = 2**28  # 1 GiB of float32, the size of the device-to-device ceiling's copy
COPY_LADDER = (
    # label, version, ilp, blocks_per_sm (None: as many blocks as the data needs)
    ("one element per thread", "one_per_thread", 1, None),
    ("grid-stride, 1 load in flight", "grid_stride", 1, 8),
    ("grid-stride, 2 loads in flight", "ilp", 2, 8),
    ("grid-stride, 4 loads in flight", "ilp", 4, 8),
    ("grid-stride, 8 loads in flight", "ilp", 8, 8),
    ("16-byte loads, grid-stride", "vec4", 1, 8),
    ("16-byte loads, 2 in flight, grid-stride", "vec4", 2, 8),
    ("16-byte loads, grid sized to the data", "vec4", 1, None),
    ("16-byte loads, 2 in flight, grid sized to the data", "vec4", 2, None),
)
# The control for the grid: 4-byte loads, four per thread, with the grid sized to the data
# (is it the 16-byte loads or the grid that reaches the ceiling?). Measured after rung 5.
COPY_LADDER_SIZED_4B = (("4-byte loads, 4 in flight, grid sized to the data", "ilp", 4, None),)


def _copy_kernel(version: str, ilp: int):
    from gpuperf.kernels import gridstride

    return {"one_per_thread": gridstride.copy_one_per_thread,
            "grid_stride": gridstride.copy_grid_stride,
            "ilp": make_copy_ilp(ilp), "vec4": make_copy_vec4(ilp)}[version]


@experiment("coalescing_copy_ladder", chapter="coalescing",
            title="Copying 1 GiB of float32: from one element per thread to the copy ceiling",
            units={**_BW_UNITS, "bytes_per_thread_in_flight": "B"})
def copy_ladder_experiment(progress):
    src = device_data(N_COPY)
    dst = cuda.device_array_like(src)
    rows = []
    for label, version, ilp, per_sm in COPY_LADDER[:5] + COPY_LADDER_SIZED_4B + COPY_LADDER[5:]:
        grid, block = copy_launch(N_COPY, version=version, ilp=ilp, blocks_per_sm=per_sm)
        # The kernel itself, not the host wrapper: its checks would add ~50 us per call.
        t = _time_launch(_copy_kernel(version, ilp), grid, block, src, dst, min_time=0.2)
        per_load = 16 if version == "vec4" else 4
        rows.append(_copy_row(8 * N_COPY, t, version=label, kernel=version, ilp=ilp,
                              blocks=grid, block=block,
                              bytes_per_thread_in_flight=ilp * per_load))
        progress(f"copy {label}: {rows[-1]['gbps']:.0f} GB/s ({rows[-1]['pct_copy']:.0f}%)")
        if not np.array_equal(dst[-4096:].copy_to_host(), src[-4096:].copy_to_host()):
            raise AssertionError(f"the copy {label!r} produced a wrong result")
    t = bench.time_kernel(lambda: dst.copy_to_device(src), min_time=0.2)
    rows.append(_copy_row(8 * N_COPY, t, version="Numba copy_to_device (cuMemcpyDtoD)",
                          kernel="memcpy", ilp=None, blocks=None, block=None,
                          bytes_per_thread_in_flight=None))
    try:  # the runtime's cudaMemcpy, through CuPy when it is installed
        import cupy
    except ImportError:
        return rows
    a, b = cupy.asarray(src), cupy.asarray(dst)  # zero-copy views of the same memory
    nbytes = 4 * N_COPY
    t = bench.time_kernel(lambda: cupy.cuda.runtime.memcpyAsync(
        b.data.ptr, a.data.ptr, nbytes, cupy.cuda.runtime.memcpyDeviceToDevice, 0),
        min_time=0.2)  # stream 0: the legacy default stream, where the events are recorded
    rows.append(_copy_row(8 * N_COPY, t, version="cudaMemcpyAsync (CuPy)", kernel="memcpy",
                          ilp=None, blocks=None, block=None, bytes_per_thread_in_flight=None))
    return rows


@experiment("coalescing_copy_tuning", chapter="coalescing",
            title="16-byte-load copy of 1 GiB: loads in flight x block size x blocks per SM",
            units=_BW_UNITS)
def copy_tuning_experiment(progress):
    src = device_data(N_COPY)
    dst = cuda.device_array_like(src)

    def measure(ilp, block, blocks_per_sm):
        grid, blk = copy_launch(N_COPY, version="vec4", ilp=ilp, block=block,
                                blocks_per_sm=blocks_per_sm or None)
        kernel = make_copy_vec4(ilp)
        t = _time_launch(kernel, grid, blk, src, dst, min_time=0.05)
        return _copy_row(8 * N_COPY, t, blocks=grid)

    # blocks_per_sm=0 means "as many blocks as the data needs" (one round per thread).
    return bench.sweep(measure, {"ilp": [1, 2, 4], "block": [128, 256, 512, 1024],
                                 "blocks_per_sm": [1, 2, 4, 8, 16, 0]},
                       label="vec4 copy", progress=progress)


def staging_ablation(tp) -> dict:
    """The transpose rungs 4 ("loads one at a time"), 4b (the same without the per-element
    bounds tests inside interior tiles, ``make_transpose_unchecked``) and 5 (staged) of
    ``coalescing_transpose``: their GB/s, and ``share``, the part of the gain from rung 4 to
    rung 5 that leaving out the bounds tests alone gives (0: none, 1: all of it)."""
    validate.result(tp, "tp")
    if tp.name != "coalescing_transpose":
        raise ValueError(f"tp: give gp.records.run(\"coalescing_transpose\"), not {tp.name!r}.")
    labels = {"one_at_a_time": TRANSPOSE_SWEEP[3][0], "unchecked": UNCHECKED,
              "staged": TRANSPOSE_SWEEP[5][0]}
    rows = {r.get("version"): r for r in tp.rows}
    missing = [label for label in labels.values() if label not in rows]
    if missing:
        raise ValueError(f"tp: the record of {tp.gpu} has no row {missing[0]!r}; record "
                         "coalescing_transpose again.")
    out = {k: rows[label]["gbps"] for k, label in labels.items()}
    out["share"] = (out["unchecked"] - out["one_at_a_time"]) / (out["staged"] - out["one_at_a_time"])
    out["spread"] = max(rows[label].get("spread") or 0.0 for label in labels.values())
    return out


def copy_in_flight(res) -> dict:
    """Little's law for a copy with one 4-byte load in flight per resident thread, on the GPU
    of ``res`` (its device facts and copy ceiling). The copy ceiling counts bytes read plus
    bytes written, and only the reads are in flight as loads: a copy at the ceiling reads at
    half of it. So the loads' bytes in flight cover a load latency of at most
    ``bytes_in_flight / (copy_gbps / 2)`` ns (``latency_ns``). Returns the numbers:
    ``threads_per_sm``, ``sms``, ``bytes_in_flight``, ``copy_gbps``, ``read_gbps``,
    ``latency_ns``."""
    validate.result(res, "res")
    values, _ = device.facts(res)
    threads, sms = values.get("max_threads_per_sm"), values.get("sm_count")
    copy = (res.ceilings or {}).get("copy_gbps")
    if not (threads and sms and copy):
        raise ValueError(f"res: the record of {res.gpu} lacks the SM count, the threads per SM "
                         "or the copy ceiling; record it again on that GPU.")
    total = 4 * threads * sms
    return {"threads_per_sm": threads, "sms": sms, "bytes_in_flight": total,
            "copy_gbps": copy, "read_gbps": copy / 2, "latency_ns": total / (copy / 2)}
