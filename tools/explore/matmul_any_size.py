"""Exploration for issue 18's matmul rung: ``matmul_index.make_fast`` (unsigned indices, no guards,
no edge path) made correct for any size by keeping every edge out of it, as the ablation in
matmul_index.py asks. Not part of the course yet. One call, up to four launches:

* the fast kernel on the interior: the largest multiples of the block tile in M and N, and of BK
  in K (it needs K and N to be multiples of 4 for its 16-byte loads and stores);
* where K is not a multiple of BK, a small kernel that adds the last K % BK products to the
  interior's outputs;
* chapter 5's guarded kernel (``make_regtile_double``) on the right strip (all rows) and on the
  bottom strip (the interior's columns), through views of A, B and C.

Where K or N is not a multiple of 4, or a dimension is smaller than one tile, chapter 5's kernel
does the whole product. Run on a GPU from the repository root:

    PYTHONPATH=src python3 tools/explore/matmul_any_size.py

First runs, NVIDIA H200, 2026-11-27, numba-cuda 0.30.4 (each line one run; the percentages are
of cuBLAS timed in the same run, which itself varies with the size: 51.3, 48.4, 42.4 and 45.2
TFLOP/s at 4096, 4095, 4100 and 4104):

    n      any size,     strips in their     chapter 5's
           one stream    own streams         kernel
    4096   81.4%         81.3%               70.4%
    4095   44.1%         44.3%               44.4%    (K % 4 != 0: chapter 5's kernel throughout)
    4100   47.7%         66.3%               65.0%
    4104   45.9%         63.1%               61.3%

Correct (max relative error below 1e-5 against float64) at every shape in ``main``, both ways.
At 4096 there are no strips, and the fast kernel's gain holds. Where there are strips, one
strip block does all of K on the guarded path with two barriers per tile, so a strip of 33 blocks
takes about as long as the whole fast kernel: after it in one stream it almost doubles the
time; two strips in one side stream ran one after the other (51.0% at 4100 in the run before);
each in its own stream they run beside the fast kernel and the call is as fast as chapter 5's
kernel, no faster, because now the strips set the time. Next: split the strips' K over more
blocks (partial sums added in a second step, or atomics at the price of a fixed order), or give
the edge blocks a fast path of their own; and 4095 says that a K that is not a multiple of 4
costs chapter 5's kernel its vector loads altogether (cuBLAS loses 6% there).
"""
import importlib.util
import pathlib
import sys

import numpy as np
from numba import cuda, float32

from gpuperf import bench
from gpuperf.kernels import coarsening as co
from gpuperf.kernels import matmul as mm

_spec = importlib.util.spec_from_file_location(
    "matmul_index", pathlib.Path(__file__).with_name("matmul_index.py"))
mi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mi)

BM = BN = 128
BK = 8
FAST = mi.make_fast(BM, BN, BK, 8, 8, 2, U=np.uint32)
GENERAL = co.make_regtile_double(BM, BN, BK, 8, 8, None, 2)


@cuda.jit
def add_k_tail(A, B, C, rows, cols, k0):
    """C[r, c] += sum over k >= k0 of A[r, k] * B[k, c], for r < rows and c < cols."""
    c, r = cuda.grid(2)
    if r < rows and c < cols:
        acc = float32(0.0)
        for k in range(k0, A.shape[1]):
            acc += A[r, k] * B[k, c]
        C[r, c] += acc


def general(A, B, C, stream=0):
    M, N = C.shape
    GENERAL[((N + BN - 1) // BN, (M + BM - 1) // BM), 256, stream](A, B, C)


_STREAMS = []


def matmul_any(A, B, C, concurrent=False):
    """``concurrent``: each strip in a stream of its own, launched first, so that their few
    blocks run beside the fast kernel's instead of after them (all are blocking streams: the
    legacy default stream waits for them)."""
    M, K = A.shape
    N = B.shape[1]
    mi_, ni_, ki_ = M // BM * BM, N // BN * BN, K // BK * BK
    if K % 4 or N % 4 or not (mi_ and ni_ and ki_):
        general(A, B, C)
        return
    if concurrent and not _STREAMS:
        _STREAMS.extend([cuda.stream(), cuda.stream(), cuda.stream()])
    main, right, bottom = _STREAMS if concurrent else (0, 0, 0)
    if concurrent:  # each strip in its own stream: one after the other they took as long as
        if ni_ < N:  # the fast kernel each (a strip block does all of K on the guarded path)
            general(A, B[:, ni_:], C[:, ni_:], right)
        if mi_ < M:
            general(A[mi_:], B[:, :ni_], C[mi_:, :ni_], bottom)
    FAST[(ni_ // BN, mi_ // BM), 256, main](A, B, C)
    if ki_ < K:
        add_k_tail[((ni_ + 31) // 32, (mi_ + 7) // 8), (32, 8), main](A, B, C, mi_, ni_, ki_)
    if not concurrent:
        if ni_ < N:
            general(A, B[:, ni_:], C[:, ni_:])
        if mi_ < M:
            general(A[mi_:], B[:, :ni_], C[mi_:, :ni_])


def check(M, N, K, concurrent=False):
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a = (rng.random((M, K), dtype=np.float32) - 0.5)
    b = (rng.random((K, N), dtype=np.float32) - 0.5)
    dA, dB = cuda.to_device(a), cuda.to_device(b)
    dC = cuda.to_device(np.full((M, N), np.nan, np.float32))
    matmul_any(dA, dB, dC, concurrent)
    cuda.synchronize()
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = dC.copy_to_host()
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    return bool(np.isfinite(got).all() and err < 1e-4), err


def main():
    bad = []
    for shape in ((1, 1, 1), (127, 129, 7), (128, 128, 8), (128, 256, 12), (300, 500, 260),
                  (1000, 1003, 999), (1024, 1024, 1024), (1029, 1100, 1028), (2048, 2052, 2051),
                  (513, 4096, 4100), (4096, 4100, 4101)):
        for concurrent in (False, True):
            ok, err = check(*shape, concurrent)
            print(f"{shape} concurrent={concurrent}: {'ok' if ok else 'WRONG'} (max rel error "
                  f"{err:.1e})", flush=True)
            if not ok:
                bad.append((shape, concurrent))
    for n in (4096, 4095, 4100, 4104):
        dA, dB, dC = mm.device_operands(n, n, n)
        t_any = bench.time_kernel(lambda a=dA, b=dB, c=dC: matmul_any(a, b, c), warmup=1, min_repeat=10,
                                  min_time=0.3)
        t_con = bench.time_kernel(lambda a=dA, b=dB, c=dC: matmul_any(a, b, c, True), warmup=1,
                                  min_repeat=10, min_time=0.3)
        t_gen = bench.time_kernel(lambda a=dA, b=dB, c=dC: general(a, b, c), warmup=1, min_repeat=10,
                                  min_time=0.3)
        cub = bench.measure_cublas_sgemm(n)
        f = mm.flops(n, n, n)
        print(f"n={n}: any-size {bench.tflops(f, t_any.median_ms):.2f} TFLOP/s = "
              f"{100 * cub.median_ms / t_any.median_ms:.1f}% of cuBLAS, strips beside it "
              f"{100 * cub.median_ms / t_con.median_ms:.1f}%; chapter 5's kernel "
              f"{100 * cub.median_ms / t_gen.median_ms:.1f}%; cuBLAS "
              f"{bench.tflops(f, cub.median_ms):.2f} TFLOP/s", flush=True)
    if bad:
        sys.exit(f"wrong at {bad}")


if __name__ == "__main__":
    main()
