"""Chapter 4's exercise checkers: the tiled kernel (``check_tiled``) and the intensity model
(``check_intensity``), with the engine chapter 5's checkers share (``check_matmul_kernel``,
``source_checks_apply``, ``speed_bar``)."""

from __future__ import annotations

import numpy as np
from numba import cuda  # noqa: I001

from gpuperf import exercises as ex
from gpuperf import validate
from gpuperf.mode import SIMULATOR

from .kernels import _cdiv, check_tile
from .measure import reference
from .models import intensity, roofline_bound

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
    if ex.grading():  # a shape the student never saw, and more phases along K than any seen
        sizes = [*sizes, tuple(int(d) for d in ex.case_rng(5).permutation(ex.hidden_sizes(1, 70, 3)))]
        longest = max(k for _, k, _ in sizes)
        sizes += [(9, k, 11) for k in ex.hidden_sizes(longest + 1, 2 * longest + 16, 1)]
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


@ex.refuses_stubs(solved_by=("gpuperf.kernels.matmul:make_tiled", "gpuperf.kernels.matmul:make_tiled_article",
                              "gpuperf.kernels.matmul:make_tiled_early_return",
                              "gpuperf.kernels.matmul:variant", "gpuperf.kernels.matmul:matmul",
                              "gpuperf.kernels.coarsening:make_coarsened",
                              "gpuperf.kernels.coarsening:coarsened_variant"))
def check_tiled(make_kernel, tile: int = 16, *, a_transposed: bool = False) -> ex.Report:
    """Check ``make_kernel(tile)``, a factory returning a tiled kernel ``k(A, B, C)``.

    It is launched with blocks of (tile, tile) threads and a grid of
    (ceil(N / tile), ceil(M / tile)) blocks: x covers the columns of C, y the rows.
    With ``a_transposed`` the kernel is ``k(At, B, C)``: ``At`` is A's transpose (K x M),
    C is still A @ B, and the loads of ``At`` must be coalesced (traced in the emulator for
    16 x 16 tiles: at most ``COALESCED_SECTORS`` sectors per warp request) and the shared-memory
    accesses, traced with the same tiles, free of bank conflicts. On a GPU,
    ``make_kernel(TILED_SPEED_TILE)`` must also reach ``TILED_SPEED_TARGET`` of cuBLAS SGEMM
    measured in the same check at ``TILED_SPEED_N``^3.
    """
    check_tile(tile)
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
    speed_bar(chk, make_kernel(tile), grid, (tile, tile),
              f"your kernel ({'At' if a_transposed else 'A'}, tile {tile})")


def speed_bar(chk, kernel, grid, block, what: str) -> None:
    """The matmul exercises' speed bar on a GPU: ``kernel[grid, block](A, B, C)`` on
    ``TILED_SPEED_N``-square float32 matrices must reach ``TILED_SPEED_TARGET`` of cuBLAS
    SGEMM measured in the same check (``exercises.speed_against_cublas``)."""
    if not isinstance(chk, ex.Checker):
        raise TypeError(f"chk must be an ex.Checker, not {type(chk).__name__}.")
    validate.string(what, "what")
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
    from gpuperf import emulator

    if tile < 2:
        return
    M, N, K = tile, tile, 2 * tile
    with chk.case(f"global loads of A and B, one {tile} x {tile} block over K={K} (emulator)"):
        k = make_kernel(tile)
        a, b = emulator.param_names(k, 2)[:2]
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
    from gpuperf import emulator
    from gpuperf.kernels import coalescing

    with chk.case(f"coalesced loads of At ({tile} x {tile} tiles, traced)"):
        k = make_kernel(tile)
        name = emulator.param_names(k, 1)[0]
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
        worst = max((r for r in trace.instructions() if r["space"] == "shared"),
                    key=lambda r: r["bank_conflict"], default=None)
        where = f" (the {worst['kind']} of `{worst['array']}`)" if worst else ""
        rows = max(1, 32 // tile)  # the rows of the block one warp covers
        if conflict == 2:
            chk.fail(f"a warp's shared-memory access{where} has a 2-way bank conflict. With "
                     f"{tile} x {tile} blocks a warp covers {rows} rows of the block, so the "
                     f"turned store writes down {rows} columns of the tile at once: in rows "
                     f"padded by one float ({tile}, {tile} + 1) one pair of its lanes still "
                     f"shares a bank (chapter 2.1 counts it too). Pad each row by {rows} floats, "
                     f"({tile}, {tile} + {rows}), and every lane gets a bank of its own.")
        elif conflict > 2:
            chk.fail(f"a warp's shared-memory access{where} has a {conflict}-way bank "
                     "conflict: a tile turned on its way into shared memory is written down its "
                     f"columns, and a column of a {tile}-wide float tile sits in few banks. Pad "
                     f"each row (chapter 2.1's transpose pads by one float; with {tile} x {tile} "
                     f"blocks a warp covers {rows} rows, and a ({tile}, {tile} + {rows}) tile "
                     "gives each lane a bank of its own).")


@ex.refuses_stubs(solved_by=("gpuperf.kernels.matmul:intensity", "gpuperf.kernels.matmul:traffic_bytes"))
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
            chk.record(got, (intensity("tiled", M, N, K, t),
                             roofline_bound(intensity("tiled", M, N, K, t), bw, peak)),
                       rtol=1e-6)
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                chk.fail(f"returned {got!r}; return a pair (intensity in FLOP/byte, bound in "
                         "TFLOP/s).")
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
