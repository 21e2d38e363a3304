"""Chapter "Shared-memory tiling": kernels, models, the Numba article's bugs, checkers
(simulator)."""

import re

import numpy as np
import pytest
from conftest import load_wrong
from numba import cuda, float32

import gpuperf as gp
from gpuperf import exercises as ex

mm = gp.matmul

# Not multiples of any tile: the brief's 33x47 by 47x29, plus a tall-thin and a 1x1 case.
ODD = [(33, 47, 29), (1, 1, 1), (20, 5, 41)]


def _check(v, M, K, N, seed=3):
    A = ex.random_array((M, K), seed)
    B = ex.random_array((K, N), seed + 1)
    out = ex.poisoned((M, N))
    got = mm.run_variant(v, A, B, out)
    assert got is out
    assert not np.isnan(got).any(), f"{v.name}: unwritten outputs"
    ref = A.astype(np.float64) @ B.astype(np.float64)
    err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert err < 1e-5, f"{v.name}: relative error {err:.2e}"


@pytest.mark.parametrize("M,K,N", ODD)
@pytest.mark.parametrize("version,tile", [("naive_row_x", 32), ("naive_col_x", 32),
                                          ("tiled", 8), ("tiled", 16)])
def test_kernels_match_float64(version, tile, M, K, N):
    _check(mm.variant(version, tile=tile), M, K, N)


def test_tiled_32_one_block_each_way():
    _check(mm.variant("tiled", tile=32), 33, 40, 31)  # 2 x 1 blocks, two k-tiles


