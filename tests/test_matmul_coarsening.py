"""Chapter "Thread coarsening": coarsened and register-tiled kernels, checkers (simulator)."""

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import load_answer, record_paths_with
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


@pytest.mark.parametrize("M,K,N", SIZES + [(32, 40, 32), (48, 17, 40)])
@pytest.mark.parametrize("cfg", SMALL, ids=str)
def test_double_buffered_register_tiling(cfg, M, K, N):
    # 32x40x32 with BK 8: five fast k-tiles, both buffers used twice or more; 48x17x40: edge
    # blocks only (K not a multiple of 4) and a partial k-tile.
    _check(co.regtile_variant(*cfg, prefetch=True, double=True), M, K, N)


# Warp tiles at simulator sizes: 32x32 blocks of 4x4 thread tiles are 64 threads, two warps
# of 8x4 (or 4x8) lanes; 64x32 blocks are four warps.
WARPED = [((32, 32, 8, 4, 4), (32, 16)), ((32, 32, 8, 4, 4), (16, 32)),
          ((64, 32, 8, 4, 4), (32, 16))]


@pytest.mark.parametrize("M,K,N", [(64, 40, 64), (70, 24, 36), (33, 47, 29)])
@pytest.mark.parametrize("cfg,warp_tile", WARPED, ids=str)
@pytest.mark.parametrize("k_steps", [1, 2])
def test_warp_tiles_and_k_steps_compute_the_same_product(cfg, warp_tile, k_steps, M, K, N):
    # 64x40x64: interior blocks only, five fast k-tiles; 70x24x36: interior and edge blocks;
    # 33x47x29: edge blocks only, a partial k-tile.
    _check(co.regtile_variant(*cfg, prefetch=True, double=True, k_steps=k_steps,
                              warp_tile=warp_tile), M, K, N)


def test_k_steps_alone_compute_the_same_product():
    _check(co.regtile_variant(16, 16, 8, 4, 4, prefetch=True, double=True, k_steps=2), 32, 40, 32)


@pytest.mark.parametrize("M,K,N", [(128, 24, 64), (130, 16, 70)])
@pytest.mark.parametrize("k_steps", [1, 2])
def test_warp_tiles_of_8x8_thread_tiles(k_steps, M, K, N):
    # 8x8 thread tiles are two 4-wide groups each way, so the warp tile's strides between a
    # thread's groups (32 rows, 16 columns here) are exercised, as on the GPU's 128x128 kernel.
    _check(co.regtile_variant(128, 64, 8, 8, 8, prefetch=True, double=True, k_steps=k_steps,
                              warp_tile=(64, 32)), M, K, N)


def test_warp_tile_takes_numpy_ints():
    v = co.regtile_variant(32, 32, 8, 4, 4, prefetch=True, double=True,
                           warp_tile=(np.int64(32), np.int64(16)))
    assert v.name.endswith("warp32x16")


def test_each_warp_tile_lane_owns_distinct_outputs():
    # Every output of a 64x32 block written exactly once: C starts at NaN, and a kernel in which
    # two lanes owned one output (and some output none) would leave a NaN or a wrong value.
    v = co.regtile_variant(64, 32, 8, 4, 4, prefetch=True, double=True, warp_tile=(32, 16))
    A, B = ex.random_array((64, 16), 3), ex.random_array((16, 32), 4)
    C = np.full((64, 32), np.nan, np.float32)
    v.launch(A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kwargs,err,word", [
    (dict(k_steps=3), ValueError, "k_steps"),
    (dict(k_steps=4), ValueError, "k_steps"),
    (dict(k_steps=0), ValueError, "k_steps"),
    (dict(warp_tile=(64, 64)), ValueError, "must be 32"),
    (dict(warp_tile=(60, 32)), ValueError, "divide the block tile"),
    (dict(warp_tile=[64, 32]), TypeError, "warp_tile"),
    (dict(warp_tile=(64,)), TypeError, "warp_tile"),
])
def test_k_steps_and_warp_tile_are_checked(kwargs, err, word):
    with pytest.raises(err, match=word):
        co.regtile_variant(prefetch=True, double=True, **kwargs)


def test_k_steps_and_warp_tile_belong_to_the_double_buffered_kernel():
    with pytest.raises(ValueError, match="double=True"):
        co.regtile_variant(prefetch=True, k_steps=2)
    with pytest.raises(ValueError, match="double=True"):
        co.regtile_variant(prefetch=True, warp_tile=(64, 32))
    v = co.variant("regtile_double", k_steps=2, warp_tile=(64, 32))
    assert v.name == "regtile double-buffered 128x128x8 8x8 warp64x32 unroll2"
    with pytest.raises(ValueError, match="k_steps"):
        co.variant("regtile_pipelined", k_steps=2)


def test_register_caps_leave_the_results_alone():
    # The simulator ignores the cap (there are no registers to cap); the kernels are built
    # by the same factories with the cap as on a GPU.
    _check(co.coarsened_variant(4, 3, max_registers=32), 33, 47, 29)
    _check(co.regtile_variant(16, 16, 8, 4, 4, prefetch=True, double=True, max_registers=128),
           33, 47, 29)
    assert co.coarsened_variant(4, 3, max_registers=32).name == "coarsened 4x3 cap32"


def test_double_buffering_needs_the_pipelined_kernel():
    with pytest.raises(ValueError, match="double"):
        co.regtile_variant(double=True, prefetch=False)
    with pytest.raises(ValueError, match="shared memory"):
        co.make_regtile_double(128, 128, 32, 8, 8)  # two 32 KiB buffers: over 48 KiB
    assert co.variant("regtile_double", bk=16).name == "regtile double-buffered 128x128x16 8x8"


