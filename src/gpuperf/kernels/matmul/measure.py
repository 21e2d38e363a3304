"""Measuring and checking one ``Variant``: operands, the float64 reference, timing, cuBLAS.

Shared by the experiments, the checkers and chapter 5 (``gpuperf.kernels.coarsening``).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda  # noqa: I001

from gpuperf import bench, validate
from gpuperf import exercises as ex

from .kernels import Variant, check_variant
from .models import flops

CUBLAS = "cuBLAS (CuPy @)"  # the reference row's name in the experiments


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
    check_variant(v)
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
    check_variant(v)
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


def repeats(n: int) -> dict:
    """The ``min_repeat`` and ``min_time`` of ``bench.time_kernel`` for an n^3 product."""
    validate.positive_int(n, "n")
    # Big products take tens of ms each: a few repeats give a stable median and keep
    # every experiment well under a minute.
    return {"min_repeat": 3, "min_time": 0.05} if n >= 4096 else {"min_repeat": 10, "min_time": 0.1}


def where_measured(res) -> str:
    """The words a page uses to say where ``res`` (a ``Result``) was measured: "measured on an
    NVIDIA H200 on 2026-12-03" for a record, "measured on your NVIDIA ... just now" live."""
    validate.result(res, "res")
    gpu = res.gpu
    article = "an" if gpu[:1].lower() in "aeiou" or gpu.startswith("NVIDIA") else "a"
    if res.source == "live":
        return f"measured on your {gpu} just now"
    date = res.meta.get("date")
    when = f" on {date}" if date else ""
    return f"measured on {article} {gpu}{when}"


def table(name: str, rows: list[dict]):
    """Rows a cell computed now (a correctness check, a model) as a ``Result`` that shows as an
    HTML table, captioned with where they were computed (this GPU or the CUDA simulator)."""
    from gpuperf import device, records

    validate.string(name, "name")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be a non-empty list of dicts (one per table row).")
    where = device.info().name
    return records.Result(name, rows, {"gpu": where}, "live")