def test_matmul_wrapper_numpy_in_numpy_out():
    A, B = ex.random_array((9, 7), 1), ex.random_array((7, 5), 2)
    got = mm.matmul(A, B, version="tiled", tile=4)
    assert isinstance(got, np.ndarray) and got.shape == (9, 5)
    np.testing.assert_allclose(got, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_article_kernel_is_right_only_on_multiples_of_the_tile():
    article = mm.variant("tiled_article", tile=8)
    assert mm.bug_outcome(article, 16, 24, 16)["outcome"] == "correct"
    bad = mm.bug_outcome(article, 17, 23, 9)
    assert bad["outcome"].startswith("raised IndexError")
    # the page's table: the simulator's message whole, never cut inside a number
    text = mm.outcome_text(mm.variant("tiled_article", tile=16), 33, 47, 29)
    assert text.startswith("raised IndexError") and text.endswith("with size 47")


def test_early_return_leaves_tile_holes():
    v = mm.variant("tiled_early_return", tile=8)
    assert mm.bug_outcome(v, 16, 24, 16)["outcome"] == "correct"
    assert mm.bug_outcome(v, 33, 47, 29)["outcome"] != "correct"
    assert mm.bug_outcome(mm.variant("tiled", tile=8), 33, 47, 29)["outcome"] == "correct"


def test_vector_access_refuses_misalignment():
    arr = np.zeros((2, 8), np.float32)
    assert mm.load4(arr, 1, 4) == (0, 0, 0, 0)
    with pytest.raises(ValueError, match="multiples of 4"):
        mm.load4(arr, 0, 2)
    with pytest.raises(ValueError, match="multiples of 4"):
        mm.store4(np.zeros((2, 6), np.float32), 0, 0, 1, 2, 3, 4)


def test_vector_access_checks_the_real_address_under_the_simulator():
    """A view whose start or row pitch is not a multiple of 16 bytes faults on a GPU; the
    simulator's plain-Python 16-byte accesses must refuse it too, not pass it silently."""
    from gpuperf.vector import load4, load_float4, store4, store_float4

    @cuda.jit
    def copy_rows(m, out):
        i = cuda.threadIdx.x
        a, b, c, d = load4(m, i, 0)
        store4(out, i, 0, a, b, c, d)

    @cuda.jit
    def copy_vec(x, out):
        a, b, c, d = load_float4(x, 4 * cuda.threadIdx.x)
        store_float4(out, 4 * cuda.threadIdx.x, (a, b, c, d))

    @cuda.jit
    def via_shared(m, out):
        tile = cuda.shared.array((2, 8), float32)
        i = cuda.threadIdx.x
        tile[i, 0], tile[i, 1], tile[i, 2], tile[i, 3] = load4(m, i, 0)
        cuda.syncthreads()
        a, b, c, d = load4(tile, i, 0)
        store4(out, i, 0, a, b, c, d)

    wide = np.arange(4 * 66, dtype=np.float32).reshape(4, 66)
    d, out = cuda.to_device(wide), cuda.device_array((4, 64), np.float32)
    copy_rows[1, 4](cuda.to_device(np.ascontiguousarray(wide[:, :64])), out)  # fresh: fine
    np.testing.assert_array_equal(out.copy_to_host()[:, :4], wide[:, :4])
    with pytest.raises(ValueError, match=r"\[1, 0\].*264 bytes.*misaligned"):
        copy_rows[1, 2](d[:, :64], out)  # row 0 is aligned, row 1 starts 264 bytes in
    with pytest.raises(ValueError, match="4 bytes into"):
        copy_rows[1, 1](cuda.to_device(np.zeros((1, 12), np.float32))[:, 1:9], out)
    flat = cuda.to_device(np.arange(20, dtype=np.float32))
    res = cuda.device_array(16, np.float32)
    copy_vec[1, 4](flat[4:], res)
    np.testing.assert_array_equal(res.copy_to_host(), np.arange(4, 20, dtype=np.float32))
    with pytest.raises(ValueError, match="8 bytes apart"):
        copy_vec[1, 1](cuda.to_device(np.zeros(16, np.float32))[::2], res)
    small = cuda.to_device(np.arange(16, dtype=np.float32).reshape(2, 8))
    via_shared[1, 2](small, out[:2, :8])  # shared tiles start aligned
    np.testing.assert_array_equal(out.copy_to_host()[:2, :4], np.arange(16).reshape(2, 8)[:, :4])


def test_traffic_model():
    n = 4096
    assert mm.flops(2, 3, 4) == 48
    assert mm.traffic_bytes("naive", n, n, n) == 4.0 * (2 * n**3 + n * n)
    # tile T: intensity close to T/4 FLOP/B for large square matrices
    for t in (8, 16, 32):
        assert mm.intensity("tiled", n, n, n, t) == pytest.approx(t / 4, rel=0.02)
    # coarsening by F loads A F times less often
    assert mm.traffic_bytes("coarsened", n, n, n, 32, 4) < mm.traffic_bytes("tiled", n, n, n, 32)
    assert mm.traffic_bytes("coarsened", n, n, n, 32, 1) == mm.traffic_bytes("tiled", n, n, n, 32)
    assert mm.intensity("block", n, n, n, 128, 128) == pytest.approx(32, rel=0.02)
    assert mm.roofline_bound(8.0, 3000.0, 50.0) == 24.0
    assert mm.roofline_bound(64.0, 3000.0, 50.0) == 50.0
    with pytest.raises(ValueError, match="model='magic'"):
        mm.traffic_bytes("magic", 1, 1, 1)


@pytest.mark.parametrize("call,err,words", [
    (lambda: mm.matmul(np.ones((3, 4), np.float32), np.ones((5, 2), np.float32)), ValueError,
     "columns of A"),
    (lambda: mm.matmul(np.ones((3, 4)), np.ones((4, 2), np.float32)), TypeError, "float32"),
    (lambda: mm.matmul([[1.0]], np.ones((1, 1), np.float32)), TypeError, "NumPy array"),
    (lambda: mm.matmul(np.ones(4, np.float32), np.ones((4, 2), np.float32)), ValueError,
     "2 dimensions"),
    (lambda: mm.matmul(np.ones((4, 4), np.float32).T[:, :2], np.ones((2, 2), np.float32)),
     ValueError, "contiguous"),
    (lambda: mm.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
                       out=np.ones((3, 2), np.float32)), ValueError, "out must have shape"),
    (lambda: mm.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), tile=64),
     ValueError, "tile"),
    (lambda: mm.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
                       version="fast"), ValueError, "naive_row_x"),
])
def test_bad_input_is_explained(call, err, words):
    with pytest.raises(err, match=words):
        call()