@pytest.mark.parametrize("version", ["regtile", "regtile_pipelined", "regtile_double"])
def test_an_offset_view_is_refused_by_the_16_byte_kernels(version):
    # A C-contiguous view that starts 4 bytes into its allocation has the shape the vector path
    # accepts (K and N multiples of 4), but its 16-byte loads would fault on a GPU.
    flat = cuda.to_device(np.ones(16 * 16 + 4, np.float32))
    B = cuda.to_device(np.ones((16, 16), np.float32))
    kw = dict(bm=16, bn=16, bk=4, tm=4, tn=4)
    with pytest.raises(ValueError, match="A starts 4 bytes past a 16-byte boundary"):
        gp.coarsening.matmul(flat[1:257].reshape(16, 16), B, version=version, **kw)
    with pytest.raises(ValueError, match="B starts 4 bytes past"):
        gp.coarsening.matmul(B, flat[1:257].reshape(16, 16), version=version, **kw)
    aligned = flat[4:4 + 256].reshape(16, 16)  # 16 bytes in: allowed
    got = gp.coarsening.matmul(aligned, B, version=version, **kw).copy_to_host()
    np.testing.assert_allclose(got, np.full((16, 16), 16.0))
    # The scalar kernel loads 4 bytes at a time, so the same view is fine there.
    got = gp.coarsening.matmul(flat[1:257].reshape(16, 16), B, version="regtile_scalar",
                               **kw).copy_to_host()
    np.testing.assert_allclose(got, np.full((16, 16), 16.0))


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


def _reads(**wrong):
    """A read_sweep that reads the sweep right, except where ``wrong`` says how."""
    def read_sweep(sweep):
        tile, n = wrong.get("tile", 32), wrong.get("n", 4096)
        best = max(sweep.select(tile=tile, n=n), key=lambda r: r["tflops"])
        got = {"best_factor": best["factor"], "blocks_per_sm": best["blocks_per_sm"],
               "occupancy": best["occupancy"],
               "blocks_per_sm_above": {r["factor"]: r["blocks_per_sm"]
                                       for r in sweep.select(tile=tile, n=n)
                                       if r["factor"] > best["factor"]},
               "blocks_at_1024": sweep.one(tile=32, n=1024, factor=16)["blocks"]}
        got.update(wrong.get("values", {}))
        return got
    return read_sweep


def test_best_factor_checker(capsys):
    res = _fake_sweep()
    assert co.check_best_factor(_reads(), res)
    assert co.check_best_factor(_reads())  # the recorded sweep
    # Right on this sweep (the fastest factor is the same at both sizes) but read at the wrong
    # size: another GPU's sweep tells them apart.
    assert co.check_best_factor(_reads(n=1024), res).failed
    for wrong in ({"best_factor": 8}, {"occupancy": 0.5}, {"blocks_at_1024": 1024},
                  {"blocks_per_sm": 7}, {"blocks_per_sm_above": {}}, {"blocks_per_sm_above": 1}):
        assert not co.check_best_factor(_reads(values=wrong), res)
    assert not co.check_best_factor(lambda sweep: "four", res)
    assert "function" in co.check_best_factor({"best_factor": 4}, res).failed[0][1]


def test_another_gpus_sweep_separates_every_reading():
    """The made-up sweeps: the fastest factor for tile 32 at 4096 is the fastest of no other
    size or tile, and each row has its own blocks per SM."""
    from gpuperf.kernels.coarsening import checks

    res = gp.records.run("matmul_coarsen_sweep", live=False)
    for seed in range(6):
        other = checks._other_sweep(res, seed)
        fastest = {key: max(other.select(tile=key[0], n=key[1]), key=lambda r: r["tflops"])
                   for key in {(r["tile"], r["n"]) for r in other.rows}}
        mine = fastest.pop((32, 4096))
        assert all(r["factor"] != mine["factor"] for r in fastest.values())
        assert len({r["blocks_per_sm"] for r in other.rows}) == len(other.rows)
        assert sorted(r["tflops"] for r in other.rows) == sorted(r["tflops"] for r in res.rows)


def test_ladder_is_slowest_first_and_ends_with_register_tiling():
    names = [v.name for v in co.ladder_variants()]
    assert names[0].startswith("naive")
    assert names[-5:] == ["regtile pipelined 128x128x16 8x8",
                          "regtile double-buffered 128x128x16 8x8",
                          "regtile double-buffered 128x128x16 8x8 cap128",
                          "regtile double-buffered 128x128x8 8x8 unroll2",
                          "regtile double-buffered 128x128x8 8x8 warp64x32 unroll2"]


def test_experiments_are_registered():
    names = gp.records.experiments()
    for n in ("matmul_coarsen_sweep", "matmul_vecadd_coarsen", "matmul_regtile_sweep",
              "matmul_resources", "matmul_ladder", "matmul_coarsen_cap",
              "matmul_double_buffer", "matmul_unroll", "matmul_sass_counts"):
        assert n in names and names[n].chapter == "coarsening"


def _paths_with(name):
    return [p for p in gp.records.available() if name in gp.records.load(p)["experiments"]]


@pytest.mark.parametrize("path", _paths_with("matmul_coarsen_cap"), ids=lambda p: p.stem)
def test_recorded_register_cap_wins_the_block_back(path, capsys):
    # What chapter 5 says: where a factor had lost a block, the cap brings it back for some
    # local memory and that factor speeds up; the best capped factor beats the tiled kernel.
    res = gp.records.recorded("matmul_coarsen_cap", path=path)
    co.cap_summary(res)
    by = {(r["factor"], r["cap"]): r for r in res.rows}
    lost = [f for f in co.CAP_FACTORS if by[(f, 0)]["blocks_per_sm"] < by[(f, 32)]["blocks_per_sm"]]
    assert lost
    for f in lost:
        assert by[(f, 32)]["tflops"] > by[(f, 0)]["tflops"]
        assert by[(f, 32)]["local_bytes"] > 0
    best_capped = max(r["tflops"] for (f, cap), r in by.items() if cap)
    assert best_capped > by[(1, 0)]["tflops"]
    assert "best: factor" in capsys.readouterr().out


