"""Chapter "Thread coarsening": coarsened and register-tiled kernels, checkers (simulator)."""

import numpy as np
import pytest
from numba import cuda, float32

import gpuperf as gp
from gpuperf import exercises as ex

mm = gp.matmul
co = gp.coarsening


def _check(v, M, K, N, seed=5):
    A = ex.random_array((M, K), seed)
    B = ex.random_array((K, N), seed + 1)
    out = ex.poisoned((M, N))
    got = mm.run_variant(v, A, B, out)
    assert not np.isnan(got).any(), f"{v.name}: unwritten outputs at {M}x{K}x{N}"
    ref = A.astype(np.float64) @ B.astype(np.float64)
    err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert err < 1e-5, f"{v.name}: relative error {err:.2e} at {M}x{K}x{N}"


# 33x47x29 (nothing a multiple of anything), sizes where every block is interior and K a
# multiple of 4 (the vector fast path), and a partial last k-tile after fast ones.
SIZES = [(33, 47, 29), (32, 48, 32), (40, 20, 36)]


@pytest.mark.parametrize("M,K,N", SIZES)
@pytest.mark.parametrize("tile,factor", [(8, 3), (4, 2)])
def test_coarsened(tile, factor, M, K, N):
    _check(co.coarsened_variant(tile, factor), M, K, N)


# Small register tiles keep simulated blocks to 16 threads; the kernels are the same
# factories the GPU uses with 128 x 128 tiles.
SMALL = [(16, 16, 8, 4, 4), (32, 16, 4, 8, 4)]


@pytest.mark.parametrize("M,K,N", SIZES)
@pytest.mark.parametrize("cfg", SMALL, ids=str)
@pytest.mark.parametrize("kind", ["scalar", "vectorized", "pipelined"])
def test_register_tiling(kind, cfg, M, K, N):
    _check(co.regtile_variant(*cfg, vectorized=kind != "scalar", prefetch=kind == "pipelined"),
           M, K, N)


def test_register_tiling_partial_vector_loads():
    # 16 x 8 tiles of A: 32 float4s for 64 threads, so half the threads skip their load
    _check(co.regtile_variant(16, 32, 8, 4, 4, prefetch=True), 32, 24, 64)


def test_vector_add_every_factor():
    x, y = ex.random_array(1000, 1), ex.random_array(1000, 2)
    for f in (1, 3, 4):
        out = ex.poisoned(1000)
        co.vector_add(x, y, out, factor=f, block=64)
        np.testing.assert_allclose(out, x.astype(np.float64) + y, rtol=1e-6)


@pytest.mark.parametrize("call,err,words", [
    (lambda: co.make_regtile(128, 128, 8, 6, 8), ValueError, "divide"),
    (lambda: co.make_regtile(256, 256, 8, 4, 4), ValueError, "1024"),
    (lambda: co.make_regtile(128, 128, 6, 8, 8), ValueError, "multiples of 4"),
    (lambda: co.make_regtile(128, 128, 64, 8, 8), ValueError, "48 KiB"),
    (lambda: co.make_coarsened(32, 0), ValueError, "factor"),
    (lambda: co.variant("warp_tiling"), ValueError, "regtile"),
    (lambda: co.regtile_variant(vectorized=False, prefetch=True), ValueError, "vectorized"),
    (lambda: co.vector_add(np.ones(4, np.float32), np.ones(5, np.float32)), ValueError,
     "same shape"),
])
def test_bad_parameters_are_explained(call, err, words):
    with pytest.raises(err, match=words):
        call()


def test_wrapper_defaults_to_the_fastest_kernel():
    A, B = ex.random_array((20, 12), 1), ex.random_array((12, 24), 2)
    got = co.matmul(A, B, version="regtile_pipelined", bm=16, bn=16, bk=4, tm=4, tn=4)
    np.testing.assert_allclose(got, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def make_coarsened_rows(tile, factor):
    """The exercise's answer: coarsened along the rows, B's tile reused for `factor` A tiles."""
    shape = (tile, tile)

    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        acc = cuda.local.array(factor, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        col = cuda.blockIdx.x * tile + tx
        row_start = cuda.blockIdx.y * tile * factor + ty
        M, K = A.shape
        N = B.shape[1]
        for c in range(factor):
            acc[c] = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + ty
            sB[ty, tx] = B[kk, col] if kk < K and col < N else float32(0.0)
            for c in range(factor):
                row = row_start + c * tile
                kk = t * tile + tx
                sA[ty, tx] = A[row, kk] if row < M and kk < K else float32(0.0)
                cuda.syncthreads()
                for n in range(tile):
                    acc[c] += sA[ty, n] * sB[n, tx]
                cuda.syncthreads()
        for c in range(factor):
            row = row_start + c * tile
            if row < M and col < N:
                C[row, col] = acc[c]

    return k


def test_reference_solution_passes(capsys, course_code_as_answer):
    assert co.check_coarsened(co.make_coarsened, tile=4, factor=3)
    assert co.check_coarsened(make_coarsened_rows, tile=4, factor=3, along="rows")
    assert co.check_coarsened(make_coarsened_rows, tile=8, factor=2, along="rows")
    # each checks its own geometry: one kernel is not right for the other
    assert not co.check_coarsened(co.make_coarsened, tile=4, factor=3, along="rows")


def _fake_sweep():
    rows = []
    for n in (1024, 4096):
        for f, tf, bps in ((1, 7.0, 2), (2, 9.0, 2), (4, 11.0, 2), (8, 10.0, 1), (16, 6.0, 1)):
            blocks = -(-n // (32 * f)) * (n // 32)
            rows.append({"tile": 32, "factor": f, "n": n, "tflops": tf if n == 4096 else tf / 2,
                         "blocks_per_sm": bps, "occupancy": bps * 32 / 64, "blocks": blocks})
    return gp.records.Result("matmul_coarsen_sweep", rows, {"gpu": "test"}, "recorded")


def test_best_factor_checker(capsys):
    res = _fake_sweep()
    good = {"best_factor": 4, "blocks_per_sm": 2, "occupancy": 1.0, "blocks_at_1024": 64}
    assert co.check_best_factor(good, res)
    for wrong in ({**good, "best_factor": 8}, {**good, "occupancy": 0.5},
                  {**good, "blocks_at_1024": 1024}, "four"):
        assert not co.check_best_factor(wrong, res)


def test_ladder_is_slowest_first_and_ends_with_register_tiling():
    names = [v.name for v in co.ladder_variants()]
    assert names[0].startswith("naive") and names[-1].startswith("regtile pipelined")


def test_experiments_are_registered():
    names = gp.records.experiments()
    for n in ("matmul_coarsen_sweep", "matmul_vecadd_coarsen", "matmul_regtile_sweep",
              "matmul_resources", "matmul_ladder"):
        assert n in names and names[n].chapter == "coarsening"
