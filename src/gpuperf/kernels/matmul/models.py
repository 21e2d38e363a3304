"""The analytic models of chapter 4: FLOPs, global traffic, arithmetic intensity, roofline."""

from __future__ import annotations

from gpuperf import validate

from .kernels import _cdiv

_MODEL_PARAMS = {"naive": (), "tiled": ("tile",), "coarsened": ("tile", "factor"),
                 "block": ("bm", "bn")}


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
