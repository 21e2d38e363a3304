"""Exploration for issue 18's matmul target (best matmul >= 80% of cuBLAS at 4096^3): not part
of the course yet. A copy of chapter 5's double-buffered 128x128x8 8x8 kernel's interior path,
rewritten so that per-tile work is small: per-thread load offsets computed once before the tile
loop, no load guards and no edge path in the kernel (sizes must be multiples of the tiles), and
index arithmetic in a chosen integer type ``U``; ``make_fast``'s flags put chapter 5's features
back one at a time. Run on a GPU from the repository root:

    PYTHONPATH=src python3 tools/explore/matmul_index.py out.json

First run, NVIDIA H100 80GB HBM3, 2026-11-27, numba-cuda 0.30.4, one run, cuBLAS 51.64 TFLOP/s;
chapter 5's best ("regtile double-buffered 128x128x8 8x8 unroll2") 70.0% of cuBLAS in the same run:

    index type, BK, shared padding      % of cuBLAS   registers   SASS lines (whole kernel)
    uint32, 8, none                     80.8          122         344
    uint32, 8, 4 floats                 81.3          122         344
    int64,  8, none                     79.3          124         424
    int64,  8, 4 floats                 79.1          124         424
    int32,  8, none                     70.5          123         408
    uint32, 16, 4 floats                80.2          126         376

Nsight Compute on the uint32 / int64 kernels (BK 8, padding 4): 80.2% / 78.0% of the warp
instructions are FFMAs (chapter 5's best: 70.3%), a scheduler issues in 80.9% of cycles (79%),
shared-store bank conflicts 0.66 M (17.1 M): profiling_matmul_issue's bound, FFMA share x issue
rate, predicts 64.9% of the FP32 peak for uint32, and the run measured 62.8%.

So most of the gain comes from the restructuring (int64 already 79%), unsigned arithmetic adds
about 1.5 points (no sign fix-ups in // and %), and int32 loses it all (Numba widens every
int32 operation to int64 with sign extensions).

Second run, the ablation: NVIDIA H200, 2026-11-27, numba-cuda 0.30.4, one run, cuBLAS 50.58
TFLOP/s (51.36 again at the end); chapter 5's best 71.1% of cuBLAS in the same run. Each row puts
back one of chapter 5's features into the fast kernel (BK 8, no padding):

    index   hoisted  guards  edge path   % of cuBLAS   registers   SASS lines / FFMA
    uint32  yes      no      no          82.4          122          344 / 128
    uint32  no       no      no          82.1          120          344 / 128
    uint32  yes      yes     no          81.1          124          352 / 128
    uint32  yes      no      yes         76.6          122         1184 / 192
    uint32  no       yes     yes         75.1          124         1200 / 192
    int64   yes      no      no          80.9          124          424 / 128
    int64   no       no      no          81.2          124          424 / 128
    int64   yes      yes     no          80.0          124          432 / 128
    int64   yes      no      yes         75.6          127         2440 / 192
    int64   no       yes     yes         62.3          166         2424 / 192

Hoisting the offsets does nothing (ptxas hoists them itself); the always-true guards cost about
a point; the edge path inside the kernel (the interior test, the guarded scalar tiles, the
guarded store: never taken at 4096) costs about six points on its own, and with int64 and
guards the kernel grows to 166 registers and falls to 62%. So the rung to build: the fast
kernel for the interior blocks only, with unsigned indices, and the edge blocks (and a partial
last k-tile) in a second kernel or launch, so that no code for them sits in the fast kernel.
Not yet measured: whether the edge path costs through code size (instruction cache), through
the interior test's uniform branch around the loop, or through the scheduling ptxas chooses.
"""
import collections
import json
import re
import sys

import numba
import numpy as np
from numba import cuda, float32

from gpuperf.kernels import coarsening as co
from gpuperf.kernels import matmul as mm
from gpuperf.vector import load4, store4

U = np.uint32