@pytest.mark.parametrize("path", _paths_with("matmul_double_buffer"), ids=lambda p: p.stem)
def test_recorded_double_buffering_pays_with_a_second_block(path, capsys):
    res = gp.records.recorded("matmul_double_buffer", path=path)
    co.double_buffer_summary(res)
    for bk in res.values("bk"):
        rows = res.select(bk=bk)
        assert max(rows, key=lambda r: r["tflops"])["blocks_per_sm"] >= 2
    one = {(r["kind"], r["bk"], r["cap"]): r for r in res.rows}
    # BK 8: the cap alone on the pipelined kernel is about as good as double buffering
    assert abs(one[("pipelined", 8, 128)]["tflops"] / one[("double-buffered", 8, 0)]["tflops"]
               - 1) < 0.05
    # BK 16: double buffering with the cap is the fastest line, with spills
    best16 = max(res.select(bk=16), key=lambda r: r["tflops"])
    assert (best16["kind"], best16["cap"]) == ("double-buffered", 128) and best16["local_bytes"] > 0
    assert one[("double-buffered", 8, 0)]["regs"] < one[("pipelined", 8, 0)]["regs"]
    for r in res.rows:  # the k loop stays rolled: two copies (fast and edge loops) of 64 FFMAs
        if r.get("sass_ffma"):
            assert r["sass_ffma"] < 4 * 64
    assert "copies of one k" in capsys.readouterr().out


@pytest.mark.parametrize("path", _paths_with("matmul_regtile_1d"), ids=lambda p: p.stem)
def test_recorded_tallest_column_is_fastest(path, capsys):
    res = gp.records.recorded("matmul_regtile_1d", path=path)
    co.regtile_1d_summary(res)
    tiled = res.rows[0]
    cols = res.rows[1:]
    tallest = max(cols, key=lambda r: r["tm"])
    assert max(cols, key=lambda r: r["tflops"]) is tallest and tallest["tflops"] > tiled["tflops"]
    for r in cols:
        if r["tflops"] < tiled["tflops"]:
            assert r["blocks_per_sm"] * r["threads"] < tiled["blocks_per_sm"] * tiled["threads"]
    assert "the tiled kernel" in capsys.readouterr().out


def test_one_column_kernel_is_right_on_awkward_sizes():
    for M, K, N in SIZES:
        _check(co.regtile_1d_variant(16, 16, 4, 4), M, K, N)
        _check(co.regtile_1d_variant(16, 8, 8, 2), M, K, N)


def test_tuning_table_ranks_every_measurement_and_finds_ties(capsys):
    rt = gp.records.run("matmul_regtile_sweep")
    db = gp.records.run("matmul_double_buffer")
    table = co.show_tuning(rt, db, top=3)
    assert len(table) == len(rt.rows) + len(db.rows)
    assert [r["rank"] for r in table] == list(range(1, len(table) + 1))
    assert table[0]["tie"] and table[0]["gap_pct"] == 0
    tf = [r["tflops"] for r in table]
    assert tf == sorted(tf, reverse=True)
    for r in table:  # a tie exactly when the gap is inside both spreads
        gap = 1 - r["tflops"] / table[0]["tflops"]
        assert r["tie"] == (gap <= r["spread"] + table[0]["spread"])
    out = capsys.readouterr().out
    assert "within the noise of the best" in out and "double buffering" in out
    assert "regtile" not in table[0]["config"] and "x" in table[0]["config"]


@pytest.mark.parametrize("path", [p for p in _paths_with("matmul_double_buffer")
                                  if "matmul_regtile_sweep" in gp.records.load(p)["experiments"]],
                         ids=lambda p: p.stem)
def test_recorded_double_buffering_gain_is_a_few_percent_above_run_to_run(path):
    # Chapter 5.1 (c024g): against the fastest pipelined form, double buffering gains a few
    # percent, more than two runs of one configuration differ, but not by much.
    db = gp.records.recorded("matmul_double_buffer", path=path)
    rt = gp.records.recorded("matmul_regtile_sweep", path=path)
    best = {k: max(r["tflops"] for r in db.rows if r["kind"] == k)
            for k in ("pipelined", "double-buffered")}
    gain = best["double-buffered"] / best["pipelined"] - 1
    table = co.tuning_table(rt, db)
    runs = {}
    for r in table:
        runs.setdefault(r["config"], []).append(r["tflops"])
    apart = max(max(v) / min(v) - 1 for v in runs.values() if len(v) > 1)
    assert apart < gain < 0.08


@pytest.mark.parametrize("path", _paths_with("matmul_unroll"), ids=lambda p: p.stem)
def test_recorded_two_k_steps_per_body_pay_without_registers(path, capsys):
    # Chapter 5.2 (u005, summary): in the block-rows layout two steps per body add one copy of
    # the step to the compiled code, keep the registers and blocks per SM, and are faster at
    # both depths.
    res = gp.records.recorded("matmul_unroll", path=path)
    co.unroll_summary(res)
    by = {(r["bk"], r["layout"], r["k_steps"]): r for r in res.rows
          if r.get("layout") and not r.get("cap")}
    for bk in co.UNROLL_BKS:
        one, two = by[(bk, "block rows", 1)], by[(bk, "block rows", 2)]
        assert two["regs"] == one["regs"] and two["blocks_per_sm"] == one["blocks_per_sm"]
        assert two["tflops"] > one["tflops"] * (1 + 2 * max(one["spread"], two["spread"]))
        assert two["sass_ffma"] - one["sass_ffma"] == 64  # one more copy of an 8x8 step
    assert "block rows: one k step" in capsys.readouterr().out


