"""Chapter "Shared-memory tiling": matrix multiplication from a naive kernel to shared tiles.

``C = A @ B`` with ``A`` of shape (M, K), ``B`` of shape (K, N), all float32, row-major.

Kernels
-------
``naive_row_x``: one thread per output, ``row`` taken from ``threadIdx.x`` (the Numba
article's mapping): the 32 threads of a warp walk down a column of ``A`` and of ``C``, so their
loads and stores are 4*K and 4*N bytes apart and cannot be coalesced.
``naive_col_x``: the same arithmetic with ``col`` from ``threadIdx.x``: a warp reads one
element of ``A`` (a broadcast) and 32 consecutive elements of ``B`` (one transaction).
``make_tiled_article(tile)``: the Numba article's shared-memory kernel, kept with its three
bugs for the chapter to take apart (``and`` where ``or`` is needed, a ``return`` before
the barrier, unguarded tile loads).
``make_tiled_early_return(tile)``: bounds fixed, early return kept: the threads that
left never load their part of the tile.
``make_tiled(tile)``: the correct tiled kernel, ``tile`` a compile-time constant.

Helpers shared with ``gpuperf.kernels.coarsening``: the 16-byte vector load and store
``load4``/``store4``, operand checks, launch descriptions (``Variant``), timing of one
variant, and the traffic model.

Experiments (``matmul_*``)
--------------------------
``matmul_naive_vs_tiled``: TFLOP/s against size for both naive mappings, tiles 8/16/32
and cuBLAS. ``matmul_tile_sweep``: tile size at 4096^3. ``matmul_roofline``: each
version's model intensity, bound and measured rate. ``matmul_article_bugs``: what the
Numba article's kernel does on a GPU at sizes that are and are not multiples of the tile.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from .. import bench, validate
from .. import exercises as ex
from ..mode import SIMULATOR
from ..records import experiment
from ..vector import load4, store4  # noqa: F401  (16-byte access; shown in the chapter)

# --------------------------------------------------------------------------- naive kernels


@cuda.jit
def naive_row_x(A, B, C):
    # The Numba article's mapping: x (the fastest-varying thread index, the one a warp spans)
    # picks the row. Neighbouring threads read A[row, k] and write C[row, col] one row
    # apart: one sector for every row the warp spans, instead of a few for all of them.
    row = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    col = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)  # not `0.`, which is a float64 accumulator (32x slower on a T4)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def naive_col_x(A, B, C):
    # x picks the column: each row of a warp's threads reads one A[row, k] (a broadcast)
    # and consecutive B[k, col], and writes consecutive C[row, col].
    col = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    row = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


# --------------------------------------------------------------------------- tiled kernels

TILES = (8, 16, 32)


def _check_tile(tile: int) -> int:
    tile = validate.positive_int(tile, "tile", minimum=1, maximum=32)
    # tile x tile threads per block: 32 x 32 = 1024 is CUDA's limit.
    return tile


@functools.lru_cache(maxsize=None, typed=True)
def make_tiled_article(tile: int = 16):
    """The Numba article's shared-memory kernel, bugs included (do not use it)."""
    tile = _check_tile(tile)
    shape = (tile, tile)

    @cuda.jit
    def tiled_article(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
        col = cuda.threadIdx.y + cuda.blockDim.y * cuda.blockIdx.y
        if row >= C.shape[0] and col >= C.shape[1]:  # BUG 1: `and` must be `or`
            return  # BUG 2: leaves before the barriers below; its tile elements never load
        tmp = float32(0.0)
        for m in range(math.ceil(A.shape[1] / tile)):
            sA[tx, ty] = A[row, ty + m * tile]  # BUG 3: no test that the column is < K
            sB[tx, ty] = B[tx + m * tile, col]  # ... nor that the row is < K
            cuda.syncthreads()
            for n in range(tile):
                tmp += sA[tx, n] * sB[n, ty]
            cuda.syncthreads()
        C[row, col] = tmp

    return tiled_article


@functools.lru_cache(maxsize=None, typed=True)
def make_tiled_early_return(tile: int = 16):
    """Loads guarded and ``or`` fixed, but threads outside C still return early."""
    tile = _check_tile(tile)
    shape = (tile, tile)

    @cuda.jit
    def tiled_early_return(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        if row >= M or col >= N:
            return  # BUG: this thread was also due to load sA[ty, tx] and sB[ty, tx]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            k = t * tile + tx
            sA[ty, tx] = A[row, k] if k < K else float32(0.0)
            k = t * tile + ty
            sB[ty, tx] = B[k, col] if k < K else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        C[row, col] = acc

    return tiled_early_return


@functools.lru_cache(maxsize=None, typed=True)
def make_tiled(tile: int = 32):
    """The shared-memory tiled kernel: a tile x tile block computes a tile x tile piece of C.

    Every thread loads one element of each input tile (zero outside the matrices),
    all threads reach both barriers, and only the store is guarded.
    """
    tile = _check_tile(tile)
    shape = (tile, tile)  # computed here, outside the kernel: a compile-time constant

    @cuda.jit
    def tiled(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx = cuda.threadIdx.x  # x varies fastest within a warp: it picks the column
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            # Coalesced loads: consecutive tx read consecutive columns of A and of B.
            k = t * tile + tx
            sA[ty, tx] = A[row, k] if row < M and k < K else float32(0.0)
            k = t * tile + ty
            sB[ty, tx] = B[k, col] if k < K and col < N else float32(0.0)
            cuda.syncthreads()  # the whole tile is loaded before anyone reads it
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()  # everyone is done with this tile before it is overwritten
        if row < M and col < N:
            C[row, col] = acc

    return tiled


_SIG = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
PTX_TARGETS = [
    (naive_row_x, _SIG),
    (naive_col_x, _SIG),
    (make_tiled_article(16), _SIG),
    (make_tiled_early_return(16), _SIG),
] + [(make_tiled(t), _SIG) for t in TILES]


# --------------------------------------------------------------------------- launching


@dataclass(frozen=True)
class Variant:
    """One kernel with its launch shape: how every version is run, timed and checked.

    ``grid(M, N)`` returns the grid for an M x N output; ``block`` the block shape.
    ``model`` names the traffic model (see ``traffic_bytes``); ``params`` its parameters.
    """

    name: str
    kernel: object
    block: tuple
    grid: object
    model: str
    params: tuple = ()
    launcher: object = None  # a call launcher(A, B, C) that does the launches instead

    def __post_init__(self):
        validate.string(self.name, "name")
        validate.kernel(self.kernel, "kernel")
        if not (isinstance(self.block, tuple) and 1 <= len(self.block) <= 3):
            raise TypeError(f"block must be a tuple of 1 to 3 ints, not {self.block!r}.")
        validate.block_size(math.prod(self.block), name="threads per block")
        validate.function(self.grid, "grid", what="a function grid(M, N) -> grid tuple")
        validate.choice(self.model, "model", ("naive", "tiled", "coarsened", "block"))
        if not isinstance(self.params, tuple):
            raise TypeError(f"params must be a tuple, not {type(self.params).__name__}.")
        if self.launcher is not None:
            validate.function(self.launcher, "launcher", what="a function launcher(A, B, C)")

    def launch(self, A, B, C) -> None:
        if len(getattr(C, "shape", ())) != 2:  # cheap: this runs inside timed loops
            raise TypeError(f"C must be a 2-D float32 array (the M x N output), not "
                            f"{type(C).__name__}.")
        if self.launcher is not None:
            self.launcher(A, B, C)
            return
        M, N = C.shape
        self.kernel[self.grid(M, N), self.block](A, B, C)

    @property
    def threads(self) -> int:
        return math.prod(self.block)


def _check_variant(v, name="v"):
    if not isinstance(v, Variant):
        raise TypeError(f"{name} must be a Variant (gp.matmul.variant('tiled') or one of "
                        f"gp.coarsening's), not {type(v).__name__} ({v!r:.60}).")
    return v


_MODEL_PARAMS = {"naive": (), "tiled": ("tile",), "coarsened": ("tile", "factor"),
                 "block": ("bm", "bn")}


def _numeric(x, name, ndim=2):
    if hasattr(x, "copy_to_host"):
        x = x.copy_to_host()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers, not {type(x).__name__}.") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, but its shape is {arr.shape}.")
    if not arr.size:
        raise ValueError(f"{name} is empty; pass at least one element.")
    return arr


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


VERSIONS = ("naive_row_x", "naive_col_x", "tiled", "tiled_article", "tiled_early_return")


def variant(version: str = "tiled", *, tile: int = 32) -> Variant:
    """The ``Variant`` of one of this chapter's kernels (``VERSIONS``)."""
    validate.choice(version, "version", VERSIONS)
    if version == "naive_row_x":
        return Variant("naive (row from x)", naive_row_x, (16, 16),
                       lambda M, N: (_cdiv(M, 16), _cdiv(N, 16)), "naive")
    if version == "naive_col_x":
        return Variant("naive (col from x)", naive_col_x, (16, 16),
                       lambda M, N: (_cdiv(N, 16), _cdiv(M, 16)), "naive")
    tile = _check_tile(tile)
    if version == "tiled_article":  # the Numba article's mapping: x picks the row
        return Variant(f"article's tiled {tile}", make_tiled_article(tile), (tile, tile),
                       lambda M, N: (_cdiv(M, tile), _cdiv(N, tile)), "tiled", (tile,))
    factory = make_tiled if version == "tiled" else make_tiled_early_return
    return Variant(f"tiled {tile}" if version == "tiled" else f"early return {tile}",
                   factory(tile), (tile, tile), lambda M, N: (_cdiv(N, tile), _cdiv(M, tile)),
                   "tiled", (tile,))


def check_operands(A, B, out=None):
    """Validate ``A`` (M, K), ``B`` (K, N) and ``out`` (M, N): float32, 2-D, C-contiguous."""
    A = validate.array(A, name="A", ndim=2)
    B = validate.array(B, name="B", ndim=2)
    if A.shape[1] != B.shape[0]:
        raise ValueError(
            f"A is {A.shape[0]} x {A.shape[1]} and B is {B.shape[0]} x {B.shape[1]}: the columns "
            f"of A ({A.shape[1]}) must equal the rows of B ({B.shape[0]}) for A @ B.")
    if out is not None:
        out = validate.array(out, name="out", ndim=2)
        if tuple(out.shape) != (A.shape[0], B.shape[1]):
            raise ValueError(f"out must have shape {(A.shape[0], B.shape[1])} (rows of A, "
                             f"columns of B), not {tuple(out.shape)}.")
    return A, B, out


def run_variant(v: Variant, A, B, out=None):
    """Compute ``A @ B`` with variant ``v``; NumPy in, NumPy out; device arrays stay on device."""
    _check_variant(v)
    A, B, out = check_operands(A, B, out)
    on_host = isinstance(A, np.ndarray) and isinstance(B, np.ndarray)
    dA = cuda.to_device(A) if isinstance(A, np.ndarray) else A
    dB = cuda.to_device(B) if isinstance(B, np.ndarray) else B
    shape = (A.shape[0], B.shape[1])
    if out is None:
        dC = cuda.device_array(shape, dtype=np.float32)
    else:
        dC = cuda.to_device(out) if isinstance(out, np.ndarray) else out
    v.launch(dA, dB, dC)
    if on_host or isinstance(out, np.ndarray):
        host = dC.copy_to_host()
        if isinstance(out, np.ndarray):
            out[...] = host
            return out
        return host
    return dC


def matmul(A, B, out=None, *, version: str = "tiled", tile: int = 32):
    """``A @ B`` in float32 with one of this chapter's kernels (``VERSIONS``).

    NumPy arrays in give a NumPy array back; device arrays stay on the device.
    """
    return run_variant(variant(version, tile=tile), A, B, out)


# --------------------------------------------------------------------------- models


def flops(M: int, N: int, K: int) -> int:
    """Floating-point operations of A @ B: one multiply and one add per (i, j, k)."""
    M, N, K = (validate.positive_int(d, nm) for d, nm in ((M, "M"), (N, "N"), (K, "K")))
    return 2 * M * N * K


def traffic_bytes(model: str, M: int, N: int, K: int, *params) -> float:
    """Bytes the kernel asks global memory for, if no cache catches a repeat.

    ``naive``: every thread reads a row of A and a column of B: 2*M*N*K loads.
    ``tiled`` (tile T): each A element is loaded once per tile column of C (N/T
    times), each B element once per tile row (M/T times).
    ``coarsened`` (T, F): a block covers T x (T*F) of C, so A is loaded N/(T*F) times.
    ``block`` (BM, BN): a block covers BM x BN of C: A loaded N/BN times, B M/BM times.
    Plus one write of C (M*N) in every case. 4 bytes per float32.
    """
    validate.choice(model, "model", _MODEL_PARAMS)
    M, N, K = (validate.positive_int(d, nm) for d, nm in ((M, "M"), (N, "N"), (K, "K")))
    if len(params) != len(_MODEL_PARAMS[model]):
        raise TypeError(f"model={model!r} takes {len(_MODEL_PARAMS[model])} parameter(s) after K "
                        f"({', '.join(_MODEL_PARAMS[model]) or 'none'}), not {len(params)}.")
    for _p, _nm in zip(params, _MODEL_PARAMS[model]):
        validate.positive_int(_p, _nm)
    if model == "naive":
        loads = 2 * M * N * K
    elif model == "tiled":
        (t,) = params
        loads = M * K * _cdiv(N, t) + K * N * _cdiv(M, t)
    elif model == "coarsened":
        t, f = params
        loads = M * K * _cdiv(N, t * f) + K * N * _cdiv(M, t)
    elif model == "block":
        bm, bn = params
        loads = M * K * _cdiv(N, bn) + K * N * _cdiv(M, bm)
    else:
        raise ValueError(f"unknown traffic model {model!r}; use naive, tiled, coarsened or block.")
    return 4.0 * (loads + M * N)


def intensity(model: str, M: int, N: int, K: int, *params) -> float:
    """Arithmetic intensity in FLOP per byte of global traffic (``traffic_bytes``)."""
    return flops(M, N, K) / traffic_bytes(model, M, N, K, *params)


def roofline_bound(ai: float, bw_gbps: float, peak_tflops: float) -> float:
    """The roofline: min(peak, bandwidth x intensity), in TFLOP/s."""
    ai = validate.positive(ai, "ai")
    bw_gbps = validate.positive(bw_gbps, "bw_gbps")
    peak_tflops = validate.positive(peak_tflops, "peak_tflops")
    return min(peak_tflops, bw_gbps * ai / 1e3)


# --------------------------------------------------------------------------- measuring


@functools.lru_cache(maxsize=4, typed=True)
def device_operands(M: int, N: int, K: int, seed: int = 0):
    """Random device operands (offset and scale, never zeros) and an output, cached.

    The two most recent shapes stay on the device: a sweep times many kernels on the same
    operands, and making 4096 x 4096 random matrices on the host took longer than timing
    most kernels. The output is shared too: whatever is timed on it overwrites it.
    """
    for _d, _nm in ((M, "M"), (N, "N"), (K, "K")):
        validate.positive_int(_d, _nm)
    validate.positive_int(seed, "seed", minimum=0)
    return _cached_operands(int(M), int(N), int(K), int(seed))


@functools.lru_cache(maxsize=2, typed=True)
def _cached_operands(M: int, N: int, K: int, seed: int):
    A = ex.random_array((M, K), seed)
    B = ex.random_array((K, N), seed + 1)
    return cuda.to_device(A), cuda.to_device(B), cuda.device_array((M, N), np.float32)


def reference(A, B) -> np.ndarray:
    """A @ B in float64 on the CPU: the truth every kernel is checked against."""
    A = _numeric(A, "A")
    B = _numeric(B, "B")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A is {A.shape} and B is {B.shape}: the columns of A must equal the rows "
                         "of B for A @ B.")
    return np.asarray(A, np.float64) @ np.asarray(B, np.float64)


def relative_error(got, ref) -> float:
    got = _numeric(got, "got", ndim=None)
    ref = _numeric(ref, "ref", ndim=None)
    if got.shape != ref.shape:
        raise ValueError(f"got has shape {got.shape} and ref {ref.shape}; pass arrays of one shape.")
    if not np.linalg.norm(ref):
        raise ValueError("ref is all zeros: a relative error against it is undefined.")
    got = np.asarray(got, np.float64)
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def verify(v: Variant, M: int = 197, N: int = 203, K: int = 189, seed: int = 11) -> float:
    """Run ``v`` once on odd sizes with a poisoned output; return the relative error.

    Raises ``AssertionError`` if anything is NaN or the error is over 1e-4.
    """
    _check_variant(v)
    for _d, _nm in ((M, "M"), (N, "N"), (K, "K")):
        validate.positive_int(_d, _nm, maximum=4096)
    validate.positive_int(seed, "seed", minimum=0)
    A = ex.random_array((M, K), seed)
    B = ex.random_array((K, N), seed + 1)
    out = cuda.to_device(ex.poisoned((M, N)))
    v.launch(cuda.to_device(A), cuda.to_device(B), out)
    got = out.copy_to_host()
    assert not np.isnan(got).any(), f"{v.name}: unwritten (NaN) outputs at {M}x{N}x{K}"
    err = relative_error(got, reference(A, B))
    assert err < 1e-4, f"{v.name}: relative error {err:.2e} at {M}x{N}x{K}"
    return err


def measure_variant(v: Variant, n: int, *, min_repeat: int = 10, min_time: float = 0.2) -> dict:
    """Time ``v`` on n x n x n; return ms, TFLOP/s and % of cuBLAS."""
    _check_variant(v)
    validate.positive_int(n, "n")
    validate.positive_int(min_repeat, "min_repeat")
    validate.nonnegative(min_time, "min_time")
    dA, dB, dC = device_operands(n, n, n)
    t = bench.time_kernel(lambda: v.launch(dA, dB, dC), warmup=1, min_repeat=min_repeat,
                          min_time=min_time)
    tf = bench.tflops(flops(n, n, n), t.median_ms)
    cub = bench.ceilings().get("matmul_tflops")
    return {"ms": t.median_ms, "spread": t.spread, "tflops": tf,
            "pct_cublas": 100 * tf / cub if cub else None}


def measure_cublas(n: int) -> dict | None:
    """CuPy's ``@`` (cuBLAS SGEMM, plain FP32) at n^3; None where CuPy is missing."""
    validate.positive_int(n, "n")
    t = bench.measure_cublas_sgemm(n)
    if t is None:
        return None
    tf = bench.tflops(flops(n, n, n), t.median_ms)
    cub = bench.ceilings().get("matmul_tflops")
    return {"ms": t.median_ms, "spread": t.spread, "tflops": tf,
            "pct_cublas": 100 * tf / cub if cub else None}


def _repeats(n: int) -> dict:
    # Big products take tens of ms each: a few repeats give a stable median and keep
    # every experiment well under a minute.
    return {"min_repeat": 3, "min_time": 0.05} if n >= 4096 else {"min_repeat": 10, "min_time": 0.1}


def measure_version(version: str, n: int) -> dict:
    """Time one row of ``matmul_naive_vs_tiled`` live, by the name it has there
    (``"tiled 16"``, ``"naive (col from x)"``, ``"cuBLAS (CuPy @)"``): the chapter's
    explorer calls this from its *measure live* button."""
    names = [v.name for v in _chapter_variants()] + [CUBLAS]
    validate.choice(version, "version", names)
    validate.positive_int(n, "n", maximum=8192)
    bench._require_gpu("matmul.measure_version")
    if version == CUBLAS:
        row = measure_cublas(n)
        if row is None:
            raise RuntimeError("cuBLAS through CuPy is not available here: "
                               "`python -m pip install cupy-cuda12x`, or pick a Numba kernel.")
        return row
    v = next(v for v in _chapter_variants() if v.name == version)
    return measure_variant(v, n, **_repeats(n))


# --------------------------------------------------------------------------- experiments

SIZES = (256, 512, 1024, 2048, 4096)
CUBLAS = "cuBLAS (CuPy @)"  # the reference row's name in the experiments
_UNITS = {"ms": "ms", "tflops": "TFLOP/s", "pct_cublas": "% of cuBLAS"}


def _chapter_variants():
    return [variant("naive_row_x"), variant("naive_col_x")] + [
        variant("tiled", tile=t) for t in TILES]


@experiment("matmul_naive_vs_tiled", chapter="tiling",
            title="Naive (both mappings) and tiled matmul against size, with cuBLAS",
            units=_UNITS)
def naive_vs_tiled_experiment(progress):
    rows = []
    for v in _chapter_variants():
        verify(v)
        for n in SIZES:
            if v.name.startswith("naive (row") and n > 2048:
                continue  # ~1 s a run at 4096: the trend is plain by 2048
            rows.append({"version": v.name, "n": n, **measure_variant(v, n, **_repeats(n))})
            progress(f"{v.name} n={n}: {rows[-1]['tflops']:.2f} TFLOP/s")
    for n in SIZES:
        c = measure_cublas(n)
        if c:
            rows.append({"version": CUBLAS, "n": n, **c})
    return rows


@experiment("matmul_tile_sweep", chapter="tiling",
            title="Tile size against TFLOP/s and global traffic at 4096^3",
            units={**_UNITS, "ai": "FLOP/B", "bound_tflops": "TFLOP/s"})
def tile_sweep_experiment(progress):
    n = 4096
    ceil = bench.ceilings()
    rows = []
    for t in (4, 8, 16, 32):
        v = variant("tiled", tile=t)
        verify(v)
        ai = intensity("tiled", n, n, n, t)
        row = {"tile": t, "threads": t * t, "ai": ai,
               "bound_tflops": roofline_bound(ai, ceil["copy_gbps"], ceil.get("matmul_tflops") or 1e9),
               **measure_variant(v, n, **_repeats(n))}
        rows.append(row)
        progress(f"tile {t}: {row['tflops']:.2f} TFLOP/s")
    return rows


def roofline_rows(variants, n: int, progress) -> list[dict]:
    """Model intensity, roofline bound and measured rate of each variant at n^3."""
    for _i, _v in enumerate(validate.sequence(variants, "variants")):
        _check_variant(_v, f"variants[{_i}]")
    validate.positive_int(n, "n")
    validate.function(progress, "progress", what="a callable taking one status string")
    ceil = bench.ceilings()
    peak = ceil.get("matmul_tflops")
    rows = []
    for v in variants:
        ai = intensity(v.model, n, n, n, *v.params)
        bound = roofline_bound(ai, ceil["copy_gbps"], peak or float("inf"))
        m = measure_variant(v, n, **_repeats(n))
        rows.append({"version": v.name, "n": n, "model": v.model,
                     "traffic_gb": traffic_bytes(v.model, n, n, n, *v.params) / 1e9,
                     "ai": ai, "bound_tflops": bound, **m,
                     "pct_of_bound": 100 * m["tflops"] / bound,
                     # what the traffic model says the kernel pulled through, per second
                     "model_gbps": traffic_bytes(v.model, n, n, n, *v.params) / (m["ms"] * 1e6)})
        progress(f"{v.name}: {m['tflops']:.2f} TFLOP/s, model bound {bound:.1f}")
    return rows


@experiment("matmul_roofline", chapter="tiling",
            title="Each version's intensity, roofline bound and measured rate at 2048^3",
            units={**_UNITS, "ai": "FLOP/B", "bound_tflops": "TFLOP/s", "traffic_gb": "GB",
                   "model_gbps": "GB/s", "pct_of_bound": "%"})
def roofline_experiment(progress):
    return roofline_rows(_chapter_variants(), 2048, progress)


@experiment("matmul_article_bugs", chapter="tiling",
            title="The Numba article's tiled kernel on a GPU: sizes that are and are not "
                  "multiples of 16",
            units={"rel_error": "", "nan": "elements"})
def article_bugs_experiment(progress):
    rows = []
    for version in ("tiled_article", "tiled_early_return", "tiled"):
        v = variant(version, tile=16)
        for (M, K, N) in ((64, 48, 32), (33, 47, 29), (100, 70, 90)):
            rows.append({"version": v.name, "M": M, "K": K, "N": N, **bug_outcome(v, M, K, N)})
            progress(f"{v.name} {M}x{K}x{N}: {rows[-1]['outcome']}")
    return rows


def _padded_device(host: np.ndarray, pad: int = 1 << 16):
    """A device copy of ``host`` at the start of a larger NaN-filled buffer.

    A kernel that reads or writes a little past the array then touches memory we own
    (NaN, so stray reads show in the output) instead of another allocation, and
    cannot fault and take the CUDA context down with it.
    """
    buf = np.full(host.size + pad, np.nan, np.float32)
    buf[: host.size] = host.ravel()
    return cuda.to_device(buf)[: host.size].reshape(host.shape)


def bug_outcome(v: Variant, M: int, K: int, N: int, seed: int = 5) -> dict:
    """Run ``v`` once on a poisoned output: NaN count, relative error, or the exception."""
    _check_variant(v)
    for _d, _nm in ((M, "M"), (K, "K"), (N, "N")):
        validate.positive_int(_d, _nm, maximum=4096)
    validate.positive_int(seed, "seed", minimum=0)
    A = ex.random_array((M, K), seed)
    B = ex.random_array((K, N), seed + 1)
    out = ex.poisoned((M, N))
    try:
        if SIMULATOR:  # an out-of-range access raises IndexError here
            got = run_variant(v, A, B, out)
        else:  # on a GPU, give the buggy kernel NaN-filled room past each array to stray into
            dA, dB, dC = (_padded_device(x) for x in (A, B, out))
            v.launch(dA, dB, dC)
            got = dC.copy_to_host()
    except Exception as err:
        return {"nan": None, "rel_error": None,
                "outcome": f"raised {type(err).__name__}: {str(err).splitlines()[-1][:80]}"}
    nan = int(np.isnan(got).sum())
    ref = reference(A, B)
    ok = ~np.isnan(got)
    err = relative_error(np.where(ok, got, 0), np.where(ok, ref, 0)) if ok.any() else None
    if nan:
        outcome = f"{nan} of {got.size} outputs NaN"
    elif err is not None and err > 1e-4:
        outcome = f"wrong values (relative error {err:.1e})"
    else:
        outcome = "correct"
    return {"nan": nan, "rel_error": err, "outcome": outcome}


# --------------------------------------------------------------------------- exercises

CHECK_SIZES = [(1, 1, 1), (33, 47, 29), (16, 16, 16), (17, 15, 33), (40, 64, 8)]


def check_matmul_kernel(make_launch, title: str, *, sizes=CHECK_SIZES, rtol=1e-4,
                        a_transposed: bool = False) -> ex.Checker:
    """Shared engine: ``make_launch()`` returns ``launch(A, B, C)``; run it on awkward sizes.

    With ``a_transposed`` the launch gets ``At`` (K x M, A's transpose, contiguous) in place
    of ``A``, and must still write ``C = A @ B``.

    Returns the ``Checker`` (not yet reported), so that a caller can add source checks;
    ``source_checks_apply(chk)`` says whether they are worth adding (not for a stub).
    """
    validate.function(make_launch, "make_launch")
    validate.string(title, "title")
    for _i, _s in enumerate(validate.sequence(sizes, "sizes")):
        if not (isinstance(_s, (tuple, list)) and len(_s) == 3):
            raise TypeError(f"sizes[{_i}] must be (M, K, N), not {_s!r}.")
        for _d in _s:
            validate.positive_int(_d, f"sizes[{_i}]")
    validate.positive(rtol, "rtol")
    validate.boolean(a_transposed, "a_transposed")

    def first(A):  # what the launch is given for A
        return np.ascontiguousarray(A.T) if a_transposed else A

    chk = ex.Checker(title, race_note=True)
    try:
        launch = make_launch()
    except NotImplementedError:
        chk.fail("not implemented yet: replace `raise NotImplementedError()` with your code.")
        return chk
    except Exception as err:
        chk.fail(ex.describe_exception(err))
        return chk
    # Edges in every direction (9 x 11 @ 11 x 13): out-of-bounds loads or stores, a barrier
    # some threads skip, or a misaligned vector access show here before any real launch.
    if not ex.preflight_host(chk, launch, first(ex.random_array((9, 11), 3)),
                             ex.random_array((11, 13), 4), ex.poisoned((9, 13)), max_blocks=4):
        return chk
    if ex.grading():  # a shape the student never saw
        sizes = [*sizes, tuple(int(d) for d in ex.case_rng(5).permutation(ex.hidden_sizes(1, 70, 3)))]
    for seed in ex.seeds():
        for (M, K, N) in sizes if seed == 0 else sizes[1:3]:
            with chk.case(f"A {M}x{K} @ B {K}x{N}", seed=seed):
                A = ex.random_array((M, K), seed * 100 + M)
                B = ex.random_array((K, N), seed * 100 + N + 1)
                dA, dB = cuda.to_device(first(A)), cuda.to_device(B)
                dC = cuda.to_device(ex.poisoned((M, N)))
                launch(dA, dB, dC)
                ref = reference(A, B)
                chk.compare(dC.copy_to_host(), ref, rtol=rtol, atol=rtol * float(np.abs(ref).max()))
    return chk


def source_checks_apply(chk: ex.Checker) -> bool:
    """Source checks only add to a report whose kernel ran at least once: a stub or a kernel
    that fails everywhere gets its one line, not a list of consequences."""
    if not isinstance(chk, ex.Checker):
        raise TypeError(f"chk must be an ex.Checker, not {type(chk).__name__}.")
    return bool(chk.report_.passed)


@ex.refuses_stubs(solved_by=("make_tiled", "make_tiled_article", "make_tiled_early_return", "variant",
                              "matmul", "gpuperf.kernels.coarsening:make_coarsened",
                              "gpuperf.kernels.coarsening:coarsened_variant"))
def check_tiled(make_kernel, tile: int = 16, *, a_transposed: bool = False) -> ex.Report:
    """Check ``make_kernel(tile)``, a factory returning a tiled kernel ``k(A, B, C)``.

    It is launched with blocks of (tile, tile) threads and a grid of
    (ceil(N / tile), ceil(M / tile)) blocks: x covers the columns of C, y the rows.
    With ``a_transposed`` the kernel is ``k(At, B, C)``: ``At`` is A's transpose (K x M),
    C is still A @ B, and the loads of ``At`` must be coalesced (traced in the emulator for
    16 x 16 tiles: at most ``COALESCED_SECTORS`` sectors per warp request). On a GPU,
    ``make_kernel(TILED_SPEED_TILE)`` must also reach ``TILED_SPEED_TARGET`` of cuBLAS SGEMM
    measured in the same check at ``TILED_SPEED_N``^3.
    """
    _check_tile(tile)
    validate.boolean(a_transposed, "a_transposed")

    def make_launch():
        k = make_kernel(tile)
        if not (hasattr(k, "__getitem__") and callable(k)):
            raise TypeError(f"make_kernel({tile}) returned {type(k).__name__}, not a @cuda.jit "
                            "kernel; define the kernel inside the factory and return it.")

        def launch(A, B, C):
            M, N = C.shape
            k[(_cdiv(N, tile), _cdiv(M, tile)), (tile, tile)](A, B, C)

        return launch

    what = "C = At.T @ B, " if a_transposed else ""
    chk = check_matmul_kernel(make_launch, f"tiled matmul, {what}{tile} x {tile} tiles",
                              a_transposed=a_transposed)
    if not source_checks_apply(chk):
        return chk.report()
    src_fn = make_kernel
    chk.calls(src_fn, "numba.cuda:syncthreads",
              why="the kernel needs cuda.syncthreads() after loading a tile and again before "
                  "overwriting it.")
    # A return before a barrier that splits a block is caught in the emulator's dry run
    # (check_matmul_kernel); one the whole block takes together is legal.
    _check_reuse(chk, make_kernel, tile, a_transposed)
    if a_transposed:
        _check_coalesced_first_operand(chk, make_kernel)
    if SIMULATOR:
        ex.speed_not_measured(chk, f"{TILED_SPEED_TARGET:.0%} of cuBLAS at {TILED_SPEED_N}^3 "
                                   f"with {TILED_SPEED_TILE} x {TILED_SPEED_TILE} tiles")
    elif chk.report_.ok:
        _tiled_speed(chk, make_kernel, a_transposed)
    return chk.report()


# The tiled exercise's speed bar on a GPU: this share of cuBLAS SGEMM measured in the same
# check at TILED_SPEED_N^3, with TILED_SPEED_TILE x TILED_SPEED_TILE tiles. The chapter's tiled
# kernels read 15-16% of cuBLAS at 2048 (tile 16 or 32), tile 8 10% and the naive ones under
# 3% (matmul_naive_vs_tiled, H200 and H100).
TILED_SPEED_N = 2048
TILED_SPEED_TILE = 16
TILED_SPEED_TARGET = 0.08


def _tiled_speed(chk, make_kernel, a_transposed: bool) -> None:
    tile = TILED_SPEED_TILE
    grid = (_cdiv(TILED_SPEED_N, tile), _cdiv(TILED_SPEED_N, tile))
    _speed_bar(chk, make_kernel(tile), grid, (tile, tile),
              f"your kernel ({'At' if a_transposed else 'A'}, tile {tile})")


def _speed_bar(chk, kernel, grid, block, what: str) -> None:
    """The matmul exercises' speed bar on a GPU: ``kernel[grid, block](A, B, C)`` on
    ``TILED_SPEED_N``-square float32 matrices must reach ``TILED_SPEED_TARGET`` of cuBLAS
    SGEMM measured in the same check (``exercises.speed_against_cublas``)."""
    n = TILED_SPEED_N
    rng = np.random.default_rng(3)
    A = cuda.to_device(rng.random((n, n), dtype=np.float32) - 0.5)
    B = cuda.to_device(rng.random((n, n), dtype=np.float32) - 0.5)
    C = cuda.device_array((n, n), np.float32)
    ex.speed_against_cublas(
        chk, lambda: kernel[grid, block](A, B, C), n, target=TILED_SPEED_TARGET,
        what=f"{what}, n = {n}",
        advice="each element of a tile should be loaded from global memory once and then "
               "read many times from shared memory, with coalesced global loads.")


def _check_reuse(chk, make_kernel, tile: int, a_transposed: bool) -> None:
    """Count, in the emulator, the global loads of A and B for one block's tile of C over
    two tiles of K: a tiled kernel loads each element of its tiles once, 2 * M * N * K /
    tile loads in all; one that reads A and B from global memory in the inner product (the
    naive kernel's 2 * M * N * K) has no reuse, whatever it puts in shared memory."""
    from .. import emulator

    if tile < 2:
        return
    M, N, K = tile, tile, 2 * tile
    with chk.case(f"global loads of A and B, one {tile} x {tile} block over K={K} (emulator)"):
        k = make_kernel(tile)
        a, b = emulator._param_names(k, 2)[:2]
        A = ex.random_array((M, K), 5)
        run = emulator.launch(k, (1, 1), (tile, tile),
                              np.ascontiguousarray(A.T) if a_transposed else A,
                              ex.random_array((K, N), 6), np.zeros((M, N), np.float32))
        loads = sum(1 for e in run.events
                    if e.space == "global" and e.kind == "load" and e.array in (a, b))
        tiled, naive = 2 * M * N * K // tile, 2 * M * N * K
        if loads > 2 * tiled:
            chk.fail(f"the block made {loads:,} global loads of {a} and {b} for a {M} x {N} "
                     f"tile of C over K={K}: a tiled kernel makes {tiled:,} (each element of "
                     f"a tile loaded once, then read {tile} times from shared memory), the "
                     f"naive one {naive:,}. Does the inner product read {a} and {b} instead "
                     "of the tiles in shared memory?")


COALESCED_SECTORS = 8  # a warp reading 2 rows of 16 floats: 4 sectors, 8 if misaligned


def _check_coalesced_first_operand(chk, make_kernel, tile: int = 16, n: int = 32) -> None:
    """Trace ``make_kernel(tile)`` on n x n matrices in the emulator: the warp requests that
    load its first argument must be coalesced."""
    from .. import emulator
    from . import coalescing

    with chk.case(f"coalesced loads of At ({tile} x {tile} tiles, traced)"):
        k = make_kernel(tile)
        name = emulator._param_names(k, 1)[0]
        At = ex.random_array((n, n), 7)
        B = ex.random_array((n, n), 8)
        trace = coalescing.trace(k, (_cdiv(n, tile), _cdiv(n, tile)), (tile, tile), At, B,
                                 np.zeros((n, n), np.float32))
        spr = trace.sectors_per_request(kind="load", array=name)
        if spr is None:
            chk.fail(f"the kernel never loads its first argument `{name}` (At).")
        elif spr > COALESCED_SECTORS:
            chk.fail(f"each warp's load of `{name}` touches {spr:.1f} sectors on average "
                     f"(coalesced: at most {COALESCED_SECTORS}): consecutive threadIdx.x must "
                     "read consecutive elements of a row of At, and the tile be stored "
                     "transposed in shared memory (corner turning, chapter 2.1).")
    with chk.case(f"bank conflicts in shared memory ({tile} x {tile} tiles, traced)"):
        conflict = trace.max_bank_conflict()
        if conflict > 2:
            chk.fail(f"a warp's shared-memory access has a {conflict}-way bank conflict: a tile "
                     "turned on its way into shared memory is written down its columns, and a "
                     f"column of a {tile}-wide float tile sits in few banks. Pad each row by "
                     f"one float, a ({tile}, {tile} + 1) tile, as chapter 2.1's transpose does.")


@ex.refuses_stubs(solved_by=("intensity", "traffic_bytes"))
def check_intensity(fn) -> ex.Report:
    """Check ``fn(M, N, K, tile, bw_gbps, peak_tflops) -> (intensity, bound_tflops)``.

    Intensity in FLOP/byte of global traffic of the tiled kernel (reads of A and B at
    the tile's reuse, plus the write of C); the bound is the roofline min(peak, bw x AI).
    """
    chk = ex.Checker("arithmetic intensity and roofline bound of a tiled matmul")
    rng = ex.case_rng(3)
    # A short K makes the write of C a fifth of the traffic; sizes that are no multiple of the
    # tile make partial tiles count. The answer is a formula: compared to 1e-6, not to a few %.
    cases = [(4096, 4096, 4096, 32, 3000.0, 20.0), (1024, 2048, 512, 16, 900.0, 8.1),
             (4096, 4096, 4096, 8, 3350.0, 51.0), (512, 512, 512, 4, 300.0, 8.1),
             (2048, 2048, 64, 32, 2000.0, 30.0), (1000, 1000, 1000, 32, 1500.0, 40.0),
             (int(rng.integers(500, 5000)), int(rng.integers(500, 5000)),
              int(rng.integers(500, 5000)), 16, float(rng.uniform(200, 4000)), 40.0)]
    for M, N, K, t, bw, peak in cases:
        with chk.case(f"M={M} N={N} K={K} tile={t}, {bw:.0f} GB/s, {peak} TFLOP/s"):
            got = fn(M, N, K, t, bw, peak)
            if not (isinstance(got, tuple) and len(got) == 2):
                chk.fail("return a pair (intensity in FLOP/byte, bound in TFLOP/s).")
                continue
            ai, bound = (float(g) for g in got)
            want_ai = intensity("tiled", M, N, K, t)
            want_bound = roofline_bound(want_ai, bw, peak)
            hints = {2.0: "FLOPs count the multiply and the add: 2*M*N*K",
                     0.5: "FLOPs are 2*M*N*K (a multiply and an add), and bytes are 4 per float",
                     4.0: "count bytes, 4 per float32, not elements"}
            flops = 2 * M * N * K
            loads = M * K * _cdiv(N, t) + K * N * _cdiv(M, t)
            variants = {  # intensities of the usual slips, to name the one made
                "C is written once, not left out: add 4*M*N bytes": flops / (4 * loads),
                "C is written once, not read too: count 4*M*N bytes for it":
                    flops / (4 * (loads + 2 * M * N)),
                "a partial tile still loads its rows and columns: there are ceil(N / tile) tile "
                "columns and ceil(M / tile) tile rows":
                    flops / (4 * (M * K * N / t + K * N * M / t + M * N)),
            }
            if abs(ai / want_ai - 1) > 1e-6:
                ratio = ai / want_ai
                hint = next((h for r, h in hints.items() if abs(ratio / r - 1) < 0.05), None)
                hint = hint or next((h for h, v in variants.items()
                                     if abs(ai / v - 1) < 1e-6), None)
                chk.fail(f"intensity {ai:.6g} FLOP/B, expected {want_ai:.6g}"
                         + (f": {hint}." if hint else
                            ". Count A read once per tile column of C, B once per tile row, "
                            "C written once."))
            elif abs(bound / want_bound - 1) > 1e-6:
                chk.fail(f"bound {bound:.4g} TFLOP/s, expected {want_bound:.4g}: the roofline is "
                         "min(peak, bandwidth x intensity), with GB/s x FLOP/B = GFLOP/s.")
    return chk.report()


# --------------------------------------------------------------------------- figures


def warp_threads(block=(16, 16), warp: int = 0) -> list[tuple[int, int]]:
    """The ``(threadIdx.x, threadIdx.y)`` of the 32 threads of warp ``warp`` of a 2-D block:
    a block's threads are numbered ``tid = x + y * blockDim.x`` and each run of 32 consecutive
    ``tid`` is a warp, so a block 16 wide puts two rows of 16 in each warp."""
    bx, by = (validate.positive_int(b, f"block[{i}]", maximum=1024)
              for i, b in enumerate(validate.sequence(block, "block")))
    if bx * by > 1024:
        raise ValueError(f"block={tuple(block)} has {bx * by} threads; a block has at most 1024.")
    warp = validate.positive_int(warp, "warp", minimum=0, maximum=max(0, (bx * by - 1) // 32))
    return [(t % bx, t // bx) for t in range(32 * warp, min(32 * warp + 32, bx * by))]


def warp_sectors(block=(16, 16), n: int = 32) -> list[dict]:
    """Sectors per warp request of each naive mapping, traced in the course's emulator on
    ``n`` x ``n`` matrices with blocks of ``block``: one row per kernel, array and kind
    (loads of A and B, stores of C). The emulator runs the kernels' Python source, so this
    is the same with or without a GPU."""
    from . import coalescing

    bx, by = (validate.positive_int(b, f"block[{i}]", maximum=1024)
              for i, b in enumerate(validate.sequence(block, "block")))
    n = validate.positive_int(n, "n", minimum=1, maximum=64)
    rows = []
    for kernel in (naive_row_x, naive_col_x):
        A, B = ex.random_array((n, n), 1), ex.random_array((n, n), 2)
        C = np.zeros((n, n), np.float32)
        # naive_row_x: x runs down the rows; naive_col_x: x runs along the columns
        grid = (_cdiv(n, bx), _cdiv(n, by))
        tr = coalescing.trace(kernel, grid, (bx, by), A, B, C)
        for array, kind in (("A", "load"), ("B", "load"), ("C", "store")):
            rows.append({"kernel": kernel.py_func.__name__, "array": array, "kind": kind,
                         "sectors_per_request": tr.sectors_per_request(kind=kind, array=array)})
    return rows


def show_warp_sectors(block=(16, 16), n: int = 32) -> list[dict]:
    """Print which threads form a warp of ``block`` and :func:`warp_sectors`; return the rows."""
    threads = warp_threads(block)
    rows = warp_sectors(block, n)  # checks its arguments before anything is printed
    xs, ys = sorted({t[0] for t in threads}), sorted({t[1] for t in threads})
    print(f"warp 0 of a {block[0]} x {block[1]} block: threadIdx.x {xs[0]}..{xs[-1]}, "
          f"threadIdx.y {ys[0]}..{ys[-1]} ({len(xs)} x {len(ys)} threads)")
    per_k = {}
    for r in rows:
        print(f"{r['kernel']}: {r['kind']} of {r['array']}: {r['sectors_per_request']:.1f} sectors "
              f"per warp request")
        if r["kind"] == "load":
            per_k[r["kernel"]] = per_k.get(r["kernel"], 0.0) + r["sectors_per_request"]
    print("sectors per warp for one k (A and B): " + ", ".join(f"{k} {v:.1f}"
                                                               for k, v in per_k.items())
          + f"; ratio {per_k['naive_row_x'] / per_k['naive_col_x']:.1f} to 1")
    return rows


def draw_mappings(n: int = 8):
    """Which elements of A, B and C one warp touches under each naive mapping."""
    validate.positive_int(n, "n", minimum=2, maximum=32)
    import matplotlib.pyplot as plt

    from .. import plots

    fig, axes = plt.subplots(2, 3, figsize=(plots.COLUMN_INCHES, 5.2))
    for r, (title, along_col) in enumerate((("row from threadIdx.x (uncoalesced)", True),
                                            ("col from threadIdx.x (coalesced)", False))):
        for c, (name, shape) in enumerate((("A", (n, n)), ("B", (n, n)), ("C", (n, n)))):
            ax = axes[r, c]
            grid = np.zeros(shape)
            if along_col:  # the warp's threads span rows
                if name == "A":
                    grid[:, 2] = 1
                elif name == "B":
                    grid[2, 3] = 1
                else:
                    grid[:, 3] = 1
            else:
                if name == "A":
                    grid[3, 2] = 1
                elif name == "B":
                    grid[2, :] = 1
                else:
                    grid[3, :] = 1
            ax.imshow(grid, cmap="Blues", vmin=0, vmax=1.3)
            ax.set_xticks(np.arange(-0.5, n), [])
            ax.set_yticks(np.arange(-0.5, n), [])
            ax.grid(color="0.7", lw=0.5)
            ax.tick_params(length=0)
            if r == 0:
                ax.set_title(name, fontsize=10)
            if c == 0:
                ax.set_ylabel(title.replace(" (", "\n("), fontsize=8)
    fig.suptitle("One step k of one warp: shaded elements are what its threads touch\n"
                 "(row-major: a row is contiguous)", fontsize=10)
    fig.tight_layout()
    return fig


def draw_tiling(n: int = 8, tile: int = 2, step: int = 1):
    """Tiled matmul: the C tile a block owns, and the A and B tiles it loads at ``step``."""
    n = validate.positive_int(n, "n", minimum=2, maximum=32)
    tile = validate.positive_int(tile, "tile", maximum=n)
    if n % tile:
        raise ValueError(f"tile={tile} must divide n={n}; e.g. tile=2 with n=8.")
    validate.positive_int(step, "step", minimum=0, maximum=n // tile - 1)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from .. import plots

    fig, axes = plt.subplots(1, 3, figsize=(plots.COLUMN_INCHES, 2.9))
    bi, bj = 1, 2  # the block's tile row and column in C
    specs = (("A (M x K)", (bi, step)), ("B (K x N)", (step, bj)), ("C (M x N)", (bi, bj)))
    for ax, (name, (ti, tj)) in zip(axes, specs):
        ax.set_xlim(0, n)
        ax.set_ylim(n, 0)
        ax.set_aspect("equal")
        for k in range(0, n + 1, tile):
            ax.axhline(k, color="0.85", lw=0.6)
            ax.axvline(k, color="0.85", lw=0.6)
        if name.startswith("A"):
            ax.add_patch(Rectangle((0, bi * tile), n, tile, color="C0", alpha=0.15))
        if name.startswith("B"):
            ax.add_patch(Rectangle((bj * tile, 0), tile, n, color="C0", alpha=0.15))
        ax.add_patch(Rectangle((tj * tile, ti * tile), tile, tile, color="C1" if name[0] != "C"
                               else "C2", alpha=0.8))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(name, fontsize=10)
    fig.suptitle(f"Step {step}: the block loads one {tile}x{tile} tile of A and one of B into "
                 "shared memory;\nevery thread uses each loaded element tile times", fontsize=9)
    fig.tight_layout()
    return fig


def plot_roofline(roof, *, title: str = "Roofline"):
    """The ``matmul_roofline`` result on the roofline of its GPU (the copy bandwidth and
    cuBLAS's FP32 rate measured in the same run); beside a live run, the recorded GPUs'
    kernels as open markers."""
    validate.result(roof, "roof")
    for _c in ("version", "ai", "tflops"):
        validate.column(roof, _c, "roof column")
    validate.string(title, "title")
    from .. import plots

    def points(res):
        return [{"name": r["version"], "intensity": r["ai"], "tflops": r["tflops"]}
                for r in res.rows if r.get("ai") and r.get("tflops")]

    c = roof.ceilings
    if not (c.get("copy_gbps") and c.get("matmul_tflops")):
        raise ValueError(f"roof ({roof.name} on {roof.gpu}) has no copy_gbps and matmul_tflops "
                         "ceilings; pass the result of gp.records.run('matmul_roofline').")
    others = {plots._gpu(res): points(res) for res in plots.live_references(roof)}
    return plots.roofline(points(roof), bw_gbps=c["copy_gbps"], peak_tflops=c["matmul_tflops"],
                          label=roof.label, title=title, references=others)


__all__ = [
    "plot_roofline", "naive_row_x", "naive_col_x", "make_tiled_article", "make_tiled_early_return", "make_tiled",
    "Variant", "variant", "matmul", "run_variant", "check_operands", "flops", "traffic_bytes",
    "intensity", "roofline_bound", "verify", "measure_variant", "measure_cublas", "bug_outcome",
    "check_tiled", "check_intensity", "draw_mappings", "draw_tiling", "load4", "store4",
    "warp_threads", "warp_sectors", "show_warp_sectors",
    "VERSIONS", "TILES", "SIZES",
]


# --------------------------------------------------------------------------- prose helpers


def naive_vs_tiled_summary(res, n: int = 2048, small: int = 256, tile: int = 32) -> str:
    """The chapter's reading of ``matmul_naive_vs_tiled``, printed from its rows.

    At ``n``: the coalesced naive mapping against the Numba article's, and the best tiled kernel
    against the coalesced naive one; at ``small``: the blocks of a ``tile`` x ``tile`` grid
    against the SMs of the GPU measured, and how far cuBLAS is from its rate at the largest size.
    """
    from .. import device

    validate.result(res, "res")
    n = validate.integer(n, "n", minimum=1)
    small = validate.integer(small, "small", minimum=1)
    tile = validate.integer(tile, "tile", minimum=1)
    for c in ("version", "n"):
        validate.column(res, c, "res column")

    def rate(version, size):
        rows = res.select(version=version, n=size)
        return rows[0]["tflops"] if rows and rows[0].get("tflops") else None

    lines = []
    row_x, coal = rate("naive (row from x)", n), rate("naive (col from x)", n)
    if row_x and coal:
        lines.append(f"n={n}: the coalesced naive mapping runs at {coal / row_x:.2f}x the Numba "
                     f"article's ({coal:.2f} against {row_x:.2f} TFLOP/s).")
    tiled = [r for r in res.select(n=n) if r["version"].startswith("tiled") and r.get("tflops")]
    if tiled and coal:
        best = max(tiled, key=lambda r: r["tflops"])
        lines.append(f"n={n}: {best['version']} runs at {best['tflops'] / coal:.1f}x the coalesced "
                     f"naive kernel ({best['tflops']:.2f} TFLOP/s).")
    sms = device.facts(res)[0].get("sm_count")
    blocks = (-(-small // tile)) ** 2
    line = f"n={small}: a grid of {tile} x {tile} tiles has {blocks} blocks"
    line += f", for {sms} SMs." if sms else "."
    cublas = [r for r in res.rows if r["version"].startswith("cuBLAS") and r.get("tflops")]
    if cublas:
        top = max(cublas, key=lambda r: r["n"])
        low = [r for r in cublas if r["n"] == small]
        if low:
            line += (f" cuBLAS reaches {low[0]['tflops']:.2f} TFLOP/s there, "
                     f"{100 * low[0]['tflops'] / top['tflops']:.0f}% of its rate at n={top['n']}.")
    lines.append(line)
    text = "\n".join(lines)
    print(text)
    return text
