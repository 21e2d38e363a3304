"""Exploration for issue 18's matmul rung: ``matmul_index.make_fast`` (unsigned indices, no guards,
no edge path) made correct for any size by keeping every edge out of it, as the ablation in
matmul_index.py asks. Not part of the course yet. One call, up to four launches:

* the fast kernel on the interior: the largest multiples of the block tile in M and N, and of BK
  in K (it needs K and N to be multiples of 4 for its 16-byte loads and stores);
* where K is not a multiple of BK, a small kernel that adds the last K % BK products to the
  interior's outputs;
* chapter 5's guarded kernel (``make_regtile_double``) on the right strip (all rows) and on the
  bottom strip (the interior's columns), through views of A, B and C; or (``split=True``) a
  plain kernel with K split 16 ways, one output and one K chunk per thread, and a second
  kernel that adds the 16 partials in order (deterministic, no atomics). With
  ``concurrent=True`` (implied by ``split``) each strip runs in a stream of its own.

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
kernel, no faster, because now the strips set the time.
Second run, the strips' K split 16 ways (``split=True``), one run, same GPU; "strips beside it"
is the third column above run again (it moved from 66.3 to 75.7% at 4100: the strips' blocks
and the fast kernel's share the SMs in whatever order the scheduler picks):

    n      one stream   strips beside it   K split   chapter 5's   cuBLAS TFLOP/s
    4096   81.3%        81.3%              81.3%     70.4%         51.35
    4095   44.3%        44.3%              44.3%     44.2%         48.44
    4100   47.7%        75.7%              89.2%     65.0%         42.40
    4104   45.9%        63.1%              83.3%     61.2%         45.24

Correct at all 11 shapes in all three ways. With K split, the strips no longer set the time: at
4100 and 4104 the call reaches 37.8 and 37.7 TFLOP/s, against 41.75 at 4096 (cuBLAS itself
drops to 42.4 and 45.2 TFLOP/s at those sizes). Left: 4095 (K not a multiple of 4) still falls
back to chapter 5's kernel throughout, which loses its vector loads there; the fast kernel
could load A's rows with scalar loads when K % 4 != 0 (cuBLAS loses 6% at 4095).
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


@cuda.jit
def strip_partial(A, B, P, r0, c0, chunk):
    """P[z, r, c] = the products of A[r0 + r, k] * B[k, c0 + c] over k in chunk z: one output
    and one K chunk per thread (a strip is thin: its work is small, its K long)."""
    c, r, z = cuda.grid(3)
    rows, cols = P.shape[1], P.shape[2]
    if r < rows and c < cols and z < P.shape[0]:
        acc = float32(0.0)
        for k in range(z * chunk, min((z + 1) * chunk, A.shape[1])):
            acc += A[r0 + r, k] * B[k, c0 + c]
        P[z, r, c] = acc


@cuda.jit
def sum_partials(P, C, r0, c0):
    """C[r0 + r, c0 + c] = the sum over z of P[z, r, c], in z order (deterministic)."""
    c, r = cuda.grid(2)
    if r < P.shape[1] and c < P.shape[2]:
        acc = float32(0.0)
        for z in range(P.shape[0]):
            acc += P[z, r, c]
        C[r0 + r, c0 + c] = acc


SPLITS = 16
_PARTIALS = {}


def split_strip(A, B, C, r0, c0, rows, cols, stream):
    """C[r0:r0+rows, c0:c0+cols] = A[r0:r0+rows] @ B[:, c0:c0+cols], K split SPLITS ways."""
    K = A.shape[1]
    chunk = (K + SPLITS - 1) // SPLITS
    key = (r0, c0, rows, cols)  # each strip its own buffer: they run in separate streams
    if key not in _PARTIALS:
        _PARTIALS[key] = cuda.device_array((SPLITS, rows, cols), np.float32)
    P = _PARTIALS[key]
    bx = 32 if cols >= 32 else cols
    by = max(1, 256 // bx)
    strip_partial[((cols + bx - 1) // bx, (rows + by - 1) // by, SPLITS), (bx, by, 1), stream](
        A, B, P, r0, c0, chunk)
    sum_partials[((cols + bx - 1) // bx, (rows + by - 1) // by), (bx, by), stream](P, C, r0, c0)


def general(A, B, C, stream=0):
    M, N = C.shape
    GENERAL[((N + BN - 1) // BN, (M + BM - 1) // BM), 256, stream](A, B, C)


_STREAMS = []


def matmul_any(A, B, C, concurrent=False, split=False):
    """``concurrent``: each strip in a stream of its own, launched first, so that their few
    blocks run beside the fast kernel's instead of after them (all are blocking streams: the
    legacy default stream waits for them)."""
    M, K = A.shape
    N = B.shape[1]
    mi_, ni_, ki_ = M // BM * BM, N // BN * BN, K // BK * BK
    if K % 4 or N % 4 or not (mi_ and ni_ and ki_):
        general(A, B, C)
        return
    concurrent = concurrent or split
    if concurrent and not _STREAMS:
        _STREAMS.extend([cuda.stream(), cuda.stream(), cuda.stream()])
    main, right, bottom = _STREAMS if concurrent else (0, 0, 0)
    if concurrent and not split:  # each strip in its own stream: one after the other they
        if ni_ < N:  # took as long as the fast kernel each (a strip block does all of K on the
            general(A, B[:, ni_:], C[:, ni_:], right)  # guarded path)
        if mi_ < M:
            general(A[mi_:], B[:, :ni_], C[mi_:, :ni_], bottom)
    FAST[(ni_ // BN, mi_ // BM), 256, main](A, B, C)
    if split:  # the strips with K split, launched after the fast kernel, beside it
        if ni_ < N:
            split_strip(A, B, C, 0, ni_, M, N - ni_, right)
        if mi_ < M:
            split_strip(A, B, C, mi_, 0, M - mi_, ni_, bottom)
    if ki_ < K:
        add_k_tail[((ni_ + 31) // 32, (mi_ + 7) // 8), (32, 8), main](A, B, C, mi_, ni_, ki_)
    if not concurrent and not split:
        if ni_ < N:
            general(A, B[:, ni_:], C[:, ni_:])
        if mi_ < M:
            general(A[mi_:], B[:, :ni_], C[mi_:, :ni_])


def check(M, N, K, concurrent=False, split=False):
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a = (rng.random((M, K), dtype=np.float32) - 0.5)
    b = (rng.random((K, N), dtype=np.float32) - 0.5)
    dA, dB = cuda.to_device(a), cuda.to_device(b)
    dC = cuda.to_device(np.full((M, N), np.nan, np.float32))
    matmul_any(dA, dB, dC, concurrent, split)
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
        for concurrent, split in ((False, False), (True, False), (True, True)):
            ok, err = check(*shape, concurrent, split)
            print(f"{shape} concurrent={concurrent} split={split}: {'ok' if ok else 'WRONG'} "
                  f"(max rel error {err:.1e})", flush=True)
            if not ok:
                bad.append((shape, concurrent, split))
    for n in (4096, 4095, 4100, 4104):
        dA, dB, dC = mm.device_operands(n, n, n)
        t_any = bench.time_kernel(lambda a=dA, b=dB, c=dC: matmul_any(a, b, c), warmup=1, min_repeat=10,
                                  min_time=0.3)
        t_con = bench.time_kernel(lambda a=dA, b=dB, c=dC: matmul_any(a, b, c, True), warmup=1,
                                  min_repeat=10, min_time=0.3)
        t_split = bench.time_kernel(lambda a=dA, b=dB, c=dC: matmul_any(a, b, c, True, True),
                                    warmup=1, min_repeat=10, min_time=0.3)
        t_gen = bench.time_kernel(lambda a=dA, b=dB, c=dC: general(a, b, c), warmup=1, min_repeat=10,
                                  min_time=0.3)
        cub = bench.measure_cublas_sgemm(n)
        f = mm.flops(n, n, n)
        print(f"n={n}: any-size {bench.tflops(f, t_any.median_ms):.2f} TFLOP/s = "
              f"{100 * cub.median_ms / t_any.median_ms:.1f}% of cuBLAS, strips beside it "
              f"{100 * cub.median_ms / t_con.median_ms:.1f}%, K split "
              f"{100 * cub.median_ms / t_split.median_ms:.1f}%; chapter 5's kernel "
              f"{100 * cub.median_ms / t_gen.median_ms:.1f}%; cuBLAS "
              f"{bench.tflops(f, cub.median_ms):.2f} TFLOP/s", flush=True)
    if bad:
        sys.exit(f"wrong at {bad}")


if __name__ == "__main__":
    main()