@pytest.mark.parametrize("path", _paths_with("matmul_unroll"), ids=lambda p: p.stem)
def test_recorded_warp_tiles_matter_only_through_the_blocks_per_sm(path):
    # Chapter 5.2 (u005): where both layouts run the same blocks per SM they differ by a
    # fraction of a percent, small beside the gain of two k steps per body; where the
    # warp-tiled kernel lost a block to its registers it is slower.
    res = gp.records.recorded("matmul_unroll", path=path)
    by = {(r["bk"], r["layout"], r["k_steps"]): r for r in res.rows
          if r.get("layout") and not r.get("cap")}
    same = lost = 0
    for bk in co.UNROLL_BKS:
        for ks in (1, 2):
            rows, warp = by[(bk, "block rows", ks)], by[(bk, "warp tiles", ks)]
            if warp["blocks_per_sm"] == rows["blocks_per_sm"]:
                same += 1
                assert abs(warp["tflops"] / rows["tflops"] - 1) < 0.01  # "a fraction of a percent"
            else:
                lost += 1
                assert warp["blocks_per_sm"] < rows["blocks_per_sm"]
                assert warp["regs"] > rows["regs"] and warp["tflops"] < rows["tflops"]
    assert same  # the prose reads both cases; a record must show the first at least
    # the ablation (u005): capped at 128 registers, the warp-tiled kernel gets its second block
    # back, recovers most of what it lost and ends a little below block rows (about 1% on both
    # GPUs recorded), with a few bytes spilled to local memory
    (capped,) = [r for r in res.rows if r.get("cap")]
    rows = by[(capped["bk"], "block rows", capped["k_steps"])]
    warp = by[(capped["bk"], "warp tiles", capped["k_steps"])]
    assert capped["layout"] == "warp tiles" and capped["blocks_per_sm"] == rows["blocks_per_sm"]
    assert abs(capped["tflops"] / rows["tflops"] - 1) < 0.03
    assert (capped["tflops"] - warp["tflops"]) / (rows["tflops"] - warp["tflops"]) > 0.8
    assert capped["local_bytes"] > 0 and capped["regs"] <= co.UNROLL_ABLATION_CAP
    assert "recovers" in co.unroll_summary(res)


def test_unroll_summary_refuses_a_result_without_its_rows():
    res = gp.records.Result("matmul_unroll", [{"version": "cuBLAS (CuPy @)", "bk": None,
                                               "layout": None, "k_steps": None, "tflops": 50.0,
                                               "spread": 0.01, "regs": None,
                                               "blocks_per_sm": None}], {}, "recorded")
    with pytest.raises(ValueError, match="matmul_unroll"):
        co.unroll_summary(res)


@pytest.mark.parametrize("path", _paths_with("matmul_ladder"), ids=lambda p: p.stem)
def test_recorded_ladder_steps_down_where_chapter_5_says(path):
    # Chapter 5.2 (c027): coarsening, the scalar register tile, double buffering without the
    # cap and (where recorded) the warp-tiled rung each run slower than the rung before them.
    rows = {r["version"]: r["tflops"] for r in gp.records.recorded("matmul_ladder", path=path).rows}
    pairs = [("coarsened 32x4", "tiled 32"),
             ("regtile scalar 128x128x8 8x8", "regtile 1d 64x64x8 16x1"),
             ("regtile double-buffered 128x128x16 8x8", "regtile pipelined 128x128x16 8x8"),
             ("regtile double-buffered 128x128x8 8x8 warp64x32 unroll2",
              "regtile double-buffered 128x128x8 8x8 unroll2")]
    checked = 0
    for slower, before in pairs:
        if slower in rows and before in rows:
            assert rows[slower] < rows[before], (slower, before)
            checked += 1
    assert checked >= 3
    fast = co.fast_variant().name
    if fast in rows:  # c024h/c027: "the last rung, the fast path made whole, is the fastest"
        assert rows[fast] == max(t for v, t in rows.items() if not v.startswith("cuBLAS"))


def test_a_replay_like_another_result_comes_from_that_gpu(monkeypatch):
    monkeypatch.delenv("GPUPERF_RECORD", raising=False)
    unroll = gp.records.recorded("matmul_unroll")
    ladder = gp.records.run("matmul_ladder", live=False, like=unroll)
    assert ladder.meta["gpu"] == unroll.meta["gpu"]
    stranger = gp.records.Result("x", [], {"gpu": "No Such GPU"}, "recorded")
    assert gp.records.run("matmul_ladder", live=False, like=stranger).meta["gpu"] == \
        gp.records.recorded("matmul_ladder").meta["gpu"]


# The fast path alone, made whole by FastMatmul: 32x32 blocks of 4x4 thread tiles (64
# threads, one A and one B vector each per k-tile of 8). 64x40x64: the interior only;
# 70x44x36: a k-tail, a right strip of 4 columns and a bottom strip of 6 rows; 64x12x96: a
# k-tail only; 33x47x29 (K not a multiple of 4) and 20x8x20 (smaller than a tile): the
# double-buffered kernel throughout.
@pytest.mark.parametrize("M,K,N", [(64, 40, 64), (70, 44, 36), (64, 12, 96), (33, 47, 29),
                                   (20, 8, 20)])
@pytest.mark.parametrize("k_steps", [1, 2])
def test_fast_matmul_computes_any_shape(k_steps, M, K, N):
    _check(co.fast_variant(32, 32, 8, 4, 4, k_steps), M, K, N)


def test_fast_matmul_gives_the_same_bits_every_call():
    """The strips' partial sums are added in a fixed order: no atomics, the same result."""
    f = co.fast_matmul(32, 32, 8, 4, 4, 2)
    A = cuda.to_device(ex.random_array((70, 44), 3))
    B = cuda.to_device(ex.random_array((44, 36), 4))
    results = []
    for _ in range(2):
        C = cuda.to_device(ex.poisoned((70, 36)))
        f(A, B, C)
        cuda.synchronize()
        results.append(C.copy_to_host())
    assert np.array_equal(results[0], results[1])


def test_fast_kernel_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="vectors"):
        co.make_regtile_fast(64, 64, 4, 4, 4)  # 64 vectors per tile for 256 threads
    with pytest.raises(ValueError, match="splits"):
        co.FastMatmul(32, 32, 8, 4, 4, 2, splits=0)
    f = co.fast_matmul(32, 32, 8, 4, 4, 2)
    A, B = ex.random_array((64, 40), 1), ex.random_array((40, 64), 2)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    with pytest.raises(ValueError, match=r"C must have the shape \(64, 64\)"):
        f(dA, dB, cuda.device_array((64, 63), np.float32))
    with pytest.raises(TypeError, match="2-D"):
        f(dA, dB, cuda.device_array(64, np.float32))
    with pytest.raises(TypeError, match="device array"):
        f(A, B, np.zeros((64, 64), np.float32))  # NumPy in: run_variant copies, this does not
    with pytest.raises(TypeError, match="float32"):
        f(cuda.to_device(A.astype(np.float64)), dB, cuda.device_array((64, 64), np.float32))
    with pytest.raises(ValueError, match="contiguous"):
        f(cuda.to_device(np.asfortranarray(A)), dB, cuda.device_array((64, 64), np.float32))