def make_tiled_at(tile):
    """The exercise's answer: C = At.T @ B, At's tiles loaded coalesced and turned."""
    padded = (tile, tile + 32 // tile)  # a warp covers 32 // tile rows: no bank conflicts
    shape = (tile, tile)

    @cuda.jit
    def k(At, B, C):
        sA = cuda.shared.array(padded, float32)
        sB = cuda.shared.array(shape, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        K, M = At.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            kk = t * tile + ty
            r = cuda.blockIdx.y * tile + tx
            sA[tx, ty] = At[kk, r] if kk < K and r < M else float32(0.0)
            sB[ty, tx] = B[kk, col] if kk < K and col < N else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k


def test_reference_solutions_pass(capsys, course_code_as_answer):
    assert mm.check_tiled(mm.make_tiled, tile=4)
    assert mm.check_tiled(make_tiled_at, tile=4, a_transposed=True)
    assert mm.check_tiled(make_tiled_at, tile=8, a_transposed=True)
    assert gp.coarsening.check_tile_reuse(
        lambda bm, bn, tm, tn: ((bm // tm) * (bn // tn), bm * bn / (2 * (bm + bn)),
                                tm * tn / (tm + tn)))
    assert mm.check_intensity(
        lambda M, N, K, t, bw, peak: (mm.intensity("tiled", M, N, K, t),
                                      min(peak, bw * mm.intensity("tiled", M, N, K, t) / 1e3)))


@pytest.mark.parametrize("name,mod", load_wrong("matmul"),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_checkers_reject_known_wrong_solutions(name, mod, capsys):
    if name.startswith("tiledat"):
        report = mm.check_tiled(mod.make_kernel, tile=4, a_transposed=True)
    elif name.startswith("tiled"):
        report = mm.check_tiled(mod.make_kernel, tile=4)
    elif name.startswith("tilereuse"):
        report = gp.coarsening.check_tile_reuse(mod.tile_reuse)
    elif name.startswith("gridrounds"):
        report = gp.coarsening.check_grid_rounds(mod.grid_rounds)
    elif name.startswith("intensity"):
        report = mm.check_intensity(mod.intensity_and_bound)
    elif name.startswith("coarsenedrows"):
        report = gp.coarsening.check_coarsened(mod.make_kernel, tile=4, factor=3, along="rows")
    else:
        report = gp.coarsening.check_coarsened(mod.make_kernel, tile=4, factor=3)
    assert not report, f"{name} should be rejected"
    text = capsys.readouterr().out
    assert "Traceback" not in text and "\u2717" in text


def test_figures_draw():
    import matplotlib

    matplotlib.use("Agg")
    assert mm.draw_mappings().axes and mm.draw_tiling().axes


def test_experiments_are_registered():
    names = gp.records.experiments()
    for n in ("matmul_naive_vs_tiled", "matmul_tile_sweep", "matmul_roofline", "matmul_article_bugs"):
        assert n in names and names[n].chapter == "tiling"


def test_untouched_stubs_get_one_line_not_a_traceback(capsys):
    """A student copy's stub (`raise NotImplementedError()`) gets 'not implemented yet' and
    nothing else: no AttributeError from the source checks that follow."""
    from gpuperf.kernels import coarsening as co_

    def make_my_tiled(tile):
        raise NotImplementedError()

    def make_my_coarsened(tile, factor):
        raise NotImplementedError()

    for report in (mm.check_tiled(make_my_tiled, tile=4),
                   co_.check_coarsened(make_my_coarsened, tile=4, factor=2)):
        assert not report
        assert len(report.failed) == 1
        assert "not implemented yet" in report.failed[0][1]


def test_a_16_by_16_block_puts_two_rows_of_16_threads_in_a_warp():
    assert mm.warp_threads((16, 16)) == [(x, y) for y in (0, 1) for x in range(16)]
    assert mm.warp_threads((32, 8), warp=3) == [(x, 3) for x in range(32)]
    assert mm.warp_threads((8, 2)) == [(x, y) for y in (0, 1) for x in range(8)]  # a partial warp
    with pytest.raises(ValueError, match="1024"):
        mm.warp_threads((64, 32))
    with pytest.raises(ValueError, match="warp"):
        mm.warp_threads((16, 16), warp=8)


def test_traced_sectors_of_the_naive_mappings():
    # (16, 16) blocks: a warp spans 16 rows and 2 columns (row from x) or 2 rows and 16
    # columns (col from x): 16 + 1 sectors per k against 2 + 2, about 4 to 1, not 32 to 1.
    rows = {(r["kernel"], r["array"], r["kind"]): r["sectors_per_request"]
            for r in mm.warp_sectors((16, 16), n=32)}
    assert rows[("naive_row_x", "A", "load")] == 16 and rows[("naive_row_x", "B", "load")] == 1
    assert rows[("naive_col_x", "A", "load")] == 2 and rows[("naive_col_x", "B", "load")] == 2
    assert rows[("naive_row_x", "C", "store")] == 16 and rows[("naive_col_x", "C", "store")] == 4
    with pytest.raises(ValueError, match="n"):
        mm.warp_sectors((16, 16), n=0)


@pytest.mark.parametrize("path", [p for p in gp.records.available()
                                  if "matmul_regtile_sweep" in gp.records.load(p)["experiments"]],
                         ids=lambda p: p.stem)
def test_tile_reuse_predictions_are_set_beside_every_swept_configuration(path, capsys):
    res = gp.records.recorded("matmul_regtile_sweep", path=path)

    def tile_reuse(bm, bn, tm, tn):
        return (bm // tm) * (bn // tn), bm * bn / (2 * (bm + bn)), tm * tn / (tm + tn)

    rows = gp.coarsening.compare_tile_reuse(tile_reuse, res)
    configs = {(r["bm"], r["bn"], r["tm"], r["tn"]) for r in res.rows}
    assert len(rows) == len(configs)
    out = capsys.readouterr().out
    # What the chapter says: the count is printed per form, and the vectorized and pipelined
    # forms follow reuse in every pair on the recorded GPUs, the scalar form does not.
    for kind in res.values("kind"):
        assert f"{kind}: more multiply-adds per value read was also faster in" in out
    assert "pipelined: more multiply-adds per value read was also faster in 3 of 3" in out
    assert "scalar: more multiply-adds per value read was also faster in 3 of 3" not in out


@pytest.mark.parametrize("answer,err,words", [
    (lambda bm, bn, tm, tn: 64, TypeError, "return three numbers"),
    (lambda bm, bn, tm, tn: (64.5, 1.0, 2.0), ValueError, "threads = 64.5"),
    (lambda bm, bn, tm, tn: ("64", 1.0, 2.0), ValueError, "threads = '64'"),
    (lambda bm, bn, tm, tn: (64, float("nan"), 2.0), ValueError, "FLOP per byte = nan"),
    (lambda bm, bn, tm, tn: (64, 1.0, None), ValueError, "multiply-adds per value read = None"),
])
def test_tile_reuse_comparison_names_an_answer_it_cannot_use(answer, err, words):
    """compare_tile_reuse validates the answer itself (it may run before the checker passes)."""
    res = gp.records.recorded("matmul_regtile_sweep")
    with pytest.raises(err, match=re.escape(words)):
        gp.coarsening.compare_tile_reuse(answer, res)
    # A float thread count that is whole is accepted, as are NumPy numbers.
    rows = gp.coarsening.compare_tile_reuse(lambda bm, bn, tm, tn: (
        float((bm // tm) * (bn // tn)), np.float32(1.0), np.int64(2)), res)
    assert all(isinstance(r["threads"], int) for r in rows)