def make_fast(bm=128, bn=128, bk=8, tm=8, tn=8, k_steps=2, max_registers=None, pad=0, U=np.uint32,
              hoist=True, guards=False, edge=False):
    """``hoist``: per-thread load offsets computed once before the tile loop (False: in every
    tile, as chapter 5 does). ``guards``: chapter 5's ``if idx < a_total`` around each vector
    load and store (always true here). ``edge``: chapter 5's edge path in the kernel (the
    interior test, the guarded scalar tiles after the fast loop, the guarded store), never
    taken at multiples of the tiles."""
    threads = (bm // tm) * (bn // tn)
    row_groups, col_groups = tm // 4, tn // 4
    a_vec_row, b_vec_row = bk // 4, bn // 4
    a_total, b_total = bm * bk // 4, bk * bn // 4
    assert a_total % threads == 0 and b_total % threads == 0
    a_vecs, b_vecs = a_total // threads, b_total // threads
    n_acc = tm * tn
    COLS, AVR, BVR = U(bn // tn), U(a_vec_row), U(b_vec_row)
    THR, BM, BN, BK = U(threads), U(bm), U(bn), U(bk)
    RS, CS, FOUR = U(bm // row_groups), U(bn // col_groups), U(4)
    IDX = numba.from_dtype(np.dtype(U))
    a_shape, b_shape = (2 * bk, bm + pad), (2 * bk, bn)
    pa_n, pb_n = 4 * a_vecs, 4 * b_vecs
    jit = cuda.jit(max_registers=max_registers) if max_registers else cuda.jit

    @jit
    def fast(A, B, C):
        As = cuda.shared.array(a_shape, float32)
        Bs = cuda.shared.array(b_shape, float32)
        acc = cuda.local.array(n_acc, float32)
        ra = cuda.local.array(tm, float32)
        rb = cuda.local.array(tn, float32)
        pa = cuda.local.array(pa_n, float32)
        pb = cuda.local.array(pb_n, float32)
        ar = cuda.local.array(a_vecs, IDX)
        ac = cuda.local.array(a_vecs, IDX)
        br = cuda.local.array(b_vecs, IDX)
        bc = cuda.local.array(b_vecs, IDX)
        tid = U(cuda.threadIdx.x)
        row_t = (tid // COLS) * FOUR
        col_t = (tid % COLS) * FOUR
        row0 = U(cuda.blockIdx.y) * BM
        col0 = U(cuda.blockIdx.x) * BN
        for l in range(a_vecs):
            idx = tid + U(l) * THR
            ar[l] = idx // AVR
            ac[l] = (idx % AVR) * FOUR
        for l in range(b_vecs):
            idx = tid + U(l) * THR
            br[l] = idx // BVR
            bc[l] = (idx % BVR) * FOUR
        for i in range(n_acc):
            acc[i] = float32(0.0)
        M, K = A.shape
        N = B.shape[1]
        if edge:
            interior = (row0 + BM <= U(M) and col0 + BN <= U(N) and K % 4 == 0
                        and N % 4 == 0)
            n_tiles = U(K) // BK if interior else U(0)
        else:
            interior = True
            n_tiles = U(K) // BK
        t = U(0)
        while t <= n_tiles:
            if t < n_tiles:
                k1 = t * BK
                for l in range(a_vecs):
                    idx = tid + U(l) * THR
                    if not guards or idx < U(a_total):
                        if hoist:
                            v0, v1, v2, v3 = load4(A, row0 + ar[l], k1 + ac[l])
                        else:
                            v0, v1, v2, v3 = load4(A, row0 + idx // AVR, k1 + (idx % AVR) * FOUR)
                        pa[4 * l] = v0
                        pa[4 * l + 1] = v1
                        pa[4 * l + 2] = v2
                        pa[4 * l + 3] = v3
                for l in range(b_vecs):
                    idx = tid + U(l) * THR
                    if not guards or idx < U(b_total):
                        if hoist:
                            v0, v1, v2, v3 = load4(B, k1 + br[l], col0 + bc[l])
                        else:
                            v0, v1, v2, v3 = load4(B, k1 + idx // BVR, col0 + (idx % BVR) * FOUR)
                        pb[4 * l] = v0
                        pb[4 * l + 1] = v1
                        pb[4 * l + 2] = v2
                        pb[4 * l + 3] = v3
            if t > U(0):
                base = ((t - U(1)) & U(1)) * BK
                for k0 in range(0, bk, k_steps):
                    for s in range(k_steps):
                        kk = base + U(k0 + s)
                        for g in range(row_groups):
                            a0, a1, a2, a3 = load4(As, kk, U(g) * RS + row_t)
                            ra[4 * g] = a0
                            ra[4 * g + 1] = a1
                            ra[4 * g + 2] = a2
                            ra[4 * g + 3] = a3
                        for h in range(col_groups):
                            b0, b1, b2, b3 = load4(Bs, kk, U(h) * CS + col_t)
                            rb[4 * h] = b0
                            rb[4 * h + 1] = b1
                            rb[4 * h + 2] = b2
                            rb[4 * h + 3] = b3
                        for i in range(tm):
                            for j in range(tn):
                                acc[i * tn + j] += ra[i] * rb[j]
            if t < n_tiles:
                base = (t & U(1)) * BK
                for l in range(a_vecs):
                    idx = tid + U(l) * THR
                    if not guards or idx < U(a_total):
                        if hoist:
                            r, c = ar[l], ac[l]
                        else:
                            r, c = idx // AVR, (idx % AVR) * FOUR
                        for q in range(4):
                            As[base + c + U(q), r] = pa[4 * l + q]
                for l in range(b_vecs):
                    idx = tid + U(l) * THR
                    if not guards or idx < U(b_total):
                        if hoist:
                            r, c = br[l], bc[l]
                        else:
                            r, c = idx // BVR, (idx % BVR) * FOUR
                        store4(Bs, base + r, c, pb[4 * l], pb[4 * l + 1], pb[4 * l + 2],
                               pb[4 * l + 3])
                cuda.syncthreads()
            t += U(1)
        if edge:  # chapter 5's edge path: never taken at multiples of the tiles
            for te in range(int(n_tiles), (K + bk - 1) // bk):
                k0 = te * bk
                cuda.syncthreads()
                for l in range(bm * bk // threads):
                    idx = int(tid) + l * threads
                    r = idx // bk
                    c = idx % bk
                    As[c, r] = A[row0 + r, k0 + c] if row0 + r < M and k0 + c < K else float32(0.0)
                for l in range(bk * bn // threads):
                    idx = int(tid) + l * threads
                    r = idx // bn
                    c = idx % bn
                    Bs[r, c] = B[k0 + r, col0 + c] if k0 + r < K and col0 + c < N else float32(0.0)
                cuda.syncthreads()
                for kk in range(bk):
                    for g in range(row_groups):
                        a0, a1, a2, a3 = load4(As, kk, U(g) * RS + row_t)
                        ra[4 * g] = a0
                        ra[4 * g + 1] = a1
                        ra[4 * g + 2] = a2
                        ra[4 * g + 3] = a3
                    for h in range(col_groups):
                        b0, b1, b2, b3 = load4(Bs, kk, U(h) * CS + col_t)
                        rb[4 * h] = b0
                        rb[4 * h + 1] = b1
                        rb[4 * h + 2] = b2
                        rb[4 * h + 3] = b3
                    for i in range(tm):
                        for j in range(tn):
                            acc[i * tn + j] += ra[i] * rb[j]
        for i in range(tm):
            r = row0 + U(i // 4) * RS + row_t + U(i % 4)
            for h in range(col_groups):
                c = col0 + U(h) * CS + col_t
                b = i * tn + 4 * h
                if interior:
                    store4(C, r, c, acc[b], acc[b + 1], acc[b + 2], acc[b + 3])
                else:
                    for q in range(4):
                        if r < U(M) and c + U(q) < U(N):
                            C[r, c + U(q)] = acc[b + q]

    return fast


def sass_mix(kernel):
    sass = kernel.inspect_sass()
    if isinstance(sass, dict):
        sass = list(sass.values())[0]
    ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", sass)]
    c = collections.Counter(ops)
    return len(ops), c["FFMA"], c.most_common(8)


def main(out):
    n = 4096
    results = {}
    cub = mm.measure_cublas(n)["tflops"]
    base = co.regtile_variant(128, 128, 8, 8, 8, prefetch=True, double=True, k_steps=2)
    results["baseline"] = mm.measure_variant(base, n, min_repeat=10, min_time=0.3)["tflops"]
    print(f"cuBLAS {cub:.2f}  baseline {results['baseline']:.2f} ({100*results['baseline']/cub:.1f}%)", flush=True)
    configs = [dict(U=np.uint32), dict(U=np.int64)]  # the first run's two best, then one
    for ut in (np.uint32, np.int64):                  # change of chapter 5's back at a time
        configs += [dict(U=ut, hoist=False), dict(U=ut, guards=True), dict(U=ut, edge=True),
                    dict(U=ut, hoist=False, guards=True, edge=True)]
    for cfg in configs:
        cfg = {"U": np.uint32, "hoist": True, "guards": False, "edge": False, **cfg}
        name = (f"{cfg['U'].__name__} hoist={cfg['hoist']} guards={cfg['guards']} "
                f"edge={cfg['edge']}")
        try:
            k = make_fast(128, 128, 8, 8, 8, 2, **cfg)
            v = mm.Variant(name, k, (256,), lambda M, N: (N // 128, M // 128), "block", (128, 128))
            for m_ in (512, 1024):
                dA, dB, dC = mm.device_operands(m_, m_, m_)
                v.launch(dA, dB, dC)
                want = dA.copy_to_host().astype(np.float64) @ dB.copy_to_host().astype(np.float64)
                err = np.abs(dC.copy_to_host() - want).max() / np.abs(want).max()
                assert err < 1e-4, (m_, err)
            tf = mm.measure_variant(v, n, min_repeat=10, min_time=0.3)["tflops"]
            try:
                regs = list(k.get_regs_per_thread().values())[0]
            except Exception:
                regs = None
            try:
                total, ffma, top = sass_mix(k)
            except Exception as e:
                total = ffma = top = repr(e)[:80]
            results[name] = {"tflops": tf, "pct_cublas": 100 * tf / cub, "regs": regs,
                             "sass_total": total, "sass_ffma": ffma, "top": top}
            print(f"{name}: {tf:.2f} TFLOP/s = {100*tf/cub:.1f}% of cuBLAS, regs {regs}, "
                  f"SASS {total} instr / {ffma} FFMA {top}", flush=True)
        except Exception as e:
            results[name] = {"error": repr(e)[:300]}
            print(name, "ERROR", repr(e)[:300], flush=True)
    results["cublas_again"] = mm.measure_cublas(n)["tflops"]
    print("cuBLAS again", round(results["cublas_again"], 2))
    json.dump(results, open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