def test_fast_matmul_refuses_a_misaligned_view_a_bad_stream_and_a_grid_too_tall():
    f = co.fast_matmul(32, 32, 8, 4, 4, 2)
    dB, dC = cuda.to_device(ex.random_array((40, 64), 2)), cuda.device_array((64, 64), np.float32)
    flat = cuda.to_device(ex.random_array(64 * 40 + 1, 1))
    with pytest.raises(ValueError, match="A starts 4 bytes past a 16-byte boundary"):
        f(flat[1:].reshape(64, 40), dB, dC)
    for bad in (1, True, "s1", type("Fake", (), {"synchronize": lambda self: None})()):
        with pytest.raises(TypeError, match="stream must be 0"):
            f(cuda.to_device(ex.random_array((64, 40), 1)), dB, dC, stream=bad)
    M = 65535 * 32 + 1
    with pytest.raises(ValueError, match="M=2097121 needs 65536 block rows"):
        f(cuda.device_array((M, 4), np.float32), cuda.device_array((4, 4), np.float32),
          cuda.device_array((M, 4), np.float32))


# K not a multiple of 4, then N, then both, on shapes with an interior and both strips: A and
# B are padded with zeros to multiples of 4, the fast path runs, and C is cropped out.
@pytest.mark.parametrize("M,K,N", [(70, 42, 68), (70, 40, 66), (67, 45, 65)])
def test_fast_matmul_pads_where_vectors_do_not_fit(M, K, N):
    v = co.fast_variant(32, 32, 8, 4, 4, 2)
    _check(v, M, K, N)
    K4, N4 = -(-K // 4) * 4, -(-N // 4) * 4
    assert [x.shape for x in v.launcher._padded] == [(M, K4), (K4, N4), (M, N4)]
    assert v.grid(M, N) == (N4 // 32, M // 32)  # the fast kernel's grid, over the padded interior


def test_padded_calls_on_two_callers_streams_each_get_their_own_product():
    """The padded buffers are shared between calls: both products must come out whole, each
    read back on its own stream with no device-wide synchronization."""
    f = co.FastMatmul(32, 32, 8, 4, 4, 2)
    calls = []
    for seed in (1, 2):
        s = cuda.stream()
        A, B = ex.random_array((70, 45), seed), ex.random_array((45, 66), seed + 10)
        dC = cuda.to_device(ex.poisoned((70, 66)), stream=s)
        f(cuda.to_device(A, stream=s), cuda.to_device(B, stream=s), dC, stream=s)
        calls.append((s, A, B, dC))
    for s, A, B, dC in calls:
        got = dC.copy_to_host(stream=s)
        s.synchronize()
        np.testing.assert_allclose(got, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_fast_matmul_splits_a_strip_only_as_far_as_it_pays():
    f = co.FastMatmul(32, 32, 8, 4, 4, 2, splits=16)
    assert f.strip_splits(4100, 4100, 4) == 16
    assert f.strip_splits(44, 70, 4) == 5  # chunks of at least 8 products
    assert f.strip_splits(7, 70, 4) == 1
    assert f.strip_splits(4096, 2_000_000, 127) == 1  # 16 partials would be 16 GB: none
    assert f.strip_splits(4096, 1 << 20, 4) == 4  # as many as the budget holds
    f.PARTIALS_BUDGET = 1  # every strip straight into C, in one pass over K
    A, B = ex.random_array((70, 44), 3), ex.random_array((44, 36), 4)
    dC = cuda.to_device(ex.poisoned((70, 36)))
    f(cuda.to_device(A), cuda.to_device(B), dC)
    cuda.synchronize()
    assert f._partials == {}
    np.testing.assert_allclose(dC.copy_to_host(), A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_fast_matmul_of_whole_tiles_is_one_launch_on_the_callers_stream():
    f = co.FastMatmul(32, 32, 8, 4, 4, 2)
    A, B = ex.random_array((64, 40), 3), ex.random_array((40, 96), 4)
    dC = cuda.to_device(ex.poisoned((64, 96)))
    f(cuda.to_device(A), cuda.to_device(B), dC)
    cuda.synchronize()
    assert f._streams is None  # no fork and join: no streams made
    np.testing.assert_allclose(dC.copy_to_host(), A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_chapter_5s_kernel_without_its_edge_path_is_right_on_whole_tiles_only():
    v = co.no_edge_variant(32, 32, 8, 4, 4, 2)
    _check(v, 64, 40, 96)
    with pytest.raises(ValueError, match="without its edge path computes only whole tiles"):
        mm.run_variant(v, np.ones((64, 40), np.float32), np.ones((40, 90), np.float32))


def test_fast_matmul_orders_like_one_launch_on_a_callers_stream():
    """Queued on a stream of the caller's and read back on it, with no device-wide
    synchronization: the copy must see the strips' outputs too."""
    f = co.fast_matmul(32, 32, 8, 4, 4, 2)
    A, B = ex.random_array((70, 44), 3), ex.random_array((44, 36), 4)
    s = cuda.stream()
    dA, dB = cuda.to_device(A, stream=s), cuda.to_device(B, stream=s)
    dC = cuda.to_device(ex.poisoned((70, 36)), stream=s)
    f(dA, dB, dC, stream=s)
    got = dC.copy_to_host(stream=s)
    s.synchronize()
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-5


def test_fast_matmul_keeps_partials_for_the_latest_shape_only():
    f = co.FastMatmul(32, 32, 8, 4, 4, 2, splits=4)
    for M, K, N in ((70, 44, 36), (72, 44, 40)):
        dA = cuda.to_device(ex.random_array((M, K), 1))
        dB = cuda.to_device(ex.random_array((K, N), 2))
        f(dA, dB, cuda.device_array((M, N), np.float32))
        cuda.synchronize()
    assert {k: v.shape for k, v in f._partials.items()} == {"right": (4, 72, 8), "bottom": (4, 8, 32)}


def test_the_fast_path_alone_refuses_a_shape_it_would_get_wrong():
    v = co.fast_kernel_variant(32, 32, 8, 4, 4, 2, "int64")
    _check(v, 64, 40, 96)
    with pytest.raises(ValueError, match="fast_variant"):
        mm.run_variant(v, np.ones((64, 40), np.float32), np.ones((40, 90), np.float32))


def test_the_fast_path_summary_reads_every_row(capsys):
    from gpuperf import records
    rows = [{"version": "chapter 5's kernel", "n": 4096, "tflops": 36.0, "pct_cublas": 70.0,
             "regs": 128, "loop_inst": 151, "loop_ffma": 128},
            {"version": "fast path only, uint32", "n": 4096, "tflops": 42.0, "pct_cublas": 82.0,
             "regs": 122, "loop_inst": 144, "loop_ffma": 128},
            {"version": "any size", "n": 4096, "tflops": 41.9, "pct_cublas": 81.9, "regs": 122},
            {"version": "any size", "n": 4100, "tflops": 37.8, "pct_cublas": 89.0},
            {"version": "chapter 5's kernel", "n": 4100, "tflops": 27.0, "pct_cublas": 65.0},
            {"version": mm.CUBLAS, "n": 4100, "tflops": 42.4, "pct_cublas": 100.0}]
    res = records.Result("matmul_fast_path", rows, {"gpu": "Some GPU"}, "live")
    text = co.fast_path_summary(res).splitlines()
    assert "70.0% of cuBLAS; 128 registers; inner loop 151 instructions per pass, 128 of them " \
        "FFMAs (85%)" in text[0]
    assert "(89%)" in text[1] and "any size" in text[2] and "inner loop" not in text[2]
    assert text[3].startswith("no 'fast path only, int64' row at 4096")  # said, not skipped
    assert text[4] == ("4100^3: any size 37.80 TFLOP/s, chapter 5's kernel 27.00: 140% of it "
                       "(cuBLAS 42.40 TFLOP/s at this size)")
    assert capsys.readouterr().out.startswith("4096^3")
    with pytest.raises(ValueError, match="any size"):
        co.fast_path_summary(records.Result("matmul_fast_path", rows[:2], {}, "live"))


def test_the_fast_path_summary_compares_loop_length_with_speed_and_prints_waves(capsys):
    from gpuperf import records
    rows = [{"version": "chapter 5's kernel", "n": 4096, "tflops": 36.0, "loop_inst": 151,
             "loop_ffma": 128, "grid_blocks": 1024, "waves": 3.88, "blocks_per_sm": 2},
            {"version": "fast path only, int64", "n": 4096, "tflops": 41.0, "loop_inst": 144,
             "loop_ffma": 128},
            {"version": "fast path only, uint32", "n": 4096, "tflops": 42.0},
            {"version": "any size", "n": 4096, "tflops": 41.9},
            {"version": "chapter 5's kernel", "n": 4100, "tflops": 27.0, "grid_blocks": 1089,
             "waves": 4.125, "blocks_per_sm": 2},
            {"version": "any size", "n": 4100, "tflops": 37.0}]
    text = co.fast_path_summary(records.Result("matmul_fast_path", rows, {}, "live"))
    assert ("chapter 5's inner loop has 4.9% more instructions than the fast path's; the fast "
            "path alone (int64) is 13.9% faster") in text
    assert ("chapter 5's kernel's grid (over all of C): 4096: 1024 blocks, "
            "3.88 waves of 2 per SM (4 rounds); 4100: 1089 blocks, 4.12 waves of 2 per SM "
            "(5 rounds)") in text
    assert "any size's grid" not in text  # no waves recorded for it: no line
    assert "edge path alone" not in text and "does not hold" not in text
    rows[0]["spread"] = 0.01
    rows.append({"version": co.NO_EDGE, "n": 4096, "tflops": 38.0, "loop_inst": 147,
                 "loop_ffma": 128, "spread": 0.005})
    text = co.fast_path_summary(records.Result("matmul_fast_path", rows, {}, "live"))
    assert ("the edge path alone compiled out of chapter 5's kernel: +5.6% speed, 40% of the fast "
            "path's gain; inner loop 151 -> 147 instructions (the fast path's: 144); beyond the "
            "spread of the two rows (0.36 TFLOP/s)") in text
    rows[-1] = {**rows[-1], "tflops": 36.2, "loop_ffma": 64}
    text = co.fast_path_summary(records.Result("matmul_fast_path", rows, {}, "live"))
    assert "+0.6% speed, 4% of the fast path's gain" in text and "within the spread" in text
    assert f"the loop counted for {co.NO_EDGE} does not hold the 128 FFMAs" in text
    rows += [{"version": "chapter 5's kernel", "n": 4097, "tflops": 30.0},
             {"version": "any size", "n": 4097, "tflops": 39.0}]
    text = co.fast_path_summary(records.Result("matmul_fast_path", rows, {}, "live"))
    assert "4097^3: any size (K and N padded to 4100) 39.00 TFLOP/s, chapter 5's kernel 30.00: 130% of it" in text


def test_the_fast_path_summary_sets_the_parts_beside_the_call():
    from gpuperf import records
    rows = [{"version": "chapter 5's kernel", "n": 4096, "tflops": 36.0},
            {"version": "fast path only, uint32", "n": 4096, "tflops": 42.0},
            {"version": "any size", "n": 4096, "tflops": 41.9, "ms": 3.3, "spread": 0.01},
            {"version": "any size", "n": 4100, "tflops": 37.0, "ms": 3.7, "spread": 0.04},
            {"version": co.FAST_PARTS[0], "n": 4100, "ms": 3.6, "spread": 0.01},
            {"version": co.FAST_PARTS[1], "n": 4100, "ms": 3.5, "spread": 0.02},
            {"version": co.FAST_PARTS[2], "n": 4100, "ms": 0.25, "spread": 0.005}]
    text = co.fast_path_summary(records.Result("matmul_fast_path", rows, {}, "live"))
    assert ("4100^3: the call takes 3.600 ms, its interior alone 3.500 and its strips alone 0.250: "
            "the call adds 40% of the strips' time to the interior's (100% would be strips after "
            "the interior, 0% strips wholly beside it; spread within the run up to 0.070 ms): "
            "the strips ran partly beside the interior, partly after it") in text
    assert "4096^3: the call takes" not in text  # no parts timed at 4096: no line
    for call_ms, verdict in ((3.52, "the strips ran wholly beside"),
                             (3.72, "no overlap beyond the spread")):
        rows[4] = {**rows[4], "ms": call_ms}
        text = co.fast_path_summary(records.Result("matmul_fast_path", rows, {}, "live"))
        assert verdict in text, call_ms


def test_the_parts_of_the_fast_call_timed_alone_make_the_whole_product():
    from gpuperf.bench import NeedsGPU
    f = co.fast_matmul(32, 32, 8, 4, 4, 2)
    rng = np.random.default_rng(5)
    A, B = (rng.standard_normal(s).astype(np.float32) for s in ((72, 44), (44, 40)))
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.to_device(np.zeros((72, 40), np.float32))
    f(dA, dB, dC)  # makes the streams
    dC = cuda.to_device(np.zeros((72, 40), np.float32))
    f._interior(dA, dB, dC, 0)  # what fast_parts times, one part after the other
    f._strips_alone(dA, dB, dC, 0)
    cuda.synchronize()
    np.testing.assert_allclose(dC.copy_to_host(), A @ B, rtol=1e-4, atol=1e-4)
    with pytest.raises(NeedsGPU):  # timings need a GPU
        co.fast_parts(260)
    for n in (256, 4097, 100):  # no strips, padding, or no interior: nothing to time apart
        with pytest.raises(ValueError, match=f"n={n}"):
            co.fast_parts(n)


@pytest.mark.parametrize("path", record_paths_with("matmul_fast_path"), ids=lambda p: p.stem)
def test_recorded_fast_path_says_what_chapter_5_says(path):
    """'the fast path alone is faster than chapter 5's kernel, and its inner loop is shorter
    with the same FFMAs'; 'unsigned index arithmetic adds a little more'; 'the call made whole
    keeps the fast kernel's gain over chapter 5's kernel' at the sizes with strips."""
    from gpuperf import records
    res = records.recorded("matmul_fast_path", path=path)
    by = {(r["version"], r["n"]): r for r in res.rows}
    ch5, fast = by["chapter 5's kernel", 4096], by["fast path only, uint32", 4096]
    signed = by["fast path only, int64", 4096]

    def ahead(a, b):  # a faster than b by more than either's spread
        return a["tflops"] > b["tflops"] * (1 + max(a["spread"], b["spread"]))

    assert ahead(fast, ch5) and ahead(fast, signed)
    # "all three run the same number of blocks per SM"
    assert ch5["blocks_per_sm"] == fast["blocks_per_sm"] == signed["blocks_per_sm"]
    # the inner loop, from the SASS: shorter, "with the same FFMAs" (two k steps of 8x8)
    assert fast["loop_inst"] < ch5["loop_inst"] and fast["loop_ffma"] == ch5["loop_ffma"] == 128
    # "outside the inner loop: its length is the same in both fast kernels"
    assert (signed["loop_inst"], signed["loop_ffma"]) == (fast["loop_inst"], fast["loop_ffma"])
    for n in (4100, 4104):  # "stays faster ... by more than at 4096"
        whole, old = by["any size", n], by["chapter 5's kernel", n]
        assert ahead(whole, old), n
        assert whole["tflops"] / old["tflops"] > by["any size", 4096]["tflops"] / ch5["tflops"]
        assert old["tflops"] < ch5["tflops"], n  # "chapter 5's kernel itself slows more"
        assert whole["tflops"] < by["any size", 4096]["tflops"], n  # "its own speed falls"
        assert by[mm.CUBLAS, n]["tflops"] < by[mm.CUBLAS, 4096]["tflops"], n  # "cuBLAS slows too"
        if "waves" in old:  # "another wave" (records made before the column lack it)
            assert math.ceil(old["waves"]) > math.ceil(ch5["waves"]), n
            assert whole["grid_blocks"] == by["any size", 4096]["grid_blocks"], n
        if (co.FAST_PARTS[0], n) in by:  # "the strips are thin": little work beside the interior
            _, inner, strips = (by[p, n] for p in co.FAST_PARTS)
            assert strips["ms"] < inner["ms"] / 4, n
    if (co.NO_EDGE, 4096) in by:  # records made before the ablation lack it
        # "the code that runs": the ablation gives part of the fast path's gain, not all of it
        bare = by[co.NO_EDGE, 4096]
        assert ch5["tflops"] < bare["tflops"] < signed["tflops"]
        assert bare["blocks_per_sm"] == ch5["blocks_per_sm"]
    if ("any size", 4097) in by:  # 4097: K and N not multiples of 4, so chapter 5's kernel has no
        # fast path there at all (slower than at 4100), and the padded call is ahead of it
        assert by["chapter 5's kernel", 4097]["tflops"] < by["chapter 5's kernel", 4100]["tflops"]
        assert ahead(by["any size", 4097], by["chapter 5's kernel", 4097])
    # "the shorter loop is not the whole gain": the speeds differ more than the loop lengths
    assert ch5["loop_inst"] / signed["loop_inst"] < signed["tflops"] / ch5["tflops"]
    for n in (4096, 4100, 4104):  # cuBLAS of the same size and run, which pct_cublas is against
        cub = by[mm.CUBLAS, n]
        r = by["any size", n]
        assert r["pct_cublas"] == pytest.approx(100 * r["tflops"] / cub["tflops"])


def test_fast_matmul_names_the_inner_dimension_when_a_and_b_do_not_match():
    f = co.fast_matmul(32, 32, 8, 4, 4, 2)
    A, B, C = (cuda.to_device(ex.random_array(s, 1)) for s in ((3, 5), (6, 7), (3, 7)))
    with pytest.raises(ValueError, match="A's columns and B's rows must match"):
        f(A, B, C)
    with pytest.raises(ValueError, match=r"C must have the shape \(3, 7\)"):
        f(A, cuda.to_device(ex.random_array((5, 7), 2)), cuda.to_device(ex.random_array((7, 3), 3)))


def test_fast_matmul_is_one_object_per_configuration_however_it_is_spelled():
    """It keeps streams and partial-sum buffers: two spellings of one configuration must not
    make two objects (the docstring promises one per configuration)."""
    f = co.fast_matmul()
    assert co.fast_matmul(128) is f and co.fast_matmul(bm=128, splits=16) is f
    assert co.fast_matmul(np.int64(128), np.int32(128)) is f
    assert co.fast_matmul(32, 32, 8, 4, 4, 2) is not f
    with pytest.raises(TypeError, match="bm"):
        co.fast_matmul(128.0)
    with pytest.raises(TypeError, match="bm"):
        co.fast_matmul(True)


def test_the_shared_load_count_experiment_puts_the_measured_count_beside_the_sources(monkeypatch):
    """profiling_regtile_1d (issue 60, finding 8) on made-up counters: 1.25 warp shared loads
    per warp FFMA for the tiled kernel is 0.8 multiply-adds per load, beside the source's 1/2;
    every kernel of matmul_regtile_1d is profiled, in its order."""
    from gpuperf import nsight
    from gpuperf.kernels.coarsening import profiling

    seen = []

    def fake_profile(name, *args, kernel, metrics, library=False, launch_count=1):
        seen.append((name, args, kernel))
        return {"smsp__inst_executed_op_shared_ld.sum": 1.25 * 1000.0,
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 32 * 1000.0,
                "launch__registers_per_thread": 32, "gpu__time_duration.sum": 1e6}

    monkeypatch.setattr(nsight, "profile", fake_profile)
    monkeypatch.setattr(gp.bench, "require_gpu", lambda what: None)  # a GPU, as far as it can tell
    rows = profiling.regtile_1d_profile_experiment(lambda msg: None)
    assert [r["version"] for r in rows] == ["tiled 32"] + [
        co.regtile_1d_variant(*c).name for c in co.REGTILE_1D_CONFIGS]
    assert rows[0]["shared_loads_per_fma"] == 1.25 and rows[0]["fma_per_shared_load"] == 0.8
    assert rows[0]["fma_per_shared_value"] == 0.5
    assert [r["fma_per_shared_value"] for r in rows[1:]] == [tm / (tm + 1) for *_, tm in co.REGTILE_1D_CONFIGS]
    assert [a[0] for _, a, _ in seen] == list(range(len(rows)))  # the launch index of each kernel
    assert seen[0][2] == "tiled" and seen[1][2] == "regtile_1d"
    assert "profiling_regtile_1d" in gp.records.experiments()


def test_grid_rounds_checker_accepts_the_solution_and_names_the_mistakes(capsys):
    def grid_rounds(M, N, bm, bn, sms, per_sm):
        blocks = -(-M // bm) * -(-N // bn)
        rounds = -(-blocks // (sms * per_sm))
        return blocks, rounds, blocks - (rounds - 1) * sms * per_sm

    assert co.check_grid_rounds(grid_rounds)
    assert grid_rounds(4097, 4097, 128, 128, 132, 2) == (1089, 5, 33)

    def modulo(M, N, bm, bn, sms, per_sm):
        b, r, _ = grid_rounds(M, N, bm, bn, sms, per_sm)
        return b, r, b % (sms * per_sm)

    capsys.readouterr()
    assert not co.check_grid_rounds(modulo)
    assert "the last round is full" in capsys.readouterr().out


def test_computed_tables_and_where_a_result_was_measured():
    res = gp.records.recorded("matmul_tile_sweep")
    assert gp.matmul.where_measured(res).startswith(f"measured on an {res.gpu} on ")
    live = gp.records.Result("x", [{"a": 1}], {"gpu": "Tesla T4"}, "live")
    assert gp.matmul.where_measured(live) == "measured on your Tesla T4 just now"
    t = gp.matmul.table("matmul_correctness", [{"kernel": "tiled 8", "relative error": "1e-7"}])
    assert t.rows[0]["kernel"] == "tiled 8" and "simulator" in t.label.lower()


WRONG_FILES = sorted((Path(__file__).parent / "wrong" / "coarsening").glob("*.py"))


@pytest.mark.parametrize("path", WRONG_FILES, ids=lambda p: p.stem)
def test_a_known_wrong_answer_fails_its_checker(path, capsys):
    """tests/wrong/coarsening/*.py: each names its checker and must fail it (on the recorded
    sweep and the made-up GPUs' sweeps it is judged on)."""
    mod = load_answer(path)
    assert not getattr(co, mod.CHECKER)(mod.student), capsys.readouterr().out


def test_factor_sweep_labels_the_factors_on_every_panel():
    import matplotlib.pyplot as plt

    sweep = gp.records.run("matmul_coarsen_sweep", live=False)
    fig = co.plot_factor_sweep(sweep)
    for ax in fig.axes:
        ticks = [t for t in ax.xaxis.get_major_ticks() if t.label1.get_visible()]
        want = [str(f) for f in sorted(sweep.values("factor"))]
        assert [t.label1.get_text() for t in ticks] == want, ax.get_title()
    plt.close(fig)


def test_roofline_draws_the_fp32_peak_as_the_compute_roof_and_cublas_below_it():
    import matplotlib.pyplot as plt

    roof = gp.records.run("matmul_roofline", live=False)
    cublas = roof.ceilings["matmul_tflops"]
    fig = mm.plot_roofline(roof, peak_tflops=1.25 * cublas)
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(f"compute roof {1.25 * cublas:.1f} TFLOP/s" in t for t in texts)
    assert f"cuBLAS FP32 at 4096³, measured {cublas:.1f} TFLOP/s" in texts
    plt.close(fig)
    with pytest.raises((TypeError, ValueError)):
        mm.plot_roofline(roof, peak_tflops=-1.0)
